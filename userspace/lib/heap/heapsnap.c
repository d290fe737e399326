/*
 * heapsnap: a heap snapshot and its file.  See heap/heapsnap.h and
 * include/luaunwind_heap.h.
 */
#include "heap/heapsnap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/fail.h"
#include "util/grow.h"
#include "util/hash.h"

int luw_heapsnap_init(struct luw_heapsnap *s)
{
	memset(s, 0, sizeof(*s));
	luw_kvmap_init(&s->labmap);
	luw_kvmap_init(&s->nodemap);
	luw_kvmap_init(&s->groupmap);
	if (luw_grow((void **)&s->nodes, &s->nodecap, 1, sizeof(*s->nodes)))
		return -1;
	s->nodes[0].parent = 0;
	s->nodes[0].label = UINT32_MAX;
	s->nnodes = 1;
	return 0;
}

void luw_heapsnap_free(struct luw_heapsnap *s)
{
	for (uint32_t i = 0; i < s->nlabels; i++)
		free(s->labels[i]);
	free(s->labels);
	free(s->nodes);
	free(s->groups);
	free(s->unis);
	free(s->comm);
	free(s->exe);
	free(s->build_id);
	free(s->ljkind);
	free(s->layout);
	luw_kvmap_free(&s->labmap);
	luw_kvmap_free(&s->nodemap);
	luw_kvmap_free(&s->groupmap);
	memset(s, 0, sizeof(*s));
}

void luw_heapsnap_meta(struct luw_heapsnap *s, char **field, const char *v)
{
	free(*field);
	*field = strdup(v ? v : "");
	if (!*field)
		s->oom = 1;
}

/* Appends a label without looking it up: its id, or UINT32_MAX. */
static uint32_t label_add(struct luw_heapsnap *s, const char *text, size_t len)
{
	char *c;

	if (luw_grow((void **)&s->labels, &s->labcap, (size_t)s->nlabels + 1,
		     sizeof(*s->labels)) || !(c = malloc(len + 1))) {
		s->oom = 1;
		return UINT32_MAX;
	}
	memcpy(c, text, len);
	c[len] = 0;
	s->labels[s->nlabels] = c;
	return s->nlabels++;
}

/* The entry of text[0..len) in s->labmap, keyed by its hash (plus a salt
 * past collisions, told by the text) and length; NULL when s has no such
 * label, with *salt the first free key. */
static struct luw_kv *label_slot(const struct luw_heapsnap *s, uint64_t h,
				 const char *text, size_t len, uint64_t *salt)
{
	struct luw_kv *kv;

	for (*salt = 0; (kv = luw_kvmap_get(&s->labmap, h + *salt, len)); ++*salt)
		if (!memcmp(s->labels[kv->v], text, len))
			return kv;
	return NULL;
}

uint32_t luw_heapsnap_label(struct luw_heapsnap *s, const char *text, size_t len)
{
	uint64_t h, salt;
	struct luw_kv *kv;
	uint32_t id;
	int isnew;

	if (len > LUW_HEAPSNAP_LABEL_MAX)
		len = LUW_HEAPSNAP_LABEL_MAX;
	h = luw_fnv1a64(text, len);
	kv = label_slot(s, h, text, len, &salt);
	if (kv)
		return (uint32_t)kv->v;
	kv = luw_kvmap_put(&s->labmap, h + salt, len, &isnew);
	if (!kv) {
		s->oom = 1;
		return UINT32_MAX;
	}
	id = label_add(s, text, len);
	if (id == UINT32_MAX)
		luw_kvmap_del(&s->labmap, h + salt, len, NULL);
	else	/* kv may have moved: look it up again */
		luw_kvmap_get(&s->labmap, h + salt, len)->v = id;
	return id;
}

uint32_t luw_heapsnap_label_find(const struct luw_heapsnap *s, const char *text,
				 size_t len)
{
	uint64_t salt;
	struct luw_kv *kv;

	if (len > LUW_HEAPSNAP_LABEL_MAX)
		len = LUW_HEAPSNAP_LABEL_MAX;
	kv = label_slot(s, luw_fnv1a64(text, len), text, len, &salt);
	return kv ? (uint32_t)kv->v : UINT32_MAX;
}

