#include "streams/sysprof_report.h"

#include <stdlib.h>
#include <string.h>

#include "luajit/ffnames.h"
#include "util/grow.h"
#include "util/hash.h"
#include "util/kvmap.h"
#include "util/strbuf.h"

/* A frame's name: ext, or text at off in the name cache's pool. */
struct span {
	const char *ext;	/* a static name (fast functions) */
	size_t off, len;
	uint8_t type;		/* Lua frame type; 0 for host frames */
	uint8_t nil;		/* the reference has no name for it */
};

/*
 * Compat names by (addr, line), valid while the symtab epoch stays: the
 * reference renames every frame of every sample, and its name depends only
 * on those two and the symbols seen so far.  Bounded: a stream of ever new
 * addresses empties the cache instead of growing it.
 */
#define NCACHE_MAX_POOL ((size_t)8 << 20)
#define NCACHE_MAX_ENTRIES ((size_t)1 << 16)

#define FC_SIZE 1024		/* front cache of folded frame ids */
#define CS_SIZE 256		/* C symbol starts */

struct luw_sysprof_report {
	enum luw_sysprof_report_mode mode;
	struct luw_symtab *st;
	struct luw_stacks *stacks;
	uint64_t samples, vm[LUW_VMST__MAX];
	int oom;

	/* Compat: distinct stack lines and their counts. */
	struct luw_kvmap agg;	/* (hash, probe) -> v: count, w: entry */
	struct span *ent;
	size_t nent, capent;
	struct luw_strbuf pool;
	struct luw_kvmap ncache;	/* (addr, line) -> v: off, w: len */
	struct luw_strbuf npool;
	uint64_t nepoch;

	/* Per-sample scratch. */
	struct luw_strbuf names, chain, tmp;
	struct span *host, *lua;
	size_t caphost, caplua;
	int32_t *frames;
	size_t capframes;

	/* Folded: frame ids by what they came from, valid for one epoch. */
	struct luw_kvmap cache;	/* (kind, addr, line) hashed -> w: id + 1 */
	uint64_t epoch;
	/*
	 * Direct-mapped caches in front of that one and of the C symbol
	 * search, tagged with epoch + 1 rather than cleared, so a stream of
	 * symtab updates costs nothing here.
	 */
	struct {
		uint64_t addr, line, tag;
		int32_t id;
		int32_t kind;
	} fc[FC_SIZE];
	struct {
		uint64_t addr, start, tag;
	} cs[CS_SIZE];
};

enum { K_HOST = 1, K_LFUNC, K_CFUNC, K_FFUNC };

struct luw_sysprof_report *luw_sysprof_report_new(enum luw_sysprof_report_mode mode, struct luw_symtab *st,
			    struct luw_stacks *out_stacks)
{
	struct luw_sysprof_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	rep->mode = mode;
	rep->st = st;
	rep->stacks = out_stacks;
	luw_kvmap_init(&rep->agg);
	luw_kvmap_init(&rep->cache);
	luw_kvmap_init(&rep->ncache);
	luw_strbuf_init(&rep->pool);
	luw_strbuf_init(&rep->npool);
	luw_strbuf_init(&rep->names);
	luw_strbuf_init(&rep->chain);
	luw_strbuf_init(&rep->tmp);
	rep->epoch = rep->nepoch = luw_symtab_epoch(st);
	return rep;
}

void luw_sysprof_report_free(struct luw_sysprof_report *rep)
{
	if (!rep)
		return;
	luw_kvmap_free(&rep->agg);
	luw_kvmap_free(&rep->cache);
	luw_kvmap_free(&rep->ncache);
	luw_strbuf_free(&rep->pool);
	luw_strbuf_free(&rep->npool);
	luw_strbuf_free(&rep->names);
	luw_strbuf_free(&rep->chain);
	luw_strbuf_free(&rep->tmp);
	free(rep->ent);
	free(rep->host);
	free(rep->lua);
	free(rep->frames);
	free(rep);
}

