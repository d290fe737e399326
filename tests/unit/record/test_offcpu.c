/*
 * record/offcpu.c on hand-built switch records: every rule of its header
 * and of include/luaunwind.h's "switch" -- the time off the CPU between a
 * thread's records (wall time less the CPU time it ran), how it left
 * (the counter that moved; the state for a first record), a gap of
 * unrecorded switches, the stop reading closing the last interval,
 * records after it, an exit record, a thread with no end, pairs that do
 * not hold together, records out of order and of several threads.
 */
#include <stdio.h>
#include <string.h>

#include "luaunwind.h"
#include "record/offcpu.h"
#include "testlib.h"

#define MS 1000000ULL

struct got {
	unsigned int n;
	uint32_t tid[16];
	uint64_t time[16], off[16], run[16], end[16];
	int kind[16], closed[16];
};

static int take(void *ctx, const struct luw_offcpu_iv *iv)
{
	struct got *g = ctx;

	if (g->n < 16) {
		g->tid[g->n] = iv->from->tid;
		g->time[g->n] = iv->from->time;
		g->off[g->n] = iv->off;
		g->run[g->n] = iv->run;
		g->end[g->n] = iv->end_time;
		g->kind[g->n] = iv->kind;
		g->closed[g->n] = iv->to != NULL;
	}
	g->n++;
	return 0;
}

static struct luw_switch_ev ev(uint32_t tid, uint64_t time_ms,
			       uint64_t runtime_ms, uint64_t nv, uint64_t niv,
			       uint8_t state)
{
	struct luw_switch_ev e;

	memset(&e, 0, sizeof(e));
	e.pid = 100;
	e.tid = tid;
	e.time = time_ms * MS;
	e.runtime = runtime_ms * MS;
	e.nvcsw = nv;
	e.nivcsw = niv;
	e.state = state;
	e.syscall = -1;
	return e;
}

