#include "streams/memprof_report.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"
#include "streams/memprof_heap.h"
#include "util/kvmap.h"
#include "util/strbuf.h"

#define NONE UINT32_MAX

enum { R_ALLOC, R_REALLOC, R_FREE, R__MAX };

struct loc {
	uint64_t addr, line, traceno;
	uint32_t gen;
	uint32_t name;		/* name id */
	uint32_t next;		/* next location with the same addr and line */
	uint32_t rec[R__MAX];	/* its record per event kind, or NONE */
};

struct rec {
	uint32_t loc;
	uint32_t prim_head, prim_tail;	/* its primaries, in creation order */
	uint64_t num, alloc, free;
};

/* Chunks allocated at location loc that a realloc/free record changed. */
struct prim {
	uint32_t loc;
	uint32_t next;
	uint64_t allocated, freed, count;
};

struct name {
	size_t off, len;
	int64_t dbytes;
	uint64_t nalloc, nfree;
	uint32_t dheap_seq;	/* order of entry into the heap summary */
};

struct vec {
	void *p;
	size_t n, cap;
};

/* An alloc, realloc or free event waiting in the queue. */
struct qev {
	uint8_t aevent;
	uint64_t addr, line, traceno;
	uint64_t oaddr, osize, naddr, nsize;
};

/*
 * Events wait this many places before they are aggregated, so the live
 * heap slots they will touch can be fetched into the cache meanwhile: on
 * a service's heap the table is megabytes and nearly every event misses.
 */
#define QLEN 16
/* Entries of the location and primary caches (see struct luw_mpr). */
#define LCACHE_BITS 14
#define LCACHE (1 << LCACHE_BITS)
#define PCACHE 4096	/* indexed by the top 12 bits of a hash */

struct luw_mpr {
	struct luw_symtab *st;
	int oom;
	uint64_t events;

	struct vec locs, recs[R__MAX], prims, names;
	struct luw_sb pool;	/* name text */
	struct luw_sb tmp;
	struct luw_kvmap locmap;	/* (addr, line) -> w: first loc + 1 */
	struct luw_kvmap namemap;	/* (hash, probe) -> w: name id */
	struct luw_kvmap primmap;	/* (kind << 32 | rec, loc) -> w: prim */
	struct luw_heapmap heap;	/* live chunks: size and loc */
	/*
	 * Recent primmap hits, direct-mapped: a workload frees and reallocs
	 * chunks of a few sites from a few places, so most lookups hit here.
	 */
	struct {
		uint64_t key;	/* kind << 32 | rec; 0: empty (kind 0 is alloc) */
		uint32_t loc, prim;
	} pcache[PCACHE];

	/*
	 * Locations of recent events, direct-mapped by (addr, line,
	 * traceno): a few sites make most events, and this skips the
	 * location map for them.  An entry made in the current symtab
	 * epoch is used as it is; an older one still holds when the
	 * symbol generation of its key has not changed since (the
	 * location is keyed by that generation), which saves the location
	 * map on streams that declare symbols as they go (every
	 * declaration is a new epoch).
	 */
	struct {
		uint64_t epoch;
		uint32_t loc;	/* NONE: empty; its key is in locs */
	} lcache[LCACHE];

	struct qev q[QLEN];
	unsigned int qhead, qn;
};

static void *vec_push(struct vec *v, size_t size)
{
	/* Indexes are 32-bit, NONE reserved. */
	if (v->n + 1 >= NONE || luw_grow(&v->p, &v->cap, v->n + 1, size))
		return NULL;
	return (char *)v->p + size * v->n++;
}

#define AT(v, type, i) (&((type *)(v).p)[i])

struct luw_mpr *luw_mpr_new(struct luw_symtab *st)
{
	struct luw_mpr *rep = calloc(1, sizeof(*rep));
	int k;

	if (!rep)
		return NULL;
	rep->st = st;
	luw_sb_init(&rep->pool);
	luw_sb_init(&rep->tmp);
	luw_kvmap_init(&rep->locmap);
	luw_kvmap_init(&rep->namemap);
	luw_kvmap_init(&rep->primmap);
	luw_heapmap_init(&rep->heap);
	for (k = 0; k < LCACHE; k++)
		rep->lcache[k].loc = NONE;
	return rep;
}