uint64_t luw_sysprof_report_samples(const struct luw_sysprof_report *rep)
{
	return rep->samples;
}

uint64_t luw_sysprof_report_vmstate(const struct luw_sysprof_report *rep, unsigned int vmstate)
{
	return vmstate < LUW_VMST__MAX ? rep->vm[vmstate] : 0;
}

int luw_sysprof_report_oom(const struct luw_sysprof_report *rep)
{
	return rep->oom;
}

/* --- Compat ------------------------------------------------------------- */

/*
 * Empty a cache.  A table much larger than what was put into it since the
 * last reset is freed rather than wiped, so that streams alternating
 * symtab updates with small samples do not pay for its peak size each time.
 */
static void cache_reset(struct luw_kvmap *m)
{
	if (m->n * 8 < m->mask + 1)
		luw_kvmap_free(m);
	else
		luw_kvmap_clear(m);
}

/* Start a sample: drop cached names that may be stale or too many. */
static void ncache_check(struct luw_sysprof_report *rep)
{
	uint64_t epoch = luw_symtab_epoch(rep->st);

	if (epoch == rep->nepoch && rep->npool.len <= NCACHE_MAX_POOL &&
	    rep->ncache.n <= NCACHE_MAX_ENTRIES)
		return;
	cache_reset(&rep->ncache);
	luw_strbuf_reset(&rep->npool);
	rep->nepoch = epoch;
}

/* The reference name of (addr, line), from the cache or made into it. */
static int ref_name(struct luw_sysprof_report *rep, uint64_t addr, uint64_t line,
		    struct span *sp)
{
	struct luw_loc loc = { .addr = addr, .line = line };
	struct luw_kv *e;
	int isnew;

	sp->ext = NULL;
	sp->nil = 0;
	e = luw_kvmap_put(&rep->ncache, addr, line, &isnew);
	if (!e)
		return -1;
	if (!isnew) {
		sp->off = e->v;
		sp->len = e->w;
		return 0;
	}
	luw_symtab_loc(rep->st, &loc);
	sp->off = rep->npool.len;
	if (luw_symtab_demangle(rep->st, &loc, &rep->npool) ||
	    rep->npool.len - sp->off >= UINT32_MAX) {
		luw_kvmap_del(&rep->ncache, addr, line, NULL);
		return -1;
	}
	sp->len = rep->npool.len - sp->off;
	e->v = sp->off;
	e->w = (uint32_t)sp->len;
	return 0;
}

static const char *span_text(const struct luw_sysprof_report *rep, const struct span *sp)
{
	return sp->ext ? sp->ext : rep->npool.p + sp->off;
}

static void chain_add(struct luw_sysprof_report *rep, const struct span *sp)
{
	luw_strbuf_putn(&rep->chain, span_text(rep, sp), sp->len);
	luw_strbuf_putc(&rep->chain, ';');
}

static int has_prefix(const struct luw_sysprof_report *rep, const struct span *sp,
		      const char *pfx)
{
	size_t n = strlen(pfx);

	return sp->len >= n && !memcmp(span_text(rep, sp), pfx, n);
}

static int compat_count(struct luw_sysprof_report *rep)
{
	uint64_t h = luw_fnv1a64(rep->chain.p, rep->chain.len), probe;

	for (probe = 0;; probe++) {
		int isnew;
		struct luw_kv *e = luw_kvmap_put(&rep->agg, h, probe, &isnew);
		struct span *sp;

		if (!e)
			return -1;
		if (!isnew) {
			sp = &rep->ent[e->w];
			if (sp->len == rep->chain.len &&
			    !memcmp(rep->pool.p + sp->off, rep->chain.p,
				    sp->len)) {
				e->v++;
				return 0;
			}
			continue;
		}
		if (luw_grow((void **)&rep->ent, &rep->capent, rep->nent + 1,
			    sizeof(*rep->ent))) {
			luw_kvmap_del(&rep->agg, h, probe, NULL);
			return -1;
		}
		sp = &rep->ent[rep->nent];
		sp->off = rep->pool.len;
		sp->len = rep->chain.len;
		luw_strbuf_putn(&rep->pool, rep->chain.p, rep->chain.len);
		if (luw_strbuf_failed(&rep->pool))
			return -1;
		e->v = 1;
		e->w = (uint32_t)rep->nent++;
		return 0;
	}
}

