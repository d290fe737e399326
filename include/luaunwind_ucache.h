/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * luaunwind: one sample's user-memory reads, served from a few bulk copies.
 *
 * The walkers (luaunwind_unwind.h, luaunwind_ljwalk.h) ask for one word or
 * one field at a time.  Each such read done as its own nofault copy costs
 * the copy's fixed price (the uaccess switch, the exception-table setup,
 * an indirect call) for a handful of bytes; a sample's merged walk asks
 * for ~150 of them.  This cache sits between the walkers' read callbacks
 * and the includer's nofault copy and answers the same requests from few,
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
 *                 a span already copied (luw_uc__place()).
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
 * Cost: every copy the cache makes is one call of the includer's copy
 * function, which counts it (a read, plus its bytes) against the sample's
 * budget and may refuse it.  Storage bounds the bytes: at most stack_cap
 * + cap bytes are copied in bulk per sample, plus one uncached request
 * per read the budget allows.
 *
 * Freestanding C (no libc, no allocation, no locks), usable from the
 * kernel's sample handler and from userspace: the includer gives the
 * storage (per-CPU scratch in the kernel) and the copy function.
 */
#ifndef LUAUNWIND_UCACHE_H
#define LUAUNWIND_UCACHE_H

#include <linux/types.h>

/*
 * Copies len bytes at user address addr to dst without faulting or
 * sleeping.  Returns how many bytes from the start it copied: len when
 * all, fewer when it stopped at a fault or was refused (budget).  Bytes
 * past the count may have been written and mean nothing.
 */
typedef __u32 (*luw_uc_copy_fn)(void *ctx, __u64 addr, void *dst, __u32 len);

#define LUW_UC_PAGE		4096u
#define LUW_UC_LINE		384u	/* 2 x LUW_UC_LINE <= LUW_UC_PAGE */
#define LUW_UC_STACK_ALIGN	512u	/* a power of two */
#define LUW_UC_STACK_FIRST	1024u	/* the first stack copy at least */
#define LUW_UC_RANGE_MAX	4096u	/* one prefetch at most */
#define LUW_UC_SPANS		48	/* lines and ranges kept */
#define LUW_UC_IDX		64	/* 256-byte granules indexed, a power of 2 */

struct luw_uc_span {
	__u64 addr;
	__u32 len;		/* bytes valid at buf + off */
	__u32 off;
};

struct luw_uc {
	luw_uc_copy_fn copy;
	void *ctx;
	/* the stack window: [stack_lo, stack_lo + stack_len) copied */
	__u8 *stack_buf;
	__u32 stack_cap;
	__u32 stack_len;
	__u64 stack_lo, stack_end;
	int stack_done;		/* stopped growing: short copy or full */
	/* lines and ranges */
	__u8 *buf;
	__u32 cap;
	__u32 used;
	__u32 nspan;
	struct luw_uc_span span[LUW_UC_SPANS];
	/*
	 * Direct-mapped by (addr >> 8): 1 + the span that last served a read
	 * in that granule, 0 none.  Spans are never moved or dropped during
	 * a sample, so an entry is only ever stale by not holding addr.
	 */
	__u8 idx[LUW_UC_IDX];
	/* what was served without a copy, for the curious */
	__u32 hits;
};

/*
 * Start a sample.  [sp, stack_end) is the stack window's bound (0, 0 for
 * none); stack_buf/stack_cap and buf/cap the storage, which must stay the
 * caller's until the sample ends.
 */
static inline void luw_uc_init(struct luw_uc *uc, luw_uc_copy_fn copy,
			       void *ctx, __u64 sp, __u64 stack_end,
			       __u8 *stack_buf, __u32 stack_cap, __u8 *buf,
			       __u32 cap)
{
	__u32 i;

	uc->copy = copy;
	uc->ctx = ctx;
	uc->stack_buf = stack_buf;
	uc->stack_cap = stack_buf ? stack_cap : 0;
	uc->stack_len = 0;
	uc->stack_lo = sp;
	uc->stack_end = stack_end > sp ? stack_end : sp;
	uc->stack_done = !uc->stack_cap;
	uc->buf = buf;
	uc->cap = buf ? cap : 0;
	uc->used = 0;
	uc->nspan = 0;
	uc->hits = 0;
	for (i = 0; i < LUW_UC_IDX; i++)
		uc->idx[i] = 0;
}

