// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation sampling: a uprobe on the allocator of each Lua universe of a
 * target (G->allocf), and every `interval` bytes requested on average an
 * ALLOC record with the merged stack of the allocating thread.
 *
 * The interval between two samples is drawn afresh after each from an
 * exponential distribution of that mean, so every byte requested has the
 * same chance of being the one sampled, whatever the size of its
 * allocation: a Poisson process over the bytes, as Go's and tcmalloc's
 * heap profilers sample.  The allocation that crosses the interval is the
 * one recorded, with its size; the reader scales it back (luaunwind.h).
 *
 * A uprobe lives on an inode and an offset, and would trap in every
 * process that maps that file.  The filter keeps the breakpoint to the
 * target's mm: at registration and at every later mmap uprobes asks it;
 * a forked child inherits the breakpoint in its copy of the page, and its
 * first hit asks for the breakpoint to be taken out of that mm.
 *
 * The handler runs in the probed thread, in task context, preemptible:
 * it disables preemption for the per-CPU counters, scratch and ring, as
 * the perf handler runs with them; the walk itself is the perf handler's
 * (sample.c), nofault reads only, bounded the same.
 */
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "luw.h"

#ifdef CONFIG_UPROBES

struct luw_aprobe {
	struct uprobe_consumer uc;
	struct luw_uprobe up;
	struct luw_proc *t;
	struct inode *inode;		/* ihold'ed */
	loff_t offset;
	u64 addr;
};

/*
 * log2(x) in 16.16 fixed point, for x >= 1: the bits of the fraction one
 * squaring of the mantissa at a time.
 */
static u32 luw_log2_q16(u32 x)
{
	unsigned int msb = ilog2(x), i;
	u64 y = (u64)x << (31 - msb);	/* mantissa in [1, 2), 1.31 */
	u32 frac = 0;

	for (i = 0; i < 16; i++) {
		y = (y * y) >> 31;
		frac <<= 1;
		if (y >= (2ULL << 31)) {
			y >>= 1;
			frac |= 1;
		}
	}
	return (msb << 16) | frac;
}

/*
 * Bytes to the next sample: mean * -ln(U), U uniform in (0, 1].  With U =
 * r / 2^32, -ln(U) = (32 - log2(r)) * ln 2; ln 2 is 45426 / 2^16.
 */
static u64 luw_alloc_next(u64 mean)
{
	u32 r = get_random_u32() | 1;
	u64 nlog2 = (32ULL << 16) - luw_log2_q16(r);

	return mul_u64_u64_shr(mean, nlog2 * 45426, 32);
}

static LUW_UPROBE_FILTER(luw_alloc_filter, uc, mm)
{
	return mm == container_of(uc, struct luw_aprobe, uc)->t->mm;
}

/*
 * The allocator's arguments (ud, ptr, osize, nsize) at its entry, in the
 * x86-64 SysV registers.  nsize 0 frees, which is not sampled: who holds
 * memory is the heap snapshot's question.
 */
static LUW_UPROBE_HANDLER(luw_alloc_hit, uc, regs)
{
	struct luw_aprobe *p = container_of(uc, struct luw_aprobe, uc);
	struct luw_proc *t = p->t;
	struct luw_alloc_tail tail;
	struct luw_tstats *st;
	u64 nsize = regs->cx, t0;

	/* A forked child's copy of the breakpoint: take it out of there. */
	if (current->mm != t->mm)
		return UPROBE_HANDLER_REMOVE;
	if (READ_ONCE(t->dying) || !READ_ONCE(t->running))
		return 0;
	preempt_disable();
	t0 = local_clock();
	st = this_cpu_ptr(t->stats);
	st->alloc_calls++;
	if (!nsize)
		goto out;
	st->alloc_bytes += nsize;
	if (st->alloc_left > nsize) {
		st->alloc_left -= nsize;
		goto out;
	}
	st->alloc_left = luw_alloc_next(READ_ONCE(t->alloc_interval));
	memset(&tail, 0, sizeof(tail));
	tail.nsize = nsize;
	tail.osize = regs->si ? regs->dx : 0;
	tail.kind = !regs->si ? LUW_ALLOC_NEW :
		    nsize > regs->dx ? LUW_ALLOC_GROW : LUW_ALLOC_SHRINK;
	luw_sample_emit(t, regs, st, LUW_REC_ALLOC, &tail, sizeof(tail), true);
out:
	st->alloc_ns += local_clock() - t0;
	preempt_enable();
	return 0;
}