static int compat_sample(struct luw_sysprof_report *rep, const struct luw_sp_sample *s)
{
	size_t i, nlua = s->nlua;

	ncache_check(rep);
	luw_strbuf_reset(&rep->chain);
	if (luw_grow((void **)&rep->host, &rep->caphost, s->nhost,
		    sizeof(*rep->host)) ||
	    luw_grow((void **)&rep->lua, &rep->caplua, s->nlua,
		    sizeof(*rep->lua)))
		return -1;
	/* Both stacks root first, as the reference inserts at position 1. */
	for (i = 0; i < s->nhost; i++)
		if (ref_name(rep, s->host[s->nhost - 1 - i], 0, &rep->host[i]))
			return -1;
	for (i = 0; i < nlua; i++) {
		const struct luw_sp_frame *f = &s->lua[nlua - 1 - i];
		struct span *sp = &rep->lua[i];

		sp->type = f->type;
		if (f->type == LUW_FRAME_FFUNC) {
			const char *n = luw_ffnames_tarantool(f->addr);

			sp->ext = n ? n : "";
			sp->off = 0;
			sp->nil = !n;
			sp->len = strlen(sp->ext);
		} else if (ref_name(rep, f->addr,
				    f->type == LUW_FRAME_LFUNC ? f->line : 0,
				    sp)) {
			return -1;
		}
	}

	for (i = 0; i < s->nhost; i++) {
		const struct span *h = &rep->host[i];

		chain_add(rep, h);
		if (has_prefix(rep, h, "lua_cpcall") && nlua)
			nlua--;
		if (has_prefix(rep, h, "lua_call") ||
		    has_prefix(rep, h, "lua_pcall")) {
			size_t k, cnt = 0;

			for (k = 0; k < nlua; k++) {
				cnt++;
				if (rep->lua[k].type == LUW_FRAME_CFUNC)
					break;
				if (!rep->lua[k].nil)
					chain_add(rep, &rep->lua[k]);
			}
			/* table.remove(callchain, cnt): just that one frame. */
			if (cnt) {
				memmove(&rep->lua[cnt - 1], &rep->lua[cnt],
					(nlua - cnt) * sizeof(*rep->lua));
				nlua--;
			}
		}
	}
	if (!rep->chain.len)
		luw_strbuf_putc(&rep->chain, ';');
	if (luw_strbuf_failed(&rep->npool) || luw_strbuf_failed(&rep->chain))
		return -1;
	return compat_count(rep);
}

/* --- Folded ------------------------------------------------------------- */

/* Intern a name made safe for the folded format. */
static int32_t intern_clean(struct luw_sysprof_report *rep, const char *s, size_t n)
{
	size_t i;

	luw_strbuf_reset(&rep->tmp);
	luw_strbuf_putn(&rep->tmp, s, n);
	if (luw_strbuf_failed(&rep->tmp))
		return -1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)rep->tmp.p[i];

		if (c == ';')
			rep->tmp.p[i] = ':';
		else if (c < 0x20 || c == 0x7f)
			rep->tmp.p[i] = '?';
	}
	return luw_stacks_intern(rep->stacks, rep->tmp.p, n);
}

static int32_t name_csym(struct luw_sysprof_report *rep, uint64_t addr)
{
	uint64_t start;
	const char *name;
	size_t len;

	if (luw_symtab_cfunc(rep->st, addr, &start, &name, &len))
		return intern_clean(rep, name, len);
	luw_strbuf_reset(&rep->names);
	luw_strbuf_putx(&rep->names, addr);
	return intern_clean(rep, rep->names.p, rep->names.len);
}

