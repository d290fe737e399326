// SPDX-License-Identifier: GPL-2.0
/*
 * Targets end when their process exits or execs.  Probes on the
 * sched_process_exit and sched_process_exec tracepoints see every exit
 * and exec of the machine as it happens; for a target's they wake the
 * reaper, which ends the target (an END record for its reader) and
 * releases it.  Nothing polls.  The reaper also runs once after each
 * attach: an exit or exec between the attach's access check and the
 * target's appearance among the watched (target.c) found nothing there.
 */
#include <linux/sched/signal.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <trace/events/sched.h>

#include "luw.h"

static bool luw_unloading;		/* under luw_lock */

/* A session busy when the reaper came (its lock held): the next try. */
#define LUW_REAP_RETRY		max(1, HZ / 100)

static void luw_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(luw_reaper, luw_reap);

void luw_reap_soon(void)
{
	mod_delayed_work(system_wq, &luw_reaper, 0);
}

static void luw_reap(struct work_struct *work)
{
	struct luw_grave g = LUW_GRAVE_INIT(g);
	struct luw_session *s;
	bool busy = false;

	mutex_lock(&luw_lock);
	list_for_each_entry(s, &luw_sessions, node) {
		if (!s->nr_targets)
			continue;
		/*
		 * A session's lock comes before luw_lock and may be held long
		 * (an attach creating thousands of events): only tried, and
		 * tried again soon when busy, so no session waits for another.
		 */
		if (!mutex_trylock(&s->lock)) {
			busy = true;
			continue;
		}
		luw_targets_reap(s, &g.targets);
		mutex_unlock(&s->lock);
	}
	luw_session_unkeep_idle(&g);
	if (busy && !luw_unloading)
		schedule_delayed_work(&luw_reaper, LUW_REAP_RETRY);
	mutex_unlock(&luw_lock);
	luw_grave_release(&g);
}

/* An exit or exec of p may have ended a target: the reaper looks now. */
static void luw_notice(struct task_struct *p)
{
	/*
	 * The exit's or exec's change (signal->live, the new mm) before the
	 * look for the target: if it is not there yet, the reaper's run
	 * after its attach sees the change.
	 */
	smp_mb();
	if (luw_target_watched(task_tgid(p)))
		luw_reap_soon();
}

/*
 * sched_process_exit, each thread's: the group is gone with the last.
 * Each thread's last switch record too: its events go before its last
 * switch out (perf_event_exit_task), which they would not see.
 */
static void luw_exit_probe(void *data, struct task_struct *p)
{
	luw_targets_thread_exit(p);
	if (!atomic_read(&p->signal->live))
		luw_notice(p);
}

/* The same for kernels whose tracepoint passes group_dead as well. */
static void luw_exit_probe_gd(void *data, struct task_struct *p,
			      bool group_dead)
{
	luw_exit_probe(data, p);
}

static void luw_exec_probe(void *data, struct task_struct *p, pid_t old_pid,
			   struct linux_binprm *bprm)
{
	luw_notice(p);
}

/* The probe of the tracepoint's own prototype, as its header declares it. */
#define LUW_PROBE_IS(tp, ...)						\
	__builtin_types_compatible_p(typeof(&register_trace_##tp),	\
				     int (*)(void (*)(void *, __VA_ARGS__), \
					     void *))

static struct luw_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
} luw_tps[] = {
	{
		.name = "sched_process_exit",
		.probe = __builtin_choose_expr(
			LUW_PROBE_IS(sched_process_exit, struct task_struct *,
				     bool),
			luw_exit_probe_gd, luw_exit_probe),
	},
	{ .name = "sched_process_exec", .probe = luw_exec_probe },
};

static void luw_tp_find(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(luw_tps); i++)
		if (!strcmp(tp->name, luw_tps[i].name))
			luw_tps[i].tp = tp;
}

static void luw_tps_unregister(unsigned int n)
{
	while (n--)
		tracepoint_probe_unregister(luw_tps[n].tp, luw_tps[n].probe,
					    NULL);
	/* No probe runs any more: none can wake the reaper. */
	tracepoint_synchronize_unregister();
}

int luw_reap_init(void)
{
	unsigned int i;
	int err = 0;

	BUILD_BUG_ON(!LUW_PROBE_IS(sched_process_exit, struct task_struct *) &&
		     !LUW_PROBE_IS(sched_process_exit, struct task_struct *,
				   bool));
	BUILD_BUG_ON(!LUW_PROBE_IS(sched_process_exec, struct task_struct *,
				   pid_t, struct linux_binprm *));
	for_each_kernel_tracepoint(luw_tp_find, NULL);
	for (i = 0; i < ARRAY_SIZE(luw_tps) && !err; i++) {
		if (!luw_tps[i].tp) {
			pr_err("luaunwind: no %s tracepoint\n", luw_tps[i].name);
			err = -ENOENT;
			break;
		}
		err = tracepoint_probe_register(luw_tps[i].tp,
						luw_tps[i].probe, NULL);
		if (err)
			break;
	}
	if (err)
		luw_tps_unregister(i);
	return err;
}


/*
 * Unload (no file is open: no new target can come) or a failed load:
 * the probes go, then the reaper, which they wake and which re-arms
 * itself only while not unloading.
 */
void luw_reap_exit(void)
{
	luw_tps_unregister(ARRAY_SIZE(luw_tps));
	mutex_lock(&luw_lock);
	luw_unloading = true;
	mutex_unlock(&luw_lock);
	cancel_delayed_work_sync(&luw_reaper);
}
