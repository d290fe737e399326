/*
 * ptrace: stopping a thread of another process for a moment, the way the
 * probes (luaunwind-hostunwind, luaunwind-ljprobe) and the benchmark
 * (tests/bench/walkcost.c) take their samples: PTRACE_SEIZE, which does not
 * stop the thread nor change what its signals do, then PTRACE_INTERRUPT
 * for each stop.  A stop may be a signal's (one arrived before the
 * interrupt): that signal is the caller's to hand back when it lets the
 * thread go, or the thread never sees it.  Also the threads of a process
 * (/proc/PID/task), the ones there are to stop.
 *
 * Unless said otherwise a function returns 0 (or a count) on success and
 * -1 with errno set on failure; none prints anything.
 */
#ifndef LUW_PROC_PTRACE_H
#define LUW_PROC_PTRACE_H

#include <sys/types.h>
#include <sys/user.h>

/* What luw_ptrace_stop() returns when the thread exited or was killed. */
#define LUW_PTRACE_GONE (-2)

/* Trace tid without stopping it. */
int luw_ptrace_seize(pid_t tid);

/*
 * Stop the seized tid and wait for its stop.  Returns the signal the stop
 * holds (0: the interrupt's own stop); -1 when the interrupt or the wait
 * failed; LUW_PTRACE_GONE when the thread ended instead of stopping.
 */
int luw_ptrace_stop(pid_t tid);

/* The registers of the stopped tid. */
int luw_ptrace_getregs(pid_t tid, struct user_regs_struct *u);

/* Let the stopped tid run on, delivering sig (0: none). */
int luw_ptrace_cont(pid_t tid, int sig);

/* Stop tracing the stopped tid, delivering sig (0: none). */
int luw_ptrace_detach(pid_t tid, int sig);

/*
 * Stop tracing the seized tid, running or not: PTRACE_DETACH takes only a
 * stopped tracee, so a running one is stopped first.
 */
void luw_ptrace_release(pid_t tid);

/* Up to max thread ids of pid (/proc/PID/task) into tids; the count. */
int luw_ptrace_threads(pid_t pid, pid_t *tids, int max);

#endif