static int32_t name_lfunc(struct luw_sysprof_report *rep, uint64_t addr, uint64_t line)
{
	struct luw_loc loc = { .addr = addr, .line = line };

	luw_symtab_loc(rep->st, &loc);
	luw_strbuf_reset(&rep->names);
	if (luw_symtab_demangle(rep->st, &loc, &rep->names))
		return -1;
	return intern_clean(rep, rep->names.p, rep->names.len);
}

static int32_t name_ffunc(struct luw_sysprof_report *rep, uint64_t ffid)
{
	const char *n = luw_ffnames_tarantool(ffid);

	if (n)
		return intern_clean(rep, n, strlen(n));
	luw_strbuf_reset(&rep->names);
	luw_strbuf_puts(&rep->names, "[ffid ");
	luw_strbuf_putu(&rep->names, ffid);
	luw_strbuf_putc(&rep->names, ']');
	return intern_clean(rep, rep->names.p, rep->names.len);
}

static int32_t frame_id(struct luw_sysprof_report *rep, int kind, uint64_t addr,
			uint64_t line)
{
	uint64_t key = addr * 0x9e3779b97f4a7c15ULL + (uint64_t)kind;
	size_t fi = (size_t)((key ^ line * 0xc2b2ae3d27d4eb4fULL) >> 54) %
		    FC_SIZE;
	struct luw_kv *e;
	int32_t id;
	int isnew;

	if (rep->fc[fi].tag == rep->epoch + 1 && rep->fc[fi].addr == addr &&
	    rep->fc[fi].line == line && rep->fc[fi].kind == kind)
		return rep->fc[fi].id;
	/* The cache key mixes kind into addr; line is the second word. */
	e = luw_kvmap_put(&rep->cache, key ^ ((uint64_t)kind << 60), line,
			  &isnew);
	if (!e)
		return -1;
	if (!isnew && e->v == addr) {
		id = (int32_t)e->w - 1;
		goto out;
	}
	switch (kind) {
	case K_LFUNC:
		id = name_lfunc(rep, addr, line);
		break;
	case K_FFUNC:
		id = name_ffunc(rep, addr);
		break;
	default:
		id = name_csym(rep, addr);
		break;
	}
	if (id < 0)
		return -1;
	/* A colliding key just gets overwritten: the cache stays exact. */
	e = luw_kvmap_get(&rep->cache, key ^ ((uint64_t)kind << 60), line);
	if (e) {
		e->v = addr;
		e->w = (uint32_t)id + 1;
	}
out:
	rep->fc[fi].addr = addr;
	rep->fc[fi].line = line;
	rep->fc[fi].kind = kind;
	rep->fc[fi].id = id;
	rep->fc[fi].tag = rep->epoch + 1;
	return id;
}

static int push(struct luw_sysprof_report *rep, size_t *n, int32_t id)
{
	if (id < 0 || luw_grow((void **)&rep->frames, &rep->capframes, *n + 1,
			      sizeof(*rep->frames)))
		return -1;
	rep->frames[(*n)++] = id;
	return 0;
}

static int lua_frame_id(struct luw_sysprof_report *rep, const struct luw_sp_frame *f)
{
	switch (f->type) {
	case LUW_FRAME_LFUNC:
		return frame_id(rep, K_LFUNC, f->addr, f->line);
	case LUW_FRAME_FFUNC:
		return frame_id(rep, K_FFUNC, f->addr, 0);
	default:
		return frame_id(rep, K_CFUNC, f->addr, 0);
	}
}

