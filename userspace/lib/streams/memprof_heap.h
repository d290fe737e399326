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
 * A slot is 16 bytes: the address, the size in 32 bits and the site plus
 * one (0: empty slot).  Sizes of 2^32 - 1 bytes and more (a real heap has
 * few; a corrupt stream may have any) live in a side map, the slot saying
 * LUW_HEAP_BIG.  The load factor stays at or under 3/4; growth doubles the
 * table and moves the entries in slot order, so the new table's pages are
 * touched in order while the old one's are handed back in order
 * (MADV_DONTNEED): the peak is the new table, not both.  Just after a
 * growth that is 32 / (3/4) = 43 bytes per live chunk, 21 to 43 at other
 * times (it was 72 to 144 with 24-byte slots at load 1/3, plus the old
 * table during a growth).  See tests/bench/RESULTS.md for what a lower
 * load factor bought in time and what it cost in memory.
 */
#ifndef LUW_STREAMS_MEMPROF_HEAP_H
#define LUW_STREAMS_MEMPROF_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/kvmap.h"

#define LUW_HEAP_BIG UINT32_MAX

struct luw_heap_slot {
	uint64_t addr;
	uint32_t size;		/* or LUW_HEAP_BIG: the size is in big */
	uint32_t site1;		/* allocation site + 1; 0: empty slot */
};

struct luw_heapmap {
	struct luw_heap_slot *slot;
	size_t mask;		/* capacity - 1; 0 when nothing is allocated */
	unsigned int shift;	/* 64 - log2(capacity) */
	size_t n;
	size_t limit;		/* n above this grows the table */
	struct luw_kvmap big;	/* addr -> v: size, for LUW_HEAP_BIG slots */
};

void luw_heapmap_init(struct luw_heapmap *m);
void luw_heapmap_free(struct luw_heapmap *m);
/* Double the capacity (the first call allocates).  0, or -1 on ENOMEM. */
int luw_heapmap_grow(struct luw_heapmap *m);
/* Slow paths of put/take for sizes that do not fit a slot. */
int luw_heapmap_big_put(struct luw_heapmap *m, uint64_t addr, uint64_t size);
uint64_t luw_heapmap_big_take(struct luw_heapmap *m, uint64_t addr);

static inline size_t luw_heapmap_home(const struct luw_heapmap *m,
				      uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> m->shift);
}

/* Start loading addr's home slot into the cache (a later put or take). */
static inline void luw_heapmap_prefetch(const struct luw_heapmap *m,
					uint64_t addr)
{
	if (m->slot)
		__builtin_prefetch(&m->slot[luw_heapmap_home(m, addr)], 1);
}

/*
 * Record the chunk at addr (replacing an entry for the same address, as a
 * stream that lost a free event would need).  site must be below
 * UINT32_MAX.  0, or -1 on ENOMEM (the table is left as it was).
 */
static inline int luw_heapmap_put(struct luw_heapmap *m, uint64_t addr,
				  uint64_t size, uint32_t site)
{
	struct luw_heap_slot *s;
	size_t i;

	if (m->n >= m->limit && luw_heapmap_grow(m))
		return -1;
	for (i = luw_heapmap_home(m, addr);; i = (i + 1) & m->mask) {
		s = &m->slot[i];
		if (!s->site1 || s->addr == addr)
			break;
	}
	if (size >= LUW_HEAP_BIG) {
		if (luw_heapmap_big_put(m, addr, size))
			return -1;
		size = LUW_HEAP_BIG;
	} else if (s->site1 && s->size == LUW_HEAP_BIG) {
		luw_heapmap_big_take(m, addr);
	}
	m->n += !s->site1;
	s->addr = addr;
	s->size = (uint32_t)size;
	s->site1 = site + 1;
	return 0;
}

/*
 * Remove the chunk at addr.  Returns 1 and its size and site, or 0 when no
 * such chunk is live.
 */
static inline int luw_heapmap_take(struct luw_heapmap *m, uint64_t addr,
				   uint64_t *size, uint32_t *site)
{
	size_t i, j;

	if (!m->n)
		return 0;
	for (i = luw_heapmap_home(m, addr);; i = (i + 1) & m->mask) {
		if (!m->slot[i].site1)
			return 0;
		if (m->slot[i].addr == addr)
			break;
	}
	*size = m->slot[i].size == LUW_HEAP_BIG ? luw_heapmap_big_take(m, addr)
						: m->slot[i].size;
	*site = m->slot[i].site1 - 1;
	/* Backward shift: pull later members of the run into the hole. */
	for (j = (i + 1) & m->mask; m->slot[j].site1; j = (j + 1) & m->mask) {
		size_t home = luw_heapmap_home(m, m->slot[j].addr);

		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].site1 = 0;
	m->n--;
	return 1;
}

#endif
