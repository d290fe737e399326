// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * A sample's read cache (ucache.h).  Runs in the module's sample handler,
 * hardirq or NMI: no libc, no allocation, no locks.
 */
#include "ucache.h"

void luw_uc_init(struct luw_uc *uc, luw_uc_copy_fn copy, void *ctx, u64 sp,
		 u64 stack_end, u8 *stack_buf, u32 stack_cap, u8 *buf, u32 cap)
{
	u32 i;

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

/* Grow the stack window to cover [addr, addr + len) if it may. */
static void luw_uc_stack_grow(struct luw_uc *uc, u64 addr, u32 len)
{
	u64 want = addr + len - uc->stack_lo, lim, from;
	u32 ask, got;

	if (want < 2ULL * uc->stack_len)
		want = 2ULL * uc->stack_len;
	if (want < LUW_UC_STACK_FIRST)
		want = LUW_UC_STACK_FIRST;
	want = ((uc->stack_lo + want + LUW_UC_STACK_ALIGN - 1) &
		~(u64)(LUW_UC_STACK_ALIGN - 1)) - uc->stack_lo;
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
	ask = (u32)(want - uc->stack_len);
	got = uc->copy(uc->ctx, from, uc->stack_buf + uc->stack_len, ask);
	if (got > ask)
		got = 0;
	uc->stack_len += got;
	if (got < ask || uc->stack_len >= uc->stack_cap)
		uc->stack_done = 1;
}

static int luw_uc_find(struct luw_uc *uc, u64 addr, void *dst, u32 len)
{
	u8 *e = &uc->idx[(addr >> LUW_UC_GRAIN_SHIFT) & (LUW_UC_IDX - 1)];
	const struct luw_uc_span *s;
	u32 i;

	/*
	 * A span indexes every granule it covers when it is made, and
	 * entries are only ever overwritten: an empty entry means that no
	 * span holds a byte of the granule, and there is nothing to search.
	 */
	if (!*e)
		return 0;
	s = &uc->span[*e - 1];
	if (addr - s->addr < s->len && addr + len <= s->addr + s->len)
		goto hit;
	for (i = uc->nspan; i-- > 0;) {
		s = &uc->span[i];
		if (addr - s->addr < s->len && addr + len <= s->addr + s->len) {
			*e = (u8)(i + 1);
			goto hit;
		}
	}
	return 0;
hit:
	luw_uc_cpy(dst, uc->buf + s->off + (u32)(addr - s->addr), len);
	return 1;
}

/*
 * Copy [addr, addr + len) into a new span; returns the bytes kept.  The
 * granules it covers point at it from now on: the next read there is
 * served by luw_uc_read()'s inline path, not by a search of the spans.
 * Spans a granule pointed at before are still found by that search.
 */
static u32 luw_uc_fill(struct luw_uc *uc, u64 addr, u32 len)
{
	struct luw_uc_span *s;
	u64 g, last;
	u32 got;

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
	g = addr >> LUW_UC_GRAIN_SHIFT;
	last = (addr + got - 1) >> LUW_UC_GRAIN_SHIFT;
	if (last - g >= LUW_UC_IDX)
		last = g + LUW_UC_IDX - 1;
	for (; g <= last; g++)
		uc->idx[g & (LUW_UC_IDX - 1)] = (u8)uc->nspan;
	return got;
}

/*
 * Where the line for a miss at addr goes (in addr's page): LUW_UC_LINE
 * bytes around it, objects being read from either side of the field
 * first asked for; twice that, continuing a span it adjoins, when the walk
 * is going through neighbouring objects (a chunk's protos and closures,
 * allocated in order).  Returns the size.
 */
static u32 luw_uc_place(const struct luw_uc *uc, u64 addr, u32 len, u64 page,
			u64 *at)
{
	u64 line = (addr & ~(u64)63), end, g, last;
	u32 size = LUW_UC_LINE;

	line = line - page >= LUW_UC_LINE / 2 ? line - LUW_UC_LINE / 2 : page;
	/*
	 * A span that ends or starts within LUW_UC_LINE of addr has a byte in
	 * one of the granules around it, which the index names (unless a
	 * later span took the entry: then the line is placed on its own).
	 */
	g = (addr - LUW_UC_LINE) >> LUW_UC_GRAIN_SHIFT;
	last = (addr + LUW_UC_LINE) >> LUW_UC_GRAIN_SHIFT;
	for (; g <= last; g++) {
		u8 e = uc->idx[g & (LUW_UC_IDX - 1)];
		const struct luw_uc_span *s;

		if (!e)
			continue;
		s = &uc->span[e - 1];
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

int luw_uc_read_slow(struct luw_uc *uc, u64 addr, void *dst, u32 len)
{
	u64 line, page;
	u32 size;

	if (!len)
		return 0;
	if (addr + len < addr)
		return -EFAULT;
	if (addr >= uc->stack_lo && addr + len <= uc->stack_end) {
		if (addr + len > uc->stack_lo + uc->stack_len &&
		    !uc->stack_done)
			luw_uc_stack_grow(uc, addr, len);
		if (addr + len <= uc->stack_lo + uc->stack_len) {
			uc->hits++;
			luw_uc_cpy(dst, uc->stack_buf +
				    (u32)(addr - uc->stack_lo), len);
			return 0;
		}
	}
	if (luw_uc_find(uc, addr, dst, len)) {
		uc->hits++;
		return 0;
	}
	page = addr & ~(u64)(LUW_UC_PAGE - 1);
	if (addr + len > page + LUW_UC_PAGE || uc->nspan >= LUW_UC_SPANS)
		goto alone;
	size = luw_uc_place(uc, addr, len, page, &line);
	if (size > uc->cap - uc->used || addr < line ||
	    addr + len > line + size)
		goto alone;
	/*
	 * The line lies in one page, as the bytes asked for do: when it
	 * cannot be copied, neither can they.
	 */
	if (luw_uc_fill(uc, line, size) < (u32)(addr - line) + len)
		return -EFAULT;
	luw_uc_cpy(dst, uc->buf + uc->span[uc->nspan - 1].off +
		    (u32)(addr - line), len);
	return 0;
alone:
	/* Across a line or out of storage: exactly the bytes asked for. */
	return uc->copy(uc->ctx, addr, dst, len) == len ? 0 : -EFAULT;
}

void luw_uc_prefetch(struct luw_uc *uc, u64 addr, u64 len)
{
	const struct luw_uc_span *s;
	u64 end = addr + len;
	u8 e;

	if (end < addr || !len)
		return;
	if (len > LUW_UC_RANGE_MAX)
		addr = end - LUW_UC_RANGE_MAX;
	/* Leave out what the spans the index names hold at either end. */
	e = uc->idx[(addr >> LUW_UC_GRAIN_SHIFT) & (LUW_UC_IDX - 1)];
	if (e) {
		s = &uc->span[e - 1];
		if (addr >= s->addr && addr < s->addr + s->len)
			addr = s->addr + s->len;
	}
	e = uc->idx[((end - 1) >> LUW_UC_GRAIN_SHIFT) & (LUW_UC_IDX - 1)];
	if (e && addr < end) {
		s = &uc->span[e - 1];
		if (end > s->addr && end <= s->addr + s->len)
			end = s->addr;
	}
	if (addr >= end || end - addr <= 64)
		return;		/* held, or a line does as well */
	if (end - addr > uc->cap - uc->used)
		addr = end - (uc->cap - uc->used);
	if (addr < end)
		luw_uc_fill(uc, addr, (u32)(end - addr));
}
