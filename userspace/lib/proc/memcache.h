/*
 * memcache: reads of another process through a cache of whole blocks,
 * for walks that read millions of small objects (a heap snapshot): one
 * process_vm_readv per 64 KiB block instead of one per object.  Sound
 * only while the target is stopped, or where the reader takes what it
 * reads as one possibly stale view and checks it (a --live walk).
 * Direct-mapped.  A block is read as far as it is mapped: the bytes a
 * read gets up to the first unmapped page (process_vm_readv's partial
 * read), or from the page asked for when the block's start is unmapped;
 * a read outside that range goes to the target directly, so the answer
 * is always what a direct read would give.
 */
#ifndef LUW_PROC_MEMCACHE_H
#define LUW_PROC_MEMCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LUW_MEMCACHE_BLOCK (64u * 1024)

struct luw_memcache {
	pid_t pid;
	size_t nblocks;		/* a power of two */
	uint64_t *tag;		/* block address + 1; 0: empty */
	uint32_t *lo, *hi;	/* the block's readable bytes: [lo, hi) */
	uint8_t *data;
	uint64_t misses, direct;	/* block reads, uncached reads */
};

/* A cache of about bytes (at least one block) for pid: 0, or -1. */
int luw_memcache_init(struct luw_memcache *c, pid_t pid, size_t bytes);
void luw_memcache_free(struct luw_memcache *c);

/* n bytes at a into d: 0, or -1 (as luw_mem_read: whole or nothing). */
int luw_memcache_read(struct luw_memcache *c, uint64_t a, void *d, size_t n);

#endif
