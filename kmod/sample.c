// SPDX-License-Identifier: GPL-2.0
/*
 * The perf overflow handler: one record per sample of an attached target.
 *
 * It runs in hardirq context (cpu-clock: an hrtimer) or NMI (cycles), on
 * the sampled CPU, with whatever task was running there.  So: no locks, no
 * sleeping, no allocation; user memory only through the nofault helpers
 * (hostwalk.c); the record built in the ring, or in per-CPU scratch
 * when the ring has no room for it there; every loop bounded.
 */
#include <linux/log2.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "luw.h"

/*
 * Room for the largest record, per CPU, so the stack stays small: for the
 * samples the ring has no room to be built in (luw_ring_reserve()).
 */
struct luw_scratch {
	union {
		struct luw_sample hdr;
		u8 bytes[LUW_RECORD_MAX];
	};
};

static struct luw_scratch __percpu *luw_scratch;
static DEFINE_PER_CPU(int, luw_scratch_busy);

int luw_sample_init(void)
{
	luw_scratch = alloc_percpu(struct luw_scratch);
	if (!luw_scratch)
		return -ENOMEM;
	if (luw_mergewalk_init()) {
		free_percpu(luw_scratch);
		luw_scratch = NULL;
		return -ENOMEM;
	}
	return 0;
}

void luw_sample_exit(void)
{
	luw_mergewalk_exit();
	free_percpu(luw_scratch);
	luw_scratch = NULL;
}

static unsigned int luw_hist_bucket(u64 ns)
{
	unsigned int msb, b;

	if (ns < 8)
		return ns;
	msb = ilog2(ns);
	b = 8 + 4 * (msb - 3) + ((ns >> (msb - 2)) & 3);
	return min_t(unsigned int, b, LUW_HIST_BUCKETS - 1);
}

static void luw_fill_sample(struct luw_proc *t, struct pt_regs *regs,
			    struct luw_sample *s, struct luw_tstats *st,
			    u64 now)
{
	struct pid_namespace *ns = t->pid->numbers[t->ns_level].ns;
	u64 *pcs = (u64 *)(s + 1);
	struct luw_cost cost = { .max_reads = luw_sample_reads() };
	u8 rflags = 0;
	int n;

	if (!user_mode(regs)) {
		/* In a syscall or an interrupt: walk from the user entry. */
		regs = task_pt_regs(current);
		rflags |= LUW_RF_KERNEL;
	}
	memset(s, 0, sizeof(*s));
	s->type = LUW_REC_SAMPLE;
	s->flags = rflags;
	s->vmstate = LUW_VMST_UNKNOWN;
	luw_user_reads_begin(&cost, regs->sp);
	if (t->has_layout) {
		s->size = luw_merged_walk(t, regs, s, &cost);
		rflags = s->flags;
	} else {
		n = luw_host_walk(t, regs, pcs, t->max_host, &rflags, &cost);
		s->nhost = n;
		s->size = sizeof(*s) + n * sizeof(u64);
	}
	luw_user_reads_end(&cost);
	if (cost.faults)
		rflags |= LUW_RF_FAULT;
	s->flags = rflags;
	if (t->vmstate_only) {
		/* Walked for the vmstate alone, cut short on purpose. */
		rflags &= ~(LUW_RF_HOST_TRUNC | LUW_RF_LUA_TRUNC |
			    LUW_RF_HOST_TABLE);
		s->flags = rflags;
		s->nhost = 0;
		s->nlua = 0;
		s->nsplice = 0;
		s->size = sizeof(*s);
	}
	s->pid = t->vpid;
	s->tid = __task_pid_nr_ns(current, PIDTYPE_PID, ns);
	s->cpu = smp_processor_id();
	s->time = now;

	st->faults += cost.faults;
	st->reads += cost.reads;
	st->read_bytes += cost.bytes;
	st->reads_hist[luw_hist_bucket(cost.reads)]++;
	if (cost.cut)
		st->budget_cuts++;
	if (rflags & (LUW_RF_HOST_TRUNC | LUW_RF_LUA_TRUNC))
		st->truncated++;
}

/*
 * Threads of the target the walk cannot read as the 64-bit LuaJIT it was
 * attached for: 32-bit code (a compat task), and io_uring workers, whose
 * user registers are zero.
 */