int main(void)
{
	struct luw_offcpu_count c;
	struct got g;

	/*
	 * One thread, out of order: it blocks at 10 ms (ran 4 ms so far),
	 * runs 5 ms more and is preempted at 40 ms, runs 2 ms and blocks
	 * at 60 ms; the stop reading at 100 ms finds 3 ms more run.
	 */
	{
		struct luw_switch_ev v[] = {
			ev(7, 40, 9, 1, 1, LUW_SWITCH_PREEMPTED),
			ev(7, 10, 4, 1, 0, LUW_SWITCH_BLOCKED),
			ev(7, 60, 11, 2, 1, LUW_SWITCH_BLOCKED),
		};
		struct luw_thread_end e = { 100, 7, 100 * MS, 14 * MS };

		memset(&g, 0, sizeof(g));
		CHECK(!luw_offcpu_pair(v, 3, &e, 1, take, &g, &c), "pair");
		CHECK(g.n == 3 && c.intervals == 3, "3 intervals, got %u", g.n);
		CHECK(g.time[0] == 10 * MS && g.off[0] == 25 * MS &&
		      g.kind[0] == LUW_OFF_BLOCKED,
		      "first: 30 ms less 5 run, blocked: %llu %d",
		      (unsigned long long)g.off[0], g.kind[0]);
		CHECK(g.off[1] == 18 * MS && g.kind[1] == LUW_OFF_PREEMPTED,
		      "second: 20 ms less 2, preempted (nivcsw moved): %llu %d",
		      (unsigned long long)g.off[1], g.kind[1]);
		CHECK(g.off[2] == 37 * MS && g.kind[2] == LUW_OFF_BLOCKED,
		      "last, closed by the stop: 40 ms less 3: %llu %d",
		      (unsigned long long)g.off[2], g.kind[2]);
		CHECK(g.run[0] == 5 * MS && g.end[0] == 40 * MS && g.closed[0] &&
		      g.run[1] == 2 * MS && g.end[1] == 60 * MS &&
		      g.run[2] == 3 * MS && g.end[2] == 100 * MS && !g.closed[2],
		      "runs and their ends: %llu@%llu %llu@%llu %llu@%llu",
		      (unsigned long long)g.run[0], (unsigned long long)g.end[0],
		      (unsigned long long)g.run[1], (unsigned long long)g.end[1],
		      (unsigned long long)g.run[2], (unsigned long long)g.end[2]);
		CHECK(c.run_ns == 10 * MS, "run %llu", (unsigned long long)c.run_ns);
	}
	/*
	 * The counters decide over the state: a first record takes its
	 * state; a later one whose nivcsw moved is preempted whatever its
	 * state says (preempted while it prepared to wait).
	 */
	{
		struct luw_switch_ev v[] = {
			ev(7, 10, 1, 0, 1, LUW_SWITCH_PREEMPTED),
			ev(7, 20, 2, 0, 2, LUW_SWITCH_BLOCKED),
			ev(7, 30, 3, 1, 2, LUW_SWITCH_BLOCKED),
		};

		memset(&g, 0, sizeof(g));
		luw_offcpu_pair(v, 3, NULL, 0, take, &g, &c);
		CHECK(g.n == 2 && c.open == 1, "no stop reading: last left out");
		CHECK(g.kind[0] == LUW_OFF_PREEMPTED && g.kind[1] == LUW_OFF_PREEMPTED,
		      "kinds %d %d", g.kind[0], g.kind[1]);
	}
	/* Switches not recorded between two records: time, no stack. */
	{
		struct luw_switch_ev v[] = {
			ev(7, 10, 1, 1, 0, LUW_SWITCH_BLOCKED),
			ev(7, 50, 6, 4, 0, LUW_SWITCH_BLOCKED),
		};

		memset(&g, 0, sizeof(g));
		luw_offcpu_pair(v, 2, NULL, 0, take, &g, &c);
		CHECK(g.n == 1 && g.kind[0] == LUW_OFF_UNKNOWN &&
		      g.off[0] == 35 * MS, "gap: %u %d", g.n, g.kind[0]);
	}
	/*
	 * An exit record closes the last interval and opens none; records
	 * after a thread's stop reading are outside; two threads apart.
	 */
	{
		struct luw_switch_ev v[] = {
			ev(8, 10, 1, 1, 0, LUW_SWITCH_BLOCKED),
			ev(7, 10, 1, 1, 0, LUW_SWITCH_BLOCKED),
			ev(8, 30, 2, 1, 0, LUW_SWITCH_EXIT),
			ev(7, 20, 2, 2, 0, LUW_SWITCH_BLOCKED),
			ev(7, 90, 3, 3, 0, LUW_SWITCH_BLOCKED),
		};
		struct luw_thread_end e = { 100, 7, 50 * MS, 3 * MS };

		memset(&g, 0, sizeof(g));
		luw_offcpu_pair(v, 5, &e, 1, take, &g, &c);
		CHECK(g.n == 3 && c.late == 1 && c.open == 0,
		      "n %u late %llu open %llu", g.n,
		      (unsigned long long)c.late, (unsigned long long)c.open);
		CHECK(g.tid[0] == 7 && g.off[0] == 9 * MS && g.tid[1] == 7 &&
		      g.off[1] == 29 * MS && g.tid[2] == 8 && g.off[2] == 19 * MS,
		      "intervals %u/%llu %u/%llu %u/%llu", g.tid[0],
		      (unsigned long long)g.off[0], g.tid[1],
		      (unsigned long long)g.off[1], g.tid[2],
		      (unsigned long long)g.off[2]);
	}
	/*
	 * An exit record is no switch: a switch missed before it shows as
	 * a count that moved; switches of a thread on its way out (records
	 * without frames, a count each) close their intervals as any.
	 */
	{
		struct luw_switch_ev v[] = {
			ev(7, 10, 1, 1, 0, LUW_SWITCH_BLOCKED),
			ev(7, 30, 2, 2, 0, LUW_SWITCH_EXIT),
			ev(8, 10, 1, 1, 0, LUW_SWITCH_BLOCKED),
			ev(8, 20, 2, 2, 0, LUW_SWITCH_BLOCKED),
			ev(8, 25, 3, 2, 0, LUW_SWITCH_EXIT),
		};

		memset(&g, 0, sizeof(g));
		luw_offcpu_pair(v, 5, NULL, 0, take, &g, &c);
		CHECK(g.n == 3 && g.kind[0] == LUW_OFF_UNKNOWN &&
		      g.kind[1] == LUW_OFF_BLOCKED && g.kind[2] == LUW_OFF_BLOCKED &&
		      c.open == 0,
		      "exit records: n %u kinds %d %d %d open %llu", g.n,
		      g.kind[0], g.kind[1], g.kind[2], (unsigned long long)c.open);
	}
	/*
	 * A switch after the exit record (preempted on the way out, before
	 * the events go) is past the thread's end, not an open interval.
	 */
	{
		struct luw_switch_ev v[] = {
			ev(7, 10, 1, 1, 0, LUW_SWITCH_BLOCKED),
			ev(7, 30, 2, 2, 0, LUW_SWITCH_EXIT),
			ev(7, 31, 3, 2, 1, LUW_SWITCH_PREEMPTED),
		};

		memset(&g, 0, sizeof(g));
		luw_offcpu_pair(v, 3, NULL, 0, take, &g, &c);
		CHECK(g.n == 1 && c.open == 0 && c.late == 1 &&
		      g.off[0] == 19 * MS,
		      "after exit: n %u open %llu late %llu", g.n,
		      (unsigned long long)c.open, (unsigned long long)c.late);
	}
	/*
	 * Pairs that do not hold together are left out: a runtime that went
	 * back, or grew by more than the time between (beyond the 10 ms the
	 * two clocks may disagree by); within that, off is 0.
	 */
	{
		struct luw_switch_ev v[] = {
			ev(7, 10, 5, 1, 0, LUW_SWITCH_BLOCKED),
			ev(7, 20, 4, 2, 0, LUW_SWITCH_BLOCKED),
			ev(7, 30, 30, 3, 0, LUW_SWITCH_BLOCKED),
			ev(7, 40, 45, 4, 0, LUW_SWITCH_BLOCKED),
		};

		memset(&g, 0, sizeof(g));
		luw_offcpu_pair(v, 4, NULL, 0, take, &g, &c);
		CHECK(c.bad == 2 && g.n == 1 && g.off[0] == 0,
		      "bad %llu n %u", (unsigned long long)c.bad, g.n);
	}
	if (luw_test_status("test_offcpu"))
		return 1;
	printf("test_offcpu: ok\n");
	return 0;
}
