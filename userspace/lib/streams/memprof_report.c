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

/* A record's counts: events, bytes allocated and freed. */
struct cnt {
	uint64_t num, alloc, free;
};

/*
 * A location and its three records' counts: an event reads its key and
 * adds to one record, so keeping the counts here (two cache lines, which
 * the queue fetches ahead) spares a visit to a separate record.
 */
struct loc {
	uint64_t addr, line, traceno;
	uint32_t gen;
	uint32_t name;		/* name id */
	uint32_t next;		/* next location with the same addr and line */
	uint32_t rec[R__MAX];	/* its record per event kind, or NONE */
	uint32_t pad;
	struct cnt cnt[R__MAX];
};

#define LOC_ALIGN 128
/* Locations fetched ahead from this many on (256 KiB of them). */
#define LOC_AHEAD_MIN 2048

/* A record: its location, in order of creation per event kind. */
struct rec {
	uint32_t loc;
};

/*
 * Chunks allocated at location loc that record rec (a realloc or free
 * record) changed: the reference's "primary" entries.  A service's stream
 * has hundreds of thousands (every realloc site times every site whose
 * chunks it reallocates), so they are kept small: no links, the list of a
 * record is gathered at output time from the creation order.
 */
struct prim {
	uint32_t rec, loc;
	uint64_t allocated, freed, count;
};

/*
 * The primaries of one event kind, in creation order, with an index of
 * 8-byte slots: the top 32 bits a tag from the hash of (rec, loc), the
 * low 32 the primary + 1 (0: empty).  Linear probing, load <= 3/4, no
 * deletion.  The tag spares most probes a visit to the primary; it was a
 * 32-byte slot per primary in a general map, plus a 32-byte primary.
 */
struct primtab {
	struct prim *p;
	size_t n, cap;
	uint64_t *slot;
	size_t mask;		/* capacity - 1; 0 when nothing is allocated */
	unsigned int shift;	/* 64 - log2(capacity) */
};

struct name {
	size_t off, len;
	int64_t dbytes;
	uint64_t nalloc, nfree;
	uint32_t dheap_seq;	/* order of entry into the heap summary */
	uint32_t rank;		/* place in bytewise order (for Overrides) */
};

struct vec {
	void *p;
	size_t n, cap;
};

/* An alloc, realloc or free event waiting in the queue. */
struct qev {
	struct luw_mp_nums n;
	uint8_t aevent;
	unsigned int lc;	/* its location cache entry */
};

/*
 * Events wait this many places before they are aggregated, so the live
 * heap slots they will touch can be fetched into the cache meanwhile: on
 * a service's heap the table is megabytes and nearly every event misses.
 */
#define QLEN 16
/* Entries of the location and primary caches (see struct luw_memprof_report). */
#define LCACHE_BITS 14
#define LCACHE (1 << LCACHE_BITS)
#define PCACHE 4096	/* indexed by the top 12 bits of a hash */
#define DECL_BITS 12

struct luw_memprof_report {
	struct luw_symtab *st;
	int oom;
	uint64_t events;

	struct vec locs, recs[R__MAX], names;
	struct luw_strbuf pool;	/* name text */
	struct luw_strbuf tmp;
	struct luw_kvmap locmap;	/* (addr, line) -> w: first loc + 1 */
	struct luw_kvmap namemap;	/* (hash, probe) -> w: name id */
	struct primtab prim[2];		/* R_REALLOC, R_FREE */
	struct luw_memprof_heap heap;	/* live chunks: size and loc */
	/*
	 * Recent primary hits, direct-mapped: a workload frees and reallocs
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
		uint32_t loc1;	/* location + 1, 0: empty (calloc's zero
				   pages stay untouched until used) */
	} lcache[LCACHE];
	/*
	 * The symtab epoch after the latest declaration of a Lua function
	 * address or trace number that hashes to each entry, and after the
	 * latest C symbol: an entry of the location cache checked at
	 * epoch E still names the right generation when no declaration
	 * that could change it came after E.  Streams declare each Lua
	 * function as it first allocates; checking the symtab again for
	 * every cached location after each declaration took a quarter of
	 * the events through the slow path.
	 */
	uint64_t decl[1 << DECL_BITS];
	uint64_t cfunc_epoch;

	struct qev q[QLEN];
	unsigned int qhead, qn;
};

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

