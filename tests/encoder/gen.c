#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streams/reader.h"

/* A symbol with its name in the pool (pointers would move on growth). */
struct gsym {
	struct luw_sym s;	/* s.name unused here */
	size_t name_off;
};

/* A sample with its frames in the shared frame arrays. */
struct gsample {
	struct luw_sp_sample s;	/* s.lua, s.host unused here */
	size_t lua_off, host_off;
};

struct gevent {
	struct luw_mp_event ev;	/* ev.sym.name unused here */
	size_t name_off;
};

/* Body items in stream order: a symtab update or a sample/event. */
struct gitem {
	uint8_t is_sym;
	uint32_t idx;
};

struct luw_gen {
	enum luw_gen_kind kind;
	int nprologue;
	struct luw_prologue prologue[2];	/* "ljs", then "ljp"/"ljm" */
	char *pool;
	size_t npool, cappool;
	struct gsym *sym;			/* leading symtab, then updates */
	size_t nsym, capsym, nlead;
	struct gsample *sample;
	size_t nsample, capsample;
	struct luw_sp_frame *lua;
	size_t nlua, caplua;
	uint64_t *host;
	size_t nhost, caphost;
	struct gevent *event;
	size_t nevent, capevent;
	size_t nalloc;				/* non-symtab events */
	struct gitem *item;
	size_t nitem, capitem;
	uint64_t heap_min, heap_max;		/* memprof: non-zero addresses */
	int in_body;
	int oom;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t nc = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	q = realloc(*p, nc * size);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

#define GROW(g, arr, n, cap, more)                                           \
	grow((void **)&(g)->arr, &(g)->cap, (g)->n + (more), sizeof(*(g)->arr))

static int pool_add(struct luw_gen *g, const char *s, size_t n, size_t *off)
{
	if (GROW(g, pool, npool, cappool, n + 1))
		return -1;
	*off = g->npool;
	if (n)
		memcpy(g->pool + g->npool, s, n);
	g->npool += n;
	return 0;
}

static int add_item(struct luw_gen *g, int is_sym, size_t idx)
{
	if (GROW(g, item, nitem, capitem, 1))
		return -1;
	g->item[g->nitem].is_sym = (uint8_t)is_sym;
	g->item[g->nitem].idx = (uint32_t)idx;
	g->nitem++;
	return 0;
}

static int fail_oom(struct luw_gen *g)
{
	g->oom = 1;
	return 1;
}

/* --- Loading: decoder callbacks ----------------------------------------- */

static int ld_prologue(void *ctx, const struct luw_prologue *p)
{
	struct luw_gen *g = ctx;

	if (g->nprologue < 2)
		g->prologue[g->nprologue++] = *p;
	if (g->nprologue == 2)
		g->in_body = 1;
	return 0;
}

static int ld_sym(void *ctx, const struct luw_sym *s)
{
	struct luw_gen *g = ctx;
	struct gsym *gs;

	if (GROW(g, sym, nsym, capsym, 1))
		return fail_oom(g);
	gs = &g->sym[g->nsym];
	gs->s = *s;
	gs->s.name = NULL;
	if (pool_add(g, s->name, s->name_len, &gs->name_off))
		return fail_oom(g);
	if (!g->in_body)
		g->nlead = g->nsym + 1;
	else if (add_item(g, 1, g->nsym))
		return fail_oom(g);
	g->nsym++;
	return 0;
}

static int ld_sample(void *ctx, const struct luw_sp_sample *s)
{
	struct luw_gen *g = ctx;
	struct gsample *gs;

	if (GROW(g, sample, nsample, capsample, 1) ||
	    GROW(g, lua, nlua, caplua, s->nlua) ||
	    GROW(g, host, nhost, caphost, s->nhost))
		return fail_oom(g);
	gs = &g->sample[g->nsample];
	gs->s = *s;
	gs->s.lua = NULL;
	gs->s.host = NULL;
	gs->lua_off = g->nlua;
	gs->host_off = g->nhost;
	if (s->nlua)
		memcpy(g->lua + g->nlua, s->lua, s->nlua * sizeof(*s->lua));
	if (s->nhost)
		memcpy(g->host + g->nhost, s->host, s->nhost * sizeof(*s->host));
	g->nlua += s->nlua;
	g->nhost += s->nhost;
	if (add_item(g, 0, g->nsample))
		return fail_oom(g);
	g->nsample++;
	return 0;
}

static void heap_span(struct luw_gen *g, uint64_t a)
{
	if (!a)
		return;
	if (!g->heap_min || a < g->heap_min)
		g->heap_min = a;
	if (a > g->heap_max)
		g->heap_max = a;
}

static int ld_event(void *ctx, const struct luw_mp_event *ev)
{
	struct luw_gen *g = ctx;
	struct gevent *ge;

	if (GROW(g, event, nevent, capevent, 1))
		return fail_oom(g);
	ge = &g->event[g->nevent];
	ge->ev = *ev;
	ge->ev.sym.name = NULL;
	ge->name_off = 0;
	if (ev->aevent == LUW_AEVENT_SYMTAB) {
		if (pool_add(g, ev->sym.name, ev->sym.name_len, &ge->name_off))
			return fail_oom(g);
	} else {
		g->nalloc++;
		heap_span(g, ev->oaddr);
		heap_span(g, ev->naddr);
	}
	if (add_item(g, 0, g->nevent))
		return fail_oom(g);
	g->nevent++;
	return 0;
}

static const struct luw_sysprof_ops load_sops = {
	.prologue = ld_prologue,
	.sym = ld_sym,
	.sample = ld_sample,
};

static const struct luw_memprof_ops load_mops = {
	.prologue = ld_prologue,
	.sym = ld_sym,
	.event = ld_event,
};

struct luw_gen *luw_gen_load(const void *data, size_t len, char *err,
			     size_t errsize)
{
	struct luw_gen *g = calloc(1, sizeof(*g));
	struct luw_reader r;
	int rc;

	if (!g) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	luw_reader_open_mem(&r, data, len);
	rc = luw_symtab_decode(&r, ld_prologue, ld_sym, g);
	if (!rc) {
		if (r.end - r.p >= 3 && !memcmp(r.p, "ljp", 3)) {
			g->kind = LUW_GEN_SYSPROF;
			rc = luw_sysprof_decode_body(&r, &load_sops, g);
		} else if (r.end - r.p >= 3 && !memcmp(r.p, "ljm", 3)) {
			g->kind = LUW_GEN_MEMPROF;
			rc = luw_memprof_decode_body(&r, &load_mops, g);
		} else {
			luw_reader_fail(&r, luw_reader_offset(&r),
				    "'ljp' or 'ljm' prologue", 0);
			rc = -1;
		}
	}
	if (rc || g->oom) {
		if (g->oom || !luw_reader_failed(&r))
			snprintf(err, errsize, "out of memory");
		else
			luw_reader_strerror(&r, err, errsize);
		luw_gen_free(g);
		return NULL;
	}
	if (g->kind == LUW_GEN_SYSPROF ? !g->nsample : !g->nalloc) {
		snprintf(err, errsize, "the stream has no %s to repeat",
			 g->kind == LUW_GEN_SYSPROF ? "sample" : "event");
		luw_gen_free(g);
		return NULL;
	}
	return g;
}

void luw_gen_free(struct luw_gen *g)
{
	if (!g)
		return;
	free(g->pool);
	free(g->sym);
	free(g->sample);
	free(g->lua);
	free(g->host);
	free(g->event);
	free(g->item);
	free(g);
}

enum luw_gen_kind luw_gen_kind(const struct luw_gen *g)
{
	return g->kind;
}

size_t luw_gen_nevents(const struct luw_gen *g)
{
	return g->kind == LUW_GEN_SYSPROF ? g->nsample : g->nalloc;
}

/* --- Writing ------------------------------------------------------------ */

struct out {
	const struct luw_gen *g;
	struct luw_enc *e;
	const struct luw_sysprof_ops *sobs;
	const struct luw_memprof_ops *mobs;
	void *ctx;
};

static void put_prologue(struct out *o, const struct luw_prologue *p)
{
	int (*fn)(void *, const struct luw_prologue *) =
		o->sobs ? o->sobs->prologue : o->mobs ? o->mobs->prologue : NULL;

	luw_enc_prologue(o->e, p);
	if (fn)
		fn(o->ctx, p);
}

static void put_sym(struct out *o, const struct gsym *gs)
{
	int (*fn)(void *, const struct luw_sym *) =
		o->sobs ? o->sobs->sym : o->mobs ? o->mobs->sym : NULL;
	struct luw_sym s = gs->s;

	s.name = o->g->pool + gs->name_off;
	luw_enc_sym(o->e, &s);
	if (fn)
		fn(o->ctx, &s);
}

static void put_sample(struct out *o, const struct gsample *gs)
{
	struct luw_sp_sample s = gs->s;

	s.lua = o->g->lua + gs->lua_off;
	s.host = o->g->host + gs->host_off;
	luw_enc_sp_sample(o->e, &s);
	if (o->sobs && o->sobs->sample)
		o->sobs->sample(o->ctx, &s);
}

static void put_event(struct out *o, const struct gevent *ge, uint64_t shift)
{
	struct luw_mp_event ev = ge->ev;

	ev.sym.name = o->g->pool + ge->name_off;
	if (ev.oaddr)
		ev.oaddr += shift;
	if (ev.naddr)
		ev.naddr += shift;
	luw_enc_mp_event(o->e, &ev);
	if (o->mobs && o->mobs->event)
		o->mobs->event(o->ctx, &ev);
}

static void put_epilogue(struct out *o)
{
	int (*fn)(void *, uint64_t) =
		o->sobs ? o->sobs->epilogue : o->mobs ? o->mobs->epilogue : NULL;

	luw_enc_epilogue(o->e);
	if (fn)
		fn(o->ctx, 0);
}

/* xorshift64*: reproducible from the seed, whatever the libc. */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dull;
}

