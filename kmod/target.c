// SPDX-License-Identifier: GPL-2.0
/*
 * Attached processes ("targets"), each in the session that attached it.
 *
 * Sampling design: one perf event per thread of the target (cpu == -1,
 * task == the thread), created at attach for every thread alive then,
 * with inherit (and, from 5.13, inherit_thread) so that threads created
 * later carry a copy.  A task event ticks only while its thread runs: an
 * idle CPU, or a target that sleeps, takes no interrupt, and CPUs that
 * come online later need nothing.  Known window, the one perf record -p
 * has too: a thread created by a thread whose event is not yet installed
 * (during the attach itself) has no event.  A second pass cannot tell such
 * a thread from one that inherited an event, and giving it one of its own
 * would count it twice; missing is chosen over wrong.
 *
 * The direct events stay until the target goes: releasing one releases
 * the copies its thread's children inherited.  perf_event_disable() does
 * not reach those copies either, so stop/start is the handler's
 * t->running, not the events' state.
 *
 * A session's targets are its lock's (luw.h), the counts behind the caps
 * luw_lock's; the handler takes neither.  A target is freed only after
 * its events are released and an RCU grace period has passed (handlers
 * run with interrupts off, or in NMI, both RCU read-side sections).
 *
 * A target ends when its process exits or execs (reap.c).
 */
#include <linux/cpu.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ljwalk.h"
#include "luw.h"

/*
 * Per-user caps on targets and perf events (session.c has the one on
 * sessions, ring.c the one on ring memory): so that one user of a shared
 * machine cannot take what the module has for all.  Root is held to them
 * too; the admin may change them at any time (they apply to what comes
 * next).
 */
static unsigned int max_user_targets = LUW_MAX_TARGETS / 2;
module_param(max_user_targets, uint, 0644);
MODULE_PARM_DESC(max_user_targets, "processes one user may have attached");
static unsigned int max_user_events = 2 * LUW_MAX_THREADS;
module_param(max_user_events, uint, 0644);
MODULE_PARM_DESC(max_user_events, "perf events (threads at attach) one user's targets may have");

/* Under luw_lock: */
static unsigned int luw_nr_targets;	/* all sessions', attaches' included */
static u64 luw_table_bytes;		/* all targets' tables together */
/*
 * Targets the exit and exec probes look for (luw_proc.watch): added when
 * an attach succeeds, removed when the target is unlinked, under
 * luw_lock; read under RCU.
 */
static LIST_HEAD(luw_watched);

static void luw_stats_add(struct luw_tstats *dst, const struct luw_tstats *src)
{
	const u64 *s = (const u64 *)src;
	u64 *d = (u64 *)dst;
	size_t i;

	BUILD_BUG_ON(sizeof(*src) % sizeof(u64));
	for (i = 0; i < sizeof(*src) / sizeof(u64); i++)
		d[i] += READ_ONCE(s[i]);
}

static void luw_target_stats(const struct luw_proc *t, struct luw_tstats *sum)
{
	int cpu;

	for_each_possible_cpu(cpu)
		luw_stats_add(sum, per_cpu_ptr(t->stats, cpu));
}

void luw_table_free(struct luw_table *tab)
{
	kvfree(tab->first);
	kvfree(tab->buf);
	kfree(tab);
}

/* Module code run by RCU: luw_exit() waits for it with rcu_barrier(). */
static void luw_table_free_rcu(struct rcu_head *head)
{
	luw_table_free(container_of(head, struct luw_table, rcu));
}

/*
 * Charge u with targets and events, within the module's and the user's
 * caps (ENOSPC beyond), or give them back; luw_lock not held.
 */
static int luw_charge(struct luw_user *u, unsigned int targets,
		      unsigned int events)
{
	int err = -ENOSPC;

	mutex_lock(&luw_lock);
	if (luw_nr_targets + targets <= LUW_MAX_TARGETS &&
	    u->targets + targets <= READ_ONCE(max_user_targets) &&
	    u->events + events <= READ_ONCE(max_user_events)) {
		luw_nr_targets += targets;
		u->targets += targets;
		u->events += events;
		err = 0;
	}
	mutex_unlock(&luw_lock);
	return err;
}

static void __luw_uncharge(struct luw_user *u, unsigned int targets,
			   unsigned int events)
{
	lockdep_assert_held(&luw_lock);
	luw_nr_targets -= targets;
	u->targets -= targets;
	u->events -= events;
}

static void luw_uncharge(struct luw_user *u, unsigned int targets,
			 unsigned int events)
{
	if (!targets && !events)
		return;
	mutex_lock(&luw_lock);
	__luw_uncharge(u, targets, events);
	mutex_unlock(&luw_lock);
}

