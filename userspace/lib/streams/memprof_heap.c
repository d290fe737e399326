#include "streams/memprof_heap.h"

#include <sys/mman.h>

void luw_memprof_heap_init(struct luw_memprof_heap *m)
{
	m->slot = NULL;
	m->mask = 0;
	m->shift = 64;
	m->n = 0;
	m->limit = 0;
	luw_kvmap_init(&m->big);
	luw_kvmap_init(&m->far);
}

void luw_memprof_heap_free(struct luw_memprof_heap *m)
{
	if (m->slot)
		luw_kvmap_mem_free(m->slot, (m->mask + 1) * sizeof(*m->slot));
	luw_kvmap_free(&m->big);
	luw_kvmap_free(&m->far);
	luw_memprof_heap_init(m);
}

/*
 * Old slots moved per step of a growth: 192 KiB of them, a whole number of
 * pages of any size up to 64 KiB.
 */
#define GROW_STEP 16384

int luw_memprof_heap_grow(struct luw_memprof_heap *m)
{
	struct luw_heap_slot *nw;
	size_t cap = m->slot ? (m->mask + 1) * 2 : 256, b;
	size_t oldcap = m->slot ? m->mask + 1 : 0;
	size_t oldbytes = oldcap * sizeof(*nw);
	size_t newbytes = cap * sizeof(*nw);
	size_t nmask = cap - 1, pop = 0;
	unsigned int bits = 0;

	if (cap > SIZE_MAX / sizeof(*nw) / 2)
		return -1;
	while (((size_t)1 << bits) < cap)
		bits++;
	nw = luw_kvmap_mem_alloc(newbytes, 0);
	if (!nw)
		return -1;
	for (b = 0; b < oldcap; b += GROW_STEP) {
		size_t e = oldcap - b < GROW_STEP ? oldcap : b + GROW_STEP, i;

		/*
		 * Homes in the new table are twice those in the old one, so
		 * both are walked in order: make the new table's pages present
		 * a step ahead of the writes (one call per step, not a fault
		 * or two per page: a probe reads a slot before writing it) and
		 * give back the old one's pages once passed, so the two
		 * tables together never hold much more than the new one.
		 */
		if (newbytes >= LUW_TABLE_MAP_MIN && pop < newbytes) {
			size_t want = (2 * e + GROW_STEP) * sizeof(*nw);

			if (want > newbytes)
				want = newbytes;
			if (want > pop) {
				luw_kvmap_mem_populate(nw, pop, want - pop);
				pop = want;
			}
		}
		for (i = b; i < e; i++) {
			const struct luw_heap_slot *s = &m->slot[i];
			size_t j;

			if (!luw_heap_slot_site1(s))
				continue;
			for (j = (size_t)((luw_heap_slot_addr(s) *
					   0x9e3779b97f4a7c15ULL) >> (64 - bits));
			     luw_heap_slot_site1(&nw[j]); j = (j + 1) & nmask)
				;
			nw[j] = *s;
		}
		if (oldbytes >= LUW_TABLE_MAP_MIN && e - b == GROW_STEP)
			madvise((char *)m->slot + b * sizeof(*nw),
				GROW_STEP * sizeof(*nw), MADV_DONTNEED);
	}
	if (m->slot)
		luw_kvmap_mem_free(m->slot, oldbytes);
	/* What the loop did not reach (all of it on the first growth). */
	if (newbytes >= LUW_TABLE_MAP_MIN && pop < newbytes)
		luw_kvmap_mem_populate(nw, pop, newbytes - pop);
	m->slot = nw;
	m->mask = nmask;
	m->shift = 64 - bits;
	/* Grow when the load would pass 3/4. */
	m->limit = cap / 4 * 3;
	return 0;
}

int luw_memprof_heap_big_put(struct luw_memprof_heap *m, uint64_t addr, uint64_t size)
{
	int isnew;
	struct luw_kv *e = luw_kvmap_put(&m->big, addr, 0, &isnew);

	if (!e)
		return -1;
	e->v = size;
	return 0;
}

uint64_t luw_memprof_heap_big_take(struct luw_memprof_heap *m, uint64_t addr)
{
	struct luw_kv old;

	old.v = 0;
	luw_kvmap_del(&m->big, addr, 0, &old);
	return old.v;
}

int luw_memprof_heap_far_put(struct luw_memprof_heap *m, uint64_t addr, uint64_t size,
			uint32_t site)
{
	int isnew;
	struct luw_kv *e = luw_kvmap_put(&m->far, addr, 0, &isnew);

	if (!e)
		return -1;
	e->v = size;
	e->w = site;
	return 0;
}

int luw_memprof_heap_far_take(struct luw_memprof_heap *m, uint64_t addr,
			 uint64_t *size, uint32_t *site)
{
	struct luw_kv old;

	if (!luw_kvmap_del(&m->far, addr, 0, &old))
		return 0;
	*size = old.v;
	*site = old.w;
	return 1;
}