/* Heap addresses of a pass stay below the user-space limit of x86-64. */
#define ADDR_LIMIT (1ull << 47)
#define SLOTS 4

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_cfunc(const void *a, const void *b)
{
	const struct gsym *x = *(const struct gsym *const *)a;
	const struct gsym *y = *(const struct gsym *const *)b;

	return x->s.addr < y->s.addr ? -1 : x->s.addr > y->s.addr;
}

/* Every address the body refers to a symbol by, sorted.  NULL on ENOMEM. */
static uint64_t *body_refs(const struct luw_gen *g, size_t *n)
{
	size_t i, k = 0, cap = g->nlua + g->nhost + g->nsample + g->nevent + 1;
	uint64_t *ref = malloc(cap * sizeof(*ref));

	if (!ref)
		return NULL;
	for (i = 0; i < g->nlua; i++)
		if (g->lua[i].type != LUW_FRAME_FFUNC)
			ref[k++] = g->lua[i].addr;
	for (i = 0; i < g->nhost; i++)
		ref[k++] = g->host[i];
	for (i = 0; i < g->nsample; i++)
		if (g->sample[i].s.vmstate == LUW_VMST_TRACE)
			ref[k++] = g->sample[i].s.trace_addr;
	for (i = 0; i < g->nevent; i++)
		if (g->event[i].ev.aevent != LUW_AEVENT_SYMTAB &&
		    (g->event[i].ev.asource == LUW_ASOURCE_LFUNC ||
		     g->event[i].ev.asource == LUW_ASOURCE_CFUNC))
			ref[k++] = g->event[i].ev.addr;
	qsort(ref, k, sizeof(*ref), cmp_u64);
	*n = k;
	return ref;
}

