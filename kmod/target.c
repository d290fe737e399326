// SPDX-License-Identifier: GPL-2.0
/*
 * Attached processes ("targets").
 *
 * Sampling design: each target gets one perf event per online CPU
 * (task == NULL), and the handler keeps only samples whose current thread
 * belongs to the target's thread group.  The alternative, one event per
 * task, would need an event per thread and a hook on clone() to follow new
 * threads (kernel counters are not inherited); per-CPU events follow every
 * thread, present and future, for free, cost a fixed number of events per
 * target, and a cpu-clock hrtimer that finds another task running returns
 * after one comparison.
 *
 * luw_lock (a mutex) serialises everything but the handler: the target
 * list, creating and releasing events, uploads, stats folding.  The
 * handler never takes it: it reaches its target through the event's
 * context pointer, and a target is freed only after its events are
 * released and an RCU grace period has passed (handlers run with
 * interrupts off, or in NMI, both RCU read-side sections).
 */
#include <linux/cpu.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/overflow.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "luw.h"

DEFINE_MUTEX(luw_lock);
static LIST_HEAD(luw_targets);
static unsigned int luw_nr_targets;
static struct luw_tstats luw_retired;	/* detached targets, folded in */
static bool luw_unloading;

/* How often targets that exited are looked for. */
#define LUW_REAP_INTERVAL	(HZ / 10)

static void luw_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(luw_reaper, luw_reap);

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

static void luw_table_free(struct luw_table *tab)
{
	kvfree(tab->buf);
	kfree(tab);
}

static void luw_table_free_rcu(struct rcu_head *head)
{
	luw_table_free(container_of(head, struct luw_table, rcu));
}

/* Caller has unlinked t; sleeps. */
static void luw_target_destroy(struct luw_proc *t)
{
	struct luw_tstats *sum;
	struct luw_maps *m;
	unsigned int i;
	int cpu;

	WRITE_ONCE(t->dying, true);
	for_each_possible_cpu(cpu) {
		if (t->events[cpu])
			perf_event_release_kernel(t->events[cpu]);
	}
	/* A handler that already started on another CPU finishes first. */
	synchronize_rcu();

	sum = kzalloc(sizeof(*sum), GFP_KERNEL);
	mutex_lock(&luw_lock);
	if (sum) {
		luw_target_stats(t, sum);
		luw_stats_add(&luw_retired, sum);
	}
	mutex_unlock(&luw_lock);
	kfree(sum);

	m = rcu_dereference_protected(t->maps, true);
	if (m) {
		for (i = 0; i < m->n; i++)
			luw_table_free(m->t[i]);
		kfree(m);
	}
	free_percpu(t->stats);
	put_pid(t->pid);
	kfree(t->events);
	kfree(t);
}

/* The target named vpid in the caller's pid namespace; luw_lock held. */
static struct luw_proc *luw_find(pid_t vpid)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct luw_proc *t;

	lockdep_assert_held(&luw_lock);
	list_for_each_entry(t, &luw_targets, node) {
		if (t->vpid == vpid && t->pid->numbers[t->ns_level].ns == ns)
			return t;
	}
	return NULL;
}

static bool luw_alive(struct luw_proc *t)
{
	struct task_struct *task;
	bool alive;

	rcu_read_lock();
	task = pid_task(t->pid, PIDTYPE_TGID);
	/* A leader that exited early stays a zombie while threads run. */
	alive = task && atomic_read(&task->signal->live) > 0;
	rcu_read_unlock();
	return alive;
}

static void luw_reap(struct work_struct *work)
{
	struct luw_proc *t, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&luw_lock);
	list_for_each_entry_safe(t, tmp, &luw_targets, node) {
		if (!luw_alive(t)) {
			list_move(&t->node, &dead);
			luw_nr_targets--;
		}
	}
	if (!list_empty(&luw_targets) && !luw_unloading)
		schedule_delayed_work(&luw_reaper, LUW_REAP_INTERVAL);
	mutex_unlock(&luw_lock);

	list_for_each_entry_safe(t, tmp, &dead, node)
		luw_target_destroy(t);
}