bool luw_unwalkable(struct task_struct *task)
{
	if (luw_io_worker(task))
		return true;
	return !user_64bit_mode(task_pt_regs(task));
}

/*
 * One record of t taken at regs into t's session's ring on this CPU, and
 * counted in st: a sample (type LUW_REC_SAMPLE, no tail), or the sample's
 * body then len bytes of tail (LUW_REC_ALLOC, LUW_REC_SWITCH).  With walk
 * false, the header alone (a switch record of an exiting thread).  Called
 * with preemption off (the perf handlers, alloc.c's probe).  Nothing is
 * written when the ring is full (a drop) or when this CPU is inside a
 * walk already (skipped): an interrupt (a cpu-clock sample in an
 * allocation's walk) or an NMI (cycles) can land in one.
 */
void luw_sample_emit(struct luw_proc *t, struct pt_regs *regs,
		     struct luw_tstats *st, u8 type, const void *tail,
		     unsigned int len, bool walk)
{
	struct luw_sample *s;
	bool in_ring, ok = true;
	u8 *rec;
	int *busy;
	u64 now;

	/*
	 * The barriers keep the compiler from moving the scratch's use out
	 * of the section the count guards, as perf's recursion context does.
	 */
	busy = this_cpu_ptr(&luw_scratch_busy);
	if (++*busy > 1) {
		st->skipped++;
		goto out;
	}
	barrier();

	/* In the ring when it has the room, else in the scratch. */
	rec = luw_ring_reserve(t->sess);
	in_ring = rec;
	if (!in_ring)
		rec = this_cpu_ptr(luw_scratch)->bytes;
	s = (struct luw_sample *)rec;
	now = ktime_get_mono_fast_ns();
	if (walk) {
		luw_fill_sample(t, regs, s, st, now);
	} else {
		memset(s, 0, sizeof(*s));
		s->size = sizeof(*s);
		s->vmstate = LUW_VMST_UNKNOWN;
		s->pid = t->vpid;
		s->tid = __task_pid_nr_ns(current, PIDTYPE_PID,
					  t->pid->numbers[t->ns_level].ns);
		s->cpu = smp_processor_id();
		s->time = now;
	}
	s->type = type;
	if (len) {
		/* Through rec: the record, not its header, has room. */
		memcpy(rec + s->size, tail, len);
		s->size += len;
	}
	if (in_ring)
		luw_ring_commit(t->sess, s->size);
	else
		ok = luw_ring_write(t->sess, s, s->size, now);
	if (!ok) {
		st->drops++;
	} else if (type == LUW_REC_ALLOC) {
		st->alloc_samples++;
	} else if (type == LUW_REC_SWITCH) {
		st->switch_records++;
	} else {
		st->samples++;
		st->vmstate[s->vmstate]++;
	}
	barrier();
out:
	--*busy;
}

void luw_overflow(struct perf_event *event, struct perf_sample_data *data,
		  struct pt_regs *regs)
{
	struct luw_proc *t = event->overflow_handler_context;
	struct luw_tstats *st;
	u64 t0;

	if (READ_ONCE(t->dying))
		return;
	st = this_cpu_ptr(t->stats);
	st->interrupts++;
	/*
	 * The events are the target's threads' (and, before 5.13, those of
	 * processes it forked: a copy was inherited), and count only while
	 * they run the program attached: after an exec the mm differs (the
	 * reaper ends the target), and nothing of the new program is read.
	 * Both are stable while current runs.
	 */
	if (task_tgid(current) != t->pid || current->mm != t->mm ||
	    !READ_ONCE(t->running))
		return;

	/*
	 * The handler's own time on perf's clock (sched_clock, a TSC read);
	 * CLOCK_MONOTONIC only for the record, which promises it: with a
	 * clocksource like the HPET each read of it is a device access.
	 */
	t0 = local_clock();
	st->handler_calls++;

	if ((current->flags & (PF_EXITING | PF_KTHREAD)) || !current->mm ||
	    !regs || luw_unwalkable(current)) {
		st->skipped++;
		goto out;
	}
	luw_sample_emit(t, regs, st, LUW_REC_SAMPLE, NULL, 0, true);
out:
	t0 = local_clock() - t0;
	st->handler_ns += t0;
	st->hist[luw_hist_bucket(t0)]++;
}