/*
 * Which leading-symtab entries a compact stream keeps: Lua functions
 * referred to by address, the C symbol each address falls in (greatest
 * start <= address, as the reports resolve them), every trace and the
 * final marker.  NULL on ENOMEM.
 */
static uint8_t *compact_keep(const struct luw_gen *g)
{
	uint8_t *keep = calloc(g->nlead + 1, 1);
	const struct gsym **cf = malloc((g->nlead + 1) * sizeof(*cf));
	size_t i, nref = 0, ncf = 0, j;
	uint64_t *ref = body_refs(g, &nref);

	if (!keep || !cf || !ref) {
		free(keep);
		keep = NULL;
		goto out;
	}
	for (i = 0; i < g->nlead; i++) {
		const struct luw_sym *s = &g->sym[i].s;

		if (s->final || s->type == LUW_SYM_TRACE)
			keep[i] = 1;
		else if (s->type == LUW_SYM_LFUNC)
			keep[i] = bsearch(&s->addr, ref, nref, sizeof(*ref),
					  cmp_u64) != NULL;
		else
			cf[ncf++] = &g->sym[i];
	}
	qsort(cf, ncf, sizeof(*cf), cmp_cfunc);
	/* Both sorted: walk the references against the C symbol starts. */
	for (i = 0, j = 0; i < nref; i++) {
		while (j < ncf && cf[j]->s.addr <= ref[i])
			j++;
		if (j)
			keep[cf[j - 1] - g->sym] = 1;
	}
out:
	free(cf);
	free(ref);
	return keep;
}