/*
 * Sampling a process reads its memory, so ask what ptrace would: the
 * same user throughout, or CAP_SYS_PTRACE.
 */
static bool luw_may_sample(struct task_struct *task)
{
	const struct cred *me = current_cred(), *tc;
	bool ok;

	if (capable(CAP_SYS_PTRACE))
		return true;
	rcu_read_lock();
	tc = __task_cred(task);
	ok = uid_eq(me->euid, tc->euid) && uid_eq(me->euid, tc->suid) &&
	     uid_eq(me->euid, tc->uid) && gid_eq(me->egid, tc->egid) &&
	     gid_eq(me->egid, tc->sgid) && gid_eq(me->egid, tc->gid);
	rcu_read_unlock();
	return ok;
}

/* Offsets into one LuaJIT object (global_State is the largest, ~400). */
#define LUW_LJ_MAX_OFS		4096
/* G to GG_State's members: dispatch table and jit_State, ~4 KiB. */
#define LUW_LJ_MAX_GG_OFS	65536
/* The interpreter is ~100 KiB of code. */
#define LUW_VM_MAX_BYTES	(16ULL << 20)

static int luw_attach_check(const struct luw_attach *a)
{
	if (a->flags & ~LUW_ATTACH_FLAGS)
		return -EINVAL;
	if (a->pid <= 0 || a->event > LUW_EVENT_CYCLES || !a->sample_rate)
		return -EINVAL;
	if (!(a->flags & LUW_ATTACH_PERIOD) && a->sample_rate > LUW_FREQ_MAX)
		return -EINVAL;
	if ((a->flags & LUW_ATTACH_PERIOD) && a->event == LUW_EVENT_CPU_CLOCK &&
	    a->sample_rate < LUW_PERIOD_MIN_NS)
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
	return 0;
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

static int luw_layout_copy(struct luw_proc *t, const struct luw_attach *a)
{
	if (!a->layout_size)
		return 0;
	if (copy_from_user(&t->ly, u64_to_user_ptr(a->layout_ptr),
			   sizeof(t->ly)))
		return -EFAULT;
	if (luw_layout_check(&t->ly))
		return -EINVAL;
	t->has_layout = true;
	return 0;
}

static int luw_create_events(struct luw_proc *t, const struct luw_attach *a)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.pinned = 1,
		.disabled = !!(a->flags & LUW_ATTACH_STOPPED),
	};
	struct perf_event *ev;
	int cpu, err = 0;

	if (a->event == LUW_EVENT_CYCLES) {
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
	}
	if (a->flags & LUW_ATTACH_PERIOD) {
		attr.sample_period = a->sample_rate;
	} else {
		attr.freq = 1;
		attr.sample_freq = a->sample_rate;
	}

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		ev = perf_event_create_kernel_counter(&attr, cpu, NULL,
						      luw_overflow, t);
		if (IS_ERR(ev)) {
			err = PTR_ERR(ev);
			break;
		}
		t->events[cpu] = ev;
	}
	cpus_read_unlock();
	if (err) {
		for_each_possible_cpu(cpu) {
			if (t->events[cpu])
				perf_event_release_kernel(t->events[cpu]);
			t->events[cpu] = NULL;
		}
		/* No PMU (e.g. under TCG), or no such hardware event. */
		if (err == -ENOENT || err == -ENODEV)
			err = -EOPNOTSUPP;
	}
	return err;
}

