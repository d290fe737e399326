/*
 * Open-addressing hash map from a pair of 64-bit words to a pair of values
 * (64-bit and 32-bit): the one associative container the decoders and
 * reports need (live heap chunks by address, locations by address and
 * line, frame-name caches).  Linear probing with backward-shift deletion,
 * so deletes leave no tombstones and lookups stay short under churn.
 */
#ifndef LUW_UTIL_KVMAP_H
#define LUW_UTIL_KVMAP_H

#include <stddef.h>
#include <stdint.h>

struct luw_kv {
	uint64_t a, b;		/* key */
	uint64_t v;		/* values */
	uint32_t w;
	uint32_t used;
};

struct luw_kvmap {
	struct luw_kv *slot;
	size_t mask;		/* capacity - 1; 0 when nothing is allocated */
	size_t n;
};

void luw_kvmap_init(struct luw_kvmap *m);
void luw_kvmap_free(struct luw_kvmap *m);
void luw_kvmap_clear(struct luw_kvmap *m);

/* The entry for (a, b), or NULL. */
struct luw_kv *luw_kvmap_get(const struct luw_kvmap *m, uint64_t a,
			     uint64_t b);
/*
 * The entry for (a, b), inserted zeroed (v = w = 0) when missing; *isnew
 * tells which.  NULL on ENOMEM.  The pointer is valid until the next
 * insertion or deletion.
 */
struct luw_kv *luw_kvmap_put(struct luw_kvmap *m, uint64_t a, uint64_t b,
			     int *isnew);
/* Remove (a, b); copies the removed entry to *old when old is not NULL. */
int luw_kvmap_del(struct luw_kvmap *m, uint64_t a, uint64_t b,
		  struct luw_kv *old);

/*
 * Zeroed memory for a hash table.  Big tables are mapped directly:
 * populated (the pages made present and writable) when populate is set,
 * because a table's first probe reads a slot before writing it, and a
 * fresh page then faults twice (the zero page, then its copy); and they
 * can hand pages back (madvise) while still mapped.  NULL on ENOMEM.
 */
#define LUW_TABLE_MAP_MIN (1u << 16)
void *luw_kvmap_mem_alloc(size_t bytes, int populate);
void luw_kvmap_mem_free(void *p, size_t bytes);
/* Make [off, off + len) of a table present and writable (best effort). */
void luw_kvmap_mem_populate(void *p, size_t off, size_t len);

#endif
