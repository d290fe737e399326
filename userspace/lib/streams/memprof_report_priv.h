/*
 * memprof_report_priv: what the two halves of the memprof report share --
 * the aggregation memprof_report.c builds while it decodes a stream and
 * memprof_report_write.c turns into the report's text.  Not for other
 * modules: use memprof_report.h.
 */
#ifndef LUW_STREAMS_MEMPROF_REPORT_PRIV_H
#define LUW_STREAMS_MEMPROF_REPORT_PRIV_H

#include <stdint.h>

#include "streams/memprof.h"
#include "streams/memprof_heap.h"
#include "streams/memprof_report.h"
#include "util/kvmap.h"
#include "util/strbuf.h"

#define NONE UINT32_MAX

enum { R_ALLOC, R_REALLOC, R_FREE, R__MAX };

/* A record's counts: events, bytes allocated and freed. */
struct cnt {
	uint64_t num, alloc, free;
};

/*
 * A location and its three records' counts: an event reads its key and
 * adds to one record, so keeping the counts here (two cache lines, which
 * the queue fetches ahead) spares a visit to a separate record.
 */
struct loc {
	uint64_t addr, line, traceno;
	uint32_t gen;
	uint32_t name;		/* name id */
	uint32_t next;		/* next location with the same addr and line */
	uint32_t rec[R__MAX];	/* its record per event kind, or NONE */
	uint32_t pad;
	struct cnt cnt[R__MAX];
};

#define LOC_ALIGN 128
/* Locations fetched ahead from this many on (256 KiB of them). */
#define LOC_AHEAD_MIN 2048

/* A record: its location, in order of creation per event kind. */
struct rec {
	uint32_t loc;
};

/*
 * Chunks allocated at location loc that record rec (a realloc or free
 * record) changed: the reference's "primary" entries.  A service's stream
 * has hundreds of thousands (every realloc site times every site whose
 * chunks it reallocates), so they are kept small: no links, the list of a
 * record is gathered at output time from the creation order.
 */
struct prim {
	uint32_t rec, loc;
	uint64_t allocated, freed, count;
};

/*
 * The primaries of one event kind, in creation order, with an index of
 * 8-byte slots: the top 32 bits a tag from the hash of (rec, loc), the
 * low 32 the primary + 1 (0: empty).  Linear probing, load <= 3/4, no
 * deletion.  The tag spares most probes a visit to the primary; it was a
 * 32-byte slot per primary in a general map, plus a 32-byte primary.
 */
struct primtab {
	struct prim *p;
	size_t n, cap;
	uint64_t *slot;
	size_t mask;		/* capacity - 1; 0 when nothing is allocated */
	unsigned int shift;	/* 64 - log2(capacity) */
};

struct name {
	size_t off, len;
	int64_t dbytes;
	uint64_t nalloc, nfree;
	uint32_t dheap_seq;	/* order of entry into the heap summary */
	uint32_t rank;		/* place in bytewise order (for Overrides) */
};

struct vec {
	void *p;
	size_t n, cap;
};

/* An alloc, realloc or free event waiting in the queue. */
struct qev {
	struct luw_mp_nums n;
	uint8_t aevent;
	unsigned int lc;	/* its location cache entry */
};

/*
 * Events wait this many places before they are aggregated, so the live
 * heap slots they will touch can be fetched into the cache meanwhile: on
 * a service's heap the table is megabytes and nearly every event misses.
 */
#define QLEN 16
/* Entries of the location and primary caches (see struct luw_memprof_report). */
#define LCACHE_BITS 14
#define LCACHE (1 << LCACHE_BITS)
#define PCACHE 4096	/* indexed by the top 12 bits of a hash */
#define DECL_BITS 12

struct luw_memprof_report {
	struct luw_symtab *st;
	int oom;
	uint64_t events;

	struct vec locs, recs[R__MAX], names;
	struct luw_strbuf pool;	/* name text */
	struct luw_strbuf tmp;
	struct luw_kvmap locmap;	/* (addr, line) -> w: first loc + 1 */
	struct luw_kvmap namemap;	/* (hash, probe) -> w: name id */
	struct primtab prim[2];		/* R_REALLOC, R_FREE */
	struct luw_memprof_heap heap;	/* live chunks: size and loc */
	/*
	 * Recent primary hits, direct-mapped: a workload frees and reallocs
	 * chunks of a few sites from a few places, so most lookups hit here.
	 */
	struct {
		uint64_t key;	/* kind << 32 | rec; 0: empty (kind 0 is alloc) */
		uint32_t loc, prim;
	} pcache[PCACHE];

	/*
	 * Locations of recent events, direct-mapped by (addr, line,
	 * traceno): a few sites make most events, and this skips the
	 * location map for them.  An entry made in the current symtab
	 * epoch is used as it is; an older one still holds when the
	 * symbol generation of its key has not changed since (the
	 * location is keyed by that generation), which saves the location
	 * map on streams that declare symbols as they go (every
	 * declaration is a new epoch).
	 */
	struct {
		uint64_t epoch;
		uint32_t loc1;	/* location + 1, 0: empty (calloc's zero
				   pages stay untouched until used) */
	} lcache[LCACHE];
	/*
	 * The symtab epoch after the latest declaration of a Lua function
	 * address or trace number that hashes to each entry, and after the
	 * latest C symbol: an entry of the location cache checked at
	 * epoch E still names the right generation when no declaration
	 * that could change it came after E.  Streams declare each Lua
	 * function as it first allocates; checking the symtab again for
	 * every cached location after each declaration took a quarter of
	 * the events through the slow path.
	 */
	uint64_t decl[1 << DECL_BITS];
	uint64_t cfunc_epoch;

	struct qev q[QLEN];
	unsigned int qhead, qn;
};

#define AT(v, type, i) (&((type *)(v).p)[i])

/* The counts of record ri of an event kind. */
static inline const struct cnt *rec_cnt(const struct luw_memprof_report *rep, int kind,
					uint32_t ri)
{
	return &AT(rep->locs, struct loc,
		   AT(rep->recs[kind], struct rec, ri)->loc)->cnt[kind];
}

/* Aggregates every queued event, oldest first: 0, or nonzero when out of
 * memory. */
int luw_memprof_report_drain(struct luw_memprof_report *rep);

#endif