void luw_mpr_free(struct luw_mpr *rep)
{
	int k;

	if (!rep)
		return;
	free(rep->locs.p);
	for (k = 0; k < R__MAX; k++)
		free(rep->recs[k].p);
	free(rep->prims.p);
	free(rep->names.p);
	luw_sb_free(&rep->pool);
	luw_sb_free(&rep->tmp);
	luw_kvmap_free(&rep->locmap);
	luw_kvmap_free(&rep->namemap);
	luw_kvmap_free(&rep->primmap);
	luw_heapmap_free(&rep->heap);
	free(rep);
}

uint64_t luw_mpr_events(const struct luw_mpr *rep)
{
	return rep->events;
}

int luw_mpr_oom(const struct luw_mpr *rep)
{
	return rep->oom;
}

/* Name id of the text in rep->tmp. */
static uint32_t name_id(struct luw_mpr *rep)
{
	uint64_t h = luw_fnv1a64(rep->tmp.p, rep->tmp.len), probe;

	for (probe = 0;; probe++) {
		int isnew;
		struct luw_kv *e = luw_kvmap_put(&rep->namemap, h, probe,
						 &isnew);
		struct name *nm;

		if (!e)
			return NONE;
		if (!isnew) {
			nm = AT(rep->names, struct name, e->w);
			if (nm->len == rep->tmp.len &&
			    !memcmp(rep->pool.p + nm->off, rep->tmp.p,
				    nm->len))
				return e->w;
			continue;
		}
		nm = vec_push(&rep->names, sizeof(*nm));
		if (!nm) {
			luw_kvmap_del(&rep->namemap, h, probe, NULL);
			return NONE;
		}
		memset(nm, 0, sizeof(*nm));
		nm->off = rep->pool.len;
		nm->len = rep->tmp.len;
		nm->dheap_seq = NONE;
		luw_sb_putn(&rep->pool, rep->tmp.p, rep->tmp.len);
		if (luw_sb_failed(&rep->pool))
			return NONE;
		e->w = (uint32_t)(rep->names.n - 1);
		return e->w;
	}
}

static unsigned int lcache_slot(uint64_t addr, uint64_t line,
				uint64_t traceno)
{
	uint64_t h = (addr ^ line * 0x9e3779b97f4a7c15ULL ^ traceno << 32) *
		     0xff51afd7ed558ccdULL;

	return (unsigned int)(h >> (64 - LCACHE_BITS));
}

static uint32_t loc_of(struct luw_mpr *rep, const struct qev *ev)
{
	struct luw_loc key;
	uint64_t epoch = luw_symtab_epoch(rep->st);
	unsigned int c = lcache_slot(ev->addr, ev->line, ev->traceno);
	struct luw_kv *e;
	struct loc *l;
	uint32_t i;
	int isnew;

	const struct loc *cl = rep->lcache[c].loc == NONE ? NULL
			       : AT(rep->locs, struct loc, rep->lcache[c].loc);
	int hit = cl && cl->addr == ev->addr && cl->line == ev->line &&
		  cl->traceno == ev->traceno;

	if (hit && rep->lcache[c].epoch == epoch)
		return rep->lcache[c].loc;
	key.addr = ev->addr;
	key.line = ev->line;
	key.traceno = ev->traceno;
	key.gen = 0;
	luw_symtab_loc(rep->st, &key);
	if (hit && cl->gen == key.gen) {
		i = rep->lcache[c].loc;
		goto found;
	}
	e = luw_kvmap_put(&rep->locmap, key.addr, key.line, &isnew);
	if (!e)
		return NONE;
	for (i = isnew ? NONE : e->w - 1; i != NONE;
	     i = AT(rep->locs, struct loc, i)->next) {
		l = AT(rep->locs, struct loc, i);
		if (l->traceno == key.traceno && l->gen == key.gen)
			goto found;
	}
	l = vec_push(&rep->locs, sizeof(*l));
	if (!l)
		return NONE;
	i = (uint32_t)(rep->locs.n - 1);
	l->addr = key.addr;
	l->line = key.line;
	l->traceno = key.traceno;
	l->gen = key.gen;
	l->rec[R_ALLOC] = l->rec[R_REALLOC] = l->rec[R_FREE] = NONE;
	l->next = isnew ? NONE : e->w - 1;
	e->w = i + 1;
	luw_sb_reset(&rep->tmp);
	if (luw_symtab_demangle(rep->st, &key, &rep->tmp))
		return NONE;
	l->name = name_id(rep);
	if (l->name == NONE)
		return NONE;
found:
	rep->lcache[c].epoch = epoch;
	rep->lcache[c].loc = i;
	return i;
}