static int trace_frames(struct luw_sysprof_report *rep, const struct luw_sp_sample *s,
			size_t *n)
{
	struct luw_loc start;
	const char *chunk = NULL;
	size_t len = 0;
	uint64_t first;
	uint32_t alias = 0;
	int known;

	if (push(rep, n, frame_id(rep, K_LFUNC, s->trace_addr, s->trace_line)))
		return -1;
	known = luw_symtab_trace(rep->st, s->traceno, 0, &start) &&
		luw_symtab_lfunc(rep->st, start.addr, start.gen, &chunk, &len,
				 &first, &alias);
	luw_strbuf_reset(&rep->names);
	luw_strbuf_puts(&rep->names, "TRACE_");
	luw_strbuf_putu(&rep->names, s->traceno);
	if (known) {
		luw_strbuf_puts(&rep->names, " ");
		if (alias) {
			luw_strbuf_puts(&rep->names, "function_alias_");
			luw_strbuf_putu(&rep->names, alias);
		} else {
			luw_strbuf_putn(&rep->names, chunk, len);
		}
		luw_strbuf_putc(&rep->names, ':');
		luw_strbuf_putd(&rep->names, (int64_t)start.line);
	}
	if (luw_strbuf_failed(&rep->names))
		return -1;
	return push(rep, n, intern_clean(rep, rep->names.p, rep->names.len));
}

/* Symbol start of a C address, or the address itself when unknown. */
static uint64_t csym_start(struct luw_sysprof_report *rep, uint64_t addr)
{
	size_t ci = (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 56) % CS_SIZE;
	uint64_t start;
	const char *name;
	size_t len;

	if (rep->cs[ci].tag == rep->epoch + 1 && rep->cs[ci].addr == addr)
		return rep->cs[ci].start;
	if (!luw_symtab_cfunc(rep->st, addr, &start, &name, &len))
		start = addr;
	rep->cs[ci].addr = addr;
	rep->cs[ci].start = start;
	rep->cs[ci].tag = rep->epoch + 1;
	return start;
}

static int folded_sample(struct luw_sysprof_report *rep, const struct luw_sp_sample *s)
{
	size_t n = 0, h = 0, nh = s->nhost, pend = 0, i;
	int unanchored = 0;

	if (luw_symtab_epoch(rep->st) != rep->epoch) {
		cache_reset(&rep->cache);
		rep->epoch = luw_symtab_epoch(rep->st);
	}
	if (s->vmstate == LUW_VMST_TRACE) {
		if (trace_frames(rep, s, &n))
			return -1;
		return luw_stacks_add(rep->stacks, rep->frames, n, 1);
	}

	/*
	 * Lua frames root first (i counts down in the stream's order); pend
	 * is the index where the not-yet-placed Lua frames start.
	 */
	for (i = s->nlua; i-- > 0;) {
		const struct luw_sp_frame *f = &s->lua[i];
		size_t j, k;
		uint64_t sym;

		if (f->type != LUW_FRAME_CFUNC)
			continue;
		sym = csym_start(rep, f->addr);
		for (j = h; j < nh; j++)
			if (csym_start(rep, s->host[nh - 1 - j]) == sym)
				break;
		if (j == nh) {
			unanchored = 1;
			continue;
		}
		/* Host frames up to the anchor, the Lua frames, the anchor. */
		for (; h < j; h++)
			if (push(rep, &n, frame_id(rep, K_HOST,
						   s->host[nh - 1 - h], 0)))
				return -1;
		for (k = s->nlua - pend; k-- > i + 1;)
			if (push(rep, &n, lua_frame_id(rep, &s->lua[k])))
				return -1;
		if (push(rep, &n, frame_id(rep, K_HOST, s->host[nh - 1 - j], 0)))
			return -1;
		h = j + 1;
		pend = s->nlua - i;
	}
	for (; h < nh; h++)
		if (push(rep, &n, frame_id(rep, K_HOST, s->host[nh - 1 - h], 0)))
			return -1;
	if (pend < s->nlua) {
		if (unanchored && nh &&
		    push(rep, &n, luw_stacks_intern(rep->stacks, "[lua]", 5)))
			return -1;
		for (i = s->nlua - pend; i-- > 0;)
			if (push(rep, &n, lua_frame_id(rep, &s->lua[i])))
				return -1;
	}
	if (!n) {
		const char *vs = luw_sysprof_vmstate_name(s->vmstate);

		luw_strbuf_reset(&rep->names);
		luw_strbuf_putc(&rep->names, '[');
		luw_strbuf_puts(&rep->names, vs);
		luw_strbuf_putc(&rep->names, ']');
		if (luw_strbuf_failed(&rep->names) ||
		    push(rep, &n, intern_clean(rep, rep->names.p,
					       rep->names.len)))
			return -1;
	}
	return luw_stacks_add(rep->stacks, rep->frames, n, 1);
}

