/*
 * heapreport: a heap snapshot, or two, for people and for the outputs.
 * See heap/heapreport.h.
 */
#include "heap/heapreport.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "luajit/luaname.h"

static const char *lab(const struct luw_heapsnap *s, uint32_t node)
{
	uint32_t l = s->nodes[node].label;

	return l < s->nlabels ? s->labels[l] : "?";
}

/* A step that Lua code could write before ".name": a key (identifier,
 * dotted root such as package.loaded, or one ending in "]"). */
/* 1 when label t is a key: an index ("[*]", "[\"k\"]") or a dotted chain
 * of names ("cache", "package.loaded"). */
static int keyish(const char *t)
{
	size_t n = strlen(t);
	const char *dot;

	if (n && t[n - 1] == ']')
		return 1;
	for (; (dot = strchr(t, '.')); t = dot + 1)
		if (!luw_luaname_ident(t, (size_t)(dot - t)))
			return 0;
	return luw_luaname_ident(t, strlen(t));
}

#define MAX_DEPTH 4096

/* node's steps root first into path[]: their number. */
static size_t steps(const struct luw_heapsnap *s, uint32_t node, uint32_t *path)
{
	size_t n = 0;

	for (; node && n < MAX_DEPTH; node = s->nodes[node].parent)
		path[n++] = node;
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = path[i];

		path[i] = path[n - 1 - i];
		path[n - 1 - i] = t;
	}
	return n;
}

void luw_heapreport_path(const struct luw_heapsnap *s, uint32_t node,
			 struct luw_strbuf *b)
{
	uint32_t *path = malloc(MAX_DEPTH * sizeof(*path));
	size_t n;

	if (!path) {
		b->oom = 1;
		return;
	}
	n = steps(s, node, path);
	for (size_t i = 0; i < n; i++) {
		const char *t = lab(s, path[i]);
		int key = i && keyish(lab(s, path[i - 1]));

		if (i && !(key && t[0] == '['))
			luw_strbuf_puts(b, key && luw_luaname_ident(t, strlen(t)) ? "." : " > ");
		luw_strbuf_puts(b, t);
	}
	if (!n)
		luw_strbuf_puts(b, "(root)");
	free(path);
}

/* -- Stacks -------------------------------------------------------------- */

struct frames {
	int32_t *id;		/* per label: its frame id, or -1 */
	int32_t type[LUWH_NTYPES];
	uint32_t path[MAX_DEPTH];
	int32_t f[MAX_DEPTH + 1];
};

static int32_t intern(struct luw_stacks *st, const char *t)
{
	char buf[LUW_HEAPSNAP_LABEL_MAX + 1];
	size_t n = strlen(t);

	if (n > LUW_HEAPSNAP_LABEL_MAX)
		n = LUW_HEAPSNAP_LABEL_MAX;
	memcpy(buf, t, n);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == ';')
			buf[i] = ':';
	return luw_stacks_intern(st, buf, n);
}

static int frames_init(struct frames *f, const struct luw_heapsnap *s,
		       struct luw_stacks *st)
{
	char t[32];

	f->id = malloc(((size_t)s->nlabels + 1) * sizeof(*f->id));
	if (!f->id)
		return -1;
	for (uint32_t i = 0; i < s->nlabels; i++)
		f->id[i] = -1;
	for (uint32_t i = 0; i < LUWH_NTYPES; i++) {
		snprintf(t, sizeof(t), "(%s)", luw_heapsnap_type_name(i));
		f->type[i] = intern(st, t);
	}
	return 0;
}

/* The frames of (node, type) into f->f: their number, 0 on ENOMEM. */
static size_t frames_of(struct frames *f, const struct luw_heapsnap *s,
			struct luw_stacks *st, uint32_t node, uint32_t type)
{
	size_t n = steps(s, node, f->path);