int luw_gen_write(const struct luw_gen *g, struct luw_enc *e, uint64_t size,
		  uint64_t seed, unsigned int flags,
		  const struct luw_sysprof_ops *sobs,
		  const struct luw_memprof_ops *mobs, void *obs_ctx)
{
	struct out o = { g, e, NULL, NULL, obs_ctx };
	uint64_t rnd = seed * 0x9e3779b97f4a7c15ull + 1, span = 0;
	uint64_t limit = size > 0 ? size - 1 : 0;
	uint8_t *keep = NULL;
	size_t i;
	int slots = 1;

	if (g->kind == LUW_GEN_SYSPROF)
		o.sobs = sobs;
	else
		o.mobs = mobs;
	if (!rnd)
		rnd = 1;
	if (g->heap_max) {
		span = ((g->heap_max - g->heap_min) | 0xfffff) + 1;
		if (g->heap_max < ADDR_LIMIT &&
		    span <= (ADDR_LIMIT - g->heap_max) / (SLOTS - 1))
			slots = SLOTS;
	}

	if (flags & LUW_GEN_COMPACT) {
		keep = compact_keep(g);
		if (!keep) {
			e->failed = 1;
			return -1;
		}
	}
	put_prologue(&o, &g->prologue[0]);
	for (i = 0; i < g->nlead; i++)
		if (!keep || keep[i])
			put_sym(&o, &g->sym[i]);
	free(keep);
	put_prologue(&o, &g->prologue[1]);

	for (i = 0; i < g->nitem && luw_enc_size(e) < limit && !e->failed;
	     i++) {
		const struct gitem *it = &g->item[i];

		if (it->is_sym)
			put_sym(&o, &g->sym[it->idx]);
		else if (g->kind == LUW_GEN_SYSPROF)
			put_sample(&o, &g->sample[it->idx]);
		else
			put_event(&o, &g->event[it->idx], 0);
	}

	if (g->kind == LUW_GEN_SYSPROF) {
		while (luw_enc_size(e) < limit && !e->failed)
			put_sample(&o, &g->sample[next_rand(&rnd) % g->nsample]);
	} else {
		uint64_t pass;

		for (pass = 1; luw_enc_size(e) < limit && !e->failed; pass++) {
			uint64_t shift = ((pass + seed) % (uint64_t)slots) * span;

			for (i = 0; i < g->nevent && luw_enc_size(e) < limit;
			     i++) {
				if (g->event[i].ev.aevent != LUW_AEVENT_SYMTAB)
					put_event(&o, &g->event[i], shift);
			}
		}
	}
	put_epilogue(&o);
	return e->failed ? -1 : 0;
}

/* --- Service-shaped memprof streams ------------------------------------- */

/* Model allocator: 16-byte classes up to SMALL_MAX reused LIFO. */
#define HEAP_BASE 0x41000000ull
#define SMALL_MAX 4096u
#define NCLASS (SMALL_MAX / 16)

struct hchunk {
	uint64_t addr, size;
	uint64_t loc_addr, loc_line;	/* where it was allocated */
	uint8_t loc_source;
};

struct hgen {
	const struct luw_gen *g;
	struct luw_enc *e;
	struct luw_gen_heap_stats *st;
	uint64_t rnd, bump;
	uint64_t *freel[NCLASS + 1];		/* per class: free addresses */
	size_t nfree[NCLASS + 1], capfree[NCLASS + 1];
	struct hchunk *live;
	size_t nlive, caplive;
	uint8_t *declared;			/* per Lua function */
	const struct gsym **cfunc;		/* the fixture's C symbols */
	size_t ncfunc;
	unsigned int nfunc;
	int oom;
};

static unsigned int size_class(uint64_t size)
{
	return size <= SMALL_MAX ? (unsigned int)((size + 15) / 16) : 0;
}