/* Both the session's lock and luw_lock held. */
static void luw_target_unlink(struct luw_proc *t, struct list_head *to)
{
	struct luw_session *s = t->sess;

	lockdep_assert_held(&s->lock);
	lockdep_assert_held(&luw_lock);
	/* From now on the handler writes nothing more for it. */
	WRITE_ONCE(t->dying, true);
	list_del_rcu(&t->watch);
	list_move_tail(&t->node, to);
	WRITE_ONCE(s->pending, s->pending + 1);
	s->nr_targets--;
	__luw_uncharge(s->user, 1, t->nr_events);
	if (!s->nr_targets)
		luw_ring_wake(s);	/* readers: end of file */
}

static void luw_events_release(struct luw_proc *t)
{
	while (t->nr_events)
		perf_event_release_kernel(t->events[--t->nr_events]);
}

/* The events of a target that never was: as luw_targets_quiesce(). */
static void luw_events_abort(struct luw_proc *t)
{
	if (!t->nr_events)
		return;
	WRITE_ONCE(t->dying, true);
	luw_events_release(t);
	synchronize_rcu();
}

/*
 * Targets unlinked from their sessions, before they are freed (no lock
 * held; sleeps): their events go, and a handler that already started
 * elsewhere finishes.
 */
void luw_targets_quiesce(struct list_head *list)
{
	struct luw_proc *t;

	if (list_empty(list))
		return;
	luw_alloc_release(list);
	list_for_each_entry(t, list, node)
		luw_events_release(t);
	synchronize_rcu();
}

/* A quiesced target's counts, into its session's and the module's. */
void luw_target_retire(struct luw_proc *t)
{
	lockdep_assert_held(&luw_lock);
	luw_target_stats(t, &t->sess->retired);
	luw_table_bytes -= t->table_bytes;
}

void luw_targets_free(struct list_head *list)
{
	struct luw_proc *t, *tmp;
	struct luw_maps *m;
	unsigned int i;

	list_for_each_entry_safe(t, tmp, list, node) {
		m = rcu_dereference_protected(t->maps, true);
		if (m) {
			for (i = 0; i < m->n; i++)
				luw_table_free(m->t[i]);
			kfree(m);
		}
		luw_alloc_free(t);
		mmdrop(t->mm);
		free_percpu(t->stats);
		put_pid(t->pid);
		kvfree(t->events);
		kfree(t);
	}
}

/* The session's lock held; the targets go to g. */
void luw_targets_destroy(struct luw_session *s, struct luw_grave *g)
{
	struct luw_proc *t, *tmp;

	lockdep_assert_held(&s->lock);
	mutex_lock(&luw_lock);
	list_for_each_entry_safe(t, tmp, &s->targets, node)
		luw_target_unlink(t, &g->targets);
	mutex_unlock(&luw_lock);
}

/* The session's target named vpid in the caller's pid namespace. */
static struct luw_proc *luw_find(struct luw_session *s, pid_t vpid)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct luw_proc *t;

	lockdep_assert_held(&s->lock);
	list_for_each_entry(t, &s->targets, node) {
		if (t->vpid == vpid && t->pid->numbers[t->ns_level].ns == ns)
			return t;
	}
	return NULL;
}

/* 0 while t runs the program attached, else why it ended (LUW_END_*). */
static int luw_ended(struct luw_proc *t)
{
	struct task_struct *task, *th;
	struct mm_struct *mm = NULL;
	int why = LUW_END_EXIT;

	rcu_read_lock();
	task = pid_task(t->pid, PIDTYPE_TGID);
	/* A leader that exited early stays a zombie while threads run. */
	if (task && atomic_read(&task->signal->live) > 0) {
		/* exec replaces the mm of the whole group at once. */
		for_each_thread(task, th) {
			mm = READ_ONCE(th->mm);
			if (mm)
				break;
		}
		if (mm)
			why = mm == t->mm ? 0 : LUW_END_EXEC;
	}
	rcu_read_unlock();
	return why;
}

/* Tell the session's reader, in band, that a target is over. */
static void luw_end_record(struct luw_proc *t, int why)
{
	struct luw_end e = {
		.size = sizeof(e),
		.type = LUW_REC_END,
		.reason = why,
		.pid = t->vpid,
		.time = ktime_get_mono_fast_ns(),
	};
	unsigned long flags;

	/* The ring's producer runs with interrupts off; so do we. */
	local_irq_save(flags);
	luw_ring_write(t->sess, &e, sizeof(e), e.time);
	local_irq_restore(flags);
}

/* End s's targets that exited or exec'd, into ended; both locks held. */
void luw_targets_reap(struct luw_session *s, struct list_head *ended)
{
	struct luw_proc *t, *tmp;
	int why;

	list_for_each_entry_safe(t, tmp, &s->targets, node) {
		why = luw_ended(t);
		if (!why)
			continue;
		/* exec: the handler stopped already (mm differs). */
		luw_end_record(t, why);
		s->ended++;
		luw_target_unlink(t, ended);
	}
}