int luw_attach(const struct luw_attach *a)
{
	struct task_struct *task;
	struct luw_proc *t;
	struct pid *pid;
	int err;

	err = luw_attach_check(a);
	if (err)
		return err;

	pid = find_get_pid(a->pid);
	if (!pid)
		return -ESRCH;
	task = get_pid_task(pid, PIDTYPE_TGID);
	if (!task) {
		/* No such process, or a thread id rather than a process id. */
		put_pid(pid);
		return -ESRCH;
	}
	if ((task->flags & PF_KTHREAD) || !luw_may_sample(task)) {
		err = (task->flags & PF_KTHREAD) ? -EINVAL : -EPERM;
		put_task_struct(task);
		put_pid(pid);
		return err;
	}
	put_task_struct(task);

	err = -ENOMEM;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		goto out_pid;
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
	if (t->vmstate_only) {
		/*
		 * One host frame is enough to read the vmstate: the walk
		 * either finds the interpreter there or goes on from
		 * G->cur_L, and one Lua frame tells LFUNC from FFUNC.
		 */
		t->max_host = 1;
		t->max_lua = 1;
	}
	t->running = !(a->flags & LUW_ATTACH_STOPPED);
	t->events = kcalloc(nr_cpu_ids, sizeof(*t->events), GFP_KERNEL);
	t->stats = alloc_percpu(struct luw_tstats);
	if (!t->events || !t->stats)
		goto out_free;
	err = luw_layout_copy(t, a);
	if (err)
		goto out_free;

	mutex_lock(&luw_lock);
	err = -EBUSY;
	if (luw_find(a->pid))
		goto out_unlock;
	err = -ENOSPC;
	if (luw_nr_targets >= LUW_MAX_TARGETS)
		goto out_unlock;
	err = luw_create_events(t, a);
	if (err)
		goto out_unlock;
	list_add_tail(&t->node, &luw_targets);
	luw_nr_targets++;
	if (!luw_unloading)
		schedule_delayed_work(&luw_reaper, LUW_REAP_INTERVAL);
	mutex_unlock(&luw_lock);
	return 0;

out_unlock:
	mutex_unlock(&luw_lock);
out_free:
	free_percpu(t->stats);
	kfree(t->events);
	kfree(t);
out_pid:
	put_pid(pid);
	return err;
}

int luw_detach(pid_t vpid)
{
	struct luw_proc *t;

	if (vpid <= 0)
		return -EINVAL;
	mutex_lock(&luw_lock);
	t = luw_find(vpid);
	if (t) {
		list_del(&t->node);
		luw_nr_targets--;
	}
	mutex_unlock(&luw_lock);
	if (!t)
		return -ESRCH;
	luw_target_destroy(t);
	return 0;
}

static void luw_target_run(struct luw_proc *t, bool start)
{
	int cpu;

	if (t->running == start)
		return;
	for_each_possible_cpu(cpu) {
		if (!t->events[cpu])
			continue;
		if (start)
			perf_event_enable(t->events[cpu]);
		else
			perf_event_disable(t->events[cpu]);
	}
	t->running = start;
}

int luw_start_stop(pid_t vpid, bool start)
{
	struct luw_proc *t;
	int err = 0;

	if (vpid < 0)
		return -EINVAL;
	mutex_lock(&luw_lock);
	if (vpid) {
		t = luw_find(vpid);
		if (t)
			luw_target_run(t, start);
		else
			err = -ESRCH;
	} else {
		list_for_each_entry(t, &luw_targets, node)
			luw_target_run(t, start);
	}
	mutex_unlock(&luw_lock);
	return err;
}

