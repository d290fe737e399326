/*
 * heaptake: a heap snapshot of process pid, as `luaunwind-ctl heap` takes
 * it: LuaJIT found and its layout proven as for attach (target/layout.h),
 * then, unless opts->live, every thread of the process stopped the way a
 * debugger stops them (PTRACE_SEIZE, PTRACE_INTERRUPT; a signal caught by
 * the stop is handed back at the release), the heap walked
 * (heap/heapwalk.h), every thread let go at once.  The pause, from the
 * first stop to the last release, is measured into the snapshot.
 *
 * The target is never left stopped: the threads are released on every
 * path out of here, and if this process dies meanwhile (SIGKILL
 * included) the kernel detaches its tracees and they run on, because an
 * interrupt stop is a ptrace stop, not a group stop.
 */
#ifndef LUW_HEAP_HEAPTAKE_H
#define LUW_HEAP_HEAPTAKE_H

#include <stddef.h>
#include <sys/types.h>

#include "heap/heapsnap.h"
#include "heap/heapwalk.h"

/* 0, or -1 with why; s is initialised here and the caller's to free. */
int luw_heaptake_run(pid_t pid, const struct luw_heapwalk_opts *opts,
		     struct luw_heapsnap *s, char *why, size_t n);

#endif
