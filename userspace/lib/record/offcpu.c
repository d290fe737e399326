#include "record/offcpu.h"

#include <stdlib.h>
#include <string.h>

#include "luaunwind.h"

int luw_offcpu_cmp(const void *a, const void *b)
{
	const struct luw_switch_ev *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return 0;
}

static const struct luw_thread_end *end_of(const struct luw_thread_end *ends,
					   size_t nends, uint32_t pid,
					   uint32_t tid)
{
	for (size_t i = 0; i < nends; i++)
		if (ends[i].pid == pid && ends[i].tid == tid)
			return &ends[i];
	return NULL;
}

/* How the thread left its CPU at v[k] (v[k - 1] its previous record, when
 * k > first). */
static int left_by(const struct luw_switch_ev *v, size_t k, size_t first)
{
	const struct luw_switch_ev *a = &v[k], *p = &v[k - (k > first)];

	if (k > first && a->nvcsw + a->nivcsw == p->nvcsw + p->nivcsw + 1)
		return a->nvcsw > p->nvcsw ? LUW_OFF_BLOCKED : LUW_OFF_PREEMPTED;
	return a->state == LUW_SWITCH_PREEMPTED ? LUW_OFF_PREEMPTED :
						  LUW_OFF_BLOCKED;
}

/* Off-CPU time between a and the next point (time t, runtime rt), or -1
 * when the pair does not hold together; *run the CPU time between. */
static int64_t off_between(const struct luw_switch_ev *a, uint64_t t,
			   uint64_t rt, uint64_t *run)
{
	uint64_t dt, drt;

	if (t < a->time || rt < a->runtime)
		return -1;
	dt = t - a->time;
	drt = rt - a->runtime;
	/*
	 * Two clocks, CLOCK_MONOTONIC and the scheduler's: allow them 10 ms
	 * of disagreement, and no more.  A sched_clock without a stable TSC
	 * (a VM's) steps by jiffies: t_offcpu saw a runtime grow 18.2 ms
	 * over 9.8 ms in a TCG guest.
	 */
	if (drt > dt + 10000000)
		return -1;
	*run = drt;
	return drt >= dt ? 0 : (int64_t)(dt - drt);
}

int luw_offcpu_pair(struct luw_switch_ev *v, size_t n,
		    const struct luw_thread_end *ends, size_t nends,
		    int (*fn)(void *ctx, const struct luw_offcpu_iv *iv),
		    void *ctx, struct luw_offcpu_count *c)
{
	size_t i = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	if (n)
		qsort(v, n, sizeof(*v), luw_offcpu_cmp);
	while (i < n) {
		const struct luw_thread_end *e = end_of(ends, nends, v[i].pid,
							v[i].tid);
		size_t j = i, k;

		while (j + 1 < n && v[j + 1].pid == v[i].pid &&
		       v[j + 1].tid == v[i].tid)
			j++;
		/* Past the stop reading: outside the recording. */
		while (e && j > i && v[j].time > e->time) {
			c->late++;
			j--;
		}
		/*
		 * Past the exit record: a thread preempted on its way out,
		 * between the exit tracepoint and the release of its events
		 * (do_exit), switches after its end.
		 */
		for (k = i; k < j; k++) {
			if (v[k].state == LUW_SWITCH_EXIT) {
				c->late += j - k;
				j = k;
				break;
			}
		}
		for (k = i; k <= j; k++) {
			const struct luw_switch_ev *a = &v[k];
			struct luw_offcpu_iv iv = { .from = a };
			int64_t off;

			if (a->state == LUW_SWITCH_EXIT)
				continue;	/* nothing after it */
			if (k < j) {
				const struct luw_switch_ev *b = &v[k + 1];

				/* An exit record is no switch of its own. */
				uint64_t want = b->state == LUW_SWITCH_EXIT ? 0 : 1;

				off = off_between(a, b->time, b->runtime, &iv.run);
				iv.kind = b->nvcsw + b->nivcsw ==
					  a->nvcsw + a->nivcsw + want ?
					  left_by(v, k, i) : LUW_OFF_UNKNOWN;
				iv.to = b;
				iv.end_time = b->time;
			} else if (e && e->time >= a->time) {
				off = off_between(a, e->time, e->runtime, &iv.run);
				iv.kind = left_by(v, k, i);
				iv.end_time = e->time;
			} else {
				c->open++;
				continue;
			}
			if (off < 0) {
				c->bad++;
				continue;
			}
			c->intervals++;
			c->run_ns += iv.run;
			iv.off = (uint64_t)off;
			rc = fn(ctx, &iv);
			if (rc)
				return rc;
		}
		i = j + 1;
		while (i < n && i > 0 && v[i].pid == v[i - 1].pid &&
		       v[i].tid == v[i - 1].tid)
			i++;	/* the late ones */
	}
	return 0;
}
