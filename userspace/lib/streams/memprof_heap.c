#include "streams/memprof_heap.h"

#include <sys/mman.h>
#include <unistd.h>

void luw_heapmap_init(struct luw_heapmap *m)
{
	m->slot = NULL;
	m->mask = 0;
	m->shift = 64;
	m->n = 0;
	m->limit = 0;
	luw_kvmap_init(&m->big);
	luw_kvmap_init(&m->far);
}

void luw_heapmap_free(struct luw_heapmap *m)
{
	if (m->slot)
		luw_table_free(m->slot, (m->mask + 1) * sizeof(*m->slot));
	luw_kvmap_free(&m->big);
	luw_kvmap_free(&m->far);
	luw_heapmap_init(m);
}

int luw_heapmap_grow(struct luw_heapmap *m)
{
	struct luw_heap_slot *nw;
	size_t cap = m->slot ? (m->mask + 1) * 2 : 256, i;
	size_t oldbytes = m->slot ? (m->mask + 1) * sizeof(*nw) : 0;
	size_t newbytes = cap * sizeof(*nw);
	size_t chunk = 64 * (size_t)sysconf(_SC_PAGESIZE);
	size_t nmask = cap - 1, done = 0, pop = 0;
	unsigned int bits = 0;

	if (cap > SIZE_MAX / sizeof(*nw) / 2)
		return -1;
	while (((size_t)1 << bits) < cap)
		bits++;
	nw = luw_table_alloc(newbytes, 0);
	if (!nw)
		return -1;
	for (i = 0; m->slot && i <= m->mask; i++) {
		const struct luw_heap_slot *s = &m->slot[i];
		size_t j;

		/*
		 * Homes in the new table are twice those in the old one, so
		 * both are walked in order: make the new table's pages present
		 * in chunks just ahead of the writes (one fault per chunk, not
		 * two per page: a probe reads a slot before writing it) and
		 * give back the old one's pages once passed, so the two
		 * tables together never hold much more than the new one.
		 */
		if (newbytes >= LUW_TABLE_MAP_MIN && pop < newbytes &&
		    (2 * i + 2) * sizeof(*s) + chunk / 2 >= pop) {
			size_t len = newbytes - pop < chunk ? newbytes - pop
							    : chunk;

			luw_table_populate(nw, pop, len);
			pop += len;
		}
		if (luw_heap_slot_site1(s)) {
			for (j = (size_t)((luw_heap_slot_addr(s) *
					   0x9e3779b97f4a7c15ULL) >>
					  (64 - bits));
			     luw_heap_slot_site1(&nw[j]); j = (j + 1) & nmask)
				;
			nw[j] = *s;
		}
		if (oldbytes >= LUW_TABLE_MAP_MIN &&
		    (i + 1) * sizeof(*s) - done >= chunk) {
			madvise((char *)m->slot + done, chunk, MADV_DONTNEED);
			done += chunk;
		}
	}
	if (m->slot)
		luw_table_free(m->slot, oldbytes);
	/* What the loop did not reach (all of it on the first growth). */
	if (newbytes >= LUW_TABLE_MAP_MIN && pop < newbytes)
		luw_table_populate(nw, pop, newbytes - pop);
	m->slot = nw;
	m->mask = nmask;
	m->shift = 64 - bits;
	/* Grow when the load would pass 3/4. */
	m->limit = cap / 4 * 3;
	return 0;
}

int luw_heapmap_big_put(struct luw_heapmap *m, uint64_t addr, uint64_t size)
{
	int isnew;
	struct luw_kv *e = luw_kvmap_put(&m->big, addr, 0, &isnew);

	if (!e)
		return -1;
	e->v = size;
	return 0;
}

uint64_t luw_heapmap_big_take(struct luw_heapmap *m, uint64_t addr)
{
	struct luw_kv old;

	old.v = 0;
	luw_kvmap_del(&m->big, addr, 0, &old);
	return old.v;
}

int luw_heapmap_far_put(struct luw_heapmap *m, uint64_t addr, uint64_t size,
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

int luw_heapmap_far_take(struct luw_heapmap *m, uint64_t addr,
			 uint64_t *size, uint32_t *site)
{
	struct luw_kv old;

	if (!luw_kvmap_del(&m->far, addr, 0, &old))
		return 0;
	*size = old.v;
	*site = old.w;
	return 1;
}
