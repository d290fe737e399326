#include "streams/memprof_report.h"
#include "streams/memprof_report_priv.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"
#include "streams/memprof_heap.h"
#include "util/kvmap.h"
#include "util/strbuf.h"

/*
 * The next location, kept on LOC_ALIGN boundaries so that each is exactly
 * two cache lines.
 */
static struct loc *loc_push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 256;
		void *p;

		if (ncap >= NONE || ncap > SIZE_MAX / sizeof(struct loc) ||
		    posix_memalign(&p, LOC_ALIGN, ncap * sizeof(struct loc)))
			return NULL;
		if (v->n)
			memcpy(p, v->p, v->n * sizeof(struct loc));
		free(v->p);
		v->p = p;
		v->cap = ncap;
	}
	return (struct loc *)v->p + v->n++;
}

static void *vec_push(struct vec *v, size_t size)
{
	/* Indexes are 32-bit, NONE reserved. */
	if (v->n + 1 >= NONE || luw_grow(&v->p, &v->cap, v->n + 1, size))
		return NULL;
	return (char *)v->p + size * v->n++;
}


struct luw_memprof_report *luw_memprof_report_new(struct luw_symtab *st)
{
	struct luw_memprof_report *rep = calloc(1, sizeof(*rep));

	if (!rep)
		return NULL;
	rep->st = st;
	luw_strbuf_init(&rep->pool);
	luw_strbuf_init(&rep->tmp);
	luw_kvmap_init(&rep->locmap);
	luw_kvmap_init(&rep->namemap);
	luw_memprof_heap_init(&rep->heap);
	return rep;
}

void luw_memprof_report_free(struct luw_memprof_report *rep)
{
	int k;

	if (!rep)
		return;
	free(rep->locs.p);
	for (k = 0; k < R__MAX; k++)
		free(rep->recs[k].p);
	for (k = 0; k < 2; k++) {
		free(rep->prim[k].p);
		if (rep->prim[k].slot)
			luw_kvmap_mem_free(rep->prim[k].slot,
				       (rep->prim[k].mask + 1) * sizeof(uint64_t));
	}
	free(rep->names.p);
	luw_strbuf_free(&rep->pool);
	luw_strbuf_free(&rep->tmp);
	luw_kvmap_free(&rep->locmap);
	luw_kvmap_free(&rep->namemap);
	luw_memprof_heap_free(&rep->heap);
	free(rep);
}

uint64_t luw_memprof_report_events(const struct luw_memprof_report *rep)
{
	return rep->events;
}

int luw_memprof_report_oom(const struct luw_memprof_report *rep)
{
	return rep->oom;
}

/* Name id of the text in rep->tmp. */
static uint32_t name_id(struct luw_memprof_report *rep)
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
		luw_strbuf_putn(&rep->pool, rep->tmp.p, rep->tmp.len);
		if (luw_strbuf_failed(&rep->pool))
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

static inline unsigned int decl_slot(uint64_t v)
{
	return (unsigned int)((v * 0x9e3779b97f4a7c15ULL) >> (64 - DECL_BITS));
}

/* A trace number's entry, apart from the function addresses'. */
static inline unsigned int decl_trace(uint64_t traceno)
{
	return decl_slot(~traceno * 0xff51afd7ed558ccdULL);
}

/* Note a declaration (after it changed the symtab's epoch). */
static void declared(struct luw_memprof_report *rep, const struct luw_sym *s)
{
	uint64_t epoch = luw_symtab_epoch(rep->st);

	if (s->type == LUW_SYM_LFUNC)
		rep->decl[decl_slot(s->addr)] = epoch;
	else if (s->type == LUW_SYM_TRACE)
		rep->decl[decl_trace(s->traceno)] = epoch;
	else
		rep->cfunc_epoch = epoch;
}

/* No declaration since `since` can have changed the generation of ev. */
static inline int still_valid(const struct luw_memprof_report *rep, const struct qev *ev,
			      uint64_t since)
{
	return rep->cfunc_epoch <= since &&
	       rep->decl[decl_slot(ev->n.addr)] <= since &&
	       (!ev->n.traceno || rep->decl[decl_trace(ev->n.traceno)] <= since);
}

