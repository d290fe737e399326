/*
 * Live-heap table of the memprof report: chunk address -> (size, allocation
 * site).  Every alloc, realloc and free event of a memprof stream touches
 * it, and a service's stream keeps hundreds of thousands of chunks live, so
 * it is both the report's hot path and most of its memory.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones, so a table churned by billions of alloc/free pairs keeps its
 * probe runs short).  Fibonacci hashing takes the high bits of addr times
 * 2^64/phi, which spreads 16-byte-aligned heap addresses evenly.
 *
 * Slots are 12 bytes (below).  The load factor stays at or under 3/4;
 * growth doubles the table and moves the entries in slot order, so the new
 * table's pages are touched in order while the old one's are handed back
 * in order (MADV_DONTNEED): the peak is the new table, not both.  Just
 * after a growth that is 24 / (3/4) = 32 bytes per live chunk, 16 to 32 at
 * other times (21 to 43 with the 16-byte slots before, 72 to 144 with
 * 24-byte slots at load 1/3, plus the old table during a growth).  See tests/bench/RESULTS.md for what a lower
 * load factor bought in time and what it cost in memory.
 */
#ifndef LUW_STREAMS_MEMPROF_HEAP_H
#define LUW_STREAMS_MEMPROF_HEAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/kvmap.h"

/*
 * A slot is 12 bytes: the address in 48 bits, the size in 24 and the site
 * plus one in 24 (0: empty slot).  Chunks that do not fit live in side
 * maps: a size of 2^24 - 1 bytes or more in big (the slot says
 * LUW_HEAP_BIG), an address of 2^48 or more or a site of 2^24 - 2 or more
 * (neither occurs on a real heap; a corrupt stream may have any) as a
 * whole in far.
 */
#define LUW_HEAP_BIG 0xffffffu
#define LUW_HEAP_ADDR_BITS 48
#define LUW_HEAP_SITE_MAX (0xffffffu - 1)	/* sites below it fit */

struct luw_heap_slot {
	uint32_t w[3];	/* w0: addr 0..31; w1: addr 32..47, size 0..15;
			   w2: site + 1, size 16..23 in the top byte */
};

struct luw_memprof_heap {
	struct luw_heap_slot *slot;
	size_t mask;		/* capacity - 1; 0 when nothing is allocated */
	unsigned int shift;	/* 64 - log2(capacity) */
	size_t n;		/* chunks in the slots */
	size_t limit;		/* n above this grows the table */
	struct luw_kvmap big;	/* addr -> v: size, for LUW_HEAP_BIG slots */
	struct luw_kvmap far;	/* addr -> v: size, w: site (see above) */
};

void luw_memprof_heap_init(struct luw_memprof_heap *m);
void luw_memprof_heap_free(struct luw_memprof_heap *m);
/* Double the capacity (the first call allocates).  0, or -1 on ENOMEM. */
int luw_memprof_heap_grow(struct luw_memprof_heap *m);
/* Slow paths of put/take for chunks that do not fit a slot as a whole. */
int luw_memprof_heap_big_put(struct luw_memprof_heap *m, uint64_t addr, uint64_t size);
uint64_t luw_memprof_heap_big_take(struct luw_memprof_heap *m, uint64_t addr);
int luw_memprof_heap_far_put(struct luw_memprof_heap *m, uint64_t addr, uint64_t size,
			uint32_t site);
int luw_memprof_heap_far_take(struct luw_memprof_heap *m, uint64_t addr,
			 uint64_t *size, uint32_t *site);
/* Chunks live: in the slots and in far. */
static inline size_t luw_memprof_heap_live(const struct luw_memprof_heap *m)
{
	return m->n + m->far.n;
}

static inline uint32_t luw_heap_slot_site1(const struct luw_heap_slot *s)
{
	return s->w[2] & 0xffffffu;
}

static inline uint64_t luw_heap_slot_addr(const struct luw_heap_slot *s)
{
	uint64_t lo;

	memcpy(&lo, s->w, sizeof(lo));
	return lo & 0xffffffffffffULL;
}

/* The size field (LUW_HEAP_BIG: the size is in big). */
static inline uint32_t luw_heap_slot_size(const struct luw_heap_slot *s)
{
	return s->w[1] >> 16 | (s->w[2] >> 24) << 16;
}

static inline void luw_heap_slot_set(struct luw_heap_slot *s, uint64_t addr,
				     uint32_t size, uint32_t site1)
{
	s->w[0] = (uint32_t)addr;
	s->w[1] = (uint32_t)(addr >> 32) | (size & 0xffffu) << 16;
	s->w[2] = site1 | (size >> 16) << 24;
}