/* Whether tgid is the thread group of a target; for the probes (reap.c). */
bool luw_target_watched(struct pid *tgid)
{
	struct luw_proc *t;
	bool found = false;

	if (!READ_ONCE(luw_nr_targets))
		return false;
	rcu_read_lock();
	list_for_each_entry_rcu(t, &luw_watched, watch) {
		if (t->pid == tgid) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/*
 * current, a thread of whatever group, exits (reap.c's probe): the last
 * switch record of a thread of an off-CPU target (offcpu.c).
 */
void luw_targets_thread_exit(struct task_struct *p)
{
	struct pid *tgid = task_tgid(p);
	struct luw_proc *t;

	if (!READ_ONCE(luw_nr_targets))
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(t, &luw_watched, watch)
		if (t->pid == tgid && t->offcpu)
			luw_switch_exit(t);
	rcu_read_unlock();
}

/*
 * ptrace read access (PTRACE_MODE_READ_REALCREDS) for the current
 * credentials, as far as a module can ask it: for every thread of the
 * group (each may have set its own ids), the same user throughout, or
 * CAP_SYS_PTRACE over the thread's user namespace; and a dumpable
 * program, or CAP_SYS_PTRACE over its mm's namespace.  The _noaudit
 * checks keep a same-user attach from logging a capability denial.
 */
static bool luw_may_sample(struct task_struct *task, struct mm_struct *mm)
{
	const struct cred *me = current_cred(), *tc;
	struct task_struct *th;
	bool ok = true;

	rcu_read_lock();
	for_each_thread(task, th) {
		tc = __task_cred(th);
		if (uid_eq(me->uid, tc->euid) && uid_eq(me->uid, tc->suid) &&
		    uid_eq(me->uid, tc->uid) && gid_eq(me->gid, tc->egid) &&
		    gid_eq(me->gid, tc->sgid) && gid_eq(me->gid, tc->gid))
			continue;
		if (!ns_capable_noaudit(tc->user_ns, CAP_SYS_PTRACE)) {
			ok = false;
			break;
		}
	}
	rcu_read_unlock();
	if (ok && luw_dumpable(task, mm) != SUID_DUMP_USER)
		ok = luw_ptrace_capable_noaudit(task, mm);
	return ok;
}

/*
 * Both the caller and whoever opened the file must have perf's bar
 * (CAP_PERFMON, checked at open for the opener) and read access to the
 * target: a descriptor handed on (SCM_RIGHTS, an inherited fd) grants no
 * more than its receiver has, and a receiver gains nothing the opener
 * lacked.  The opener's credentials are put in place for the second
 * check because the capability helpers that take a cred are not
 * exported.
 */
static bool luw_may_attach(struct task_struct *task, struct mm_struct *mm,
			   const struct cred *opener)
{
	const struct cred *old;
	bool ok;

	if (!perfmon_capable() || !luw_may_sample(task, mm))
		return false;
	if (opener == current_cred())
		return true;
	old = override_creds(opener);
	ok = perfmon_capable() && luw_may_sample(task, mm);
	revert_creds(old);
	return ok;
}

/*
 * The program's mm with a user reference, from any thread still running
 * it: a leader that called pthread_exit() has none while its threads run.
 */
static struct mm_struct *luw_group_mm(struct task_struct *task)
{
	struct mm_struct *mm = NULL;
	struct task_struct *th;

	rcu_read_lock();
	for_each_thread(task, th) {
		task_lock(th);
		if (th->mm && !(th->flags & PF_KTHREAD)) {
			mm = th->mm;
			mmget(mm);
		}
		task_unlock(th);
		if (mm)
			break;
	}
	rcu_read_unlock();
	return mm;
}

/*
 * Check access and take the program's mm under the exec lock, so that an
 * exec cannot slip between the check and what will be sampled.
 */
static int luw_grab_program(struct task_struct *task, struct luw_proc *t,
			    const struct cred *opener)
{
	struct mm_struct *mm;
	int err;

	err = down_read_killable(&task->signal->exec_update_lock);
	if (err)
		return err;
	mm = luw_group_mm(task);
	if (!mm) {
		err = -ESRCH;	/* exiting */
	} else if (!luw_may_attach(task, mm, opener)) {
		err = -EPERM;
	} else {
		mmgrab(mm);
		t->mm = mm;
	}
	if (mm)
		mmput(mm);
	up_read(&task->signal->exec_update_lock);
	return err;
}

/*
 * Bounds of the ABI only.  The admin's perf_event_max_sample_rate is not
 * checked here: the variable is not exported to modules, and reading its
 * sysctl file from here would resolve a path from the caller's root with
 * a lock held (a chroot can put /dev/luaunwind or a FIFO there).  perf
 * enforces it anyway, as for every event: an event that overflows more
 * than that rate allows in one tick is throttled until the next.
 * luaunwind-ctl refuses such a rate itself, as perf record does.
 */
static int luw_rate_check(const struct luw_attach *a)
{
	u64 r = a->sample_rate;

	if (!r)
		return -EINVAL;
	if ((a->flags & LUW_ATTACH_PERIOD) && a->event == LUW_EVENT_CYCLES)
		return r >= LUW_CYCLES_PERIOD_MIN &&
		       r <= LUW_CYCLES_PERIOD_MAX ? 0 : -EINVAL;
	if (a->flags & LUW_ATTACH_PERIOD)
		return r >= LUW_PERIOD_MIN_NS && r <= LUW_PERIOD_MAX_NS ?
		       0 : -EINVAL;
	return r <= LUW_FREQ_MAX ? 0 : -EINVAL;
}

/* Offsets into one LuaJIT object (global_State is the largest, ~400). */
#define LUW_LJ_MAX_OFS		4096
/* G to GG_State's members: dispatch table and jit_State, ~4 KiB. */
#define LUW_LJ_MAX_GG_OFS	65536
/* The interpreter is ~100 KiB of code. */
#define LUW_VM_MAX_BYTES	(16ULL << 20)

/* The request alone, before any lock: EINVAL for what no target fits. */
int luw_attach_check(const struct luw_attach *a)
{
	if (a->flags & ~LUW_ATTACH_FLAGS)
		return -EINVAL;
	if (a->pid <= 0 || a->event > LUW_EVENT_CYCLES)
		return -EINVAL;
	if (a->vm_start > a->vm_end || a->vm_end > TASK_SIZE_MAX)
		return -EINVAL;
	if (a->interp_end &&
	    (a->interp_end <= a->vm_start || a->interp_end > a->vm_end))
		return -EINVAL;
	if (a->g_hint && (a->g_hint & 7 || a->g_hint >= TASK_SIZE_MAX))
		return -EINVAL;
	if (!a->layout_ptr != !a->layout_size)
		return -EINVAL;
	if (a->layout_size && (a->layout_size != sizeof(struct luw_lj_layout) ||
			       a->vm_start >= a->vm_end ||
			       a->vm_end - a->vm_start > LUW_VM_MAX_BYTES))
		return -EINVAL;
	if (a->max_host_frames > LUW_MAX_HOST_FRAMES ||
	    a->max_lua_frames > LUW_MAX_LUA_FRAMES)
		return -EINVAL;
	return luw_rate_check(a);
}

static bool luw_ofs_ok(u16 ofs, bool optional)
{
	if (ofs == LUW_LJ_NOFIELD)
		return optional;
	return ofs < LUW_LJ_MAX_OFS;
}

/*
 * The walker trusts the descriptor for nothing but offsets, so this is
 * about bounds: every field within what any LuaJIT build has, the fields
 * the walk cannot do without present.  Whether it fits the process is
 * userspace's check (it reads the live memory first).
 */
static int luw_layout_check(const struct luw_lj_layout *ly)
{
	const u16 need[] = {
		ly->g_vmstate, ly->g_cur_l, ly->g_jit_base, ly->g_mainthref,
		ly->l_glref, ly->l_base, ly->l_stack, ly->l_cframe,
		ly->l_stacksize, ly->gc_gct, ly->fn_ffid, ly->fn_pc,
		ly->pt_sizebc, ly->pt_size, ly->str_size,
	};
	const u16 opt[] = {
		ly->g_tmpbuf_l, ly->g_strempty, ly->j_trace, ly->j_sizetrace,
		ly->l_status, ly->l_top, ly->l_maxstack, ly->fn_f,
		ly->pt_chunkname, ly->pt_firstline, ly->pt_numline,
		ly->pt_lineinfo, ly->str_len, ly->tr_startpt, ly->tr_startpc,
		ly->tr_spadjust, ly->tr_mcode, ly->tr_szmcode, ly->tr_traceno,
	};
	unsigned int i;

	if (luw_lj_layout_check(ly))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(need); i++)
		if (!luw_ofs_ok(need[i], false))
			return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(opt); i++)
		if (!luw_ofs_ok(opt[i], true))
			return -EINVAL;
	if (ly->cframe_ofs_pc + 4 > ly->cframe_size ||
	    ly->cframe_size_jit > 512 || ly->cframe_rbp_cfa < 16 ||
	    ly->cframe_size % 8 || ly->stack_extra > 64)
		return -EINVAL;
	if (ly->gg_g2disp >= LUW_LJ_MAX_GG_OFS || ly->gg_g2l >= 0 ||
	    ly->gg_g2l <= -LUW_LJ_MAX_GG_OFS || ly->gg_g2j < 0 ||
	    ly->gg_g2j >= LUW_LJ_MAX_GG_OFS)
		return -EINVAL;
	if (ly->flags & LUW_LJ_F_JIT) {
		if (!ly->gg_g2j || ly->j_trace == LUW_LJ_NOFIELD ||
		    ly->j_sizetrace == LUW_LJ_NOFIELD ||
		    ly->tr_startpt == LUW_LJ_NOFIELD ||
		    ly->tr_startpc == LUW_LJ_NOFIELD)
			return -EINVAL;
	}
	for (i = 0; i < LUW_X86_NREGS; i++)
		if (i == LUW_X86_RSP && (ly->reg_base == i || ly->reg_pc == i ||
					 ly->reg_dispatch == i))
			return -EINVAL;
	if (ly->pad[0] || ly->pad[1])
		return -EINVAL;
	return 0;
}