static uint32_t loc_of(struct luw_memprof_report *rep, const struct qev *ev)
{
	struct luw_loc key;
	uint64_t epoch = luw_symtab_epoch(rep->st);
	unsigned int c = ev->lc;
	struct luw_kv *e;
	struct loc *l;
	uint32_t i;
	int isnew;

	const struct loc *cl = !rep->lcache[c].loc1 ? NULL
			       : AT(rep->locs, struct loc, rep->lcache[c].loc1 - 1);
	int hit = cl && cl->addr == ev->n.addr && cl->line == ev->n.line &&
		  cl->traceno == ev->n.traceno;

	if (hit && (rep->lcache[c].epoch == epoch ||
		    still_valid(rep, ev, rep->lcache[c].epoch))) {
		rep->lcache[c].epoch = epoch;
		return rep->lcache[c].loc1 - 1;
	}
	key.addr = ev->n.addr;
	key.line = ev->n.line;
	key.traceno = ev->n.traceno;
	key.gen = 0;
	luw_symtab_loc(rep->st, &key);
	if (hit && cl->gen == key.gen) {
		i = rep->lcache[c].loc1 - 1;
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
	l = loc_push(&rep->locs);
	if (!l)
		return NONE;
	memset(l, 0, sizeof(*l));
	i = (uint32_t)(rep->locs.n - 1);
	l->addr = key.addr;
	l->line = key.line;
	l->traceno = key.traceno;
	l->gen = key.gen;
	l->rec[R_ALLOC] = l->rec[R_REALLOC] = l->rec[R_FREE] = NONE;
	l->next = isnew ? NONE : e->w - 1;
	e->w = i + 1;
	luw_strbuf_reset(&rep->tmp);
	if (luw_symtab_demangle(rep->st, &key, &rep->tmp))
		return NONE;
	l->name = name_id(rep);
	if (l->name == NONE)
		return NONE;
found:
	rep->lcache[c].epoch = epoch;
	rep->lcache[c].loc1 = i + 1;
	return i;
}

/* The counts of location li's record of kind (made when new). */
static struct cnt *rec_of(struct luw_memprof_report *rep, uint32_t li, int kind,
			  uint32_t *ri)
{
	struct loc *l = AT(rep->locs, struct loc, li);
	struct rec *r;

	if (l->rec[kind] != NONE) {
		*ri = l->rec[kind];
		return &l->cnt[kind];
	}
	r = vec_push(&rep->recs[kind], sizeof(*r));
	if (!r)
		return NULL;
	r->loc = li;
	*ri = l->rec[kind] = (uint32_t)(rep->recs[kind].n - 1);
	return &l->cnt[kind];
}

static inline uint64_t prim_hash(uint32_t rec, uint32_t loc)
{
	return ((uint64_t)rec << 32 | loc) * 0x9e3779b97f4a7c15ULL;
}

/* The tag kept in an index slot (bits the home does not already hold). */
static inline uint64_t prim_tag(uint64_t h)
{
	return (h ^ h << 29) & 0xffffffff00000000ULL;
}

/*
 * Double the index (the first call allocates), refilled from the
 * primaries in order: a sequential read, not a visit per old slot.
 */
static int prim_grow(struct primtab *t)
{
	size_t cap = t->slot ? (t->mask + 1) * 2 : 1024, i;
	unsigned int bits = 0;
	uint64_t *nw;

	if (cap > SIZE_MAX / sizeof(*nw) / 2)
		return -1;
	while (((size_t)1 << bits) < cap)
		bits++;
	nw = luw_kvmap_mem_alloc(cap * sizeof(*nw), 0);
	if (!nw)
		return -1;
	if (t->slot)
		luw_kvmap_mem_free(t->slot, (t->mask + 1) * sizeof(*nw));
	t->slot = nw;
	t->mask = cap - 1;
	t->shift = 64 - bits;
	for (i = 0; i < t->n; i++) {
		uint64_t h = prim_hash(t->p[i].rec, t->p[i].loc);
		size_t j = (size_t)(h >> t->shift);

		while (nw[j])
			j = (j + 1) & t->mask;
		nw[j] = prim_tag(h) | (i + 1);
	}
	return 0;
}

/* The primary (rec, loc) of t, made when new; NULL on ENOMEM. */
static struct prim *prim_get(struct primtab *t, uint32_t rec, uint32_t loc,
			     uint32_t *pi)
{
	uint64_t h, tag;
	struct prim *p;
	size_t j;

	if ((t->n + 1) * 4 > (t->mask + 1) * 3 || !t->slot) {
		if (t->n + 1 >= NONE || prim_grow(t))
			return NULL;
	}
	h = prim_hash(rec, loc);
	tag = prim_tag(h);
	for (j = (size_t)(h >> t->shift); t->slot[j]; j = (j + 1) & t->mask) {
		if ((t->slot[j] & 0xffffffff00000000ULL) != tag)
			continue;
		p = &t->p[(uint32_t)t->slot[j] - 1];
		if (p->rec == rec && p->loc == loc) {
			*pi = (uint32_t)t->slot[j] - 1;
			return p;
		}
	}
	if (luw_grow((void **)&t->p, &t->cap, t->n + 1, sizeof(*p)))
		return NULL;
	*pi = (uint32_t)t->n;
	p = &t->p[t->n++];
	p->rec = rec;
	p->loc = loc;
	p->allocated = p->freed = p->count = 0;
	t->slot[j] = tag | (*pi + 1);
	return p;
}

/*
 * The reference's link_to_previous(): credit the allocator (loc) of a chunk
 * of osize bytes.
 */
static int link_prev(struct luw_memprof_report *rep, int kind, uint32_t ri,
		     uint32_t loc, uint64_t osize, uint64_t nsize)
{
	uint64_t key = (uint64_t)kind << 32 | ri;
	unsigned int ci = (unsigned int)((key * 31 + loc) *
					 0x9e3779b97f4a7c15ULL >> 52);
	struct primtab *t = &rep->prim[kind - R_REALLOC];
	struct prim *p;
	uint32_t pi;

	if (rep->pcache[ci].key == key && rep->pcache[ci].loc == loc) {
		p = &t->p[rep->pcache[ci].prim];
		goto credit;
	}
	p = prim_get(t, ri, loc, &pi);
	if (!p)
		return -1;
	rep->pcache[ci].key = key;
	rep->pcache[ci].loc = loc;
	rep->pcache[ci].prim = pi;
credit:
	p->allocated += nsize;
	p->freed += osize;
	p->count++;
	return 0;
}

static int on_event(struct luw_memprof_report *rep, const struct qev *ev)
{
	struct cnt *r;
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
	r->alloc += ev->n.nsize;
	r->free += ev->n.osize;
	if (kind != R_ALLOC &&
	    luw_memprof_heap_take(&rep->heap, ev->n.oaddr, &osize, &oloc) &&
	    link_prev(rep, kind, ri, oloc, osize,
		      kind == R_REALLOC ? ev->n.nsize : 0))
		return -1;
	if (kind != R_FREE && luw_memprof_heap_put(&rep->heap, ev->n.naddr,
					      ev->n.nsize, li))
		return -1;
	return 0;
}

int luw_memprof_report_drain(struct luw_memprof_report *rep)
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
	struct luw_memprof_report *rep = ctx;

	if (s->final)
		return 0;
	if (!luw_symtab_add(rep->st, s)) {
		declared(rep, s);
		return 0;
	}
	rep->oom = 1;
	return 1;
}