/* Where addr is in the target's file mappings: its inode and offset. */
static int luw_alloc_where(struct luw_proc *t, u64 addr, struct inode **inode,
			   loff_t *off)
{
	struct vm_area_struct *vma;
	int err = -EINVAL;

	if (!mmget_not_zero(t->mm))
		return -ESRCH;
	mmap_read_lock(t->mm);
	vma = find_vma(t->mm, addr);
	if (vma && vma->vm_start <= addr && vma->vm_file &&
	    (vma->vm_flags & VM_EXEC)) {
		*inode = file_inode(vma->vm_file);
		ihold(*inode);
		*off = addr - vma->vm_start + ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
		err = 0;
	}
	mmap_read_unlock(t->mm);
	mmput(t->mm);
	return err;
}

int luw_alloc_add(struct luw_proc *t, const struct luw_alloc *a)
{
	struct luw_aprobe *p;
	struct inode *inode;
	unsigned int i;
	loff_t off;
	int cpu, err;

	if (a->interval < LUW_ALLOC_INTERVAL_MIN ||
	    a->interval > LUW_ALLOC_INTERVAL_MAX)
		return -EINVAL;
	for (i = 0; i < t->nr_aprobes; i++)
		if (t->aprobes[i]->addr == a->allocf)
			break;
	if (i == t->nr_aprobes && i == LUW_MAX_ALLOCF)
		return -ENOSPC;
	/*
	 * The interval is the target's, and each CPU's countdown starts
	 * from a draw of it (a countdown at 0 would sample the first
	 * allocation of every CPU).  A handler running meanwhile may
	 * overwrite a countdown with one drawn from the old interval: one
	 * sample's worth of difference.
	 */
	WRITE_ONCE(t->alloc_interval, a->interval);
	for_each_possible_cpu(cpu)
		per_cpu_ptr(t->stats, cpu)->alloc_left =
			luw_alloc_next(a->interval);
	if (i < t->nr_aprobes)
		return 0;

	err = luw_alloc_where(t, a->allocf, &inode, &off);
	if (err)
		return err;
	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p) {
		iput(inode);
		return -ENOMEM;
	}
	p->t = t;
	p->inode = inode;
	p->offset = off;
	p->addr = a->allocf;
	p->uc.handler = luw_alloc_hit;
	p->uc.filter = luw_alloc_filter;
	err = luw_uprobe_add(&p->up, inode, off, &p->uc);
	if (err) {
		iput(inode);
		kfree(p);
		return err;
	}
	t->aprobes[t->nr_aprobes++] = p;
	return 0;
}

/* Unlinked targets (no lock held; sleeps): no handler runs after this. */
void luw_alloc_release(struct list_head *targets)
{
	struct luw_proc *t;
	unsigned int i;
	bool any = false;

	list_for_each_entry(t, targets, node) {
		for (i = 0; i < t->nr_aprobes; i++) {
			struct luw_aprobe *p = t->aprobes[i];

			luw_uprobe_del(&p->up, p->inode, p->offset, &p->uc);
			any = true;
		}
	}
	if (any)
		luw_uprobe_sync();
}

void luw_alloc_free(struct luw_proc *t)
{
	unsigned int i;

	for (i = 0; i < t->nr_aprobes; i++) {
		iput(t->aprobes[i]->inode);
		kfree(t->aprobes[i]);
	}
	t->nr_aprobes = 0;
}

#else /* !CONFIG_UPROBES */

int luw_alloc_add(struct luw_proc *t, const struct luw_alloc *a)
{
	return -EOPNOTSUPP;
}

void luw_alloc_release(struct list_head *targets)
{
}

void luw_alloc_free(struct luw_proc *t)
{
}

#endif
