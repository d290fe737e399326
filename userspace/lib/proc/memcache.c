/*
 * memcache: block-cached reads of another process.  See proc/memcache.h.
 */
#include "proc/memcache.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

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
	c->lo = calloc(n, sizeof(*c->lo));
	c->hi = calloc(n, sizeof(*c->hi));
	c->data = malloc(n * LUW_MEMCACHE_BLOCK);
	if (!c->tag || !c->lo || !c->hi || !c->data) {
		luw_memcache_free(c);
		return -1;
	}
	return 0;
}

void luw_memcache_free(struct luw_memcache *c)
{
	free(c->tag);
	free(c->lo);
	free(c->hi);
	free(c->data);
	c->tag = NULL;
	c->lo = c->hi = NULL;
	c->data = NULL;
}

#define PAGE 4096u

/*
 * As many bytes of [a, a + n) as are mapped from a on (a and n whole
 * pages): their number.  One remote iovec per page, because a partial
 * read never splits an iovec: with one for the whole range, a single
 * unmapped page would fail all of it.
 */
static size_t readable(pid_t pid, uint64_t a, void *d, size_t n)
{
	struct iovec l = { d, n }, r[LUW_MEMCACHE_BLOCK / PAGE];
	size_t k = n / PAGE;
	ssize_t got;

	for (size_t i = 0; i < k; i++) {
		r[i].iov_base = (void *)(uintptr_t)(a + i * PAGE);
		r[i].iov_len = PAGE;
	}
	got = process_vm_readv(pid, &l, 1, r, k, 0);
	return got > 0 ? (size_t)got : 0;
}

/* The slot of the block at b, read on a miss as far as it is mapped,
 * from its start or else from the page of a. */
static size_t block(struct luw_memcache *c, uint64_t b, uint64_t a)
{
	size_t i = (size_t)(b / LUW_MEMCACHE_BLOCK) & (c->nblocks - 1);
	uint8_t *d = c->data + i * LUW_MEMCACHE_BLOCK;
	uint32_t from;
	size_t got;

	if (c->tag[i] == b + 1)
		return i;
	c->misses++;
	from = 0;
	got = readable(c->pid, b, d, LUW_MEMCACHE_BLOCK);
	if (!got) {
		from = (uint32_t)((a - b) & ~(uint64_t)(PAGE - 1));
		got = readable(c->pid, b + from, d + from,
			       LUW_MEMCACHE_BLOCK - from);
	}
	c->tag[i] = b + 1;
	c->lo[i] = from;
	c->hi[i] = from + (uint32_t)got;
	return i;
}

/*
 * A read in slot i's block at [from, to) beyond what it holds: the pages
 * between are read too when they are mapped (a mapping starting inside
 * the block, met at a later page first).
 */
static void extend(struct luw_memcache *c, size_t i, uint64_t b, uint32_t from,
		   uint32_t to)
{
	uint8_t *d = c->data + i * LUW_MEMCACHE_BLOCK;
	uint32_t p;

	if (from < c->lo[i] && c->lo[i] < c->hi[i]) {
		p = from & ~(PAGE - 1);
		if (readable(c->pid, b + p, d + p, c->lo[i] - p) == c->lo[i] - p)
			c->lo[i] = p;
	}
	if (to > c->hi[i] && c->lo[i] < c->hi[i]) {
		p = (to + PAGE - 1) & ~(PAGE - 1);
		c->hi[i] += (uint32_t)readable(c->pid, b + c->hi[i], d + c->hi[i],
					       p - c->hi[i]);
	}
}

int luw_memcache_read(struct luw_memcache *c, uint64_t a, void *d, size_t n)
{
	uint64_t b = a & ~(uint64_t)(LUW_MEMCACHE_BLOCK - 1);
	size_t i;

	if (!n)
		return 0;
	if (a + n < a || a + n > b + LUW_MEMCACHE_BLOCK) {
		c->direct++;

		return luw_mem_read(c->pid, a, d, n);
	}
	i = block(c, b, a);
	extend(c, i, b, (uint32_t)(a - b), (uint32_t)(a - b + n));
	if (a - b < c->lo[i] || a - b + n > c->hi[i]) {
		/* Unmapped as far as the block's read saw: ask directly
		 * (a mapping may start past a hole inside the block). */
		c->direct++;

		return luw_mem_read(c->pid, a, d, n);
	}
	memcpy(d, c->data + i * LUW_MEMCACHE_BLOCK + (a - b), n);
	return 0;
}