/*
 * The queue's next free place, after aggregating the oldest event when the
 * queue is full.  NULL when that ran out of memory.
 */
static inline struct qev *q_slot(struct luw_memprof_report *rep)
{
	if (rep->qn == QLEN) {
		const struct qev *old = &rep->q[rep->qhead];

		rep->qhead = (rep->qhead + 1) % QLEN;
		rep->qn--;
		if (on_event(rep, old)) {
			rep->oom = 1;
			return NULL;
		}
	}
	return &rep->q[(rep->qhead + rep->qn) % QLEN];
}

/* Take the event just written at q_slot() into the queue. */
static inline void q_push(struct luw_memprof_report *rep, struct qev *q)
{
	rep->qn++;
	q->lc = lcache_slot(q->n.addr, q->n.line, q->n.traceno);
	/*
	 * Fetch ahead in two steps: now the heap slots and the location
	 * cache entry of this event; half a queue later, the location that
	 * entry names (its key and counts), read from the entry fetched
	 * then.  Only hints: the aggregation looks everything up again.
	 * Few locations stay in the cache anyway: then the hints are only
	 * work (a tenth more time on a stream of a few dozen sites).
	 */
	if (q->aevent != LUW_AEVENT_ALLOC)
		luw_memprof_heap_prefetch(&rep->heap, q->n.oaddr);
	if (q->aevent != LUW_AEVENT_FREE)
		luw_memprof_heap_prefetch(&rep->heap, q->n.naddr);
	rep->events++;
	if (rep->locs.n < LOC_AHEAD_MIN)
		return;
	__builtin_prefetch(&rep->lcache[q->lc]);
	if (rep->qn > QLEN / 2) {
		uint32_t li1 = rep->lcache[rep->q[(rep->qhead + rep->qn - 1 -
						    QLEN / 2) % QLEN].lc].loc1;

		if (li1) {
			const char *l = (const char *)AT(rep->locs, struct loc,
							 li1 - 1);

			__builtin_prefetch(l, 1);
			__builtin_prefetch(l + 64, 1);
		}
	}
}