static uint64_t h_alloc(struct hgen *h, uint64_t size)
{
	unsigned int c = size_class(size);
	uint64_t a;

	if (c && h->nfree[c])
		return h->freel[c][--h->nfree[c]];
	a = h->bump;
	h->bump += (size + 15) & ~15ull;
	return a;
}

static void h_release(struct hgen *h, uint64_t addr, uint64_t size)
{
	unsigned int c = size_class(size);

	if (!c)
		return;		/* big chunks go back to the system */
	if (grow((void **)&h->freel[c], &h->capfree[c], h->nfree[c] + 1,
		 sizeof(**h->freel)))
		h->oom = 1;
	else
		h->freel[c][h->nfree[c]++] = addr;
}

/* Mostly small sizes, as Lua strings, tables and closures are. */
static uint64_t h_size(struct hgen *h)
{
	uint64_t r = next_rand(&h->rnd);

	switch (r % 16) {
	case 0:
		return 256 + (r >> 8) % 3840;
	case 1:
		return 4096 + (r >> 8) % 60000;
	default:
		return 16 + ((r >> 8) % 12) * 8 + ((r >> 16) % 4) * 16;
	}
}

/* A Lua function, skewed to the first ones: index nfunc * u^3. */
static unsigned int h_func(struct hgen *h)
{
	double u = (double)(next_rand(&h->rnd) >> 11) / 9007199254740992.0;

	return (unsigned int)(u * u * u * h->nfunc) % h->nfunc;
}

static uint64_t func_addr(unsigned int f)
{
	return 0x40000000ull + (uint64_t)f * 0x140;
}

static uint64_t func_line(unsigned int f)
{
	return 1 + (uint64_t)f * 37 % 1900;
}

static void h_emit(struct hgen *h, const struct luw_mp_event *ev)
{
	luw_enc_mp_event(h->e, ev);
}

/* A location for an event: declares its Lua function first if new. */
static void h_loc(struct hgen *h, struct luw_mp_event *ev, int is_free)
{
	uint64_t r = next_rand(&h->rnd) % 100;
	unsigned int f;

	ev->addr = ev->line = ev->traceno = 0;
	if (is_free && r < 85) {
		ev->asource = LUW_ASOURCE_INT;
		return;
	}
	if (r >= 95 && h->ncfunc) {
		const struct gsym *s =
			h->cfunc[next_rand(&h->rnd) % h->ncfunc];

		ev->asource = LUW_ASOURCE_CFUNC;
		ev->addr = s->s.addr + 4;
		return;
	}
	f = h_func(h);
	if (!h->declared[f]) {
		struct luw_mp_event se;
		char name[64];

		memset(&se, 0, sizeof(se));
		se.aevent = LUW_AEVENT_SYMTAB;
		se.asource = LUW_ASOURCE_LFUNC;
		se.header = LUW_ASOURCE_LFUNC << 2 | LUW_AEVENT_SYMTAB;
		se.sym.type = LUW_SYM_LFUNC;
		se.sym.addr = func_addr(f);
		se.sym.line = func_line(f);
		se.sym.name_len = (size_t)snprintf(name, sizeof(name),
			"@/srv/app/%s/mod%04u.lua",
			f % 3 ? "handlers" : "lib", f / 8);
		se.sym.name = name;
		h_emit(h, &se);
		h->declared[f] = 1;
		h->st->symtab_events++;
	}
	ev->asource = LUW_ASOURCE_LFUNC;
	ev->addr = func_addr(f);
	ev->line = func_line(f) + next_rand(&h->rnd) % 4;
}

static void h_event(struct hgen *h, int aevent, struct luw_mp_event *ev)
{
	ev->aevent = (uint8_t)aevent;
	ev->header = (uint8_t)(ev->asource << 2 | aevent);
	h_emit(h, ev);
}

int luw_gen_write_heap(const struct luw_gen *g, struct luw_enc *e,
		       const struct luw_gen_heap *hc,
		       struct luw_gen_heap_stats *st)
{
	struct hgen h;
	uint64_t limit = hc->size > 0 ? hc->size - 1 : 0;
	size_t i;
	int rc = 0;

