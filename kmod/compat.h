/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel version guards: luaunwind.ko builds against 5.10 to the newest
 * (tested: Debian's 5.10, 6.1, 6.12 and sid's 7.2).  Every difference the
 * module meets is absorbed here, so the other files use one spelling.
 *
 * Checked in each tree's headers and Module.symvers (5.10.223, 6.1, 6.12,
 * 7.2), the same everywhere and so needing no guard: mmgrab()/mmdrop()
 * (inline; __mmdrop exported), exec_update_lock (a rw_semaphore in
 * signal_struct; Debian's 5.10.y has the 5.11 conversion backported),
 * copy_from_user_nmi(), copy_from_user_nofault(), ns_capable_noaudit(),
 * filp_open(), kernel_read(), rcu_barrier(), down_read_killable(),
 * perf_event_create_kernel_counter(attr, cpu, task, handler, context),
 * perfmon_capable() (inline, 5.8+).  ptrace_may_access() is exported by
 * none of them.
 *
 * Dumpability moved: up to 7.1 it is two bits of mm->flags read with
 * get_dumpable(mm), and mm->user_ns is the namespace ptrace checks
 * CAP_SYS_PTRACE in; from 7.2 both live in task->exec_state (RCU), whose
 * accessors are not exported, and mm->user_ns is gone.
 */
#ifndef LUW_COMPAT_H
#define LUW_COMPAT_H

#include <linux/capability.h>
#include <linux/mm_types.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/slab.h>
#include <linux/uprobes.h>
#include <linux/version.h>

struct mm_struct;

/*
 * The move replaced coredump.h's SUID_DUMP_* with enum task_dumpable; the
 * macro's absence is the test (sparse 0.6.4 has no __has_include).
 */
#ifndef SUID_DUMP_USER
#include <linux/sched/exec_state.h>
#define LUW_HAVE_EXEC_STATE 1
#define SUID_DUMP_DISABLE	TASK_DUMPABLE_OFF
#define SUID_DUMP_USER		TASK_DUMPABLE_OWNER
#define SUID_DUMP_ROOT		TASK_DUMPABLE_ROOT
#endif

/*
 * SUID_DUMP_* of a process: task is any of its threads, mm its mm (held by
 * the caller).  Call under exec_update_lock for a stable answer.
 */
static inline int luw_dumpable(struct task_struct *task, struct mm_struct *mm)
{
#ifdef LUW_HAVE_EXEC_STATE
	struct task_exec_state *es;
	int d = SUID_DUMP_DISABLE;

	rcu_read_lock();
	es = rcu_dereference(task->exec_state);
	if (es)
		d = es->dumpable;
	rcu_read_unlock();
	return d;
#else
	return get_dumpable(mm);
#endif
}

/*
 * CAP_SYS_PTRACE in the namespace ptrace checks for this process (the
 * user namespace its image was exec'ed in), without an audit record.
 */
static inline bool luw_ptrace_capable_noaudit(struct task_struct *task,
					      struct mm_struct *mm)
{
#ifdef LUW_HAVE_EXEC_STATE
	struct task_exec_state *es;
	bool ok = false;

	rcu_read_lock();
	es = rcu_dereference(task->exec_state);
	if (es)
		ok = ns_capable_noaudit(es->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	return ok;
#else
	return ns_capable_noaudit(mm->user_ns, CAP_SYS_PTRACE);
#endif
}

/*
 * Inherited copies of a target's events only into its threads, not into
 * the processes it forks: attr.inherit_thread exists from 5.13, which
 * also added sig_data (PERF_ATTR_SIZE_VER7, the test).  Before, a forked
 * child carries a copy too and the handler's thread-group check drops
 * its hits (an interrupt each, no sample).
 */
static inline void luw_attr_inherit_thread(struct perf_event_attr *attr)
{
#ifdef PERF_ATTR_SIZE_VER7
	attr->inherit_thread = 1;
#endif
}

/* Whether task's state is TASK_RUNNING: 5.14 renamed state to __state. */
static inline bool luw_task_running(const struct task_struct *task)
{
#ifdef task_is_running
	return task_is_running(task);
#else
	return READ_ONCE(task->state) == TASK_RUNNING;
#endif
}

/* io_uring workers: threads of the group whose user registers are zero. */
static inline bool luw_io_worker(const struct task_struct *task)
{
#ifdef PF_IO_WORKER
	return task->flags & PF_IO_WORKER;
#else
	return false;
#endif
}

/*
 * uprobes (kmod/alloc.c), as each tree's uprobes.h spells them (5.10, 6.1,
 * 6.12, 7.2):
 *  - up to 6.1 uprobe_register(inode, offset, uc) returns 0 and
 *    uprobe_unregister(inode, offset, uc) returns once no handler runs;
 *    the filter is told why it is asked (enum uprobe_filter_ctx);
 *  - in 6.12 uprobe_register(inode, offset, ref_ctr_offset, uc) returns
 *    the uprobe, uprobe_unregister_nosync() forgets the consumer and one
 *    uprobe_unregister_sync() waits for every handler then running; the
 *    filter takes (uc, mm) alone;
 *  - in 7.2 the handler takes a third argument, per-call data.
 * The headers' own macros tell them apart: UPROBE_NO_TRAMPOLINE_VADDR
 * first appears with the second, UPROBE_HANDLER_IGNORE with the third.
 * A kernel where a change and its marker came apart fails to build on
 * the callbacks' or the calls' types (incompatible pointer types are
 * errors in the kernel's flags); it cannot build wrong.
 * LUW_UPROBE_HANDLER and LUW_UPROBE_FILTER declare the callbacks;
 * luw_uprobe_add(), luw_uprobe_del() and luw_uprobe_sync() do the rest.
 */
#ifdef CONFIG_UPROBES
#ifdef UPROBE_HANDLER_IGNORE
#define LUW_UPROBE_HANDLER(fn, uc, regs) \
	int fn(struct uprobe_consumer *uc, struct pt_regs *regs, \
	       __u64 *data __always_unused)
#else
#define LUW_UPROBE_HANDLER(fn, uc, regs) \
	int fn(struct uprobe_consumer *uc, struct pt_regs *regs)
#endif

#ifdef UPROBE_NO_TRAMPOLINE_VADDR
#define LUW_UPROBE_FILTER(fn, uc, mm) \
	bool fn(struct uprobe_consumer *uc, struct mm_struct *mm)

struct luw_uprobe {
	struct uprobe *up;
};

static inline int luw_uprobe_add(struct luw_uprobe *p, struct inode *inode,
				 loff_t off, struct uprobe_consumer *uc)
{
	p->up = uprobe_register(inode, off, 0, uc);
	return PTR_ERR_OR_ZERO(p->up);
}

static inline void luw_uprobe_del(struct luw_uprobe *p, struct inode *inode,
				  loff_t off, struct uprobe_consumer *uc)
{
	uprobe_unregister_nosync(p->up, uc);
}

static inline void luw_uprobe_sync(void)
{
	uprobe_unregister_sync();
}
#else
#define LUW_UPROBE_FILTER(fn, uc, mm) \
	bool fn(struct uprobe_consumer *uc, \
		enum uprobe_filter_ctx ctx __always_unused, struct mm_struct *mm)

struct luw_uprobe {
};

static inline int luw_uprobe_add(struct luw_uprobe *p, struct inode *inode,
				 loff_t off, struct uprobe_consumer *uc)
{
	return uprobe_register(inode, off, uc);
}

/* Synchronous: it takes the uprobe's register_rwsem, which handlers hold. */
static inline void luw_uprobe_del(struct luw_uprobe *p, struct inode *inode,
				  loff_t off, struct uprobe_consumer *uc)
{
	uprobe_unregister(inode, off, uc);
}

static inline void luw_uprobe_sync(void)
{
}
#endif
#endif /* CONFIG_UPROBES */

#endif /* LUW_COMPAT_H */