int luw_upload_table(const struct luw_unwind_table *u)
{
	struct luw_maps *old, *new;
	struct luw_table *tab;
	unsigned int i, n = 0;
	struct luw_proc *t;
	bool placed = false;
	int err;

	if (u->pid <= 0 || u->table_size < sizeof(struct luw_uw_hdr) ||
	    u->table_size > LUW_MAX_TABLE_BYTES || u->start >= u->end ||
	    u->end > TASK_SIZE_MAX || !PAGE_ALIGNED(u->start) ||
	    !PAGE_ALIGNED(u->end) || !PAGE_ALIGNED(u->file_offset))
		return -EINVAL;

	tab = kzalloc(sizeof(*tab), GFP_KERNEL);
	if (!tab)
		return -ENOMEM;
	tab->buf = kvmalloc(u->table_size, GFP_KERNEL);
	if (!tab->buf) {
		kfree(tab);
		return -ENOMEM;
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
	tab->ent = luw_uw_entries(tab->buf);
	tab->nent = ((struct luw_uw_hdr *)tab->buf)->nentries;

	mutex_lock(&luw_lock);
	err = -ESRCH;
	t = luw_find(u->pid);
	if (!t)
		goto out_unlock;
	old = rcu_dereference_protected(t->maps, lockdep_is_held(&luw_lock));
	err = -ENOSPC;
	new = kmalloc(struct_size(new, t, (old ? old->n : 0) + 1), GFP_KERNEL);
	if (!new)
		goto out_unlock;
	/* Keep the array sorted; a new table replaces any it overlaps. */
	for (i = 0; old && i < old->n; i++) {
		struct luw_table *o = old->t[i];

		if (o->end > tab->start && o->start < tab->end)
			continue;
		if (!placed && o->start > tab->start) {
			new->t[n++] = tab;
			placed = true;
		}
		new->t[n++] = o;
	}
	if (!placed)
		new->t[n++] = tab;
	if (n > LUW_MAX_MAPPINGS) {
		kfree(new);
		goto out_unlock;
	}
	new->n = n;
	rcu_assign_pointer(t->maps, new);
	mutex_unlock(&luw_lock);

	if (old) {
		for (i = 0; i < old->n; i++) {
			struct luw_table *o = old->t[i];

			if (o->end > tab->start && o->start < tab->end)
				call_rcu(&o->rcu, luw_table_free_rcu);
		}
		kfree_rcu(old, rcu);
	}
	return 0;

out_unlock:
	mutex_unlock(&luw_lock);
out_free:
	luw_table_free(tab);
	return err;
}

int luw_get_stats(struct luw_stats *s)
{
	struct luw_tstats *sum;
	struct luw_proc *t;
	unsigned int i;
	int err = 0;

	if (s->pid < 0)
		return -EINVAL;
	sum = kzalloc(sizeof(*sum), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	mutex_lock(&luw_lock);
	if (s->pid) {
		t = luw_find(s->pid);
		if (t)
			luw_target_stats(t, sum);
		else
			err = -ESRCH;
	} else {
		luw_stats_add(sum, &luw_retired);
		list_for_each_entry(t, &luw_targets, node)
			luw_target_stats(t, sum);
	}
	s->nr_targets = luw_nr_targets;
	mutex_unlock(&luw_lock);

	s->samples = sum->samples;
	s->drops = sum->drops;
	s->faults = sum->faults;
	s->truncated = sum->truncated;
	s->skipped = sum->skipped;
	s->handler_ns = sum->handler_ns;
	s->handler_calls = sum->handler_calls;
	BUILD_BUG_ON(ARRAY_SIZE(s->vmstate) < LUW_VMST_COUNT);
	for (i = 0; i < LUW_VMST_COUNT; i++)
		s->vmstate[i] = sum->vmstate[i];
	for (i = 0; i < LUW_HIST_BUCKETS; i++)
		s->hist[i] = sum->hist[i];
	kfree(sum);
	return err;
}

int luw_list(struct luw_list *l, s32 __user *pids)
{
	struct luw_proc *t;
	s32 *buf;
	u32 n = 0;
	int err = 0;

	buf = kcalloc(LUW_MAX_TARGETS, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&luw_lock);
	list_for_each_entry(t, &luw_targets, node) {
		if (n < LUW_MAX_TARGETS)
			buf[n++] = t->vpid;
	}
	mutex_unlock(&luw_lock);
	l->count = n;
	if (copy_to_user(pids, buf, min(n, l->max) * sizeof(*buf)))
		err = -EFAULT;
	kfree(buf);
	return err;
}

void luw_target_exit(void)
{
	struct luw_proc *t, *tmp;
	LIST_HEAD(all);

	mutex_lock(&luw_lock);
	luw_unloading = true;
	mutex_unlock(&luw_lock);
	cancel_delayed_work_sync(&luw_reaper);

	mutex_lock(&luw_lock);
	list_splice_init(&luw_targets, &all);
	luw_nr_targets = 0;
	mutex_unlock(&luw_lock);
	list_for_each_entry_safe(t, tmp, &all, node)
		luw_target_destroy(t);
}