/* Copy in the layout descriptor (no lock held) and check its bounds. */
int luw_layout_copy(struct luw_lj_layout *ly, u64 uptr)
{
	if (copy_from_user(ly, u64_to_user_ptr(uptr), sizeof(*ly)))
		return -EFAULT;
	return luw_layout_check(ly) ? -EINVAL : 0;
}

/*
 * Take a reference on every thread of the group that can be sampled.  The
 * array is sized from the thread count and taken again if the group grew
 * past it meanwhile.
 */
static int luw_threads_get(struct task_struct *leader,
			   struct task_struct ***out, unsigned int *n)
{
	struct task_struct **v, *th;
	unsigned int cap, i, tries;
	bool full;

	for (tries = 0; tries < 4; tries++) {
		cap = get_nr_threads(leader) + 8;
		if (cap > LUW_MAX_THREADS + 8)
			return -ENOSPC;
		v = kvcalloc(cap, sizeof(*v), GFP_KERNEL_ACCOUNT);
		if (!v)
			return -ENOMEM;
		i = 0;
		full = false;
		rcu_read_lock();
		for_each_thread(leader, th) {
			if (th->flags & (PF_EXITING | PF_KTHREAD) ||
			    luw_io_worker(th))
				continue;
			if (i == cap) {
				full = true;
				break;
			}
			get_task_struct(th);
			v[i++] = th;
		}
		rcu_read_unlock();
		if (!full) {
			*out = v;
			*n = i;
			return 0;
		}
		while (i)
			put_task_struct(v[--i]);
		kvfree(v);
	}
	return -EAGAIN;		/* the group keeps growing faster than us */
}

