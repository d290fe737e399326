// SPDX-License-Identifier: GPL-2.0
/*
 * Host (C) stack walk of the interrupted user thread, innermost first.
 *
 * Each step uses the compact unwind table userspace uploaded for the
 * mapping that holds the pc (luaunwind_unwind.h), and frame pointers where
 * there is no table or no usable rule.  Every stack read is
 * copy_from_user_nofault(), which is safe in NMI and returns an error for
 * anything not mapped and resident instead of faulting it in.  The walk is
 * bounded three ways: the frame count, strictly increasing CFAs, and a
 * stack window above the interrupted sp.
 */
#include <linux/ptrace.h>
#include <linux/uaccess.h>

#include "luw.h"

/*
 * No caller frame lives further than this above the interrupted sp.
 * Thread stacks are 8 MiB by default; the main stack may grow further, but
 * a walk that far up is following garbage.
 */
#define LUW_STACK_WINDOW	(64ULL << 20)

struct luw_walk_ctx {
	u64 faults;
};

static int luw_read_user(void *ctx, __u64 addr, __u64 *val)
{
	struct luw_walk_ctx *c = ctx;

	if (copy_from_user_nofault(val, (const void __user *)(uintptr_t)addr,
				   sizeof(*val))) {
		c->faults++;
		return -EFAULT;
	}
	return 0;
}

static const struct luw_uw_entry *luw_lookup(const struct luw_maps *m, u64 key)
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
	return luw_uw_find(tab->ent, tab->nent,
			   luw_uw_rel(key, tab->start, tab->file_offset));
}

int luw_host_walk(struct luw_proc *t, struct pt_regs *regs, u64 *pcs,
		  unsigned int max, u8 *rflags, u64 *faults)
{
	struct luw_walk_ctx ctx = { 0 };
	struct luw_uw_regs r = {
		.ip = regs->ip,
		.sp = regs->sp,
		.bp = regs->bp,
		.flags = LUW_UW_R_BP_VALID,
	};
	const struct luw_maps *m;
	unsigned int n = 0;
	bool complete = false;

	if (!max)
		return 0;
	r.stack_end = min_t(u64, r.sp + LUW_STACK_WINDOW, TASK_SIZE_MAX);
	pcs[n++] = r.ip;

	rcu_read_lock();
	m = rcu_dereference(t->maps);
	while (n < max) {
		const struct luw_uw_entry *e = luw_lookup(m, luw_uw_key(&r));
		int rc;

		if (e)
			*rflags |= LUW_RF_HOST_TABLE;
		/*
		 * A frame-pointer chain ends with rbp == 0 (_start clears
		 * it): the natural end when no table says END.
		 */
		if ((!e || LUW_UW_CFA_OF(e->rule) == LUW_UW_CFA_NONE ||
		     LUW_UW_CFA_OF(e->rule) == LUW_UW_CFA_UNSUP) &&
		    (r.flags & LUW_UW_R_BP_VALID) && !r.bp) {
			complete = true;
			break;
		}
		rc = luw_uw_step(e, &r, luw_read_user, &ctx);
		if (rc == LUW_UW_END) {
			complete = true;
			break;
		}
		if (rc < 0)
			break;
		pcs[n++] = r.ip;
	}
	rcu_read_unlock();

	if (!complete)
		*rflags |= LUW_RF_HOST_TRUNC;
	if (ctx.faults) {
		*rflags |= LUW_RF_FAULT;
		*faults += ctx.faults;
	}
	return n;
}
