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