static int luw_create_events(struct luw_proc *t, struct task_struct *leader,
			     const struct luw_attach *a)
{
	/*
	 * Not pinned: a pinned event that loses its counter to another goes
	 * to ERROR and stops sampling without a word; a flexible one is
	 * multiplexed.  (cpu-clock is never short of a counter.)
	 */
	struct perf_event_attr attr[2] = {
		{ .size = sizeof(attr[0]), .inherit = 1 },
		/* Off-CPU: every switch out of a thread (offcpu.c). */
		{ .size = sizeof(attr[1]), .inherit = 1,
		  .type = PERF_TYPE_SOFTWARE,
		  .config = PERF_COUNT_SW_CONTEXT_SWITCHES,
		  .sample_period = 1 },
	};
	perf_overflow_handler_t handler[2] = { luw_overflow, luw_switch_out };
	unsigned int i, k, n, charged, kinds = 0, kind[2];
	struct task_struct **th;
	struct perf_event *ev;
	int err;

	if (!(a->flags & LUW_ATTACH_NO_EVENTS))
		kind[kinds++] = 0;
	if (a->flags & LUW_ATTACH_OFFCPU)
		kind[kinds++] = 1;
	luw_attr_inherit_thread(&attr[0]);
	luw_attr_inherit_thread(&attr[1]);
	if (a->event == LUW_EVENT_CYCLES) {
		attr[0].type = PERF_TYPE_HARDWARE;
		attr[0].config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		attr[0].type = PERF_TYPE_SOFTWARE;
		attr[0].config = PERF_COUNT_SW_CPU_CLOCK;
	}
	if (a->flags & LUW_ATTACH_PERIOD) {
		attr[0].sample_period = a->sample_rate;
	} else {
		attr[0].freq = 1;
		attr[0].sample_freq = a->sample_rate;
	}

	err = luw_threads_get(leader, &th, &n);
	if (err)
		return err;
	t->events = kvcalloc(max(n * kinds, 1U), sizeof(*t->events),
			     GFP_KERNEL_ACCOUNT);
	if (!t->events)
		err = -ENOMEM;
	/*
	 * The user's cap, charged for all before any is created: another
	 * attach of the user's runs beside this one.  What is not created is
	 * given back below.
	 */
	if (!err)
		err = luw_charge(t->sess->user, 0, n * kinds);
	charged = err ? 0 : n * kinds;
	for (i = 0; i < n && !err; i++) {
		for (k = 0; k < kinds && !err; k++) {
			ev = perf_event_create_kernel_counter(&attr[kind[k]],
							      -1, th[i],
							      handler[kind[k]],
							      t);
			if (IS_ERR(ev)) {
				/* A thread on its way out: nothing to sample. */
				if (PTR_ERR(ev) != -ESRCH)
					err = PTR_ERR(ev);
				continue;
			}
			t->events[t->nr_events++] = ev;
		}
	}
	for (i = 0; i < n; i++)
		put_task_struct(th[i]);
	kvfree(th);
	if (!err && !t->nr_events)
		err = -ESRCH;		/* every thread was exiting */
	if (err) {
		luw_events_abort(t);
		/* No PMU (e.g. under TCG), or no such hardware event. */
		if (err == -ENOENT || err == -ENODEV)
			err = -EOPNOTSUPP;
	}
	luw_uncharge(t->sess->user, 0, charged - t->nr_events);
	return err;
}

