/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Host unwinding over the compact unwind tables of
 * include/luaunwind_unwind.h (the format userspace builds from .eh_frame):
 * checking a table, finding the entry of a pc, one step to the caller.
 * Compiled into the module (its sample handler, kmod/hostwalk.c) and into
 * the userspace library (luaunwind-hostunwind, the unit tests, walkcost).
 *
 * What an unwinder does per frame (the kernel in its sample handler):
 *  1. Find the mapping that holds ip; none -> stop (truncated).
 *  2. key = ip for the innermost frame, ip - 1 for every caller frame (a
 *     return address may be the first byte after a noreturn call, i.e.
 *     already outside the calling function); rel = luw_uw_rel(key, ...).
 *  3. e = luw_uw_find(entries, n, rel): binary search, O(log n), no
 *     allocation.
 *  4. luw_uw_step(e, regs, read, ctx): compute the CFA from rsp or rbp
 *     (for DEREF_*, read it at rsp or rbp + N), read the return address
 *     and, for RBP_CFA and RBP_RBP, the saved rbp (and with
 *     luw_uw_step_r14() the saved r14) through the
 *     caller's nofault reader (in the kernel, uread.h: a load that
 *     fails instead of faulting; process_vm_readv() in userspace).
 *     Sanity checks, all of
 *     which end the walk with an error instead of following garbage:
 *       - the CFA is strictly above the current sp (stacks grow down, so
 *         every caller's frame is higher: this alone bounds the walk);
 *       - the CFA stays within the stack: at most regs->stack_end;
 *       - the return address is not 0;
 *       - a rule that starts from rsp (RSP, PLT, DEREF_RSP) is not applied
 *         to a guessed sp (LUW_UW_R_SP_GUESS, below).
 *  5. Stop at END (complete stack), on any error (truncated), and after at
 *     most a caller-chosen number of frames (LUW_UW_MAX_FRAMES suggested).
 *
 * Frame pointers are the fallback for NONE and UNSUP (and for pcs in no
 * table at all, e == NULL): CFA = rbp + 16, return address at rbp + 8, the
 * caller's rbp at rbp; only when rbp is known and points into the stack at
 * or above sp.  rbp == 0 there is the psABI's mark of the outermost frame
 * (_start and thread entry clear it) and ends the walk as complete.  A
 * frame stepped by that fallback is never trusted for the frames above
 * it: after a step over UNSUP (CFI that says the frame is not a plain
 * one, e.g. a realigned frame's prologue) the caller's sp is a guess,
 * LUW_UW_R_SP_GUESS, until a CFA computed from rbp (RBP, DEREF_RBP)
 * replaces it; a rule that needs sp stops the walk there instead
 * (LUW_UW_ERR_GUESS).  Why NONE and no table do not set it: uwtable.c.
 * LuaJIT's VM uses rbp as a general register, but its code is covered by
 * one FDE (a fixed frame of CFRAME_SIZE), so the fallback is not used
 * there; JIT traces are anonymous memory with no table and no frame
 * pointer and need the trace's spadjust, which is not this code's job.
 */
#ifndef LUW_UWTABLE_H
#define LUW_UWTABLE_H

#include "walkenv.h"
#include <luaunwind_unwind.h>

#define LUW_UW_MAX_FRAMES	128	/* suggested bound on a host walk */

/* Unwind state of one frame.  stack_end bounds every CFA (exclusive). */
struct luw_uw_regs {
	u64 ip;
	u64 sp;
	u64 bp;
	u64 r14;
	u64 stack_end;
	u32 flags;		/* LUW_UW_R_* */
};

#define LUW_UW_R_BP_VALID	0x1	/* bp holds this frame's rbp */
#define LUW_UW_R_CALLER		0x2	/* ip is a return address */
#define LUW_UW_R_NO_FP		0x4	/* never fall back to frame pointers */
#define LUW_UW_R_R14_VALID	0x8	/* r14 holds this frame's r14 */
#define LUW_UW_R_SP_GUESS	0x10	/* sp is rbp + 16 of an UNSUP frame */
/*
 * The innermost frame's registers are a system call's (orig_ax a call
 * number) and not those of a clone child (whose ax is 0): the thread
 * that made the call, inside it (ax is the kernel's placeholder error
 * until it returns) or back from it.  A SYSCALL row holds only then.
 */
#define LUW_UW_R_SYSCALL	0x20

/* luw_uw_step() results: >= 0 go on (or END), < 0 stop, truncated. */
#define LUW_UW_OK		0	/* regs now describe the caller */
#define LUW_UW_OK_FP		1	/* same, found through frame pointers */
#define LUW_UW_END		2	/* outermost frame reached: complete */
#define LUW_UW_ERR_READ		(-EFAULT)	/* a stack read faulted */
#define LUW_UW_ERR_CFA		(-ERANGE)	/* CFA not above sp or past the stack */
#define LUW_UW_ERR_RA		(-EINVAL)	/* return address 0 */
#define LUW_UW_ERR_NOINFO	(-ENOENT)	/* no usable rule, no frame pointer */
#define LUW_UW_ERR_GUESS	(-EDOM)		/* rsp-based rule, guessed sp */

/*
 * Reads 8 bytes of the target's memory at addr into *val without faulting
 * or sleeping; returns 0 on success, non-zero when addr is not readable.
 */
typedef int (*luw_uw_read_fn)(void *ctx, u64 addr, u64 *val);

/*
 * The three helpers below are a subtraction or a pointer each: inline, so
 * the handler's per-frame lookup pays no call for them.
 */
static inline u64 luw_uw_rel(u64 pc, u64 vma_start, u64 vma_off)
{
	return pc - vma_start + vma_off;
}

/* The address whose rule applies to this frame (see step 2 above). */
static inline u64 luw_uw_key(const struct luw_uw_regs *r)
{
	return (r->flags & LUW_UW_R_CALLER) ? r->ip - 1 : r->ip;
}

static inline const struct luw_uw_entry *
luw_uw_entries(const struct luw_uw_hdr *h)
{
	return (const struct luw_uw_entry *)(h + 1);
}

/* The r14 rows, right after the entries. */
static inline const struct luw_uw_r14 *luw_uw_r14s(const struct luw_uw_hdr *h)
{
	return (const struct luw_uw_r14 *)(luw_uw_entries(h) + h->nentries);
}

/*
 * Validate a table before first use (the kernel at upload time, not per
 * sample): sizes, version, flags, rules, and sorted starts.  Returns 0 or
 * -EINVAL.
 */
int luw_uw_check(const void *buf, u64 len);

/*
 * The entry covering rel: the last one whose start <= rel, or NULL when
 * rel lies below the first entry or beyond 4 GiB.
 */
const struct luw_uw_entry *luw_uw_find(const struct luw_uw_entry *ent, u32 n,
				       u64 rel);

/*
 * A lookup index over a checked table, built once (at upload) so that a
 * lookup searches one bucket, a few entries, instead of the whole table:
 * bucket k covers rel from ent[0].start + (k << shift), and first[k] is
 * the entry covering that start.  luw_uw_index_len() picks shift for about
 * LUW_UW_INDEX_PER entries a bucket and returns the bucket count (the
 * caller allocates first[]); luw_uw_index_build() fills first[].
 */
#define LUW_UW_INDEX_PER	4

u32 luw_uw_index_len(const struct luw_uw_entry *ent, u32 n, u32 *shift);
void luw_uw_index_build(const struct luw_uw_entry *ent, u32 n, u32 shift,
			u32 *first, u32 nb);

/* luw_uw_find() through the index: the same entry, fewer comparisons. */
const struct luw_uw_entry *luw_uw_find_ix(const struct luw_uw_entry *ent,
					  u32 n, const u32 *first, u32 nb,
					  u32 shift, u64 rel);

/* The r14 row covering rel, or NULL (below the first row, or none). */
const struct luw_uw_r14 *luw_uw_find_r14(const struct luw_uw_r14 *x, u32 n,
					 u64 rel);

/*
 * guess is LUW_UW_R_SP_GUESS when the frame has CFI that frame pointers
 * cannot express (UNSUP): the sp they give the caller, rbp + 16, is right
 * only if the frame happens to be a plain one.  A realigned frame is not:
 * its rbp sits below the alignment padding, its true CFA above it, while
 * rbp + 8 holds the copy it made of the return address -- the ip comes
 * out right, the sp too low, and the caller's rsp-based rule would read
 * garbage.  The flag stays through further frame-pointer steps, until a
 * CFA that does not come from sp puts sp right.
 *
 * A step for a pc with no CFI at all (NONE, no table) does not mark it:
 * there rbp + 8 and rbp + 16 are one frame record's return address and
 * CFA -- a chain that skips frames skips them whole, the sp it gives
 * belongs to the ip it gives -- and nothing says the frame is not a
 * plain one.  Code without CFI that realigns its stack is hand-written;
 * marking every such step would refuse the rsp-based callers of all code
 * built with frame pointers and no .eh_frame.
 */
static LUW_INLINE int luw_uw_step_fp(struct luw_uw_regs *r,
				      luw_uw_read_fn rd, void *ctx, u32 guess)
{
	u64 cfa, ra, bp;

	if ((r->flags & LUW_UW_R_NO_FP) || !(r->flags & LUW_UW_R_BP_VALID))
		return LUW_UW_ERR_NOINFO;
	/* The psABI's end of the chain: _start and clone zero rbp. */
	if (r->bp == 0)
		return LUW_UW_END;
	if (r->bp < r->sp || r->bp > r->stack_end - 16)
		return LUW_UW_ERR_NOINFO;
	cfa = r->bp + 16;
	if (LUW_WALK_READ64(rd, ctx, r->bp + 8, &ra) ||
	    LUW_WALK_READ64(rd, ctx, r->bp, &bp))
		return LUW_UW_ERR_READ;
	if (!ra)
		return LUW_UW_ERR_RA;
	r->ip = ra;
	r->sp = cfa;
	r->bp = bp;
	r->flags = (r->flags & ~(LUW_UW_R_R14_VALID | LUW_UW_R_SYSCALL)) |
		   LUW_UW_R_CALLER | LUW_UW_R_BP_VALID | guess;
	return LUW_UW_OK_FP;
}

/*
 * One step from the frame in *r to its caller, with e the entry found for
 * luw_uw_key(r) (NULL when no table covers the pc).  On LUW_UW_OK or
 * LUW_UW_OK_FP *r describes the caller; otherwise *r is unchanged.  The
 * caller's r14 is known (LUW_UW_R_R14_VALID) only after a step by a CFA
 * rule whose r14 row x (luw_uw_find_r14() for the same key) says SAME --
 * and this frame's r14 was known -- or saved at CFA + off; x NULL, UNDEF,
 * a vmseq row or a step by frame pointers leave it unknown.
 *
 * Inline, as luw_uw_step_fp(): the module's host walk makes a step a
 * frame, and a call's entry and exit (callee-saved registers, the return
 * thunk) were a fifth of the step's instructions.
 */
static LUW_INLINE int luw_uw_step_r14(const struct luw_uw_entry *e,
				       const struct luw_uw_r14 *x,
				       struct luw_uw_regs *r,
				       luw_uw_read_fn rd, void *ctx)
{
	u64 cfa, ra, bp, r14;
	u32 bp_flag, r14_flag;

	/*
	 * A SYSCALL row is the entry rule of a stub only for the thread
	 * inside its system call; at that pc any other (a child of clone
	 * returning on its own stack) has no CFI, as the file says.
	 */
	if (e && (e->rule & LUW_UW_SYSCALL) && !(r->flags & LUW_UW_R_SYSCALL))
		e = NULL;
	if (!e)
		return luw_uw_step_fp(r, rd, ctx, 0);

	/*
	 * The s32/s16/s8 offsets sign-extend as they are added to a u64.
	 * A rule that starts from sp needs an sp that is not a guess.  The
	 * switch has no jump table (retpoline kernels build without them):
	 * its tests go to the common rule first.
	 */
	switch (__builtin_expect(LUW_UW_CFA_OF(e->rule), LUW_UW_CFA_RSP)) {
	case LUW_UW_CFA_RSP:
		if (r->flags & LUW_UW_R_SP_GUESS)
			return LUW_UW_ERR_GUESS;
		cfa = r->sp + e->cfa_off;
		break;
	case LUW_UW_CFA_RBP:
		if (!(r->flags & LUW_UW_R_BP_VALID))
			return LUW_UW_ERR_NOINFO;
		cfa = r->bp + e->cfa_off;
		break;
	case LUW_UW_CFA_PLT:
		if (r->flags & LUW_UW_R_SP_GUESS)
			return LUW_UW_ERR_GUESS;
		cfa = r->sp + e->cfa_off;
		if ((s32)(r->ip & 15) >= e->aux)
			cfa += 8;
		break;
	case LUW_UW_CFA_DEREF_RBP:
		if (!(r->flags & LUW_UW_R_BP_VALID))
			return LUW_UW_ERR_NOINFO;
		if (LUW_WALK_READ64(rd, ctx, r->bp + e->cfa_off, &cfa))
			return LUW_UW_ERR_READ;
		break;
	case LUW_UW_CFA_DEREF_RSP:
		if (r->flags & LUW_UW_R_SP_GUESS)
			return LUW_UW_ERR_GUESS;
		if (LUW_WALK_READ64(rd, ctx, r->sp + e->cfa_off, &cfa))
			return LUW_UW_ERR_READ;
		break;
	case LUW_UW_CFA_END:
		return LUW_UW_END;
	case LUW_UW_CFA_UNSUP:
		return luw_uw_step_fp(r, rd, ctx, LUW_UW_R_SP_GUESS);
	default:		/* NONE */
		return luw_uw_step_fp(r, rd, ctx, 0);
	}

	if (cfa <= r->sp || cfa > r->stack_end)
		return LUW_UW_ERR_CFA;
	if (LUW_WALK_READ64(rd, ctx, cfa + e->ra_off, &ra))
		return LUW_UW_ERR_READ;
	if (!ra)
		return LUW_UW_ERR_RA;

	bp = r->bp;
	bp_flag = r->flags & LUW_UW_R_BP_VALID;
	switch (__builtin_expect(LUW_UW_RBP_OF(e->rule), LUW_UW_RBP_SAME)) {
	case LUW_UW_RBP_CFA:
		if (LUW_WALK_READ64(rd, ctx, cfa + e->aux, &bp))
			return LUW_UW_ERR_READ;
		bp_flag = LUW_UW_R_BP_VALID;
		break;
	case LUW_UW_RBP_RBP:
		/* From this frame's rbp, read before anything is updated. */
		if (!bp_flag) {
			bp = 0;
			break;
		}
		if (LUW_WALK_READ64(rd, ctx, r->bp + e->aux, &bp))
			return LUW_UW_ERR_READ;
		break;
	case LUW_UW_RBP_UNDEF:
		bp = 0;
		bp_flag = 0;
		break;
	default:		/* SAME */
		break;
	}

	/*
	 * A vmseq row is exact for the CFA and rbp only: the sequence
	 * pushes and pops r14 on the way, its row does not say where.
	 */
	r14 = r->r14;
	r14_flag = 0;
	if (x && !(e->rule & LUW_UW_VMSEQ)) {
		switch (x->rule) {
		case LUW_UW_R14_SAME:
			r14_flag = r->flags & LUW_UW_R_R14_VALID;
			break;
		case LUW_UW_R14_CFA:
			if (LUW_WALK_READ64(rd, ctx, cfa + x->off, &r14))
				return LUW_UW_ERR_READ;
			r14_flag = LUW_UW_R_R14_VALID;
			break;
		default:	/* UNDEF */
			break;
		}
	}
	if (!r14_flag)
		r14 = 0;

	r->ip = ra;
	r->sp = cfa;
	r->bp = bp;
	r->r14 = r14;
	r->flags = (r->flags & ~(LUW_UW_R_BP_VALID | LUW_UW_R_R14_VALID |
				 LUW_UW_R_SP_GUESS | LUW_UW_R_SYSCALL)) |
		   bp_flag | r14_flag | LUW_UW_R_CALLER;
	return LUW_UW_OK;
}

/* luw_uw_step_r14() for walkers that do not follow r14. */
static inline int luw_uw_step(const struct luw_uw_entry *e,
			      struct luw_uw_regs *r, luw_uw_read_fn rd,
			      void *ctx)
{
	return luw_uw_step_r14(e, NULL, r, rd, ctx);
}

#endif /* LUW_UWTABLE_H */
