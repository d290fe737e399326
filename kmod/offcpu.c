// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU: a switch record each time a thread of a target leaves its CPU.
 *
 * The hook is perf's own: a per-thread software event counting context
 * switches, period 1, inherited by new threads as the sampling events are
 * (target.c).  perf raises it from the scheduler as the thread switches
 * out, still current, before its events are scheduled out; so the handler
 * sees exactly the target's threads, costs nothing to other processes,
 * and needs no tracepoint of the scheduler's.  It runs with the runqueue
 * locked and interrupts off: the same constraints as the sampling handler
 * (no locks, no sleeping, user memory through the nofault helpers), which
 * the walk already meets.
 *
 * The module keeps no state per thread: the record carries the thread's
 * CPU time and switch counts at this switch, and the reader pairs a
 * thread's consecutive records into the time it spent off the CPU
 * (luaunwind.h, "switch").  perf throttles a software event that fires
 * too often per tick, like any other; the counts let the reader see the
 * switches it missed instead of misplacing their time.
 */
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <asm/syscall.h>

#include "luw.h"

/* What a switch record of p carries besides its stack. */
static void luw_switch_fill(struct luw_switch_tail *tail,
			    struct task_struct *p, int syscall, u8 state)
{
	memset(tail, 0, sizeof(*tail));
	tail->runtime = p->se.sum_exec_runtime;
	tail->nvcsw = p->nvcsw;
	tail->nivcsw = p->nivcsw;
	tail->syscall = syscall;
	tail->state = state;
}

/*
 * The exit of current, a thread of t (target.c, from the exit probe): a
 * switch record with no frames, LUW_SWITCH_EXIT, that closes its last
 * interval.  Its events are released before its last switch out, so the
 * handler below never sees that one.  Its runtime is the scheduler's
 * last update of it: the slice it is running now is not in it (at most a
 * tick, which the reader then counts as off the CPU): the exact figure
 * (task_sched_runtime) is not exported to modules.
 */
void luw_switch_exit(struct luw_proc *t)
{
	struct task_struct *p = current;
	struct luw_switch_tail tail;

	if (READ_ONCE(t->dying) || !READ_ONCE(t->running))
		return;
	luw_switch_fill(&tail, p, -1, LUW_SWITCH_EXIT);
	preempt_disable();
	luw_sample_emit(t, NULL, this_cpu_ptr(t->stats), LUW_REC_SWITCH, &tail,
			sizeof(tail), false);
	preempt_enable();
}

void luw_switch_out(struct perf_event *event, struct perf_sample_data *data,
		    struct pt_regs *regs)
{
	struct luw_proc *t = event->overflow_handler_context;
	struct task_struct *p = current;
	struct luw_switch_tail tail;
	struct luw_tstats *st;
	bool walk = true;
	u64 t0;

	if (READ_ONCE(t->dying))
		return;
	if (task_tgid(p) != t->pid || !READ_ONCE(t->running))
		return;
	if (p->flags & PF_EXITING) {
		/*
		 * A switch on its way out, the program's memory possibly
		 * gone (exit_mm): the switch without frames.
		 */
		walk = false;
	} else if (p->mm != t->mm || (p->flags & PF_KTHREAD) ||
		   luw_unwalkable(p)) {
		return;
	}
	/* The handler's time on perf's clock, as luw_overflow's. */
	t0 = local_clock();
	st = this_cpu_ptr(t->stats);
	st->switch_calls++;
	luw_switch_fill(&tail, p,
			walk ? syscall_get_nr(p, task_pt_regs(p)) : -1,
			luw_task_running(p) ? LUW_SWITCH_PREEMPTED :
					      LUW_SWITCH_BLOCKED);
	luw_sample_emit(t, regs, st, LUW_REC_SWITCH, &tail, sizeof(tail), walk);
	st->switch_ns += local_clock() - t0;
}