/* --- Callbacks ---------------------------------------------------------- */

static int on_sym(void *ctx, const struct luw_sym *s)
{
	struct luw_sysprof_report *rep = ctx;

	if (s->final)
		return 0;
	if (luw_symtab_add(rep->st, s)) {
		rep->oom = 1;
		return 1;
	}
	return 0;
}

static int on_sample(void *ctx, const struct luw_sp_sample *s)
{
	struct luw_sysprof_report *rep = ctx;
	int rc = 0;

	rep->samples++;
	rep->vm[s->vmstate]++;
	if (rep->mode == LUW_SPR_COMPAT)
		rc = compat_sample(rep, s);
	else if (rep->mode == LUW_SPR_FOLDED)
		rc = folded_sample(rep, s);
	if (rc) {
		rep->oom = 1;
		return 1;
	}
	return 0;
}

const struct luw_sysprof_ops luw_sysprof_report_ops = {
	.sym = on_sym,
	.sample = on_sample,
};

/* --- Output ------------------------------------------------------------- */

struct line {
	const char *p;
	size_t len;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->p, y->p, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int write_compat(const struct luw_sysprof_report *rep, FILE *out)
{
	struct luw_strbuf text;
	struct line *lines;
	size_t i, *offs;
	int rc = 0;

	luw_strbuf_init(&text);
	lines = calloc(rep->nent ? rep->nent : 1, sizeof(*lines));
	offs = calloc(rep->nent ? rep->nent : 1, sizeof(*offs));
	if (!lines || !offs) {
		free(lines);
		free(offs);
		return -1;
	}
	for (i = 0; i < rep->agg.mask + 1 && rep->agg.slot; i++) {
		const struct luw_kv *e = &rep->agg.slot[i];
		const struct span *sp;

		if (!e->used)
			continue;
		sp = &rep->ent[e->w];
		offs[e->w] = text.len;
		luw_strbuf_putn(&text, rep->pool.p + sp->off, sp->len);
		luw_strbuf_putc(&text, '\t');
		luw_strbuf_putu(&text, e->v);
		lines[e->w].len = text.len - offs[e->w];
	}
	if (luw_strbuf_failed(&text)) {
		rc = -1;
		goto out;
	}
	for (i = 0; i < rep->nent; i++)
		lines[i].p = text.p + offs[i];
	qsort(lines, rep->nent, sizeof(*lines), line_cmp);
	for (i = 0; i < rep->nent; i++) {
		if (fwrite(lines[i].p, 1, lines[i].len, out) != lines[i].len ||
		    putc('\n', out) == EOF) {
			rc = -1;
			break;
		}
	}
out:
	luw_strbuf_free(&text);
	free(lines);
	free(offs);
	return rc;
}

int luw_sysprof_report_write(const struct luw_sysprof_report *rep, FILE *out)
{
	unsigned int i;

	if (rep->mode == LUW_SPR_COMPAT)
		return write_compat(rep, out);
	if (fprintf(out, "samples\t%llu\n",
		    (unsigned long long)rep->samples) < 0)
		return -1;
	for (i = 0; i < LUW_VMST__MAX; i++)
		if (fprintf(out, "%s\t%llu\n", luw_sysprof_vmstate_name(i),
			    (unsigned long long)rep->vm[i]) < 0)
			return -1;
	return 0;
}
