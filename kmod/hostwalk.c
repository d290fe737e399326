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
#include <linux/hash.h>
#include <linux/moduleparam.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>

#include "luw.h"

/*
 * No caller frame lives further than this above the interrupted sp.
 * Thread stacks are 8 MiB by default; the main stack may grow further, but
 * a walk that far up is following garbage.
 */
#define LUW_STACK_WINDOW	(64ULL << 20)

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

static struct luw_hwcpu __percpu *luw_hwcpu;

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

static int luw_read_user(void *cost, __u64 addr, __u64 *val)
{
	return luw_walk_read(cost, addr, val, sizeof(*val));
}

static const struct luw_table *luw_table_of(const struct luw_maps *m, u64 key)
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

static const struct luw_uw_entry *luw_tab_find(const struct luw_table *tab,
					       u64 rel)
{
	return luw_uw_find_ix(tab->ent, tab->nent, tab->first, tab->nfirst,
			      tab->shift, rel);
}

static bool luw_memo_hit(const struct luw_step_memo *sm,
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

bool luw_hw_has_table(struct luw_hw *w)
{
	const struct luw_step_memo *sm = luw_hw_lookup(w);

	return sm && sm->tab;
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

int luw_hw_step(struct luw_hw *w)
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