/*
 * a passed luw_attach_check(), ly (NULL without a layout) luw_layout_copy();
 * opener: the credentials the file was opened with.
 */
int luw_attach(struct luw_session *s, const struct luw_attach *a,
	       const struct luw_lj_layout *ly, const struct cred *opener)
{
	struct task_struct *task;
	struct luw_proc *t;
	struct pid *pid;
	int err;

	lockdep_assert_held(&s->lock);
	if (luw_find(s, a->pid))
		return -EBUSY;
	pid = find_get_pid(a->pid);
	if (!pid)
		return -ESRCH;
	task = get_pid_task(pid, PIDTYPE_TGID);
	if (!task) {
		/* No such process, or a thread id rather than a process id. */
		put_pid(pid);
		return -ESRCH;
	}
	/* The slot first: the caps hold while this runs without luw_lock. */
	err = luw_charge(s->user, 1, 0);
	if (err)
		goto out_task;

	err = -ENOMEM;
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		goto out_slot;
	err = (task->flags & PF_KTHREAD) ? -EINVAL :
	      luw_grab_program(task, t, opener);
	if (err)
		goto out_free;
	t->sess = s;
	t->pid = pid;
	t->ns_level = task_active_pid_ns(current)->level;
	t->vpid = a->pid;
	t->event = a->event;
	t->vm_start = a->vm_start;
	t->vm_end = a->vm_end;
	t->interp_end = a->interp_end ?: a->vm_end;
	t->g_hint = a->g_hint;
	t->max_host = a->max_host_frames ?: LUW_MAX_HOST_FRAMES;
	t->max_lua = a->max_lua_frames ?: LUW_MAX_LUA_FRAMES;
	t->vmstate_only = !!(a->flags & LUW_ATTACH_VMSTATE_ONLY);
	t->offcpu = !!(a->flags & LUW_ATTACH_OFFCPU);
	if (t->vmstate_only) {
		/*
		 * One host frame is enough to read the vmstate: the walk
		 * either finds the interpreter there or goes on from
		 * G->cur_L, and one Lua frame tells LFUNC from FFUNC.
		 */
		t->max_host = 1;
		t->max_lua = 1;
	}
	if (ly) {
		t->ly = *ly;
		t->has_layout = true;
	}
	err = -ENOMEM;
	t->stats = alloc_percpu_gfp(struct luw_tstats, GFP_KERNEL_ACCOUNT);
	if (!t->stats)
		goto out_free;
	if (!(a->flags & LUW_ATTACH_NO_EVENTS) ||
	    (a->flags & LUW_ATTACH_OFFCPU)) {
		err = luw_create_events(t, task, a);
		if (err)
			goto out_free;
	}
	/*
	 * The rings only now, when nothing else can fail: a failed attach
	 * leaves the session as it was.  The events sample nothing yet.
	 */
	err = luw_ring_alloc(s);
	if (err) {
		luw_uncharge(s->user, 0, t->nr_events);
		luw_events_abort(t);
		goto out_free;
	}
	WRITE_ONCE(t->running, !(a->flags & LUW_ATTACH_STOPPED));
	put_task_struct(task);
	mutex_lock(&luw_lock);
	list_add_tail(&t->node, &s->targets);
	s->nr_targets++;
	list_add_tail_rcu(&t->watch, &luw_watched);
	mutex_unlock(&luw_lock);
	WRITE_ONCE(s->had_targets, true);
	return 0;

out_free:
	if (t->mm)
		mmdrop(t->mm);
	free_percpu(t->stats);
	kvfree(t->events);
	kfree(t);
out_slot:
	luw_uncharge(s->user, 1, 0);
out_task:
	put_task_struct(task);
	put_pid(pid);
	return err;
}

