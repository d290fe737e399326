/* SPDX-License-Identifier: GPL-2.0 */
/*
 * luaunwind: a sample's reads of the interrupted thread's memory, each a
 * load made where the walkers ask for it.
 *
 * The walkers (uwtable.c, ljwalk.c, mergewalk.c) ask for one word or one
 * short block at a time, ~50 of them for a sample of a C -> Lua -> C
 * stack.  Each is served by luw_walk_read() below, inline in the walker:
 * the sample's budget, a bound on the address, and the load itself under
 * the exception table, as perf's own user callchain reads
 * (perf_callchain_user(): __get_user() under pagefault_disable()).  A
 * read of memory that is not mapped and resident fails (the fixup) and
 * is never faulted in: luw_user_reads_begin() disables page faults for
 * the whole sample.
 *
 * A load is safe only while this CPU's loaded mm is the thread's, which
 * it is not when an NMI lands in the middle of switch_mm();
 * nmi_uaccess_okay() says which, and it is not exported to modules.  So
 * the sample's first read is made by copy_from_user_nmi(), which checks
 * it (a workaround: that read stands for the check); the mm stays as it
 * is until the handler returns.  When that read fails, for that reason
 * or another, every read of the sample goes through copy_from_user_nmi().
 *
 * No copy is kept: what a read returns are the bytes at the address when
 * it was made.  The walkers trust nothing they read: every value is
 * checked before it is followed.
 *
 * Cost: every request spends one of the sample's max_reads, and each that
 * fails one of LUW_SAMPLE_FAULTS; past either, reads are refused and
 * the walks end there (cut).  A request asks for at most LUW_READ_MAX
 * bytes (the walkers' largest, an object's fields in one block).
 */
#ifndef LUW_UREAD_H
#define LUW_UREAD_H

#include <linux/nospec.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <asm/smap.h>
#include <luaunwind.h>

#define LUW_READ_MAX	64

/* One sample's user-memory reads: every walk draws on the same budget. */
struct luw_cost {
	u32 max_reads;		/* luw_sample_reads(); c->reads at the last fault */
	u32 reads;		/* requests */
	u32 faults;		/* requests that failed in the load */
	u64 bytes;		/* read */
	bool cut;		/* a read was refused: budget spent */
	bool user_ok;		/* luw_user_reads_begin() found the mm loaded */
};

void luw_user_reads_begin(struct luw_cost *c, u64 sp);

/*
 * The reads luw_user_load() may not make, exact and checked: a word
 * returned by value (the caller's variable never has its address taken,
 * and stays in a register), or a block.
 */
struct luw_uword {
	u64 val;
	int err;
};

struct luw_uword luw_user_copy_word(u64 addr, u32 len);
int luw_user_copy(u64 addr, void *dst, u32 len);
void luw_user_reads_end(struct luw_cost *c);

/* May a read of len bytes at addr be made at all (the load and the copy)? */
static __always_inline bool luw_user_range(u64 addr, u32 len)
{
	return len <= LUW_READ_MAX && addr <= TASK_SIZE_MAX - len;
}

/*
 * len bytes at user address addr into dst; 0 or -EFAULT.  The address is
 * bounded twice: by a branch, and by a mask the CPU cannot speculate past
 * (linux/nospec.h), so that no path dereferences a kernel address the
 * target put in its memory.  Only the loads run with user access open
 * (stac/clac): nothing is called in between.
 */
static __always_inline int luw_user_load(u64 addr, void *dst, u32 len)
{
	unsigned long a, top = TASK_SIZE_MAX;
	u64 v8;
	u32 v4;
	u16 v2;
	u8 *d = dst;

	if (!luw_user_range(addr, len))
		return -EFAULT;
	/*
	 * In a register: 5.10's array_index_mask_nospec() lets the bound be
	 * an immediate, and cmp takes none of 64 bits.
	 */
	top = top + 1 - len;
	OPTIMIZER_HIDE_VAR(top);
	a = array_index_nospec((unsigned long)addr, top);
	switch (len) {
	case 8:
		stac();
		unsafe_get_user(v8, (const u64 __user *)a, fault);
		clac();
		__builtin_memcpy(d, &v8, 8);
		return 0;
	case 4:
		stac();
		unsafe_get_user(v4, (const u32 __user *)a, fault);
		clac();
		__builtin_memcpy(d, &v4, 4);
		return 0;
	case 1:
		stac();
		unsafe_get_user(*d, (const u8 __user *)a, fault);
		clac();
		return 0;
	case 16:	/* a Lua frame's two slots */
		stac();
		unsafe_get_user(v8, (const u64 __user *)a, fault);
		__builtin_memcpy(d, &v8, 8);
		unsafe_get_user(v8, (const u64 __user *)(a + 8), fault);
		clac();
		__builtin_memcpy(d + 8, &v8, 8);
		return 0;
	}
	/* A block: whole words, then the rest in at most three loads. */
	stac();
	for (; len >= 8; len -= 8, a += 8, d += 8) {
		unsafe_get_user(v8, (const u64 __user *)a, fault);
		__builtin_memcpy(d, &v8, 8);
	}
	if (len & 4) {
		unsafe_get_user(v4, (const u32 __user *)a, fault);
		__builtin_memcpy(d, &v4, 4);
		a += 4;
		d += 4;
	}
	if (len & 2) {
		unsafe_get_user(v2, (const u16 __user *)a, fault);
		__builtin_memcpy(d, &v2, 2);
		a += 2;
		d += 2;
	}
	if (len & 1)
		unsafe_get_user(*d, (const u8 __user *)a, fault);
	clac();
	return 0;
fault:
	clac();
	return -EFAULT;
}

/*
 * The module's one reader (walkenv.h), cost its context: one request of
 * the sample.  -E2BIG when the budget refuses it, -EFAULT when the bytes
 * cannot be read.
 */
static __always_inline int luw_walk_read(void *cost, u64 addr, void *dst,
					 u32 len)
{
	struct luw_cost *c = cost;
	struct luw_uword w;
	int err;

	if (unlikely(c->reads >= c->max_reads)) {
		c->cut = true;
		return -E2BIG;
	}
	c->reads++;
	c->bytes += len;
	if (likely(c->user_ok)) {
		err = luw_user_load(addr, dst, len);
	} else if (__builtin_constant_p(len) && len <= 8) {
		/*
		 * A word by value only where len is known here: a memcpy()
		 * of a variable length would take w's address, and put it
		 * (zeroed, with a canary) on the stack.
		 */
		w = luw_user_copy_word(addr, len);
		err = w.err;
		if (!err)	/* the low bytes: x86-64 is little-endian */
			__builtin_memcpy(dst, &w.val, len);
	} else if (__builtin_constant_p(len) && len == 16) {
		/*
		 * As two words too: passing the caller's 16 bytes to
		 * luw_user_copy() would let its buffer's address escape,
		 * and the frame reader (lj_frame_at()) gain a canary.
		 */
		w = luw_user_copy_word(addr, 8);
		err = w.err;
		if (!err) {
			__builtin_memcpy(dst, &w.val, 8);
			w = luw_user_copy_word(addr + 8, 8);
			err = w.err;
			if (!err)
				__builtin_memcpy((u8 *)dst + 8, &w.val, 8);
		}
	} else {
		err = luw_user_copy(addr, dst, len);
	}
	if (unlikely(err)) {
		/* The last fault allowed spends the budget: one test a read. */
		if (++c->faults >= LUW_SAMPLE_FAULTS)
			c->max_reads = c->reads;
		return -EFAULT;
	}
	return 0;
}

#endif /* LUW_UREAD_H */
