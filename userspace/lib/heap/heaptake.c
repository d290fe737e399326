/*
 * heaptake: stop, walk, let go.  See heap/heaptake.h.
 */
#include "heap/heaptake.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/mem.h"
#include "proc/procinfo.h"
#include "proc/ptrace.h"
#include "target/layout.h"
#include "util/fail.h"

#define MAX_THREADS 4096

struct stopped {
	pid_t tid[MAX_THREADS];
	int sig[MAX_THREADS];
	int n;
};

static uint64_t now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int known(const struct stopped *st, pid_t tid)
{
	for (int i = 0; i < st->n; i++)
		if (st->tid[i] == tid)
			return 1;
	return 0;
}

static void release(struct stopped *st)
{
	for (int i = 0; i < st->n; i++)
		luw_ptrace_detach(st->tid[i], st->sig[i]);
	st->n = 0;
}

/*
 * Every thread of pid stopped: listed again until a pass finds no new
 * one, since a running thread may start others.  0, or -1 (all released).
 */
static int stop_all(pid_t pid, struct stopped *st, char *why, size_t n)
{
	pid_t tids[MAX_THREADS];
	int found, fresh;

	do {
		found = luw_ptrace_threads(pid, tids, MAX_THREADS);
		if (found <= 0) {
			release(st);
			return luw_fail(why, n, "process %d: no threads to stop",
					(int)pid);
		}
		fresh = 0;
		for (int i = 0; i < found; i++) {
			int sig;

			if (known(st, tids[i]))
				continue;
			if (st->n == MAX_THREADS) {
				release(st);
				return luw_fail(why, n, "more than %d threads",
						MAX_THREADS);
			}
			if (luw_ptrace_seize(tids[i]))
				continue;	/* exited meanwhile */
			sig = luw_ptrace_stop(tids[i]);
			if (sig == LUW_PTRACE_GONE)
				continue;
			if (sig < 0) {
				luw_ptrace_release(tids[i]);
				release(st);
				return luw_fail(why, n, "cannot stop thread %d: %s",
						(int)tids[i], strerror(errno));
			}
			st->tid[st->n] = tids[i];
			st->sig[st->n++] = sig;
			fresh = 1;
		}
	} while (fresh);
	return 0;
}

/*
 * 1 when pid has exited: a zombie not yet reaped, or a process whose
 * memory is already gone (process_vm_readv's ESRCH) while it dies.
 */
static int gone(pid_t pid, uint64_t any)
{
	struct luw_procinfo_stat st;
	uint8_t b;

	if (luw_mem_read(pid, any, &b, 1) && errno == ESRCH)
		return 1;
	if (luw_procinfo_stat(pid, &st))
		return 1;
	return st.state == 'Z' || st.state == 'X';
}

static void meta(struct luw_heapsnap *s, pid_t pid,
		 const struct luw_layout_target *t)
{
	char buf[4096];

	s->pid = (uint32_t)pid;
	luw_procinfo_comm(pid, buf, sizeof(buf));
	luw_heapsnap_meta(s, &s->comm, buf);
	luw_procinfo_exe(pid, buf, sizeof(buf));
	luw_heapsnap_meta(s, &s->exe, buf);
	luw_heapsnap_meta(s, &s->build_id, t->build_id);
	luw_heapsnap_meta(s, &s->ljkind, t->kind);
	luw_heapsnap_meta(s, &s->layout, t->layout_name);
}

int luw_heaptake_run(pid_t pid, const struct luw_heapwalk_opts *opts,
		     struct luw_heapsnap *s, char *why, size_t n)
{
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	struct stopped *st = calloc(1, sizeof(*st));
	uint64_t t0, t1, t2;
	int rc = -1;

	if (luw_heapsnap_init(s) || !t || !st) {
		luw_fail(why, n, "out of memory");
		goto out;
	}
	if (luw_layout_attach(pid, t, why, n))
		goto out;
	meta(s, pid, t);
	s->flags = opts->live ? LUWH_MF_LIVE : 0;
	s->time_ns = now(CLOCK_REALTIME);
	t0 = now(CLOCK_MONOTONIC);
	if (!opts->live && stop_all(pid, st, why, n))
		goto out;
	t1 = now(CLOCK_MONOTONIC);
	if (opts->progress) {
		fprintf(opts->progress, "luaunwind-ctl: %s-%d: %s, %d universe%s; "
			"walking%s\n", s->comm, (int)pid, t->layout_name,
			t->nstates, t->nstates == 1 ? "" : "s",
			opts->live ? " live" : "");
		fflush(opts->progress);
	}
	rc = luw_heapwalk_run(t, opts, s, why, n);
	t2 = now(CLOCK_MONOTONIC);
	if (rc && gone(pid, t->states[0]))
		luw_fail(why, n, "process %d exited during the walk", (int)pid);
	release(st);
	if (!opts->live)
		s->pause_ns = now(CLOCK_MONOTONIC) - t0;
	s->walk_ns = t2 - t1;
	if (!rc && s->oom)
		rc = luw_fail(why, n, "out of memory");
out:
	free(st);
	free(t);
	return rc;
}
