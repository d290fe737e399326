/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * luaunwind: one sample's user-memory reads, served from a few bulk copies.
 *
 * The walkers (uwtable.c, ljwalk.c) ask for one word or
 * one field at a time.  Each such read done as its own nofault copy costs
 * the copy's fixed price (the uaccess switch, the exception-table setup,
 * an indirect call) for a handful of bytes; a sample's merged walk asks
 * for ~150 of them.  This cache sits between the walkers' read callbacks
 * and the caller's nofault copy and answers the same requests from few,
 * larger copies made during the same sample:
 *
 *   stack window  the interrupted thread's stack from sp upward, copied on
 *                 demand: the first read in [sp, stack_end) copies at
 *                 least LUW_UC_STACK_FIRST bytes from sp, and a read above
 *                 what is copied extends the window to cover it, at least
 *                 doubling it; the window ends on a LUW_UC_STACK_ALIGN
 *                 boundary, within the storage given.  A copy that stops
 *                 short (the
 *                 stack mapping ends, a page is not resident) keeps the
 *                 bytes it did copy and the window stops growing; reads
 *                 above it go on as lines.
 *   ranges        luw_uc_prefetch(): a span the caller knows it is about
 *                 to read (the Lua walk: the live slots of a Lua stack),
 *                 copied in one go, its upper part first when it is
 *                 longer than LUW_UC_RANGE_MAX or the storage left.
 *   lines         any other read: LUW_UC_LINE bytes around it (a GCfunc,
 *                 a GCproto header, a few bytecodes), twice that next to
 *                 a span already copied (luw_uc_place() in ucache.c).
 *
 * What the walkers get is unchanged: the bytes at the address they asked
 * for, as the copy found them during this sample, or a failure where a
 * copy of exactly those bytes would have failed.  A line never crosses a
 * page (it is placed within the page of the read), so a line that faults
 * is a read that faults; a read that crosses a page, or that finds the storage
 * full, is copied alone and not kept.  Nothing is kept across samples:
 * luw_uc_init() starts each one empty.  The walkers check everything they
 * read exactly as before; the cache trusts nothing it copies either: it
 * only hands it back.
 *
 * Cost: every copy the cache makes is one call of the caller's copy
 * function, which counts it (a read, plus its bytes) against the sample's
 * budget and may refuse it.  Storage bounds the bytes: at most stack_cap
 * + cap bytes are copied in bulk per sample, plus one uncached request
 * per read the budget allows.
 *
 * Freestanding C (no libc, no allocation, no locks; ucache.c), compiled
 * into the module's sample handler and into userspace: the caller gives
 * the storage (per-CPU scratch in the kernel) and the copy function.
 */
#ifndef LUW_UCACHE_H
#define LUW_UCACHE_H

#include "walkenv.h"

/*
 * Copies len bytes at user address addr to dst without faulting or
 * sleeping.  Returns how many bytes from the start it copied: len when
 * all, fewer when it stopped at a fault or was refused (budget).  Bytes
 * past the count may have been written and mean nothing.
 */
typedef u32 (*luw_uc_copy_fn)(void *ctx, u64 addr, void *dst, u32 len);

#define LUW_UC_PAGE		4096u
#define LUW_UC_LINE		128u	/* 2 x LUW_UC_LINE <= LUW_UC_PAGE */
#define LUW_UC_STACK_ALIGN	512u	/* a power of two */
#define LUW_UC_STACK_FIRST	1024u	/* the first stack copy at least */
#define LUW_UC_RANGE_MAX	4096u	/* one prefetch at most */
#define LUW_UC_SPANS		48	/* lines and ranges kept */
#define LUW_UC_IDX		256	/* granules indexed, a power of 2 */
#define LUW_UC_GRAIN_SHIFT	6	/* 64-byte granules: a line is 2 to 4 */

struct luw_uc_span {
	u64 addr;
	u32 len;		/* bytes valid at buf + off */
	u32 off;
};

struct luw_uc {
	luw_uc_copy_fn copy;
	void *ctx;
	/* the stack window: [stack_lo, stack_lo + stack_len) copied */
	u8 *stack_buf;
	u32 stack_cap;
	u32 stack_len;
	u64 stack_lo, stack_end;
	int stack_done;		/* stopped growing: short copy or full */
	/* lines and ranges */
	u8 *buf;
	u32 cap;
	u32 used;
	u32 nspan;
	struct luw_uc_span span[LUW_UC_SPANS];
	/*
	 * Direct-mapped by granule (addr >> LUW_UC_GRAIN_SHIFT): 1 + the span
	 * last made or found for a read in that granule, 0 none.  Spans are
	 * never moved or dropped during a sample, so an entry is only ever
	 * stale by not holding addr.
	 */
	u8 idx[LUW_UC_IDX];
	/* what was served without a copy, for the curious */
	u32 hits;
};

