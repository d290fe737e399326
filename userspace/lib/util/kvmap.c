#include "util/kvmap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14; older kernels say EINVAL */
#endif

void luw_kvmap_mem_populate(void *p, size_t off, size_t len)
{
	static int unsupported;

	if (!unsupported && len &&
	    madvise((char *)p + off, len, MADV_POPULATE_WRITE))
		unsupported = 1;
}

void *luw_kvmap_mem_alloc(size_t bytes, int populate)
{
	void *p;

	if (bytes < LUW_TABLE_MAP_MIN)
		return calloc(1, bytes);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (populate)
		luw_kvmap_mem_populate(p, 0, bytes);
	return p;
}

void luw_kvmap_mem_free(void *p, size_t bytes)
{
	if (bytes < LUW_TABLE_MAP_MIN)
		free(p);
	else if (p)
		munmap(p, bytes);
}

static inline size_t kv_hash(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ (b * 0xc2b2ae3d27d4eb4fULL)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h ^ (h >> 29));
}

void luw_kvmap_init(struct luw_kvmap *m)
{
	m->slot = NULL;
	m->mask = 0;
	m->n = 0;
}

void luw_kvmap_free(struct luw_kvmap *m)
{
	if (m->slot)
		luw_kvmap_mem_free(m->slot, (m->mask + 1) * sizeof(*m->slot));
	luw_kvmap_init(m);
}

void luw_kvmap_clear(struct luw_kvmap *m)
{
	if (m->slot)
		memset(m->slot, 0, (m->mask + 1) * sizeof(*m->slot));
	m->n = 0;
}

struct luw_kv *luw_kvmap_get(const struct luw_kvmap *m, uint64_t a,
			     uint64_t b)
{
	size_t i;

	if (!m->slot)
		return NULL;
	for (i = kv_hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
		struct luw_kv *e = &m->slot[i];

		if (!e->used)
			return NULL;
		if (e->a == a && e->b == b)
			return e;
	}
}

static int kv_resize(struct luw_kvmap *m, size_t cap)
{
	struct luw_kv *old = m->slot, *nw;
	size_t oldcap = m->slot ? m->mask + 1 : 0, i;

	nw = luw_kvmap_mem_alloc(cap * sizeof(*nw), 1);
	if (!nw)
		return -1;
	m->slot = nw;
	m->mask = cap - 1;
	for (i = 0; i < oldcap; i++) {
		size_t j;

		if (!old[i].used)
			continue;
		for (j = kv_hash(old[i].a, old[i].b) & m->mask; nw[j].used;
		     j = (j + 1) & m->mask)
			;
		nw[j] = old[i];
	}
	if (old)
		luw_kvmap_mem_free(old, oldcap * sizeof(*old));
	return 0;
}

struct luw_kv *luw_kvmap_put(struct luw_kvmap *m, uint64_t a, uint64_t b,
			     int *isnew)
{
	struct luw_kv *e;
	size_t i;

	/*
	 * Keep the load factor at or under 3/4: with a hash that spreads
	 * well, linear probe runs stay short there, and a service's memprof
	 * report holds tens of thousands of locations and override records
	 * in these maps, whose 32-byte slots at load 1/2 were megabytes.
	 */
	if (!m->slot || (m->n + 1) * 4 > (m->mask + 1) * 3) {
		size_t cap = m->slot ? (m->mask + 1) * 2 : 64;

		if (cap / 4 * 3 <= m->n || kv_resize(m, cap))
			return NULL;
	}
	for (i = kv_hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
		e = &m->slot[i];
		if (!e->used)
			break;
		if (e->a == a && e->b == b) {
			*isnew = 0;
			return e;
		}
	}
	e->a = a;
	e->b = b;
	e->v = 0;
	e->w = 0;
	e->used = 1;
	m->n++;
	*isnew = 1;
	return e;
}

int luw_kvmap_del(struct luw_kvmap *m, uint64_t a, uint64_t b,
		  struct luw_kv *old)
{
	struct luw_kv *e = luw_kvmap_get(m, a, b);
	size_t i, j;

	if (!e)
		return 0;
	if (old)
		*old = *e;
	i = (size_t)(e - m->slot);
	/* Backward-shift: pull later members of the run into the hole. */
	for (j = (i + 1) & m->mask; m->slot[j].used; j = (j + 1) & m->mask) {
		size_t home = kv_hash(m->slot[j].a, m->slot[j].b) & m->mask;

		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	memset(&m->slot[i], 0, sizeof(m->slot[i]));
	m->n--;
	return 1;
}
