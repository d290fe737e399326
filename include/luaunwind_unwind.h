/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * luaunwind compact unwind tables (x86-64): format, lookup, unwind step.
 *
 * Userspace turns the .eh_frame of every mapped ELF file into one table
 * (userspace/lib/cfi.c, with libdw) and hands it to whoever unwinds: the
 * kernel module (uploaded per mapping) or luaunwind-hostunwind (ptrace).
 * The table answers, for any code byte of the file, how to get from a
 * frame's registers (ip, sp, bp) to its caller's.  Only rsp and rbp are
 * tracked: on x86-64 every CFA rule gcc, clang and LuaJIT's DynASM VM emit
 * in practice is "rsp + N" or "rbp + N", the return address always sits at
 * CFA - 8 and rbp is the only callee-saved register a CFA rule ever uses.
 *
 * PCs are keyed by FILE OFFSET, not by virtual address, so one table serves
 * every process that maps the file, whatever its load address:
 *
 *   rel = pc - vma_start + vma_file_offset        (luw_uw_rel())
 *
 * where vma_file_offset is vm_pgoff << PAGE_SHIFT in the kernel, or the
 * third column of /proc/PID/maps.
 *
 * Format (all fields little-endian, as laid out by the structs below):
 *
 * table          := header entry*
 * header         := magic version hdr-size entry-size flags nentries
 *                   text-lo text-hi build-id-len pad build-id
 * magic          := <U32: 0x5755554c, "LUUW" in memory>
 * version        := <U16: LUW_UW_VERSION>
 * hdr-size       := <U16: sizeof(struct luw_uw_hdr)>
 * entry-size     := <U16: sizeof(struct luw_uw_entry)>
 * flags          := <U16: LUW_UW_F_* bits; unknown bits are refused>
 * nentries       := <U32: number of entries that follow, >= 1>
 * text-lo        := <U32: lowest file offset any entry describes>
 * text-hi        := <U32: end of the last described range (the start of
 *                    the terminating NONE entry)>
 * build-id-len   := <U8: 0..20, bytes used in build-id>
 * pad            := <U8 x 3: zero>
 * build-id       := <U8 x 20: GNU build-id of the file, zero padded>
 *
 * entry          := start cfa-off aux ra-off rule
 * start          := <U32: first file offset covered; an entry covers
 *                    [start, next entry's start); starts strictly increase>
 * cfa-off        := <S32: the offset N of the CFA rule>
 * aux            := <S16: RBP_CFA: caller's rbp is saved at CFA + aux;
 *                    CFA_PLT: the threshold T below; otherwise 0>
 * ra-off         := <S8: the return address is saved at CFA + ra-off>
 * rule           := <U8: cfa-rule | rbp-rule << 4>
 *
 * cfa-rule       := NONE   no CFI covers these bytes: try frame pointers
 *                 | RSP    CFA = rsp + N
 *                 | RBP    CFA = rbp + N
 *                 | PLT    CFA = rsp + N + ((pc & 15) >= T ? 8 : 0), the
 *                          rule every .plt section's CFI expresses with a
 *                          DWARF expression (pushq then jmp per 16 bytes)
 *                 | END    the return address is undefined: this is the
 *                          outermost frame (_start, a thread's clone)
 *                 | UNSUP  CFI exists but is not expressible here (a
 *                          DWARF expression, a CFA in another register, a
 *                          signal trampoline): stop, or try frame pointers
 * rbp-rule       := SAME   the caller's rbp is this frame's rbp
 *                 | CFA    the caller's rbp is saved at CFA + aux
 *                 | UNDEF  the caller's rbp cannot be recovered
 *
 * The last entry is always a NONE entry at text-hi, so every lookup past
 * the described text falls into NONE.
 *
 * What an unwinder does per frame (the kernel in its sample handler):
 *  1. Find the mapping that holds ip; none -> stop (truncated).
 *  2. key = ip for the innermost frame, ip - 1 for every caller frame (a
 *     return address may be the first byte after a noreturn call, i.e.
 *     already outside the calling function); rel = luw_uw_rel(key, ...).
 *  3. e = luw_uw_find(entries, n, rel): binary search, O(log n), no
 *     allocation.
 *  4. luw_uw_step(e, regs, read, ctx): compute the CFA from rsp or rbp,
 *     read the return address and, for RBP_CFA, the saved rbp through the
 *     caller's nofault reader (in the kernel, the sample's read cache of
 *     luaunwind_ucache.h over copy_from_user_nmi(): the stack window is
 *     copied in bulk; process_vm_readv() in userspace).  Sanity checks,
 *     all of which end the walk with an error instead of following
 *     garbage:
 *       - the CFA is strictly above the current sp (stacks grow down, so
 *         every caller's frame is higher: this alone bounds the walk);
 *       - the CFA stays within the stack: at most regs->stack_end;
 *       - the return address is not 0.
 *  5. Stop at END (complete stack), on any error (truncated), and after at
 *     most a caller-chosen number of frames (LUW_UW_MAX_FRAMES suggested).
 *
 * Frame pointers are the fallback for NONE and UNSUP (and for pcs in no
 * table at all, e == NULL): CFA = rbp + 16, return address at rbp + 8, the
 * caller's rbp at rbp; only when rbp is known and points into the stack at
 * or above sp.  rbp == 0 there is the psABI's mark of the outermost frame
 * (_start and thread entry clear it) and ends the walk as complete.  LuaJIT's VM uses rbp as a general register, but its code is
 * covered by one FDE (a fixed frame of CFRAME_SIZE), so the fallback is not
 * used there; JIT traces are anonymous memory with no table and no frame
 * pointer and need the trace's spadjust, which is not this header's job.
 *
 * Everything below is freestanding C (no libc, no allocation, no locks) in
 * kernel style, usable from NMI context and from userspace.
 */
#ifndef _LUAUNWIND_UNWIND_H
#define _LUAUNWIND_UNWIND_H

#include <linux/types.h>

#define LUW_UW_MAGIC		0x5755554cU	/* "LUUW" little-endian */
#define LUW_UW_VERSION		1
#define LUW_UW_BUILD_ID_MAX	20
#define LUW_UW_MAX_FRAMES	128	/* suggested bound on a host walk */

/* Header flags. */
#define LUW_UW_F_BUILD_ID	0x0001	/* build-id[] is valid */
#define LUW_UW_F_ALL		LUW_UW_F_BUILD_ID

/* CFA rules (low nibble of entry.rule). */
#define LUW_UW_CFA_NONE		0
#define LUW_UW_CFA_RSP		1
#define LUW_UW_CFA_RBP		2
#define LUW_UW_CFA_PLT		3
#define LUW_UW_CFA_END		4
#define LUW_UW_CFA_UNSUP	5
#define LUW_UW_CFA_MAX		LUW_UW_CFA_UNSUP

/* rbp rules (high nibble of entry.rule). */
#define LUW_UW_RBP_SAME		0
#define LUW_UW_RBP_CFA		1
#define LUW_UW_RBP_UNDEF	2
#define LUW_UW_RBP_MAX		LUW_UW_RBP_UNDEF

#define LUW_UW_RULE(cfa, rbp)	((__u8)((cfa) | ((rbp) << 4)))
#define LUW_UW_CFA_OF(rule)	((rule) & 0x0f)
#define LUW_UW_RBP_OF(rule)	((rule) >> 4)

struct luw_uw_hdr {
	__u32 magic;
	__u16 version;
	__u16 hdr_size;
	__u16 entry_size;
	__u16 flags;
	__u32 nentries;
	__u32 text_lo;
	__u32 text_hi;
	__u8 build_id_len;
	__u8 pad[3];
	__u8 build_id[LUW_UW_BUILD_ID_MAX];
};

struct luw_uw_entry {
	__u32 start;
	__s32 cfa_off;
	__s16 aux;
	__s8 ra_off;
	__u8 rule;
};

/* Unwind state of one frame.  stack_end bounds every CFA (exclusive). */
struct luw_uw_regs {
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 stack_end;
	__u32 flags;		/* LUW_UW_R_* */
};

#define LUW_UW_R_BP_VALID	0x1	/* bp holds this frame's rbp */
#define LUW_UW_R_CALLER		0x2	/* ip is a return address */
#define LUW_UW_R_NO_FP		0x4	/* never fall back to frame pointers */

/* luw_uw_step() results: >= 0 go on (or END), < 0 stop, truncated. */
#define LUW_UW_OK		0	/* regs now describe the caller */
#define LUW_UW_OK_FP		1	/* same, found through frame pointers */
#define LUW_UW_END		2	/* outermost frame reached: complete */
#define LUW_UW_ERR_READ		(-1)	/* a stack read faulted */
#define LUW_UW_ERR_CFA		(-2)	/* CFA not above sp or past the stack */
#define LUW_UW_ERR_RA		(-3)	/* return address 0 */
#define LUW_UW_ERR_NOINFO	(-4)	/* no usable rule, no frame pointer */

/*
 * Reads 8 bytes of the target's memory at addr into *val without faulting
 * or sleeping; returns 0 on success, non-zero when addr is not readable.
 */
typedef int (*luw_uw_read_fn)(void *ctx, __u64 addr, __u64 *val);

static inline __u64 luw_uw_rel(__u64 pc, __u64 vma_start, __u64 vma_off)
{
	return pc - vma_start + vma_off;
}

/* The address whose rule applies to this frame (see step 2 above). */
static inline __u64 luw_uw_key(const struct luw_uw_regs *r)
{
	return (r->flags & LUW_UW_R_CALLER) ? r->ip - 1 : r->ip;
}

/*
 * Validate a table before first use (the kernel at upload time, not per
 * sample): sizes, version, flags, rules, and sorted starts.  Returns 0 or a
 * negative errno-style value (-22, EINVAL) so it needs no errno header.
 */
static inline int luw_uw_check(const void *buf, __u64 len)
{
	const struct luw_uw_hdr *h = buf;
	const struct luw_uw_entry *e;
	__u32 i;

	if (len < sizeof(*h))
		return -22;
	if (h->magic != LUW_UW_MAGIC || h->version != LUW_UW_VERSION ||
	    h->hdr_size != sizeof(*h) ||
	    h->entry_size != sizeof(struct luw_uw_entry) ||
	    (h->flags & ~LUW_UW_F_ALL) || h->nentries == 0 ||
	    h->build_id_len > LUW_UW_BUILD_ID_MAX)
		return -22;
	if ((len - sizeof(*h)) / sizeof(*e) != h->nentries ||
	    (len - sizeof(*h)) % sizeof(*e))
		return -22;
	e = (const struct luw_uw_entry *)(h + 1);
	for (i = 0; i < h->nentries; i++) {
		if (LUW_UW_CFA_OF(e[i].rule) > LUW_UW_CFA_MAX ||
		    LUW_UW_RBP_OF(e[i].rule) > LUW_UW_RBP_MAX)
			return -22;
		if (i && e[i].start <= e[i - 1].start)
			return -22;
	}
	if (e[0].start != h->text_lo ||
	    e[h->nentries - 1].start != h->text_hi ||
	    LUW_UW_CFA_OF(e[h->nentries - 1].rule) != LUW_UW_CFA_NONE)
		return -22;
	return 0;
}

static inline const struct luw_uw_entry *
luw_uw_entries(const struct luw_uw_hdr *h)
{
	return (const struct luw_uw_entry *)(h + 1);
}

/*
 * The entry covering rel: the last one whose start <= rel, or NULL when
 * rel lies below the first entry or beyond 4 GiB.
 */
static inline const struct luw_uw_entry *
luw_uw_find(const struct luw_uw_entry *ent, __u32 n, __u64 rel)
{
	__u32 lo = 0, hi = n;

	if (n == 0 || rel > 0xffffffffULL || rel < ent[0].start)
		return (const struct luw_uw_entry *)0;
	/* Invariant: ent[lo].start <= rel, and rel < ent[hi].start if hi < n. */
	while (hi - lo > 1) {
		__u32 mid = lo + (hi - lo) / 2;

		if (ent[mid].start <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return &ent[lo];
}

static inline int luw_uw_step_fp(struct luw_uw_regs *r, luw_uw_read_fn rd,
				 void *ctx)
{
	__u64 cfa, ra, bp;

	if ((r->flags & LUW_UW_R_NO_FP) || !(r->flags & LUW_UW_R_BP_VALID))
		return LUW_UW_ERR_NOINFO;
	/* The psABI's end of the chain: _start and clone zero rbp. */
	if (r->bp == 0)
		return LUW_UW_END;
	if (r->bp < r->sp || r->bp > r->stack_end - 16)
		return LUW_UW_ERR_NOINFO;
	cfa = r->bp + 16;
	if (rd(ctx, r->bp + 8, &ra) || rd(ctx, r->bp, &bp))
		return LUW_UW_ERR_READ;
	if (!ra)
		return LUW_UW_ERR_RA;
	r->ip = ra;
	r->sp = cfa;
	r->bp = bp;
	r->flags |= LUW_UW_R_CALLER | LUW_UW_R_BP_VALID;
	return LUW_UW_OK_FP;
}

/*
 * One step from the frame in *r to its caller, with e the entry found for
 * luw_uw_key(r) (NULL when no table covers the pc).  On LUW_UW_OK or
 * LUW_UW_OK_FP *r describes the caller; otherwise *r is unchanged.
 */
static inline int luw_uw_step(const struct luw_uw_entry *e,
			      struct luw_uw_regs *r, luw_uw_read_fn rd,
			      void *ctx)
{
	__u64 cfa, ra, bp;
	__u32 bp_flag;

	if (!e)
		return luw_uw_step_fp(r, rd, ctx);

	switch (LUW_UW_CFA_OF(e->rule)) {
	case LUW_UW_CFA_RSP:
		cfa = r->sp + (__s64)e->cfa_off;
		break;
	case LUW_UW_CFA_RBP:
		if (!(r->flags & LUW_UW_R_BP_VALID))
			return LUW_UW_ERR_NOINFO;
		cfa = r->bp + (__s64)e->cfa_off;
		break;
	case LUW_UW_CFA_PLT:
		cfa = r->sp + (__s64)e->cfa_off;
		if ((__s64)(r->ip & 15) >= e->aux)
			cfa += 8;
		break;
	case LUW_UW_CFA_END:
		return LUW_UW_END;
	default:		/* NONE, UNSUP */
		return luw_uw_step_fp(r, rd, ctx);
	}

	if (cfa <= r->sp || cfa > r->stack_end)
		return LUW_UW_ERR_CFA;
	if (rd(ctx, cfa + (__s64)e->ra_off, &ra))
		return LUW_UW_ERR_READ;
	if (!ra)
		return LUW_UW_ERR_RA;

	bp = r->bp;
	bp_flag = r->flags & LUW_UW_R_BP_VALID;
	switch (LUW_UW_RBP_OF(e->rule)) {
	case LUW_UW_RBP_CFA:
		if (rd(ctx, cfa + (__s64)e->aux, &bp))
			return LUW_UW_ERR_READ;
		bp_flag = LUW_UW_R_BP_VALID;
		break;
	case LUW_UW_RBP_UNDEF:
		bp = 0;
		bp_flag = 0;
		break;
	default:		/* SAME */
		break;
	}

	r->ip = ra;
	r->sp = cfa;
	r->bp = bp;
	r->flags = (r->flags & ~LUW_UW_R_BP_VALID) | bp_flag | LUW_UW_R_CALLER;
	return LUW_UW_OK;
}

#endif /* _LUAUNWIND_UNWIND_H */