static int cb_event(void *ctx, const struct luw_mp_event *ev)
{
	struct luw_memprof_report *rep = ctx;
	struct qev *q;

	if (ev->aevent == LUW_AEVENT_SYMTAB) {
		/* Events before it name symbols as they were before it. */
		if (luw_memprof_report_drain(rep) || luw_symtab_add(rep->st, &ev->sym)) {
			rep->oom = 1;
			return 1;
		}
		declared(rep, &ev->sym);
		return 0;
	}
	q = q_slot(rep);
	if (!q)
		return 1;
	q->aevent = ev->aevent;
	q->n.addr = ev->addr;
	q->n.line = ev->line;
	q->n.traceno = ev->traceno;
	q->n.oaddr = ev->oaddr;
	q->n.osize = ev->osize;
	q->n.naddr = ev->naddr;
	q->n.nsize = ev->nsize;
	q_push(rep, q);
	return 0;
}

/*
 * The report's event loop, for one fast-path decoder (FAST), as NAME: the
 * common events straight from the window into the queue; the rest, and
 * the window's last bytes, one at a time through the checked decoder.
 */
#define MPR_LOOP_DEF(NAME, FAST, ATTR)						\
static ATTR int NAME(struct luw_reader *r, struct luw_memprof_report *rep)			\
{										\
	struct luw_mp_event ev;							\
	int rc;									\
										\
	for (;;) {								\
		const uint8_t *p = r->p, *np;					\
										\
		while (r->end - p >= LUW_MP_MAX_EVENT) {			\
			struct qev *q = q_slot(rep);				\
										\
			if (!q) {						\
				r->p = p;					\
				return 1;					\
			}							\
			np = FAST(p, &q->aevent, &q->n);			\
			if (!np)						\
				break;						\
			p = np;							\
			q_push(rep, q);						\
		}								\
		r->p = p;							\
		rc = luw_memprof_next(r, &ev);					\
		if (rc <= 0)							\
			return rc;						\
		if (cb_event(rep, &ev))						\
			return 1;						\
	}									\
}

MPR_LOOP_DEF(events_plain, luw_mp_fast, )
#ifdef LUW_MP_HAVE_BMI2
MPR_LOOP_DEF(events_bmi2, luw_mp_fast_bmi2, __attribute__((target("bmi2"))))
#endif

int luw_memprof_report_decode_body(struct luw_reader *r, struct luw_memprof_report *rep)
{
	struct luw_prologue pro;

	if (!luw_symtab_read_prologue(r, "ljm", LUW_LJM_VERSION, &pro))
		return -1;
#ifdef LUW_MP_HAVE_BMI2
	if (luw_mp_bmi2_fast() && !getenv("LUW_MEMPROF_NO_BMI2"))
		return events_bmi2(r, rep);
#endif
	return events_plain(r, rep);
}

const struct luw_memprof_ops luw_memprof_report_ops = {
	.sym = cb_sym,
	.event = cb_event,
};
