/*
 * Synthetic profiler streams of any length from one fixture's workload
 * (test-only; the benchmarks and the fuzz seeds use it).
 *
 * The fixture is decoded once and kept in memory.  A synthetic stream is:
 *
 *   the fixture's leading symtab and prologues, unchanged;
 *   pass 0: every item of the fixture's body, in order (symtab updates
 *           included), so every symbol the workload uses is declared once;
 *   pass 1, 2, ...: more of the same workload, without symtab updates (a
 *           fixed workload loads its functions once: no new symbol
 *           generations, so the reports' tables stop growing):
 *     sysprof: samples drawn at random (seeded) from the fixture's samples,
 *              so stacks keep the fixture's frequencies;
 *     memprof: the fixture's alloc/realloc/free events in order, every heap
 *              address moved by ((pass + seed) mod 4) times the span of the
 *              fixture's heap addresses, so the passes' chunks never
 *              collide, a chunk is freed at the address it was allocated
 *              at, and the live heap stays bounded (pass k + 4 reuses the
 *              addresses of pass k, as a warm allocator would);
 *   the epilogue, once the requested size is reached.
 *
 * A size smaller than pass 0 stops pass 0 early: still a valid stream.
 */
#ifndef LUW_GEN_H
#define LUW_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "encoder.h"
#include "streams/memprof.h"
#include "streams/sysprof.h"

enum luw_gen_kind {
	LUW_GEN_SYSPROF,
	LUW_GEN_MEMPROF,
};

struct luw_gen;

/*
 * Decode a whole fixture (it must decode cleanly).  NULL with a message
 * in err on failure.
 */
struct luw_gen *luw_gen_load(const void *data, size_t len, char *err,
			     size_t errsize);
void luw_gen_free(struct luw_gen *g);

enum luw_gen_kind luw_gen_kind(const struct luw_gen *g);
/* Samples (sysprof) or alloc/realloc/free events (memprof) in the fixture. */
size_t luw_gen_nevents(const struct luw_gen *g);

/*
 * Flags.  LUW_GEN_COMPACT: keep only the leading-symtab entries the body
 * refers to (Lua functions by address, C symbols containing an address,
 * all traces).  The fixtures' symtabs hold every C symbol of the process
 * (~120 KB); compact streams of a few KB make good fuzz seeds.
 */
#define LUW_GEN_COMPACT 1u

/*
 * Write a stream of about size bytes (at least the prologues, the leading
 * symtab and the epilogue; at most one item more than size) into e.
 * Every item written is also passed to the observer's callbacks (the ops
 * of the stream's kind; either may be NULL), exactly as a decoder of the
 * result would deliver it, except for the offsets.  0, or -1 if the
 * encoder failed.
 */
int luw_gen_write(const struct luw_gen *g, struct luw_enc *e, uint64_t size,
		  uint64_t seed, unsigned int flags,
		  const struct luw_sysprof_ops *sobs,
		  const struct luw_memprof_ops *mobs, void *obs_ctx);

/*
 * A memprof stream shaped like a long-running service rather than like the
 * fixture's short script (the fixture gives only the leading symtab and
 * prologues): the live heap grows steadily towards `live` chunks, then
 * churns around it; reallocs (tables and buffers doubling, mostly at the
 * site that allocated the chunk) are a tenth of the events while the heap
 * grows and 30% after; frees come mostly from the GC (INTERNAL), some
 * from the code that allocated the chunk; and allocation
 * sites are spread over `nfunc` Lua functions, declared by symtab events
 * when first used (modules loaded over time), picked with a skew (a few
 * hot functions, a long tail), plus the fixture's C symbols.  Addresses
 * come from a model allocator: 16-byte size classes reused LIFO, a bump
 * pointer otherwise, so freed addresses come back as a real malloc's do.
 *
 *   the fixture's "ljs" prologue and leading symtab, its "ljm" prologue;
 *   events until about `size` bytes; the epilogue.
 *
 * Reproducible from the seed.  Statistics of what was written go to *st.
 */
struct luw_gen_heap {
	uint64_t size;		/* bytes, about */
	uint64_t live;		/* live chunks the heap grows towards */
	uint64_t seed;
	unsigned int nfunc;	/* Lua functions allocating */
};

struct luw_gen_heap_stats {
	uint64_t allocs, reallocs, frees, symtab_events;
	uint64_t live_end, live_peak;
};

int luw_gen_write_heap(const struct luw_gen *g, struct luw_enc *e,
		       const struct luw_gen_heap *h,
		       struct luw_gen_heap_stats *st);

#endif