uint32_t luw_heapsnap_child(const struct luw_heapsnap *s, uint32_t parent,
			    uint32_t label)
{
	struct luw_kv *kv = luw_kvmap_get(&s->nodemap, parent, label);

	return kv ? (uint32_t)kv->v : 0;
}

const struct luw_heapsnap_group *
luw_heapsnap_group(const struct luw_heapsnap *s, uint32_t node, uint32_t type)
{
	struct luw_kv *kv = luw_kvmap_get(&s->groupmap, node, type);

	return kv ? &s->groups[kv->v] : NULL;
}

uint32_t luw_heapsnap_node(struct luw_heapsnap *s, uint32_t parent, uint32_t label)
{
	struct luw_kv *kv;
	int isnew;

	if (label == UINT32_MAX)
		return 0;
	kv = luw_kvmap_put(&s->nodemap, parent, label, &isnew);
	if (!kv ||
	    (isnew && luw_grow((void **)&s->nodes, &s->nodecap,
			       (size_t)s->nnodes + 1, sizeof(*s->nodes)))) {
		if (kv)
			luw_kvmap_del(&s->nodemap, parent, label, NULL);
		s->oom = 1;
		return 0;
	}
	if (isnew) {
		kv->v = s->nnodes;
		s->nodes[s->nnodes].parent = parent;
		s->nodes[s->nnodes].label = label;
		s->nnodes++;
	}
	return (uint32_t)kv->v;
}

void luw_heapsnap_add(struct luw_heapsnap *s, uint32_t node, uint32_t type,
		      uint64_t objects, uint64_t bytes)
{
	struct luw_heapsnap_group *g;
	struct luw_kv *kv;
	int isnew;

	kv = luw_kvmap_put(&s->groupmap, node, type, &isnew);
	if (!kv) {
		s->oom = 1;
		return;
	}
	if (isnew) {
		if (luw_grow((void **)&s->groups, &s->groupcap, s->ngroups + 1,
			     sizeof(*s->groups))) {
			luw_kvmap_del(&s->groupmap, node, type, NULL);
			s->oom = 1;
			return;
		}
		kv->v = s->ngroups;
		g = &s->groups[s->ngroups++];
		memset(g, 0, sizeof(*g));
		g->node = node;
		g->type = type;
	}
	g = &s->groups[kv->v];
	g->objects += objects;
	g->bytes += bytes;
}

void luw_heapsnap_offer(struct luw_heapsnap *s, uint64_t addr, uint32_t node,
			uint32_t type, uint64_t bytes)
{
	uint32_t i = s->nbig;

	if (i == LUW_HEAPSNAP_LARGEST) {
		if (bytes <= s->big[i - 1].bytes)
			return;
		i--;
	} else {
		s->nbig++;
	}
	/* Insertion into the list kept largest first. */
	while (i > 0 && s->big[i - 1].bytes < bytes) {
		s->big[i] = s->big[i - 1];
		i--;
	}
	s->big[i] = (struct luw_heapsnap_big){ addr, bytes, node, type };
}

struct luw_heapsnap_uni *luw_heapsnap_uni(struct luw_heapsnap *s)
{
	if (luw_grow((void **)&s->unis, &s->unicap, (size_t)s->nunis + 1,
		     sizeof(*s->unis))) {
		s->oom = 1;
		return NULL;
	}
	memset(&s->unis[s->nunis], 0, sizeof(*s->unis));
	return &s->unis[s->nunis++];
}

const char *luw_heapsnap_type_name(uint32_t type)
{
	static const char *const names[LUWH_NTYPES] = {
		[LUWH_T_STR] = "string", [LUWH_T_UPVAL] = "upvalue",
		[LUWH_T_THREAD] = "thread", [LUWH_T_PROTO] = "proto",
		[LUWH_T_FUNC] = "function", [LUWH_T_TRACE] = "trace",
		[LUWH_T_CDATA] = "cdata", [LUWH_T_TAB] = "table",
		[LUWH_T_UDATA] = "userdata",
	};

	return type < LUWH_NTYPES && names[type] ? names[type] : "?";
}

