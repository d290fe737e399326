/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host cursor's step (hostwalk.c), in a header so that the walks that
 * take it at every frame -- luw_host_walk() and mergewalk.c's
 * luw_merged_walk() -- have it inline: a call's entry and exit were some
 * 20 instructions a frame, a tenth of the step.
 */
#ifndef _LUW_HWSTEP_H
#define _LUW_HWSTEP_H

#include <linux/hash.h>
#include <linux/percpu.h>

#include "luw.h"

/*
 * The table, entry and r14 row a frame's pc was found to have, kept from
 * sample to sample on this CPU: a target's samples come back to the same
 * return addresses.  Valid only while the target's table array is the one
 * it was found in: seq names that array, and an array never changes (an
 * upload makes a new one), so its tables are alive while it is the
 * target's.
 */
#define LUW_STEP_MEMO_BITS	8

/* Per CPU: the handler's busy flag keeps it to one sample at a time. */
struct luw_hwcpu {
	struct luw_step_memo steps[1 << LUW_STEP_MEMO_BITS];
};

extern struct luw_hwcpu __percpu *luw_hwcpu;

static inline int luw_read_user(void *cost, __u64 addr, __u64 *val)
{
	return luw_walk_read(cost, addr, val, sizeof(*val));
}

static inline const struct luw_table *luw_table_of(const struct luw_maps *m,
						   u64 key)
{
	const struct luw_table *tab;
	u32 lo = 0, hi;

	if (!m || !m->n)
		return NULL;
	hi = m->n;
	/* The last table whose start <= key. */
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (m->t[mid]->start <= key)
			lo = mid;
		else
			hi = mid;
	}
	tab = m->t[lo];
	if (key < tab->start || key >= tab->end)
		return NULL;
	return tab;
}

static inline const struct luw_uw_entry *
luw_tab_find(const struct luw_table *tab, u64 rel)
{
	return luw_uw_find_ix(tab->ent, tab->nent, tab->first, tab->nfirst,
			      tab->shift, rel);
}

static inline bool luw_memo_hit(const struct luw_step_memo *sm,
				const struct luw_maps *m, u64 key)
{
	return sm->seq == m->seq && sm->key == key;
}

/*
 * What the step memo knows of the frame's pc: the table covering it and
 * its entry there (NULL, NULL when none).  NULL when the target has no
 * tables.  Each miss costs two binary searches.
 *
 * A caller frame's pc is looked up in this CPU's memo, by a multiplicative
 * hash (return addresses of one library differ in their low bits alone)
 * into sets of two slots: two return addresses of the same stacks that
 * share a slot would both miss at every sample (a sample's dozen return
 * addresses in 256 slots: one boot in four, as ASLR places the
 * libraries).  The interrupted frame's pc, asked for up to three times a
 * sample and seldom the same twice, is looked up in the walk's own slot,
 * where it evicts nothing.
 */
static __always_inline struct luw_step_memo *luw_hw_lookup(struct luw_hw *w)
{
	u64 key = luw_uw_key(&w->r);
	struct luw_step_memo *sm;
	const struct luw_table *tab;

	if (!w->m)
		return NULL;
	if (w->r.flags & LUW_UW_R_CALLER) {
		sm = &this_cpu_ptr(luw_hwcpu)->steps[2 * hash_64(key,
					LUW_STEP_MEMO_BITS - 1)];
		if (luw_memo_hit(sm, w->m, key))
			return sm;
		if (luw_memo_hit(&sm[1], w->m, key))
			return &sm[1];
		/* The older to the set's second slot, the new one first. */
		sm[1] = sm[0];
	} else {
		sm = &w->leaf;
		if (luw_memo_hit(sm, w->m, key))
			return sm;
	}
	tab = luw_table_of(w->m, key);
	sm->seq = w->m->seq;
	sm->key = key;
	sm->tab = tab;
	sm->e = tab ? luw_tab_find(tab, luw_uw_rel(key, tab->start,
						    tab->file_offset)) : NULL;
	sm->x = NULL;
	sm->x_found = false;
	return sm;
}

static __always_inline bool luw_hw_has_table(struct luw_hw *w)
{
	const struct luw_step_memo *sm = luw_hw_lookup(w);

	return sm && sm->tab;
}

static __always_inline int luw_hw_step(struct luw_hw *w)
{
	struct luw_step_memo *sm = luw_hw_lookup(w);
	const struct luw_uw_entry *e = sm ? sm->e : NULL;
	const struct luw_uw_r14 *x = NULL;
	int rc;

	if (e)
		w->table_used = true;
	if (sm && sm->tab && w->want_r14) {
		if (!sm->x_found) {
			sm->x = luw_uw_find_r14(sm->tab->r14, sm->tab->nr14,
						luw_uw_rel(sm->key,
							   sm->tab->start,
							   sm->tab->file_offset));
			sm->x_found = true;
		}
		x = sm->x;
	}
	/*
	 * A frame-pointer chain ends with rbp == 0 (_start clears it): the
	 * natural end when no table says END.
	 */
	if ((!e || LUW_UW_CFA_OF(e->rule) == LUW_UW_CFA_NONE ||
	     LUW_UW_CFA_OF(e->rule) == LUW_UW_CFA_UNSUP) &&
	    (w->r.flags & LUW_UW_R_BP_VALID) && !w->r.bp)
		return LUW_HW_END;
	rc = luw_uw_step_r14(e, x, &w->r, luw_read_user, w->cost);
	if (rc == LUW_UW_END)
		return LUW_HW_END;
	if (rc < 0)
		return LUW_HW_STOP;
	/*
	 * A return address read through rbp is vouched for only where the
	 * target's tables know the code: in a function built without frame
	 * pointers rbp holds anything.  _dl_runtime_resolve_xsave, whose
	 * realigned CFA (rbx-based) the table cannot express, once gave
	 * "xtures/w" of a path on the stack as its caller.
	 */
	if (rc == LUW_UW_OK_FP && w->m && w->m->n && !luw_hw_has_table(w))
		return LUW_HW_STOP;
	return LUW_HW_NEXT;
}

#endif /* _LUW_HWSTEP_H */