static inline size_t luw_memprof_heap_home(const struct luw_memprof_heap *m,
				      uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> m->shift);
}

/* Start loading addr's home slot into the cache (a later put or take). */
static inline void luw_memprof_heap_prefetch(const struct luw_memprof_heap *m,
					uint64_t addr)
{
	if (m->slot)
		__builtin_prefetch(&m->slot[luw_memprof_heap_home(m, addr)], 1);
}

/* Remove slot i, pulling later members of its run into the hole. */
static inline void luw_memprof_heap_unslot(struct luw_memprof_heap *m, size_t i)
{
	size_t j;

	for (j = (i + 1) & m->mask; luw_heap_slot_site1(&m->slot[j]);
	     j = (j + 1) & m->mask) {
		size_t home = luw_memprof_heap_home(m,
					       luw_heap_slot_addr(&m->slot[j]));

		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].w[2] = 0;
	m->n--;
}

/* The slot holding addr (a fitting address), or -1. */
static inline ptrdiff_t luw_memprof_heap_find(const struct luw_memprof_heap *m,
					 uint64_t addr)
{
	size_t i;

	if (!m->n)
		return -1;
	for (i = luw_memprof_heap_home(m, addr);; i = (i + 1) & m->mask) {
		const struct luw_heap_slot *s = &m->slot[i];

		if (!luw_heap_slot_site1(s))
			return -1;
		if (luw_heap_slot_addr(s) == addr)
			return (ptrdiff_t)i;
	}
}

/*
 * Record the chunk at addr (replacing an entry for the same address, as a
 * stream that lost a free event would need).  site must be below
 * UINT32_MAX.  0, or -1 on ENOMEM (the table is left as it was).
 */
static inline int luw_memprof_heap_put(struct luw_memprof_heap *m, uint64_t addr,
				  uint64_t size, uint32_t site)
{
	struct luw_heap_slot *s;
	size_t i;

	if (addr >> LUW_HEAP_ADDR_BITS || site >= LUW_HEAP_SITE_MAX) {
		ptrdiff_t k = addr >> LUW_HEAP_ADDR_BITS ? -1
			      : luw_memprof_heap_find(m, addr);

		if (luw_memprof_heap_far_put(m, addr, size, site))
			return -1;
		if (k >= 0) {
			if (luw_heap_slot_size(&m->slot[k]) == LUW_HEAP_BIG)
				luw_memprof_heap_big_take(m, addr);
			luw_memprof_heap_unslot(m, (size_t)k);
		}
		return 0;
	}
	if (m->n >= m->limit && luw_memprof_heap_grow(m))
		return -1;
	for (i = luw_memprof_heap_home(m, addr);; i = (i + 1) & m->mask) {
		s = &m->slot[i];
		if (!luw_heap_slot_site1(s) || luw_heap_slot_addr(s) == addr)
			break;
	}
	if (size >= LUW_HEAP_BIG) {
		if (luw_memprof_heap_big_put(m, addr, size))
			return -1;
		size = LUW_HEAP_BIG;
	} else if (luw_heap_slot_site1(s) &&
		   luw_heap_slot_size(s) == LUW_HEAP_BIG) {
		luw_memprof_heap_big_take(m, addr);
	}
	if (m->far.n) {
		uint64_t osize;
		uint32_t osite;

		luw_memprof_heap_far_take(m, addr, &osize, &osite);
	}
	m->n += !luw_heap_slot_site1(s);
	luw_heap_slot_set(s, addr, (uint32_t)size, site + 1);
	return 0;
}

/*
 * Remove the chunk at addr.  Returns 1 and its size and site, or 0 when no
 * such chunk is live.
 */
static inline int luw_memprof_heap_take(struct luw_memprof_heap *m, uint64_t addr,
				   uint64_t *size, uint32_t *site)
{
	ptrdiff_t k = addr >> LUW_HEAP_ADDR_BITS ? -1
		      : luw_memprof_heap_find(m, addr);
	const struct luw_heap_slot *s;

	if (k < 0)
		return m->far.n ? luw_memprof_heap_far_take(m, addr, size, site) : 0;
	s = &m->slot[k];
	*size = luw_heap_slot_size(s) == LUW_HEAP_BIG
			? luw_memprof_heap_big_take(m, addr)
			: luw_heap_slot_size(s);
	*site = luw_heap_slot_site1(s) - 1;
	luw_memprof_heap_unslot(m, (size_t)k);
	return 1;
}

#endif