static struct rec *rec_of(struct luw_mpr *rep, uint32_t li, int kind,
			  uint32_t *ri)
{
	struct loc *l = AT(rep->locs, struct loc, li);
	struct rec *r;

	if (l->rec[kind] != NONE) {
		*ri = l->rec[kind];
		return AT(rep->recs[kind], struct rec, *ri);
	}
	r = vec_push(&rep->recs[kind], sizeof(*r));
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->loc = li;
	r->prim_head = r->prim_tail = NONE;
	*ri = l->rec[kind] = (uint32_t)(rep->recs[kind].n - 1);
	return r;
}

/*
 * The reference's link_to_previous(): credit the allocator (loc) of a chunk
 * of osize bytes.
 */
static int link_prev(struct luw_mpr *rep, int kind, uint32_t ri,
		     uint32_t loc, uint64_t osize, uint64_t nsize)
{
	uint64_t key = (uint64_t)kind << 32 | ri;
	unsigned int ci = (unsigned int)((key * 31 + loc) *
					 0x9e3779b97f4a7c15ULL >> 52);
	struct luw_kv *e;
	struct prim *p;
	struct rec *r;
	int isnew;

	if (rep->pcache[ci].key == key && rep->pcache[ci].loc == loc) {
		p = AT(rep->prims, struct prim, rep->pcache[ci].prim);
		goto credit;
	}
	e = luw_kvmap_put(&rep->primmap, key, loc, &isnew);
	if (!e)
		return -1;
	if (isnew) {
		p = vec_push(&rep->prims, sizeof(*p));
		if (!p) {
			luw_kvmap_del(&rep->primmap, key, loc, NULL);
			return -1;
		}
		memset(p, 0, sizeof(*p));
		p->loc = loc;
		p->next = NONE;
		e->w = (uint32_t)(rep->prims.n - 1);
		r = AT(rep->recs[kind], struct rec, ri);
		if (r->prim_tail == NONE)
			r->prim_head = e->w;
		else
			AT(rep->prims, struct prim, r->prim_tail)->next = e->w;
		r->prim_tail = e->w;
	}
	rep->pcache[ci].key = key;
	rep->pcache[ci].loc = loc;
	rep->pcache[ci].prim = e->w;
	p = AT(rep->prims, struct prim, e->w);
credit:
	p->allocated += nsize;
	p->freed += osize;
	p->count++;
	return 0;
}

static int on_event(struct luw_mpr *rep, const struct qev *ev)
{
	struct rec *r;
	uint64_t osize;
	uint32_t li, ri, oloc;
	int kind;

	li = loc_of(rep, ev);
	if (li == NONE)
		return -1;
	kind = ev->aevent == LUW_AEVENT_ALLOC ? R_ALLOC
	       : ev->aevent == LUW_AEVENT_REALLOC ? R_REALLOC : R_FREE;
	r = rec_of(rep, li, kind, &ri);
	if (!r)
		return -1;
	r->num++;
	r->alloc += ev->nsize;
	r->free += ev->osize;
	if (kind != R_ALLOC &&
	    luw_heapmap_take(&rep->heap, ev->oaddr, &osize, &oloc) &&
	    link_prev(rep, kind, ri, oloc, osize,
		      kind == R_REALLOC ? ev->nsize : 0))
		return -1;
	if (kind != R_FREE && luw_heapmap_put(&rep->heap, ev->naddr,
					      ev->nsize, li))
		return -1;
	return 0;
}

/* Aggregate every queued event, oldest first. */
static int drain(struct luw_mpr *rep)
{
	while (rep->qn) {
		const struct qev *ev = &rep->q[rep->qhead];

		rep->qhead = (rep->qhead + 1) % QLEN;
		rep->qn--;
		if (!rep->oom && on_event(rep, ev))
			rep->oom = 1;
	}
	return rep->oom;
}