static inline void luw_uc__cpy(void *dst, const __u8 *src, __u32 len)
{
	__u8 *d = dst;

	/*
	 * The walkers ask for 1, 4 or 8 bytes: fixed-size copies the
	 * compiler inlines, no library call in the handler.
	 */
	switch (len) {
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
		while (len--)
			*d++ = *src++;
	}
}

/* Grow the stack window to cover [addr, addr + len) if it may. */
static inline void luw_uc__stack_grow(struct luw_uc *uc, __u64 addr, __u32 len)
{
	__u64 want = addr + len - uc->stack_lo, lim, from;
	__u32 ask, got;

	if (want < 2ULL * uc->stack_len)
		want = 2ULL * uc->stack_len;
	if (want < LUW_UC_STACK_FIRST)
		want = LUW_UC_STACK_FIRST;
	want = ((uc->stack_lo + want + LUW_UC_STACK_ALIGN - 1) &
		~(__u64)(LUW_UC_STACK_ALIGN - 1)) - uc->stack_lo;
	lim = uc->stack_end - uc->stack_lo;
	if (want > lim)
		want = lim;
	if (want > uc->stack_cap)
		want = uc->stack_cap;
	if (want <= uc->stack_len) {
		uc->stack_done = 1;
		return;
	}
	from = uc->stack_lo + uc->stack_len;
	ask = (__u32)(want - uc->stack_len);
	got = uc->copy(uc->ctx, from, uc->stack_buf + uc->stack_len, ask);
	if (got > ask)
		got = 0;
	uc->stack_len += got;
	if (got < ask || uc->stack_len >= uc->stack_cap)
		uc->stack_done = 1;
}

static inline int luw_uc__find(struct luw_uc *uc, __u64 addr, void *dst,
			       __u32 len)
{
	__u8 *e = &uc->idx[(addr >> 8) & (LUW_UC_IDX - 1)];
	const struct luw_uc_span *s;
	__u32 i;

	if (*e) {
		s = &uc->span[*e - 1];
		if (addr - s->addr < s->len && addr + len <= s->addr + s->len)
			goto hit;
	}
	for (i = uc->nspan; i-- > 0;) {
		s = &uc->span[i];
		if (addr - s->addr < s->len && addr + len <= s->addr + s->len) {
			*e = (__u8)(i + 1);
			goto hit;
		}
	}
	return 0;
hit:
	luw_uc__cpy(dst, uc->buf + s->off + (__u32)(addr - s->addr), len);
	return 1;
}

/* Copy [addr, addr + len) into a new span; returns the bytes kept. */
static inline __u32 luw_uc__fill(struct luw_uc *uc, __u64 addr, __u32 len)
{
	struct luw_uc_span *s;
	__u32 got;

	if (uc->nspan >= LUW_UC_SPANS || len > uc->cap - uc->used)
		return 0;
	got = uc->copy(uc->ctx, addr, uc->buf + uc->used, len);
	if (!got || got > len)
		return 0;
	s = &uc->span[uc->nspan++];
	s->addr = addr;
	s->len = got;
	s->off = uc->used;
	uc->used += got;
	return got;
}

/*
 * Where the line for a miss at addr goes (in addr's page): LUW_UC_LINE
 * bytes around it, objects being read from either side of the field
 * first asked for; twice that, continuing a span it adjoins, when the walk
 * is going through neighbouring objects (a chunk's protos and closures,
 * allocated in order).  Returns the size.
 */