/* The target goes to g, for the caller to release after the lock. */
int luw_detach(struct luw_session *s, pid_t vpid, struct luw_grave *g)
{
	struct luw_proc *t;

	if (vpid <= 0)
		return -EINVAL;
	t = luw_find(s, vpid);
	if (!t)
		return -ESRCH;
	mutex_lock(&luw_lock);
	luw_target_unlink(t, &g->targets);
	mutex_unlock(&luw_lock);
	return 0;
}

int luw_alloc(struct luw_session *s, const struct luw_alloc *a)
{
	struct luw_proc *t;

	if (a->pid <= 0 || a->flags || a->reserved)
		return -EINVAL;
	t = luw_find(s, a->pid);
	if (!t)
		return -ESRCH;
	return luw_alloc_add(t, a);
}

static void luw_target_run(struct luw_proc *t, bool start)
{
	/* Inherited copies ignore perf_event_disable(): see the top. */
	WRITE_ONCE(t->running, start);
}

int luw_start_stop(struct luw_session *s, pid_t vpid, bool start)
{
	struct luw_proc *t;

	if (vpid < 0)
		return -EINVAL;
	if (!vpid) {
		list_for_each_entry(t, &s->targets, node)
			luw_target_run(t, start);
		return 0;
	}
	t = luw_find(s, vpid);
	if (!t)
		return -ESRCH;
	luw_target_run(t, start);
	return 0;
}

/* Names each table array a target ever had (hostwalk.c's step memo). */
static atomic64_t luw_maps_seq = ATOMIC64_INIT(0);

/* Copy and check one mapping's table; no lock needed. */
struct luw_table *luw_table_load(const struct luw_unwind_table *u)
{
	struct luw_table *tab;
	int err;

	if (u->pid <= 0 || u->table_size < sizeof(struct luw_uw_hdr) ||
	    u->table_size > LUW_MAX_TABLE_BYTES || u->start >= u->end ||
	    u->end > TASK_SIZE_MAX || !PAGE_ALIGNED(u->start) ||
	    !PAGE_ALIGNED(u->end) || !PAGE_ALIGNED(u->file_offset))
		return ERR_PTR(-EINVAL);

	tab = kzalloc(sizeof(*tab), GFP_KERNEL_ACCOUNT);
	if (!tab)
		return ERR_PTR(-ENOMEM);
	tab->buf = kvmalloc(u->table_size, GFP_KERNEL_ACCOUNT);
	if (!tab->buf) {
		kfree(tab);
		return ERR_PTR(-ENOMEM);
	}
	err = -EFAULT;
	if (copy_from_user(tab->buf, u64_to_user_ptr(u->table_ptr),
			   u->table_size))
		goto out_free;
	err = -EINVAL;
	if (luw_uw_check(tab->buf, u->table_size))
		goto out_free;
	tab->start = u->start;
	tab->end = u->end;
	tab->file_offset = u->file_offset;
	tab->bytes = u->table_size;
	tab->ent = luw_uw_entries(tab->buf);
	tab->nent = ((struct luw_uw_hdr *)tab->buf)->nentries;
	tab->r14 = luw_uw_r14s(tab->buf);
	tab->nr14 = ((struct luw_uw_hdr *)tab->buf)->nr14;
	tab->nfirst = luw_uw_index_len(tab->ent, tab->nent, &tab->shift);
	err = -ENOMEM;
	tab->first = kvmalloc_array(tab->nfirst, sizeof(*tab->first),
				    GFP_KERNEL_ACCOUNT);
	if (!tab->first)
		goto out_free;
	luw_uw_index_build(tab->ent, tab->nent, tab->shift, tab->first,
			   tab->nfirst);
	tab->bytes += (u64)tab->nfirst * sizeof(*tab->first);
	return tab;

out_free:
	luw_table_free(tab);
	return ERR_PTR(err);
}

static bool luw_table_overlaps(const struct luw_table *a,
			       const struct luw_table *b)
{
	return a->end > b->start && a->start < b->end;
}

/*
 * Install tab as the table of its mapping (any it overlaps goes); tab is
 * the target's or freed, whatever the result.  Everything the old tables
 * are needed for happens before the session's lock is dropped: a detach
 * or a second upload may free them right after.
 */
