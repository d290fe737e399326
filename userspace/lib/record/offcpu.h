/*
 * offcpu: a recording's switch records (include/luaunwind.h, "switch")
 * paired into the intervals each thread spent off its CPU.
 *
 * A thread's records, in time order, cut its life into intervals: from
 * one switch out to the next it was off the CPU for the wall time between
 * them less the CPU time it ran meanwhile (the runtimes' difference).
 * Each interval is the first record's: its stack, and how the thread left
 * (blocked or preempted: the switch counter that moved at that record,
 * or for a thread's first record the state the module read).  A thread's
 * last interval ends at its exit record, or at the reading of the
 * recording's stop (threadend, include/luaunwind_file.h); without either
 * it is left out (the thread ended unseen).  An interval across which the
 * counters moved by more than one switch had switches that were not
 * recorded: its time is known, its stack is not (LUW_OFF_UNKNOWN).
 */
#ifndef LUW_RECORD_OFFCPU_H
#define LUW_RECORD_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

/* One switch record as the pairing needs it; rec, size: the record
 * itself, for the caller. */
struct luw_switch_ev {
	uint32_t pid, tid;
	uint64_t time, runtime, nvcsw, nivcsw;
	int32_t syscall;
	uint8_t state;		/* LUW_SWITCH_* */
	const void *rec;
	size_t size;
};

/*
 * qsort's order of luw_switch_ev (or of any struct that starts with
 * one): by pid, tid, then time.
 */
int luw_offcpu_cmp(const void *a, const void *b);

/* Where a live thread stood at the recording's stop. */
struct luw_thread_end {
	uint32_t pid, tid;
	uint64_t time, runtime;
};

#define LUW_OFF_BLOCKED		1
#define LUW_OFF_PREEMPTED	2
#define LUW_OFF_UNKNOWN		3	/* switches went unrecorded */

struct luw_offcpu_count {
	uint64_t intervals;	/* handed to the callback */
	uint64_t open;		/* last intervals with no end: left out */
	uint64_t bad;		/* inconsistent pairs (runtime went back, or
				 * grew 10 ms more than the time): left out */
	/* records after their thread's stop reading or its exit record */
	uint64_t late;
	/* CPU time the threads ran over the intervals handed over (the
	 * runtimes' differences: the scheduler's count, exact). */
	uint64_t run_ns;
};

/*
 * One interval, from one switch out to the next: off the CPU first (off
 * ns, how: kind), then running (run ns, in one stretch that ends at
 * end_time: between two switches out a thread is switched in once).  to:
 * the record that closes it, NULL for the stop reading.
 */
struct luw_offcpu_iv {
	const struct luw_switch_ev *from, *to;
	uint64_t off, run, end_time;
	int kind;		/* LUW_OFF_* */
};

/*
 * Sorts v (n records) and calls fn for every interval.  ends: the stop
 * readings (nends), any order.  fn returning nonzero stops the walk with
 * that value; else 0.
 */
int luw_offcpu_pair(struct luw_switch_ev *v, size_t n,
		    const struct luw_thread_end *ends, size_t nends,
		    int (*fn)(void *ctx, const struct luw_offcpu_iv *iv),
		    void *ctx, struct luw_offcpu_count *c);

#endif
