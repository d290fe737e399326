/*
 * memcache: block-cached reads of another process.  See proc/memcache.h.
 */
#include "proc/memcache.h"

#include <stdlib.h>
#include <string.h>

#include "proc/mem.h"

int luw_memcache_init(struct luw_memcache *c, pid_t pid, size_t bytes)
{
	size_t n = 1;

	memset(c, 0, sizeof(*c));
	while (n * 2 * LUW_MEMCACHE_BLOCK <= bytes)
		n *= 2;
	c->pid = pid;
	c->nblocks = n;
	c->tag = calloc(n, sizeof(*c->tag));
	c->data = malloc(n * LUW_MEMCACHE_BLOCK);
	if (!c->tag || !c->data) {
		luw_memcache_free(c);
		return -1;
	}
	return 0;
}

void luw_memcache_free(struct luw_memcache *c)
{
	free(c->tag);
	free(c->data);
	c->tag = NULL;
	c->data = NULL;
}

/* The cached copy of the block at b, read on a miss; NULL when the block
 * cannot be read whole. */
static const uint8_t *block(struct luw_memcache *c, uint64_t b)
{
	size_t i = (size_t)(b / LUW_MEMCACHE_BLOCK) & (c->nblocks - 1);
	uint8_t *d = c->data + i * LUW_MEMCACHE_BLOCK;

	if (c->tag[i] == b + 1)
		return d;
	c->misses++;
	if (luw_mem_read(c->pid, b, d, LUW_MEMCACHE_BLOCK)) {
		c->tag[i] = 0;
		return NULL;
	}
	c->tag[i] = b + 1;
	return d;
}

int luw_memcache_read(struct luw_memcache *c, uint64_t a, void *d, size_t n)
{
	uint64_t b = a & ~(uint64_t)(LUW_MEMCACHE_BLOCK - 1);
	const uint8_t *p;

	if (!n)
		return 0;
	if (a + n < a || a + n > b + LUW_MEMCACHE_BLOCK ||
	    !(p = block(c, b))) {
		c->direct++;
		return luw_mem_read(c->pid, a, d, n);
	}
	memcpy(d, p + (a - b), n);
	return 0;
}