/*
 * Start a sample.  [sp, stack_end) is the stack window's bound (0, 0 for
 * none); stack_buf/stack_cap and buf/cap the storage, which must stay the
 * caller's until the sample ends.
 */
void luw_uc_init(struct luw_uc *uc, luw_uc_copy_fn copy, void *ctx, u64 sp,
		 u64 stack_end, u8 *stack_buf, u32 stack_cap, u8 *buf, u32 cap);

static inline void luw_uc_cpy(void *dst, const u8 *src, u32 len)
{
	u8 *d = dst;

	/*
	 * The walkers ask for 1, 4, 8 or 16 bytes, or a short block:
	 * fixed-size copies the compiler inlines, no library call in the
	 * handler.
	 */
	switch (len) {
	case 16:
		__builtin_memcpy(d, src, 16);
		break;
	case 8:
		__builtin_memcpy(d, src, 8);
		break;
	case 4:
		__builtin_memcpy(d, src, 4);
		break;
	case 1:
		*d = *src;
		break;
	default:
		/* An object's fields in one request (ljwalk.c): up to 64. */
		for (; len >= 8; len -= 8, d += 8, src += 8)
			__builtin_memcpy(d, src, 8);
		if (len & 4) {
			__builtin_memcpy(d, src, 4);
			d += 4;
			src += 4;
		}
		if (len & 2) {
			__builtin_memcpy(d, src, 2);
			d += 2;
			src += 2;
		}
		if (len & 1)
			*d = *src;
	}
}

/* luw_uc_read() when luw_uc_hit() misses. */
int luw_uc_read_slow(struct luw_uc *uc, u64 addr, void *dst, u32 len);

/*
 * What most requests are: bytes the stack window or the span last used
 * in their granule holds already.  1 with dst filled; 0, nothing done,
 * otherwise.
 */
static inline int luw_uc_hit(struct luw_uc *uc, u64 addr, void *dst, u32 len)
{
	u64 off = addr - uc->stack_lo;
	const struct luw_uc_span *s;
	u8 e;

	if (off < uc->stack_len && len && len <= uc->stack_len - off) {
		uc->hits++;
		luw_uc_cpy(dst, uc->stack_buf + off, len);
		return 1;
	}
	e = uc->idx[(addr >> LUW_UC_GRAIN_SHIFT) & (LUW_UC_IDX - 1)];
	if (e) {
		s = &uc->span[e - 1];
		off = addr - s->addr;
		if (off < s->len && len && len <= s->len - off) {
			uc->hits++;
			luw_uc_cpy(dst, uc->buf + s->off + off, len);
			return 1;
		}
	}
	return 0;
}

/* Returns 0 with dst filled, -EFAULT where the bytes could not be read. */
static inline int luw_uc_read(struct luw_uc *uc, u64 addr, void *dst, u32 len)
{
	if (luw_uc_hit(uc, addr, dst, len))
		return 0;
	return luw_uc_read_slow(uc, addr, dst, len);
}

/*
 * The caller is about to read [addr, addr + len): copy it in one go when
 * there is room, its upper end first (the Lua walk goes down from there).
 * A hint only: nothing fails, reads outside what it kept go on as lines.
 */
void luw_uc_prefetch(struct luw_uc *uc, u64 addr, u64 len);

#ifdef __KERNEL__
#include <luaunwind.h>

/*
 * One sample's user-memory reads: every walk and scan draws on the same
 * max_reads (requests, served by a copy or from the read cache
 * alike: a cache hit costs a lookup) and LUW_SAMPLE_FAULTS (copies that
 * stopped short, prefetches and the stack window's included).
 */
struct luw_cost {
	u32 max_reads;		/* luw_sample_reads() when it began */
	u32 reads;		/* requests: reads and prefetch hints */
	u32 faults;
	u64 bytes;		/* copied */
	bool cut;		/* a read was refused: budget spent */
	struct luw_uc *uc;	/* this CPU's cache while it serves the sample */
};

/* luw_walk_read() when the cache does not hold the bytes (hostwalk.c). */
int luw_walk_read_slow(struct luw_cost *c, u64 addr, void *dst, u32 len);

/*
 * The module's one reader (walkenv.h), cost its context.  A hit is
 * served here, inline in the walkers: a sample's walks make ~60 requests
 * and most are hits.  The budget is spent as luw_walk_read_slow() would.
 */
static inline int luw_walk_read(void *cost, u64 addr, void *dst, u32 len)
{
	struct luw_cost *c = cost;

	if (c->uc && c->reads < c->max_reads &&
	    c->faults < LUW_SAMPLE_FAULTS && luw_uc_hit(c->uc, addr, dst, len)) {
		c->reads++;
		return 0;
	}
	return luw_walk_read_slow(c, addr, dst, len);
}
#endif /* __KERNEL__ */

#endif /* LUW_UCACHE_H */