#define AT(v, type, i) (&((type *)(v).p)[i])

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

static const struct cnt *rec_cnt(const struct luw_memprof_report *rep, int kind,
				 uint32_t ri)
{
	return &AT(rep->locs, struct loc,
		   AT(rep->recs[kind], struct rec, ri)->loc)->cnt[kind];
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

/*
 * The primaries of t grouped by record, each group in creation order:
 * those of record r are list[start[r]] .. list[start[r + 1] - 1].  0, or
 * -1 on ENOMEM.
 */
static int prim_lists(const struct primtab *t, size_t nrec, uint32_t **start,
		      uint32_t **list)
{
	size_t i;

	*start = calloc(nrec + 1, sizeof(**start));
	*list = malloc((t->n ? t->n : 1) * sizeof(**list));
	if (!*start || !*list) {
		free(*start);
		free(*list);
		return -1;
	}
	for (i = 0; i < t->n; i++)
		(*start)[t->p[i].rec + 1]++;
	for (i = 0; i < nrec; i++)
		(*start)[i + 1] += (*start)[i];
	for (i = 0; i < t->n; i++)
		(*list)[(*start)[t->p[i].rec]++] = (uint32_t)i;
	/* Each start was moved to the next group's: shift them back. */
	for (i = nrec; i > 0; i--)
		(*start)[i] = (*start)[i - 1];
	(*start)[0] = 0;
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

/* Aggregate every queued event, oldest first. */
static int drain(struct luw_memprof_report *rep)
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
		if (drain(rep) || luw_symtab_add(rep->st, &ev->sym)) {
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

/* --- Output ------------------------------------------------------------- */

/*
 * Report text goes out in pieces of about SPILL bytes: a service's report
 * is megabytes, which need not sit in memory.
 */
#define SPILL (1u << 16)

struct sink {
	struct luw_strbuf text;
	FILE *out;
	int err;
};

static void spill(struct sink *k, int all)
{
	struct luw_strbuf *t = &k->text;

	if (luw_strbuf_failed(t))
		k->err = 1;
	if (k->err || (!all && t->len < SPILL) || !t->len)
		return;
	if (fwrite(t->p, 1, t->len, k->out) != t->len)
		k->err = 1;
	luw_strbuf_reset(t);
}

struct order {
	uint32_t idx;
	uint64_t key;
	int64_t skey;
};

/*
 * Sort a[0..n): the bigger key first (skey when sgn, else key), then the
 * smaller idx (unique, so the order is total), as a stable radix sort:
 * bytes of idx (unless a is in idx order already), then of the key
 * complemented (the bigger first), least significant first; a byte every
 * entry shares takes no pass.  The counts and sums of a service's report are small
 * numbers, so two or three passes of n moves replace n log n comparisons
 * (the merge sort before was 4% of the report's instructions).  0, or -1
 * on ENOMEM.
 */
static int ord_sort(struct order *a, size_t n, int sgn)
{
	enum { IDXB = 4, KEYB = 8, NB = IDXB + KEYB };
	uint32_t (*cnt)[256];
	struct order *tmp, *src = a, *dst;
	size_t i;
	int d, sorted = 1;

	if (n < 2)
		return 0;
	cnt = calloc(NB, sizeof(*cnt));
	tmp = malloc(n * sizeof(*tmp));
	if (!cnt || !tmp) {
		free(cnt);
		free(tmp);
		return -1;
	}
	for (i = 0; i < n; i++) {
		uint64_t k = ~(sgn ? (uint64_t)a[i].skey ^ 1ULL << 63 : a[i].key);

		if (i && a[i].idx < a[i - 1].idx)
			sorted = 0;
		for (d = 0; d < IDXB; d++)
			cnt[d][a[i].idx >> (8 * d) & 0xff]++;
		for (d = 0; d < KEYB; d++)
			cnt[IDXB + d][k >> (8 * d) & 0xff]++;
	}
	dst = tmp;
	for (d = sorted ? IDXB : 0; d < NB; d++) {
		uint32_t *c = cnt[d], sum = 0, t;
		int j, sh = 8 * (d < IDXB ? d : d - IDXB);

		for (j = 0; j < 256 && c[j] != n; j++)
			;
		if (j < 256)
			continue;	/* one value: nothing moves */
		for (j = 0; j < 256; j++) {
			t = c[j];
			c[j] = sum;
			sum += t;
		}
		for (i = 0; i < n; i++) {
			uint64_t k = d < IDXB ? src[i].idx
				     : ~(sgn ? (uint64_t)src[i].skey ^ 1ULL << 63
					    : src[i].key);

			dst[c[k >> sh & 0xff]++] = src[i];
		}
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	free(cnt);
	return 0;
}

/*
 * A report line after its name, composed in place and appended at once:
 * the general-purpose appends (a bounds check and a copy per piece, a
 * division per digit) were a tenth of the report's instructions.
 */
struct line {
	char b[128];	/* the longest: three 20-digit numbers and text */
	size_t n;
};

#define LN_LIT(l, s) (memcpy((l)->b + (l)->n, s, sizeof(s) - 1), \
		      (l)->n += sizeof(s) - 1)

static inline void ln_u(struct line *l, uint64_t v)
{
	static const char d2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
	char t[20], *p = t + sizeof(t);

	while (v >= 100) {
		p -= 2;
		memcpy(p, d2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, d2 + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	memcpy(l->b + l->n, p, (size_t)(t + sizeof(t) - p));
	l->n += (size_t)(t + sizeof(t) - p);
}

static inline void ln_d(struct line *l, int64_t v)
{
	if (v < 0) {
		l->b[l->n++] = '-';
		ln_u(l, (uint64_t)0 - (uint64_t)v);
	} else {
		ln_u(l, (uint64_t)v);
	}
}

static const struct name *loc_name(const struct luw_memprof_report *rep, uint32_t li)
{
	return AT(rep->names, struct name,
		  AT(rep->locs, struct loc, li)->name);
}

static void put_name(struct luw_strbuf *out, const struct luw_memprof_report *rep,
		     const struct name *nm)
{
	luw_strbuf_putn(out, rep->pool.p + nm->off, nm->len);
}

static int name_cmp(const void *a, const void *b, void *ctx)
{
	const struct luw_memprof_report *rep = ctx;
	const struct name *x = *(const struct name *const *)a;
	const struct name *y = *(const struct name *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(rep->pool.p + x->off, rep->pool.p + y->off, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Sort a[0..n) ascending: insertion for short runs, else merges. */
static int u32_sort(uint32_t *a, size_t n)
{
	uint32_t *tmp, *src = a, *dst;
	size_t i, j, w;

	for (i = 0; i < n; i += 16) {
		size_t e = n - i < 16 ? n : i + 16;

		for (j = i + 1; j < e; j++) {
			uint32_t t = a[j];
			size_t k = j;

			for (; k > i && t < a[k - 1]; k--)
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
				dst[o++] = src[r] < src[l] ? src[r++] : src[l++];
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

/*
 * Each name's place in bytewise order, and the names by place in *byrank:
 * the names once, rather than each record's Overrides list by strings.
 */
static int rank_names(struct luw_memprof_report *rep, uint32_t **byrank)
{
	const struct name **pl;
	size_t i, n = rep->names.n;

	pl = malloc((n ? n : 1) * sizeof(*pl));
	*byrank = malloc((n ? n : 1) * sizeof(**byrank));
	if (!pl || !*byrank) {
		free(pl);
		free(*byrank);
		return -1;
	}
	for (i = 0; i < n; i++)
		pl[i] = AT(rep->names, struct name, i);
	qsort_r(pl, n, sizeof(*pl), name_cmp, rep);
	for (i = 0; i < n; i++) {
		uint32_t id = (uint32_t)(pl[i] - (const struct name *)rep->names.p);

		AT(rep->names, struct name, id)->rank = (uint32_t)i;
		(*byrank)[i] = id;
	}
	free(pl);
	return 0;
}

static int render(struct luw_memprof_report *rep, int kind, const uint32_t *byrank,
		  struct sink *k)
{
	struct luw_strbuf *out = &k->text;
	struct vec *v = &rep->recs[kind];
	struct order *ord = calloc(v->n ? v->n : 1, sizeof(*ord));
	const struct primtab *t = kind == R_ALLOC ? NULL
				  : &rep->prim[kind - R_REALLOC];
	uint32_t *start = NULL, *list = NULL, *pl = NULL;
	size_t i;
	int rc = -1;

	if (!ord)
		return -1;
	for (i = 0; i < v->n; i++) {
		ord[i].idx = (uint32_t)i;
		ord[i].key = rec_cnt(rep, kind, (uint32_t)i)->num;
	}
	if (ord_sort(ord, v->n, 0))
		goto out;
	if (t && t->n) {
		if (prim_lists(t, v->n, &start, &list))
			goto out;
		pl = malloc(t->n * sizeof(*pl));
		if (!pl)
			goto out;
	}
	for (i = 0; i < v->n; i++) {
		uint32_t li = AT(*v, struct rec, ord[i].idx)->loc;
		const struct cnt *r = &AT(rep->locs, struct loc, li)->cnt[kind];
		size_t np = 0, j;

		struct line ln = { .n = 0 };

		spill(k, 0);
		put_name(out, rep, loc_name(rep, li));
		LN_LIT(&ln, ": ");
		ln_u(&ln, r->num);
		LN_LIT(&ln, " events\t+");
		ln_u(&ln, r->alloc);
		LN_LIT(&ln, "B\t-");
		ln_u(&ln, r->free);
		LN_LIT(&ln, "B\n");
		luw_strbuf_putn(out, ln.b, ln.n);
		if (!start)
			continue;
		for (j = start[ord[i].idx]; j < start[ord[i].idx + 1]; j++)
			pl[np++] = loc_name(rep, t->p[list[j]].loc)->rank;
		if (!np)
			continue;
		if (u32_sort(pl, np))
			goto out;
		luw_strbuf_puts(out, "\tOverrides:\n");
		for (j = 0; j < np; j++) {
			luw_strbuf_puts(out, "\t\t");
			put_name(out, rep,
				 AT(rep->names, struct name, byrank[pl[j]]));
			luw_strbuf_putc(out, '\n');
		}
		luw_strbuf_putc(out, '\n');
	}
	spill(k, 0);
	rc = k->err ? -1 : 0;
out:
	free(pl);
	free(start);
	free(list);
	free(ord);
	return rc;
}

static struct name *dheap(struct luw_memprof_report *rep, uint32_t li, uint32_t *seq)
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
static int heap_summary(struct luw_memprof_report *rep, struct sink *sk)
{
	struct luw_strbuf *out = &sk->text;
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
		uint32_t li = AT(rep->recs[R_ALLOC], struct rec, i)->loc;
		const struct cnt *r = &AT(rep->locs, struct loc, li)->cnt[R_ALLOC];
		struct name *nm;

		if (!r->alloc)
			continue;
		nm = dheap(rep, li, &seq);
		nm->dbytes = wrap_add(nm->dbytes, r->alloc);
		nm->nalloc += r->num;
	}
	for (k = R_REALLOC; k <= R_FREE; k++) {
		const struct primtab *t = &rep->prim[k - R_REALLOC];
		uint32_t *start, *list;

		if (!t->n)
			continue;
		if (prim_lists(t, rep->recs[k].n, &start, &list))
			return -1;
		for (i = 0; i < rep->recs[k].n; i++) {
			uint32_t p;

			for (p = start[i]; p < start[i + 1]; p++) {
				const struct prim *pr = &t->p[list[p]];
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
		free(start);
		free(list);
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
	luw_strbuf_puts(out, "HEAP SUMMARY:\n");
	for (i = 0; i < n; i++) {
		const struct name *nm = AT(rep->names, struct name, ord[i].key);

		struct line ln = { .n = 0 };

		spill(sk, 0);
		put_name(out, rep, nm);
		LN_LIT(&ln, " holds ");
		ln_d(&ln, nm->dbytes);
		LN_LIT(&ln, "B: ");
		ln_u(&ln, nm->nalloc);
		LN_LIT(&ln, " allocs, ");
		ln_u(&ln, nm->nfree);
		LN_LIT(&ln, " frees\n");
		luw_strbuf_putn(out, ln.b, ln.n);
	}
	luw_strbuf_putc(out, '\n');
	free(ord);
	spill(sk, 0);
	return sk->err ? -1 : 0;
}

static void aliases(const struct luw_memprof_report *rep, struct sink *k)
{
	struct luw_strbuf *out = &k->text;
	size_t i, n = luw_symtab_nalias(rep->st);

	if (!n)
		return;
	luw_strbuf_puts(out, "ALIASES:\n");
	for (i = 0; i < n; i++) {
		size_t len, a = 0, b;
		const char *s = luw_symtab_alias_chunk(rep->st, i, &len);
		uint64_t lineno = 1;

		spill(k, 0);
		luw_strbuf_puts(out, "function_alias_");
		luw_strbuf_putu(out, i + 1);
		luw_strbuf_puts(out, ":\n");
		while (a < len) {
			for (b = a; b < len && s[b] != '\n'; b++)
				;
			if (b > a) {
				luw_strbuf_putu(out, lineno++);
				luw_strbuf_puts(out, "\t| ");
				luw_strbuf_putn(out, s + a, b - a);
				luw_strbuf_putc(out, '\n');
			}
			a = b + 1;
		}
		luw_strbuf_puts(out, "\n\n");
	}
}

int luw_memprof_report_write(struct luw_memprof_report *rep, int leak_only, FILE *out)
{
	static const char *const title[R__MAX] = {
		"ALLOCATIONS\n", "REALLOCATIONS\n", "DEALLOCATIONS\n"
	};
	struct sink k;
	uint32_t *byrank = NULL;
	int i, rc = 0;

	if (drain(rep))
		return -1;
	/*
	 * The report is made from the records alone: the live-heap table,
	 * most of the memory, goes before the output's own arrays are made.
	 */
	luw_memprof_heap_free(&rep->heap);
	if (!leak_only && (rep->prim[0].n || rep->prim[1].n) &&
	    rank_names(rep, &byrank))
		return -1;
	luw_strbuf_init(&k.text);
	k.out = out;
	k.err = 0;
	for (i = 0; !leak_only && i < R__MAX && !rc; i++) {
		luw_strbuf_puts(&k.text, title[i]);
		rc = render(rep, i, byrank, &k);
		luw_strbuf_putc(&k.text, '\n');
	}
	if (!rc)
		rc = heap_summary(rep, &k);
	if (!rc)
		aliases(rep, &k);
	spill(&k, 1);
	if (k.err)
		rc = -1;
	luw_strbuf_free(&k.text);
	free(byrank);
	return rc;
}
