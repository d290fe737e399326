// SPDX-License-Identifier: GPL-2.0
/*
 * Host (C) stack walk of the interrupted user thread, innermost first.
 *
 * Each step uses the compact unwind table userspace uploaded for the
 * mapping that holds the pc (uwtable.c), and frame pointers where
 * there is no table or no usable rule.  Every user read is
 * luw_walk_read() (uread.h): a load under the sample's budget, with page
 * faults disabled, checked once per sample to be safe here
 * (luw_user_reads_begin()).  The walk is bounded four ways: the frame
 * count, strictly increasing CFAs, a stack window above the interrupted
 * sp, and the sample's read budget.
 *
 * The walk is a cursor (struct luw_hw) so that the Lua side (mergewalk.c)
 * can look at each frame and restart it at the caller of a VM entry.
 */
#include <linux/moduleparam.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>

#include "luw.h"
#include "hwstep.h"

/*
 * No caller frame lives further than this above the interrupted sp.
 * Thread stacks are 8 MiB by default; the main stack may grow further, but
 * a walk that far up is following garbage.
 */
#define LUW_STACK_WINDOW	(64ULL << 20)

struct luw_hwcpu __percpu *luw_hwcpu;

int luw_hostwalk_init(void)
{
	luw_hwcpu = alloc_percpu(struct luw_hwcpu);
	return luw_hwcpu ? 0 : -ENOMEM;
}

void luw_hostwalk_exit(void)
{
	free_percpu(luw_hwcpu);
	luw_hwcpu = NULL;
}

static unsigned int sample_reads = LUW_SAMPLE_READS;
module_param(sample_reads, uint, 0644);
MODULE_PARM_DESC(sample_reads, "read requests one sample may make (16..1024)");

/* The budget of a sample that begins now. */
u32 luw_sample_reads(void)
{
	return clamp_t(u32, READ_ONCE(sample_reads), 16, LUW_SAMPLE_READS);
}

/*
 * Is the frame's pc in a LuaJIT VM entry's prologue or an exit's epilogue
 * (include/luaunwind_unwind.h: vmseq)?  Its row is exact there, and the
 * frame is not the interpreter's C frame.
 */
bool luw_hw_in_vmseq(struct luw_hw *w)
{
	const struct luw_step_memo *sm = luw_hw_lookup(w);

	return sm && sm->e && (sm->e->rule & LUW_UW_VMSEQ);
}

/*
 * A sample's reads start: no page faults from here to the end, so that a
 * read of anything not resident fails instead of sleeping, and one read
 * through copy_from_user_nmi() -- the 8 bytes at the interrupted sp, the
 * first the host walk reads -- for the check it makes that this CPU's
 * user mappings are the thread's (uread.h).
 */
void luw_user_reads_begin(struct luw_cost *c, u64 sp)
{
	pagefault_disable();
	c->user_ok = !luw_user_copy_word(sp, 8).err;
}

struct luw_uword luw_user_copy_word(u64 addr, u32 len)
{
	struct luw_uword w = { 0 };

	w.err = len > 8 ? -EFAULT : luw_user_copy(addr, &w.val, len);
	return w;
}

/* A read luw_user_load() may not make: exact, and checked. */
int luw_user_copy(u64 addr, void *dst, u32 len)
{
	if (!luw_user_range(addr, len))
		return -EFAULT;
	return copy_from_user_nmi(dst, (const void __user *)(uintptr_t)addr,
				  len) ? -EFAULT : 0;
}

void luw_user_reads_end(struct luw_cost *c)
{
	c->user_ok = false;
	pagefault_enable();
}

/* Caller holds rcu_read_lock() from here to the last step. */
void luw_hw_init(struct luw_hw *w, struct luw_proc *t, struct pt_regs *regs,
		 struct luw_cost *cost)
{
	w->r.ip = regs->ip;
	w->r.sp = regs->sp;
	w->r.bp = regs->bp;
	w->r.r14 = regs->r14;
	w->r.flags = LUW_UW_R_BP_VALID | LUW_UW_R_R14_VALID;
	/*
	 * After a system call's entry, and not a clone child's registers:
	 * the kernel keeps an error in ax until the call returns, and a
	 * child starts with 0 there.  What a SYSCALL row needs (uwtable.h).
	 */
	if ((long)regs->orig_ax >= 0 && regs->ax)
		w->r.flags |= LUW_UW_R_SYSCALL;
	w->r.stack_end = min_t(u64, regs->sp + LUW_STACK_WINDOW, TASK_SIZE_MAX);
	w->m = rcu_dereference(t->maps);
	w->cost = cost;
	w->table_used = false;
	w->want_r14 = false;
	w->leaf.seq = 0;
}

/*
 * Continue at a caller frame known from elsewhere (the caller of a VM
 * entry).  Only upwards: false, cursor unchanged, when sp is not above
 * the current frame's or leaves the stack window.  That sp is a C frame
 * the Lua state points at, not a guess: a LUW_UW_R_SP_GUESS left by a
 * frame-pointer step below goes.
 */
bool luw_hw_restart(struct luw_hw *w, u64 ip, u64 sp, u64 bp)
{
	if (sp <= w->r.sp || sp >= w->r.stack_end || !ip)
		return false;
	w->r.ip = ip;
	w->r.sp = sp;
	w->r.bp = bp;
	w->r.r14 = 0;
	w->r.flags = LUW_UW_R_BP_VALID | LUW_UW_R_CALLER;
	return true;
}

/*
 * The current frame's r14 when the walk knows it exactly: the sample's
 * register, carried through every step whose CFI says where the caller's
 * r14 is (uwtable.h).
 */
bool luw_hw_r14(const struct luw_hw *w, u64 *r14)
{
	*r14 = w->r.r14;
	return w->r.flags & LUW_UW_R_R14_VALID;
}

void luw_hw_finish(struct luw_hw *w, bool complete, u8 *rflags)
{
	if (w->table_used)
		*rflags |= LUW_RF_HOST_TABLE;
	if (!complete)
		*rflags |= LUW_RF_HOST_TRUNC;
}

int luw_host_walk(struct luw_proc *t, struct pt_regs *regs, u64 *pcs,
		  unsigned int max, u8 *rflags, struct luw_cost *cost)
{
	struct luw_hw w;
	unsigned int n = 0;
	bool complete = false;
	int rc;

	if (!max)
		return 0;
	rcu_read_lock();
	luw_hw_init(&w, t, regs, cost);
	pcs[n++] = w.r.ip;
	while (n < max) {
		rc = luw_hw_step(&w);
		if (rc == LUW_HW_END)
			complete = true;
		if (rc != LUW_HW_NEXT)
			break;
		pcs[n++] = w.r.ip;
	}
	rcu_read_unlock();
	luw_hw_finish(&w, complete, rflags);
	return n;
}