static int cb_sym(void *ctx, const struct luw_sym *s)
{
	struct luw_mpr *rep = ctx;

	if (s->final || !luw_symtab_add(rep->st, s))
		return 0;
	rep->oom = 1;
	return 1;
}

static int cb_event(void *ctx, const struct luw_mp_event *ev)
{
	struct luw_mpr *rep = ctx;
	struct qev *q;

	if (ev->aevent == LUW_AEVENT_SYMTAB) {
		/* Events before it name symbols as they were before it. */
		if (drain(rep) || luw_symtab_add(rep->st, &ev->sym)) {
			rep->oom = 1;
			return 1;
		}
		return 0;
	}
	if (rep->qn == QLEN) {
		const struct qev *old = &rep->q[rep->qhead];

		rep->qhead = (rep->qhead + 1) % QLEN;
		rep->qn--;
		if (on_event(rep, old)) {
			rep->oom = 1;
			return 1;
		}
	}
	q = &rep->q[(rep->qhead + rep->qn++) % QLEN];
	q->aevent = ev->aevent;
	q->addr = ev->addr;
	q->line = ev->line;
	q->traceno = ev->traceno;
	q->oaddr = ev->oaddr;
	q->osize = ev->osize;
	q->naddr = ev->naddr;
	q->nsize = ev->nsize;
	if (ev->aevent != LUW_AEVENT_ALLOC)
		luw_heapmap_prefetch(&rep->heap, ev->oaddr);
	if (ev->aevent != LUW_AEVENT_FREE)
		luw_heapmap_prefetch(&rep->heap, ev->naddr);
	rep->events++;
	return 0;
}

const struct luw_memprof_ops luw_mpr_ops = {
	.sym = cb_sym,
	.event = cb_event,
};

/* --- Output ------------------------------------------------------------- */

/*
 * Report text goes out in pieces of about SPILL bytes: a service's report
 * is megabytes, which need not sit in memory.
 */
#define SPILL (1u << 16)

struct sink {
	struct luw_sb text;
	FILE *out;
	int err;
};

static void spill(struct sink *k, int all)
{
	struct luw_sb *t = &k->text;

	if (luw_sb_failed(t))
		k->err = 1;
	if (k->err || (!all && t->len < SPILL) || !t->len)
		return;
	if (fwrite(t->p, 1, t->len, k->out) != t->len)
		k->err = 1;
	luw_sb_reset(t);
}

struct order {
	uint32_t idx;
	uint64_t key;
	int64_t skey;
};

/*
 * x before y: the bigger key first (skey when sgn, else key), then the
 * smaller idx.  idx is unique, so the order is total and any sort gives
 * the same result.
 */
static inline int ord_before(const struct order *x, const struct order *y,
			     int sgn)
{
	if (sgn ? x->skey != y->skey : x->key != y->key)
		return sgn ? x->skey > y->skey : x->key > y->key;
	return x->idx < y->idx;
}

/*
 * Sort a[0..n) by ord_before: runs of 16 by insertion, then bottom-up
 * merges through a scratch array.  qsort() spent more in its callback
 * calls than in the sorting itself (a service's report has tens of
 * thousands of entries).  0, or -1 on ENOMEM.
 */
static int ord_sort(struct order *a, size_t n, int sgn)
{
	struct order *tmp, *src = a, *dst;
	size_t i, j, w;

	for (i = 0; i < n; i += 16) {
		size_t e = n - i < 16 ? n : i + 16;

		for (j = i + 1; j < e; j++) {
			struct order t = a[j];
			size_t k = j;

			for (; k > i && ord_before(&t, &a[k - 1], sgn); k--)
				a[k] = a[k - 1];
			a[k] = t;
		}
	}
	if (n <= 16)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -1;
	dst = tmp;
	for (w = 16; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t m = n - i < w ? n : i + w;
			size_t e = n - i < 2 * w ? n : i + 2 * w;
			size_t l = i, r = m, o = i;

			while (l < m && r < e)
				dst[o++] = ord_before(&src[r], &src[l], sgn)
						   ? src[r++] : src[l++];
			while (l < m)
				dst[o++] = src[l++];
			while (r < e)
				dst[o++] = src[r++];
		}
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	return 0;
}