int luw_table_install(struct luw_session *s, pid_t vpid, struct luw_table *tab)
{
	struct luw_maps *old, *new;
	unsigned int i, n = 0;
	struct luw_proc *t;
	bool placed = false;
	u64 freed = 0;
	int err;

	lockdep_assert_held(&s->lock);
	err = -ESRCH;
	t = luw_find(s, vpid);
	if (!t)
		goto out_free;
	old = rcu_dereference_protected(t->maps, lockdep_is_held(&s->lock));
	for (i = 0; old && i < old->n; i++)
		if (luw_table_overlaps(old->t[i], tab))
			freed += old->t[i]->bytes;
	err = -ENOMEM;
	new = kmalloc(struct_size(new, t, (old ? old->n : 0) + 1),
		      GFP_KERNEL_ACCOUNT);
	if (!new)
		goto out_free;
	/* Keep the array sorted; a new table replaces any it overlaps. */
	for (i = 0; old && i < old->n; i++) {
		struct luw_table *o = old->t[i];

		if (luw_table_overlaps(o, tab))
			continue;
		if (!placed && o->start > tab->start) {
			new->t[n++] = tab;
			placed = true;
		}
		new->t[n++] = o;
	}
	if (!placed)
		new->t[n++] = tab;
	err = -ENOSPC;
	if (n > LUW_MAX_MAPPINGS)
		goto out_new;
	/* The module's cap on all tables (freed: what tab replaces). */
	err = -ENOMEM;
	mutex_lock(&luw_lock);
	if (luw_table_bytes - freed + tab->bytes <= LUW_MAX_TABLES_BYTES) {
		luw_table_bytes += tab->bytes - freed;
		err = 0;
	}
	mutex_unlock(&luw_lock);
	if (err)
		goto out_new;
	new->n = n;
	new->seq = atomic64_inc_return(&luw_maps_seq);
	rcu_assign_pointer(t->maps, new);
	for (i = 0; old && i < old->n; i++)
		if (luw_table_overlaps(old->t[i], tab))
			call_rcu(&old->t[i]->rcu, luw_table_free_rcu);
	if (old)
		kfree_rcu(old, rcu);
	t->table_bytes += tab->bytes - freed;
	return 0;

out_new:
	kfree(new);
out_free:
	luw_table_free(tab);
	return err;
}

/* perf's enabled and running times of a target's events, added to st. */
static void luw_target_times(struct luw_proc *t, struct luw_stats *st)
{
	unsigned int i;

	for (i = 0; i < t->nr_events; i++) {
		u64 enabled = 0, running = 0;

		perf_event_read_value(t->events[i], &enabled, &running);
		st->time_enabled += enabled;
		st->time_running += running;
	}
}

int luw_get_stats(struct luw_session *s, struct luw_stats *st)
{
	struct luw_tstats *sum;
	struct luw_proc *t;
	unsigned int i;

	if (st->pid < 0)
		return -EINVAL;
	sum = kzalloc(sizeof(*sum), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	if (st->pid) {
		t = luw_find(s, st->pid);
		if (!t) {
			kfree(sum);
			return -ESRCH;
		}
		luw_target_stats(t, sum);
		luw_target_times(t, st);
		st->thread_events = t->nr_events;
		st->alloc_interval = t->nr_aprobes ? t->alloc_interval : 0;
	} else {
		bool first = true;

		mutex_lock(&luw_lock);
		luw_stats_add(sum, &s->retired);
		mutex_unlock(&luw_lock);
		list_for_each_entry(t, &s->targets, node) {
			u64 iv = t->nr_aprobes ? t->alloc_interval : 0;

			luw_target_stats(t, sum);
			luw_target_times(t, st);
			st->thread_events += t->nr_events;
			st->alloc_interval = first || st->alloc_interval == iv ?
					     iv : 0;
			first = false;
		}
		st->ended = s->ended;
	}
	st->nr_targets = s->nr_targets;
	st->samples = sum->samples;
	st->drops = sum->drops;
	st->faults = sum->faults;
	st->truncated = sum->truncated;
	st->skipped = sum->skipped;
	st->handler_ns = sum->handler_ns;
	st->handler_calls = sum->handler_calls;
	st->reads = sum->reads;
	st->read_bytes = sum->read_bytes;
	st->budget_cuts = sum->budget_cuts;
	st->interrupts = sum->interrupts;
	st->alloc_calls = sum->alloc_calls;
	st->alloc_bytes = sum->alloc_bytes;
	st->alloc_samples = sum->alloc_samples;
	st->alloc_ns = sum->alloc_ns;
	st->switch_calls = sum->switch_calls;
	st->switch_records = sum->switch_records;
	st->switch_ns = sum->switch_ns;
	BUILD_BUG_ON(ARRAY_SIZE(st->vmstate) < LUW_VMST_COUNT);
	for (i = 0; i < LUW_VMST_COUNT; i++)
		st->vmstate[i] = sum->vmstate[i];
	for (i = 0; i < LUW_HIST_BUCKETS; i++) {
		st->hist[i] = sum->hist[i];
		st->reads_hist[i] = sum->reads_hist[i];
	}
	kfree(sum);
	return 0;
}

/* The session's targets: their count, the first max pids into pids. */
u32 luw_list(struct luw_session *s, s32 *pids, u32 max)
{
	struct luw_proc *t;
	u32 n = 0;

	list_for_each_entry(t, &s->targets, node) {
		if (n < max)
			pids[n] = t->vpid;
		n++;
	}
	return n;
}

u32 luw_nr_targets_now(void)
{
	return READ_ONCE(luw_nr_targets);
}

