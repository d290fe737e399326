/*
 * What the scheduler says of a live process's threads: the CPU time each
 * has run (/proc/PID/task/TID/schedstat's first field, or sched's
 * se.sum_exec_runtime: the sum_exec_runtime the module's switch records
 * carry), read with the
 * CLOCK_MONOTONIC time of the reading, so that a reader can close the
 * off-CPU interval a thread's last switch record opened.
 */
#ifndef LUW_PROC_SCHED_H
#define LUW_PROC_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct luw_thread_time {
	pid_t tid;
	uint64_t time;		/* CLOCK_MONOTONIC ns, just after the read */
	uint64_t runtime;	/* ns on a CPU since the thread began */
};

/*
 * The threads of pid alive now, into *v (malloc'd, *n of them; a thread
 * that ends while they are read is left out).  0; -1 with errno
 * (ENOENT: no such process).
 */
int luw_sched_thread_times(pid_t pid, struct luw_thread_time **v, size_t *n);

#endif