static const struct name *loc_name(const struct luw_mpr *rep, uint32_t li)
{
	return AT(rep->names, struct name,
		  AT(rep->locs, struct loc, li)->name);
}

static void put_name(struct luw_sb *out, const struct luw_mpr *rep,
		     const struct name *nm)
{
	luw_sb_putn(out, rep->pool.p + nm->off, nm->len);
}

static int name_cmp(const void *a, const void *b, void *ctx)
{
	const struct luw_mpr *rep = ctx;
	const struct name *x = *(const struct name *const *)a;
	const struct name *y = *(const struct name *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(rep->pool.p + x->off, rep->pool.p + y->off, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int render(struct luw_mpr *rep, int kind, struct sink *k)
{
	struct luw_sb *out = &k->text;
	struct vec *v = &rep->recs[kind];
	struct order *ord = calloc(v->n ? v->n : 1, sizeof(*ord));
	const struct name **pl = NULL;
	size_t i, cap = 0;

	if (!ord)
		return -1;
	for (i = 0; i < v->n; i++) {
		ord[i].idx = (uint32_t)i;
		ord[i].key = AT(*v, struct rec, i)->num;
	}
	if (ord_sort(ord, v->n, 0)) {
		free(ord);
		return -1;
	}
	for (i = 0; i < v->n; i++) {
		const struct rec *r = AT(*v, struct rec, ord[i].idx);
		size_t np = 0, j;
		uint32_t p;

		spill(k, 0);
		put_name(out, rep, loc_name(rep, r->loc));
		luw_sb_puts(out, ": ");
		luw_sb_putu(out, r->num);
		luw_sb_puts(out, " events\t+");
		luw_sb_putu(out, r->alloc);
		luw_sb_puts(out, "B\t-");
		luw_sb_putu(out, r->free);
		luw_sb_puts(out, "B\n");
		for (p = r->prim_head; p != NONE;
		     p = AT(rep->prims, struct prim, p)->next) {
			if (luw_grow((void **)&pl, &cap, np + 1, sizeof(*pl))) {
				free(pl);
				free(ord);
				return -1;
			}
			pl[np++] = loc_name(rep,
					    AT(rep->prims, struct prim, p)->loc);
		}
		if (!np)
			continue;
		qsort_r(pl, np, sizeof(*pl), name_cmp, rep);
		luw_sb_puts(out, "\tOverrides:\n");
		for (j = 0; j < np; j++) {
			luw_sb_puts(out, "\t\t");
			put_name(out, rep, pl[j]);
			luw_sb_putc(out, '\n');
		}
		luw_sb_putc(out, '\n');
	}
	free(pl);
	free(ord);
	spill(k, 0);
	return k->err ? -1 : 0;
}

static struct name *dheap(struct luw_mpr *rep, uint32_t li, uint32_t *seq)
{
	struct name *nm = AT(rep->names, struct name,
			     AT(rep->locs, struct loc, li)->name);

	if (nm->dheap_seq == NONE)
		nm->dheap_seq = (*seq)++;
	return nm;
}

/*
 * dbytes + v modulo 2^64: a corrupt stream can carry sizes near 2^64 (the
 * reference's doubles lose precision there), and signed overflow would be
 * undefined; real heaps stay far below.
 */
static int64_t wrap_add(int64_t dbytes, uint64_t v)
{
	return (int64_t)((uint64_t)dbytes + v);
}

/* The reference's form_heap_delta() and leak_info(). */
static int heap_summary(struct luw_mpr *rep, struct sink *sk)
{
	struct luw_sb *out = &sk->text;
	struct order *ord;
	uint32_t seq = 0;
	size_t i, n = 0;
	int k;

	for (i = 0; i < rep->names.n; i++) {
		struct name *nm = AT(rep->names, struct name, i);

		nm->dbytes = 0;
		nm->nalloc = nm->nfree = 0;
		nm->dheap_seq = NONE;
	}
	for (i = 0; i < rep->recs[R_ALLOC].n; i++) {
		const struct rec *r = AT(rep->recs[R_ALLOC], struct rec, i);
		struct name *nm;

		if (!r->alloc)
			continue;
		nm = dheap(rep, r->loc, &seq);
		nm->dbytes = wrap_add(nm->dbytes, r->alloc);
		nm->nalloc += r->num;
	}
	for (k = R_REALLOC; k <= R_FREE; k++) {
		for (i = 0; i < rep->recs[k].n; i++) {
			const struct rec *r = AT(rep->recs[k], struct rec, i);
			uint32_t p;

			for (p = r->prim_head; p != NONE;
			     p = AT(rep->prims, struct prim, p)->next) {
				const struct prim *pr =
					AT(rep->prims, struct prim, p);
				struct name *nm;

				if (pr->allocated) {
					nm = dheap(rep, pr->loc, &seq);
					nm->dbytes = wrap_add(nm->dbytes,
							      pr->allocated);
					nm->nalloc += pr->count;
				}
				if (pr->freed) {
					nm = dheap(rep, pr->loc, &seq);
					nm->dbytes = wrap_add(nm->dbytes,
							      -pr->freed);
					nm->nfree += pr->count;
				}
			}
		}
	}
	ord = calloc(rep->names.n ? rep->names.n : 1, sizeof(*ord));
	if (!ord)
		return -1;
	for (i = 0; i < rep->names.n; i++) {
		const struct name *nm = AT(rep->names, struct name, i);

		if (nm->dheap_seq == NONE || nm->dbytes <= 0)
			continue;
		ord[n].idx = nm->dheap_seq;
		ord[n].key = i;
		ord[n++].skey = nm->dbytes;
	}
	if (ord_sort(ord, n, 1)) {
		free(ord);
		return -1;
	}
	luw_sb_puts(out, "HEAP SUMMARY:\n");
	for (i = 0; i < n; i++) {
		const struct name *nm = AT(rep->names, struct name, ord[i].key);

		spill(sk, 0);
		put_name(out, rep, nm);
		luw_sb_puts(out, " holds ");
		luw_sb_putd(out, nm->dbytes);
		luw_sb_puts(out, "B: ");
		luw_sb_putu(out, nm->nalloc);
		luw_sb_puts(out, " allocs, ");
		luw_sb_putu(out, nm->nfree);
		luw_sb_puts(out, " frees\n");
	}
	luw_sb_putc(out, '\n');
	free(ord);
	spill(sk, 0);
	return sk->err ? -1 : 0;
}

static void aliases(const struct luw_mpr *rep, struct sink *k)
{
	struct luw_sb *out = &k->text;
	size_t i, n = luw_symtab_nalias(rep->st);

	if (!n)
		return;
	luw_sb_puts(out, "ALIASES:\n");
	for (i = 0; i < n; i++) {
		size_t len, a = 0, b;
		const char *s = luw_symtab_alias_chunk(rep->st, i, &len);
		uint64_t lineno = 1;

		spill(k, 0);
		luw_sb_puts(out, "function_alias_");
		luw_sb_putu(out, i + 1);
		luw_sb_puts(out, ":\n");
		while (a < len) {
			for (b = a; b < len && s[b] != '\n'; b++)
				;
			if (b > a) {
				luw_sb_putu(out, lineno++);
				luw_sb_puts(out, "\t| ");
				luw_sb_putn(out, s + a, b - a);
				luw_sb_putc(out, '\n');
			}
			a = b + 1;
		}
		luw_sb_puts(out, "\n\n");
	}
}

int luw_mpr_write(struct luw_mpr *rep, int leak_only, FILE *out)
{
	static const char *const title[R__MAX] = {
		"ALLOCATIONS\n", "REALLOCATIONS\n", "DEALLOCATIONS\n"
	};
	struct sink k;
	int i, rc = 0;

	if (drain(rep))
		return -1;
	luw_sb_init(&k.text);
	k.out = out;
	k.err = 0;
	for (i = 0; !leak_only && i < R__MAX && !rc; i++) {
		luw_sb_puts(&k.text, title[i]);
		rc = render(rep, i, &k);
		luw_sb_putc(&k.text, '\n');
	}
	if (!rc)
		rc = heap_summary(rep, &k);
	if (!rc)
		aliases(rep, &k);
	spill(&k, 1);
	if (k.err)
		rc = -1;
	luw_sb_free(&k.text);
	return rc;
}