	for (size_t i = 0; i < n; i++) {
		uint32_t l = s->nodes[f->path[i]].label;

		if (l >= s->nlabels)
			return 0;
		if (f->id[l] < 0)
			f->id[l] = intern(st, s->labels[l]);
		if (f->id[l] < 0)
			return 0;
		f->f[i] = f->id[l];
	}
	f->f[n] = f->type[type < LUWH_NTYPES ? type : 0];
	return f->f[n] < 0 ? 0 : n + 1;
}

int luw_heapreport_stacks(const struct luw_heapsnap *s, struct luw_stacks *st)
{
	struct frames *f = malloc(sizeof(*f));
	int rc = 0;

	if (!f || frames_init(f, s, st)) {
		free(f);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < s->ngroups && !rc; i++) {
		const struct luw_heapsnap_group *g = &s->groups[i];
		size_t n = frames_of(f, s, st, g->node, g->type);

		rc = n ? luw_stacks_add2(st, f->f, n, g->bytes, g->objects) : -1;
	}
	free(f->id);
	free(f);
	return rc;
}

/* -- Top ----------------------------------------------------------------- */

/* Sums of a file's counts saturate: a damaged file may hold any. */
static int64_t i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int64_t sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

struct rank {
	uint32_t node;
	int64_t bytes, objects;
};