/* -- Writing ------------------------------------------------------------ */

struct out {
	FILE *f;
	uint8_t *b;		/* the section being built */
	size_t n, cap;
	int err;
};

static void put(struct out *o, const void *p, size_t n)
{
	/* An empty label has no bytes, and may have no pointer either. */
	if (o->err || !n)
		return;
	if (luw_grow((void **)&o->b, &o->cap, o->n + n, 1)) {
		o->err = ENOMEM;
		return;
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void put32(struct out *o, uint32_t v)
{
	put(o, &v, 4);
}

static void put64(struct out *o, uint64_t v)
{
	put(o, &v, 8);
}

static void putstr(struct out *o, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put32(o, (uint32_t)n);
	put(o, s, n);
}

/* Writes the section built in o->b, of type, and starts the next. */
static void flush(struct out *o, uint32_t type)
{
	static const uint8_t zero[8];
	uint32_t h[2] = { type, (uint32_t)o->n };

	if (!o->err && (fwrite(h, 8, 1, o->f) != 1 ||
			(o->n && fwrite(o->b, o->n, 1, o->f) != 1) ||
			((o->n & 7) && fwrite(zero, 8 - (o->n & 7), 1, o->f) != 1)))
		o->err = errno ? errno : EIO;
	o->n = 0;
}

/* Entries per section: a section's size must fit its U32 (labels are
 * at most LUW_HEAPSNAP_LABEL_MAX bytes). */
#define PER_SECTION 65536u

int luw_heapsnap_write(const struct luw_heapsnap *s, FILE *f)
{
	struct out o = { .f = f };
	uint32_t hdr[4];

	memcpy(hdr, LUWH_MAGIC, 4);
	hdr[1] = LUWH_VERSION;
	hdr[2] = hdr[3] = 0;
	errno = 0;
	if (fwrite(hdr, sizeof(hdr), 1, f) != 1)
		return -1;
	put32(&o, s->pid);
	put32(&o, s->flags);
	put64(&o, s->time_ns);
	put64(&o, s->pause_ns);
	put64(&o, s->walk_ns);
	putstr(&o, s->comm);
	putstr(&o, s->exe);
	putstr(&o, s->build_id);
	putstr(&o, s->ljkind);
	putstr(&o, s->layout);
	flush(&o, LUWH_SEC_META);
	for (uint32_t i = 0; i < s->nlabels; i += PER_SECTION) {
		uint32_t k = s->nlabels - i < PER_SECTION ? s->nlabels - i : PER_SECTION;

		put32(&o, k);
		for (uint32_t j = i; j < i + k; j++)
			putstr(&o, s->labels[j]);
		flush(&o, LUWH_SEC_LABELS);
	}
	for (uint32_t i = 1; i < s->nnodes; i += PER_SECTION) {
		uint32_t k = s->nnodes - i < PER_SECTION ? s->nnodes - i : PER_SECTION;

		put32(&o, k);
		for (uint32_t j = i; j < i + k; j++) {
			put32(&o, s->nodes[j].parent);
			put32(&o, s->nodes[j].label);
		}
		flush(&o, LUWH_SEC_NODES);
	}
	for (size_t i = 0; i < s->ngroups; i += PER_SECTION) {
		size_t k = s->ngroups - i < PER_SECTION ? s->ngroups - i : PER_SECTION;

		put32(&o, (uint32_t)k);
		for (size_t j = i; j < i + k; j++) {
			put32(&o, s->groups[j].node);
			put32(&o, s->groups[j].type);
			put64(&o, s->groups[j].objects);
			put64(&o, s->groups[j].bytes);
		}
		flush(&o, LUWH_SEC_GROUPS);
	}
	put32(&o, s->nbig);
	for (uint32_t i = 0; i < s->nbig; i++) {
		put64(&o, s->big[i].addr);
		put32(&o, s->big[i].node);
		put32(&o, s->big[i].type);
		put64(&o, s->big[i].bytes);
	}
	flush(&o, LUWH_SEC_LARGEST);
	for (uint32_t i = 0; i < s->nunis; i++) {
		const struct luw_heapsnap_uni *u = &s->unis[i];

		put64(&o, u->g);
		put64(&o, u->gc_total);
		put64(&o, u->objects);
		put64(&o, u->bytes);
		put64(&o, u->internal);
		put64(&o, u->unreached_objects);
		put64(&o, u->unreached_bytes);
		put64(&o, u->skipped);
		put64(&o, u->unsized);
		put64(&o, u->dangling);
		put32(&o, u->root);
		put32(&o, 0);
		for (uint32_t t = 0; t < LUWH_NTYPES; t++)
			put64(&o, u->type_objects[t]);
		for (uint32_t t = 0; t < LUWH_NTYPES; t++)
			put64(&o, u->type_bytes[t]);
		flush(&o, LUWH_SEC_UNIVERSE);
	}
	flush(&o, LUWH_SEC_END);
	free(o.b);
	if (!o.err && fflush(f))
		o.err = errno ? errno : EIO;
	if (o.err) {
		errno = o.err;
		return -1;
	}
	return 0;
}

/* -- Reading ------------------------------------------------------------ */

struct in {
	const uint8_t *p, *end;
	int bad;
};

static uint32_t get32(struct in *in)
{
	uint32_t v = 0;

	if (in->end - in->p < 4) {
		in->bad = 1;
		return 0;
	}
	memcpy(&v, in->p, 4);
	in->p += 4;
	return v;
}

static uint64_t get64(struct in *in)
{
	uint64_t v = 0;

	if (in->end - in->p < 8) {
		in->bad = 1;
		return 0;
	}
	memcpy(&v, in->p, 8);
	in->p += 8;
	return v;
}

/* A string, NUL-terminated into a malloc'd copy (NULL when bad). */
static char *getstr(struct in *in, size_t *len)
{
	uint32_t n = get32(in);
	char *c;

	if (in->bad || (size_t)(in->end - in->p) < n) {
		in->bad = 1;
		return NULL;
	}
	c = malloc((size_t)n + 1);
	if (c) {
		memcpy(c, in->p, n);
		c[n] = 0;
	}
	if (len)
		*len = n;
	in->p += n;
	return c;
}

static void replace(char **field, char *v)
{
	free(*field);
	*field = v;
}

int luw_heapsnap_is(const uint8_t *data, size_t len)
{
	return len >= 4 && !memcmp(data, LUWH_MAGIC, 4);
}

/* One section's payload into s: 0, 1 when it does not parse, -1 ENOMEM. */
static int section(struct luw_heapsnap *s, uint32_t type, struct in *in)
{
	uint32_t n;

	switch (type) {
	case LUWH_SEC_META:
		s->pid = get32(in);
		s->flags = get32(in);
		s->time_ns = get64(in);
		s->pause_ns = get64(in);
		s->walk_ns = get64(in);
		/* A second meta section replaces the first. */
		replace(&s->comm, getstr(in, NULL));
		replace(&s->exe, getstr(in, NULL));
		replace(&s->build_id, getstr(in, NULL));
		replace(&s->ljkind, getstr(in, NULL));
		replace(&s->layout, getstr(in, NULL));
		break;
	case LUWH_SEC_LABELS:
		n = get32(in);
		for (uint32_t i = 0; i < n && !in->bad; i++) {
			size_t len;
			char *c = getstr(in, &len);

			if (!c)
				return in->bad ? 1 : -1;
			/* Labels are C strings: one with a NUL is damaged. */
			if (memchr(c, 0, len) ||
			    luw_heapsnap_label(s, c, len) != s->nlabels - 1)
				in->bad = 1;	/* or the same label twice */
			free(c);
		}
		break;
	case LUWH_SEC_NODES:
		n = get32(in);
		for (uint32_t i = 0; i < n && !in->bad; i++) {
			uint32_t parent = get32(in), label = get32(in);

			if (in->bad || parent >= s->nnodes || label >= s->nlabels ||
			    luw_heapsnap_node(s, parent, label) != s->nnodes - 1)
				in->bad = 1;
		}
		break;
	case LUWH_SEC_GROUPS:
		n = get32(in);
		for (uint32_t i = 0; i < n && !in->bad; i++) {
			uint32_t node = get32(in), t = get32(in);
			uint64_t objects = get64(in), bytes = get64(in);

			if (in->bad || node >= s->nnodes || t >= LUWH_NTYPES)
				in->bad = 1;
			else
				luw_heapsnap_add(s, node, t, objects, bytes);
		}
		break;
	case LUWH_SEC_LARGEST:
		n = get32(in);
		for (uint32_t i = 0; i < n && !in->bad; i++) {
			uint64_t addr = get64(in);
			uint32_t node = get32(in), t = get32(in);
			uint64_t bytes = get64(in);

			if (in->bad || node >= s->nnodes || t >= LUWH_NTYPES)
				in->bad = 1;
			else
				luw_heapsnap_offer(s, addr, node, t, bytes);
		}
		break;
	case LUWH_SEC_UNIVERSE: {
		struct luw_heapsnap_uni *u = luw_heapsnap_uni(s);

		if (!u)
			return -1;
		u->g = get64(in);
		u->gc_total = get64(in);
		u->objects = get64(in);
		u->bytes = get64(in);
		u->internal = get64(in);
		u->unreached_objects = get64(in);
		u->unreached_bytes = get64(in);
		u->skipped = get64(in);
		u->unsized = get64(in);
		u->dangling = get64(in);
		u->root = get32(in);
		get32(in);
		for (uint32_t t = 0; t < LUWH_NTYPES; t++)
			u->type_objects[t] = get64(in);
		for (uint32_t t = 0; t < LUWH_NTYPES; t++)
			u->type_bytes[t] = get64(in);
		if (u->root >= s->nnodes)
			in->bad = 1;
		break;
	}
	default:
		break;		/* unknown: skipped */
	}
	if (s->oom)
		return -1;
	return in->bad || in->p != in->end ? 1 : 0;
}

int luw_heapsnap_read(struct luw_heapsnap *s, const uint8_t *data, size_t len,
		      char *err, size_t errlen)
{
	size_t off = 16;
	uint32_t h[4];
	int rc;

	if (luw_heapsnap_init(s))
		return luw_fail(err, errlen, "out of memory");
	if (len < 16 || !luw_heapsnap_is(data, len))
		return luw_fail(err, errlen, "not a heap snapshot (no LUWH header)");
	memcpy(h, data, 16);
	if (h[1] != LUWH_VERSION || h[2])
		return luw_fail(err, errlen, "heap snapshot version %u flags 0x%x: "
				"this reader takes version %u", h[1], h[2],
				LUWH_VERSION);
	while (off < len) {
		uint32_t sh[2];
		struct in in;

		if (len - off < 8)
			break;
		memcpy(sh, data + off, 8);
		if (sh[1] > len - off - 8)
			break;
		in.p = data + off + 8;
		in.end = in.p + sh[1];
		in.bad = 0;
		if (sh[0] == LUWH_SEC_END)
			return 0;
		rc = section(s, sh[0], &in);
		if (rc < 0) {
			luw_fail(err, errlen, "out of memory");
			return -1;
		}
		if (rc) {
			luw_fail(err, errlen, "section %u at byte %zu does not parse",
				 sh[0], off);
			return 1;
		}
		off += 8 + (((size_t)sh[1] + 7) & ~(size_t)7);
	}
	luw_fail(err, errlen, "cut short at byte %zu of %zu: no end section",
		 off < len ? off : len, len);
	return 1;
}