static inline __u32 luw_uc__place(const struct luw_uc *uc, __u64 addr,
				  __u32 len, __u64 page, __u64 *at)
{
	__u64 line = (addr & ~(__u64)63), end;
	__u32 size = LUW_UC_LINE, i;

	line = line - page >= LUW_UC_LINE / 2 ? line - LUW_UC_LINE / 2 : page;
	for (i = 0; i < uc->nspan; i++) {
		const struct luw_uc_span *s = &uc->span[i];

		end = s->addr + s->len;
		if (addr >= end && addr - end < LUW_UC_LINE) {
			line = end;
			size = 2 * LUW_UC_LINE;
			break;
		}
		if (addr < s->addr && s->addr - addr <= LUW_UC_LINE) {
			size = 2 * LUW_UC_LINE;
			line = s->addr - size;
			break;
		}
	}
	/* Within the page, holding [addr, addr + len). */
	if (line > addr)
		line = addr;
	if (addr + len > line + size)
		line = addr + len - size;
	if (line < page)
		line = page;
	if (line + size > page + LUW_UC_PAGE)
		line = page + LUW_UC_PAGE - size;
	*at = line;
	return size;
}

/* Returns 0 with dst filled, nonzero where the bytes could not be read. */
static inline int luw_uc_read(struct luw_uc *uc, __u64 addr, void *dst,
			      __u32 len)
{
	__u64 line, page;
	__u32 size;

	if (!len)
		return 0;
	if (addr + len < addr)
		return -1;
	if (addr >= uc->stack_lo && addr + len <= uc->stack_end) {
		if (addr + len > uc->stack_lo + uc->stack_len &&
		    !uc->stack_done)
			luw_uc__stack_grow(uc, addr, len);
		if (addr + len <= uc->stack_lo + uc->stack_len) {
			uc->hits++;
			luw_uc__cpy(dst, uc->stack_buf +
				    (__u32)(addr - uc->stack_lo), len);
			return 0;
		}
	}
	if (luw_uc__find(uc, addr, dst, len)) {
		uc->hits++;
		return 0;
	}
	page = addr & ~(__u64)(LUW_UC_PAGE - 1);
	if (addr + len > page + LUW_UC_PAGE || uc->nspan >= LUW_UC_SPANS)
		goto alone;
	size = luw_uc__place(uc, addr, len, page, &line);
	if (size > uc->cap - uc->used || addr < line ||
	    addr + len > line + size)
		goto alone;
	/*
	 * The line lies in one page, as the bytes asked for do: when it
	 * cannot be copied, neither can they.
	 */
	if (luw_uc__fill(uc, line, size) < (__u32)(addr - line) + len)
		return -1;
	luw_uc__cpy(dst, uc->buf + uc->span[uc->nspan - 1].off +
		    (__u32)(addr - line), len);
	return 0;
alone:
	/* Across a line or out of storage: exactly the bytes asked for. */
	return uc->copy(uc->ctx, addr, dst, len) == len ? 0 : -1;
}

/*
 * The caller is about to read [addr, addr + len): copy it in one go when
 * there is room, its upper end first (the Lua walk goes down from there).
 * A hint only: nothing fails, reads outside what it kept go on as lines.
 */
static inline void luw_uc_prefetch(struct luw_uc *uc, __u64 addr, __u64 len)
{
	__u64 end = addr + len;
	__u32 i;

	if (end < addr || !len)
		return;
	if (len > LUW_UC_RANGE_MAX)
		addr = end - LUW_UC_RANGE_MAX;
	/* Leave out what a span already holds at either end. */
	for (i = 0; i < uc->nspan && addr < end; i++) {
		const struct luw_uc_span *s = &uc->span[i];

		if (addr >= s->addr && addr < s->addr + s->len)
			addr = s->addr + s->len;
		if (end > s->addr && end <= s->addr + s->len)
			end = s->addr;
	}
	if (addr >= end || end - addr <= 64)
		return;		/* held, or a line does as well */
	if (end - addr > uc->cap - uc->used)
		addr = end - (uc->cap - uc->used);
	if (addr < end)
		luw_uc__fill(uc, addr, (__u32)(end - addr));
}

#endif /* LUAUNWIND_UCACHE_H */