static int by_bytes(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

static void put_path(const struct luw_heapsnap *s, uint32_t node, FILE *out)
{
	struct luw_strbuf b;

	luw_strbuf_init(&b);
	luw_heapreport_path(s, node, &b);
	fprintf(out, "%.*s", (int)b.len, b.p ? b.p : "");
	luw_strbuf_free(&b);
}

static void universes(const struct luw_heapsnap *s, FILE *out)
{
	for (uint32_t i = 0; i < s->nunis; i++) {
		const struct luw_heapsnap_uni *u = &s->unis[i];
		uint64_t found = u->bytes + u->internal;
		double pct = u->gc_total ? 100.0 * ((double)found -
					  (double)u->gc_total) / (double)u->gc_total : 0;

		fprintf(out, "universe %u (global_State 0x%" PRIx64 "): %" PRIu64
			" objects, %" PRIu64 " bytes + %" PRIu64 " of the VM's own = %"
			PRIu64 "; gc.total %" PRIu64 " (%+.2f%%)\n", i + 1, u->g,
			u->objects, u->bytes, u->internal, found, u->gc_total, pct);
		fprintf(out, "  unreachable (garbage not yet swept): %" PRIu64
			" objects, %" PRIu64 " bytes\n", u->unreached_objects,
			u->unreached_bytes);
		if (u->skipped || u->unsized || u->dangling)
			fprintf(out, "  skipped %" PRIu64 ", unsized %" PRIu64
				", references to no listed object %" PRIu64 "\n",
				u->skipped, u->unsized, u->dangling);
	}
}

static void by_type(const struct luw_heapsnap *s, FILE *out)
{
	uint64_t obj[LUWH_NTYPES] = { 0 }, by[LUWH_NTYPES] = { 0 }, all = 0;

	for (uint32_t i = 0; i < s->nunis; i++)
		for (uint32_t t = 0; t < LUWH_NTYPES; t++) {
			obj[t] += s->unis[i].type_objects[t];
			by[t] += s->unis[i].type_bytes[t];
			all += s->unis[i].type_bytes[t];
		}
	fprintf(out, "\nby type:\n%12s %14s %7s  type\n", "objects", "bytes", "%");
	for (;;) {
		uint32_t best = 0;

		for (uint32_t t = 1; t < LUWH_NTYPES; t++)
			if (obj[t] && (!best || by[t] > by[best]))
				best = t;
		if (!best)
			break;
		fprintf(out, "%12" PRIu64 " %14" PRIu64 " %6.2f%%  %s\n", obj[best],
			by[best], all ? 100.0 * (double)by[best] / (double)all : 0,
			luw_heapsnap_type_name(best));
		obj[best] = 0;
	}
}

int luw_heapreport_top(const struct luw_heapsnap *s, FILE *out, size_t n)
{
	struct rank *r = calloc(s->nnodes ? s->nnodes : 1, sizeof(*r));
	uint64_t all = 0;
	size_t k;

	if (!r)
		return -1;
	fprintf(out, "heap of %s-%u (%s), build-id %s, layout %s\n",
		s->comm ? s->comm : "?", s->pid, s->exe ? s->exe : "?",
		s->build_id && *s->build_id ? s->build_id : "none",
		s->layout ? s->layout : "?");
	if (s->flags & LUWH_MF_LIVE)
		fprintf(out, "walked live (not stopped) in %.1f ms\n",
			(double)s->walk_ns / 1e6);
	else
		fprintf(out, "threads stopped %.1f ms, the walk %.1f ms\n",
			(double)s->pause_ns / 1e6, (double)s->walk_ns / 1e6);
	universes(s, out);
	by_type(s, out);
	/* Retained by a path: its own and every path below it (children
	 * have larger ids than their parents). */
	for (uint32_t i = 0; i < s->nnodes; i++)
		r[i].node = i;
	for (size_t i = 0; i < s->ngroups; i++) {
		struct rank *g = &r[s->groups[i].node];

		g->bytes = sat(g->bytes, i64(s->groups[i].bytes));
		g->objects = sat(g->objects, i64(s->groups[i].objects));
		all += s->groups[i].bytes;
	}
	for (uint32_t i = s->nnodes; i-- > 1;) {
		struct rank *p = &r[s->nodes[i].parent];

		p->bytes = sat(p->bytes, r[i].bytes);
		p->objects = sat(p->objects, r[i].objects);
	}
	qsort(r + 1, s->nnodes - 1, sizeof(*r), by_bytes);
	fprintf(out, "\nheaviest paths (what each retains: it and every path "
		"below it):\n%14s %7s %12s  path\n", "bytes", "%", "objects");
	for (k = 1; k <= n && k < s->nnodes && r[k].bytes > 0; k++) {
		fprintf(out, "%14" PRId64 " %6.2f%% %12" PRId64 "  ", r[k].bytes,
			all ? 100.0 * (double)r[k].bytes / (double)all : 0,
			r[k].objects);
		put_path(s, r[k].node, out);
		fputc('\n', out);
	}
	fprintf(out, "\nlargest objects:\n%14s  %-9s %-18s  path\n", "bytes",
		"type", "address");
	for (k = 0; k < n && k < s->nbig; k++) {
		fprintf(out, "%14" PRIu64 "  %-9s 0x%-16" PRIx64 "  ", s->big[k].bytes,
			luw_heapsnap_type_name(s->big[k].type), s->big[k].addr);
		put_path(s, s->big[k].node, out);
		fputc('\n', out);
	}
	free(r);
	return ferror(out) ? -1 : 0;
}

/* -- Diff ---------------------------------------------------------------- */

/*
 * Per node of cur, the node of old at the same path, or UINT32_MAX: the
 * same steps, label text by label text, from the root (a node's parent
 * comes before it).  The rendered path text would not do: two paths may
 * read alike ("a" > "b" and "a.b" both show as a.b).  NULL on ENOMEM.
 */
static uint32_t *same_nodes(const struct luw_heapsnap *old,
			    const struct luw_heapsnap *cur)
{
	uint32_t *lab = malloc(((size_t)cur->nlabels + 1) * sizeof(*lab));
	uint32_t *m = malloc(((size_t)cur->nnodes + 1) * sizeof(*m));

	if (!lab || !m) {
		free(lab);
		free(m);
		return NULL;
	}
	for (uint32_t l = 0; l < cur->nlabels; l++)
		lab[l] = luw_heapsnap_label_find(old, cur->labels[l],
						 strlen(cur->labels[l]));
	m[0] = 0;
	for (uint32_t i = 1; i < cur->nnodes; i++) {
		const struct luw_heapsnap_node *nd = &cur->nodes[i];
		uint32_t p = nd->parent < i ? m[nd->parent] : UINT32_MAX;
		uint32_t l = nd->label < cur->nlabels ? lab[nd->label] : UINT32_MAX;
		uint32_t o = p == UINT32_MAX || l == UINT32_MAX ? 0 :
			     luw_heapsnap_child(old, p, l);

		m[i] = o ? o : UINT32_MAX;
	}
	free(lab);
	return m;
}

int luw_heapreport_diff(const struct luw_heapsnap *old,
			const struct luw_heapsnap *cur,
			struct luw_stacks *growth, FILE *top, size_t n)
{
	struct frames *f = NULL;
	struct rank *r = NULL;
	uint32_t *same = NULL;
	size_t nr = 0, matched = 0;
	int rc = -1;

	errno = 0;
	if (growth && (!(f = malloc(sizeof(*f))) || frames_init(f, cur, growth))) {
		free(f);
		f = NULL;
		goto out;
	}
	same = same_nodes(old, cur);
	r = calloc(cur->nnodes + 1, sizeof(*r));
	if (!same || !r)
		goto out;
	for (uint32_t i = 0; i < cur->nnodes; i++)
		r[i].node = i;
	/* Per path of the new one: its growth over what the old one held
	 * at the same path (all types), and the stacks of the groups that
	 * grew.  Paths map one to one, so no old group is taken twice. */
	for (size_t i = 0; i < cur->ngroups; i++) {
		const struct luw_heapsnap_group *g = &cur->groups[i], *og = NULL;
		int64_t db, dobj;

		if (same[g->node] != UINT32_MAX)
			og = luw_heapsnap_group(old, same[g->node], g->type);
		matched += og != NULL;
		db = sat(i64(g->bytes), og ? -i64(og->bytes) : 0);
		dobj = sat(i64(g->objects), og ? -i64(og->objects) : 0);
		r[g->node].bytes = sat(r[g->node].bytes, db);
		r[g->node].objects = sat(r[g->node].objects, dobj);
		if (growth && db > 0) {
			size_t fn = frames_of(f, cur, growth, g->node, g->type);

			if (!fn || luw_stacks_add2(growth, f->f, fn, (uint64_t)db,
						   dobj > 0 ? (uint64_t)dobj : 0))
				goto out;
		}
	}
	nr = cur->nnodes;
	if (top) {
		uint64_t ot = 0, nt = 0;
		size_t k, left = old->ngroups - matched;

		for (uint32_t i = 0; i < old->nunis; i++)
			ot += old->unis[i].gc_total;
		for (uint32_t i = 0; i < cur->nunis; i++)
			nt += cur->unis[i].gc_total;
		fprintf(top, "heap of %s-%u: gc.total %" PRIu64 " -> %" PRIu64
			" (%+" PRId64 " bytes) in %.1f s\n", cur->comm ? cur->comm : "?",
			cur->pid, ot, nt, (int64_t)(nt - ot),
			(double)(int64_t)(cur->time_ns - old->time_ns) / 1e9);
		qsort(r + 1, nr - 1, sizeof(*r), by_bytes);
		fprintf(top, "\ngrew most (bytes held at exactly that path):\n"
			"%14s %12s  path\n", "bytes", "objects");
		for (k = 1; k <= n && k < nr && r[k].bytes > 0; k++) {
			fprintf(top, "%+14" PRId64 " %+12" PRId64 "  ", r[k].bytes,
				r[k].objects);
			put_path(cur, r[k].node, top);
			fputc('\n', top);
		}
		fprintf(top, "\nshrank most:\n%14s %12s  path\n", "bytes", "objects");
		for (k = nr; k-- > 1 && nr - k <= n && r[k].bytes < 0;) {
			fprintf(top, "%+14" PRId64 " %+12" PRId64 "  ", r[k].bytes,
				r[k].objects);
			put_path(cur, r[k].node, top);
			fputc('\n', top);
		}
		if (left)
			fprintf(top, "(%zu path and type pairs of the older "
				"snapshot are gone)\n", left);
		if (ferror(top))
			goto out;
	}
	rc = 0;
out:
	if (rc && !errno)
		errno = ENOMEM;
	if (f)
		free(f->id);
	free(f);
	free(r);
	free(same);
	return rc;
}
