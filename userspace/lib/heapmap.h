/*
 * Live-heap table of the memprof report: chunk address -> (size, allocation
 * site).  Every alloc, realloc and free event of a memprof stream touches
 * it, so it is the report's hot path; the generic kvmap costs two key words,
 * a separate used flag and an out-of-line call per access, which this table
 * avoids.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones, so a table churned by billions of alloc/free pairs keeps its
 * probe runs short).  Fibonacci hashing takes the high bits of addr times
 * 2^64/phi, which spreads 16-byte-aligned heap addresses evenly.  A slot is
 * empty when its site is 0; sites are stored plus one.
 *
 * The load factor stays at or under 1/3.  Inserting a new chunk and the
 * backward shift after a removal both walk to the end of a probe run,
 * about (1 + 1/(1-a)^2) / 2 slots at load a: 2.5 at 1/2, 1.6 at 1/3, each
 * step a likely branch miss.  On the benchmark's memprof stream this made
 * the whole report about a quarter faster than a limit of 1/2, for 72 to
 * 144 bytes per live chunk instead of 48 to 96.
 */
#ifndef LUW_HEAPMAP_H
#define LUW_HEAPMAP_H

#include <stddef.h>
#include <stdint.h>

struct luw_heap_slot {
	uint64_t addr;
	uint64_t size;
	uint32_t site1;		/* allocation site + 1; 0: empty slot */
};

struct luw_heapmap {
	struct luw_heap_slot *slot;
	size_t mask;		/* capacity - 1; 0 when nothing is allocated */
	unsigned int shift;	/* 64 - log2(capacity) */
	size_t n;
};

void luw_heapmap_init(struct luw_heapmap *m);
void luw_heapmap_free(struct luw_heapmap *m);
/* Double the capacity (the first call allocates).  0, or -1 on ENOMEM. */
int luw_heapmap_grow(struct luw_heapmap *m);

static inline size_t luw_heapmap_home(const struct luw_heapmap *m,
				      uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> m->shift);
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

	if ((m->n + 1) * 3 > m->mask + 1 && luw_heapmap_grow(m))
		return -1;
	for (i = luw_heapmap_home(m, addr);; i = (i + 1) & m->mask) {
		s = &m->slot[i];
		if (!s->site1) {
			m->n++;
			break;
		}
		if (s->addr == addr)
			break;
	}
	s->addr = addr;
	s->size = size;
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
	*size = m->slot[i].size;
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