	memset(&h, 0, sizeof(h));
	memset(st, 0, sizeof(*st));
	h.g = g;
	h.e = e;
	h.st = st;
	h.rnd = hc->seed * 0x9e3779b97f4a7c15ull + 1;
	if (!h.rnd)
		h.rnd = 1;
	h.bump = HEAP_BASE;
	h.nfunc = hc->nfunc ? hc->nfunc : 1;
	h.declared = calloc(h.nfunc, 1);
	h.cfunc = malloc((g->nlead + 1) * sizeof(*h.cfunc));
	if (!h.declared || !h.cfunc) {
		e->failed = 1;
		rc = -1;
		goto out;
	}
	for (i = 0; i < g->nlead; i++)
		if (!g->sym[i].s.final && g->sym[i].s.type == LUW_SYM_CFUNC)
			h.cfunc[h.ncfunc++] = &g->sym[i];

	luw_enc_prologue(e, &g->prologue[0]);
	for (i = 0; i < g->nlead; i++) {
		struct luw_sym s = g->sym[i].s;

		s.name = g->pool + g->sym[i].name_off;
		luw_enc_sym(e, &s);
	}
	luw_enc_prologue(e, &g->prologue[1]);

	while (luw_enc_size(e) < limit && !e->failed && !h.oom) {
		/* Grow towards the target, then churn around it. */
		int growing = h.nlive < hc->live;
		uint64_t r = next_rand(&h.rnd) % 100;
		struct luw_mp_event ev;

		memset(&ev, 0, sizeof(ev));
		if (!h.nlive || r < (growing ? 90u : 35u)) {
			h_loc(&h, &ev, 0);
			ev.nsize = h_size(&h);
			ev.naddr = h_alloc(&h, ev.nsize);
			if (GROW(&h, live, nlive, caplive, 1)) {
				h.oom = 1;
				break;
			}
			h.live[h.nlive].addr = ev.naddr;
			h.live[h.nlive].size = ev.nsize;
			h.live[h.nlive].loc_addr = ev.addr;
			h.live[h.nlive].loc_line = ev.line;
			h.live[h.nlive++].loc_source = ev.asource;
			h_event(&h, LUW_AEVENT_ALLOC, &ev);
			st->allocs++;
		} else if (r < (growing ? 97u : 65u)) {
			/* A table or buffer doubling: the newest chunks mostly. */
			size_t k = h.nlive - 1 -
				   (size_t)(next_rand(&h.rnd) %
					    (h.nlive < 64 ? h.nlive : 64));
			struct hchunk *c = &h.live[k];

			/* Mostly where it was allocated (t[#t + 1] = v). */
			if (next_rand(&h.rnd) % 10) {
				ev.asource = c->loc_source;
				ev.addr = c->loc_addr;
				ev.line = c->loc_line;
			} else {
				h_loc(&h, &ev, 0);
			}
			ev.oaddr = c->addr;
			ev.osize = c->size;
			ev.nsize = c->size < (1u << 20) ? c->size * 2 : c->size;
			ev.naddr = h_alloc(&h, ev.nsize);
			h_release(&h, c->addr, c->size);
			c->addr = ev.naddr;
			c->size = ev.nsize;
			h_event(&h, LUW_AEVENT_REALLOC, &ev);
			st->reallocs++;
		} else {
			size_t k = (size_t)(next_rand(&h.rnd) % h.nlive);

			/* The GC, or code dropping its own buffer. */
			h_loc(&h, &ev, 1);
			if (ev.asource != LUW_ASOURCE_INT) {
				ev.asource = h.live[k].loc_source;
				ev.addr = h.live[k].loc_addr;
				ev.line = h.live[k].loc_line;
			}
			ev.oaddr = h.live[k].addr;
			ev.osize = h.live[k].size;
			h_release(&h, ev.oaddr, ev.osize);
			h.live[k] = h.live[--h.nlive];
			h_event(&h, LUW_AEVENT_FREE, &ev);
			st->frees++;
		}
		if (h.nlive > st->live_peak)
			st->live_peak = h.nlive;
	}
	st->live_end = h.nlive;
	luw_enc_epilogue(e);
	if (h.oom)
		e->failed = 1;
	rc = e->failed ? -1 : 0;
out:
	for (i = 0; i <= NCLASS; i++)
		free(h.freel[i]);
	free(h.live);
	free(h.declared);
	free(h.cfunc);
	return rc;
}
