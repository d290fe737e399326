// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The unwind-table check, lookup and step of uwtable.h.  Freestanding (no
 * libc, no allocation, no locks): it runs in the module's sample handler,
 * hardirq or NMI, and in userspace over ptrace snapshots.
 */
#include "uwtable.h"

int luw_uw_check(const void *buf, u64 len)
{
	const struct luw_uw_hdr *h = buf;
	const struct luw_uw_entry *e;
	const struct luw_uw_r14 *x;
	u32 i;

	if (len < sizeof(*h))
		return -EINVAL;
	/* A table of another version is refused, never half understood. */
	if (h->magic != LUW_UW_MAGIC || h->version != LUW_UW_VERSION ||
	    h->hdr_size != sizeof(*h) ||
	    h->entry_size != sizeof(struct luw_uw_entry) ||
	    h->r14_size != sizeof(struct luw_uw_r14) ||
	    (h->flags & ~LUW_UW_F_ALL) || h->nentries == 0 ||
	    h->build_id_len > LUW_UW_BUILD_ID_MAX)
		return -EINVAL;
	/* Both counts are u32: their sizes cannot overflow a u64. */
	if (len - sizeof(*h) != (u64)h->nentries * sizeof(*e) +
				(u64)h->nr14 * sizeof(*x))
		return -EINVAL;
	x = luw_uw_r14s(h);
	for (i = 0; i < h->nr14; i++) {
		if (x[i].rule > LUW_UW_R14_MAX || x[i].pad ||
		    (x[i].rule != LUW_UW_R14_CFA && x[i].off))
			return -EINVAL;
		if (i ? x[i].start <= x[i - 1].start : x[0].start != h->text_lo)
			return -EINVAL;
		if (x[i].start >= h->text_hi)
			return -EINVAL;
	}
	e = luw_uw_entries(h);
	for (i = 0; i < h->nentries; i++) {
		if (LUW_UW_CFA_OF(e[i].rule) > LUW_UW_CFA_MAX ||
		    LUW_UW_RBP_OF(e[i].rule) > LUW_UW_RBP_MAX ||
		    (e[i].rule & LUW_UW_RULE_RSVD))
			return -EINVAL;
		/* PLT's aux is its threshold: it cannot place rbp too. */
		if (LUW_UW_CFA_OF(e[i].rule) == LUW_UW_CFA_PLT &&
		    LUW_UW_RBP_OF(e[i].rule) == LUW_UW_RBP_RBP)
			return -EINVAL;
		if (i && e[i].start <= e[i - 1].start)
			return -EINVAL;
	}
	if (e[0].start != h->text_lo ||
	    e[h->nentries - 1].start != h->text_hi ||
	    LUW_UW_CFA_OF(e[h->nentries - 1].rule) != LUW_UW_CFA_NONE)
		return -EINVAL;
	return 0;
}

/* The last entry in [lo, hi) whose start <= rel; ent[lo].start <= rel. */
static const struct luw_uw_entry *luw_uw_search(const struct luw_uw_entry *ent,
						u32 lo, u32 hi, u64 rel)
{
	/* Invariant: ent[lo].start <= rel, and rel < ent[hi].start if hi < n. */
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (ent[mid].start <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return &ent[lo];
}

const struct luw_uw_entry *luw_uw_find(const struct luw_uw_entry *ent, u32 n,
				       u64 rel)
{
	if (n == 0 || rel > 0xffffffffULL || rel < ent[0].start)
		return NULL;
	return luw_uw_search(ent, 0, n, rel);
}

u32 luw_uw_index_len(const struct luw_uw_entry *ent, u32 n, u32 *shift)
{
	u64 span = (u64)ent[n - 1].start - ent[0].start + 1;
	u32 want = n / LUW_UW_INDEX_PER + 1, sh = 4;

	while (sh < 31 && (span >> sh) >= want)
		sh++;
	*shift = sh;
	return (u32)((span + (1ULL << sh) - 1) >> sh);
}

void luw_uw_index_build(const struct luw_uw_entry *ent, u32 n, u32 shift,
			u32 *first, u32 nb)
{
	u32 k, i = 0;

	for (k = 0; k < nb; k++) {
		u64 at = ent[0].start + ((u64)k << shift);

		while (i + 1 < n && ent[i + 1].start <= at)
			i++;
		first[k] = i;
	}
}

const struct luw_uw_entry *luw_uw_find_ix(const struct luw_uw_entry *ent,
					  u32 n, const u32 *first, u32 nb,
					  u32 shift, u64 rel)
{
	u64 k;
	u32 lo, hi;

	if (n == 0 || nb == 0 || rel > 0xffffffffULL || rel < ent[0].start)
		return NULL;
	k = (rel - ent[0].start) >> shift;
	if (k >= nb)
		k = nb - 1;
	/*
	 * ent[first[k]] covers the bucket's start, so starts at or below
	 * rel; every entry past first[k + 1] starts above the next bucket's
	 * start, so above rel.
	 */
	lo = first[k];
	hi = k + 1 < nb ? first[k + 1] + 1 : n;
	if (lo >= n || hi > n || hi <= lo)
		return NULL;
	return luw_uw_search(ent, lo, hi, rel);
}

const struct luw_uw_r14 *luw_uw_find_r14(const struct luw_uw_r14 *x, u32 n,
					 u64 rel)
{
	u32 lo = 0, hi = n;

	if (n == 0 || rel > 0xffffffffULL || rel < x[0].start)
		return NULL;
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (x[mid].start <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return &x[lo];
}

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
static int luw_uw_step_fp(struct luw_uw_regs *r, luw_uw_read_fn rd, void *ctx,
			  u32 guess)
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

int luw_uw_step_r14(const struct luw_uw_entry *e, const struct luw_uw_r14 *x,
		    struct luw_uw_regs *r, luw_uw_read_fn rd, void *ctx)
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
	 * A rule that starts from sp needs an sp that is not a guess.
	 */
	switch (LUW_UW_CFA_OF(e->rule)) {
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
	switch (LUW_UW_RBP_OF(e->rule)) {
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
