/*
 * ptrace: seize, interrupt, read registers, let go.  See proc/ptrace.h.
 */
#include "proc/ptrace.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int luw_ptrace_seize(pid_t tid)
{
	return ptrace(PTRACE_SEIZE, tid, 0, 0) ? -1 : 0;
}

int luw_ptrace_stop(pid_t tid)
{
	int st;

	/* __WALL: a thread other than the leader is a clone child. */
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) ||
	    waitpid(tid, &st, __WALL) != tid)
		return -1;
	if (!WIFSTOPPED(st)) {
		errno = ESRCH;
		return LUW_PTRACE_GONE;
	}
	return (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
}

int luw_ptrace_getregs(pid_t tid, struct user_regs_struct *u)
{
	return ptrace(PTRACE_GETREGS, tid, 0, u) ? -1 : 0;
}

int luw_ptrace_cont(pid_t tid, int sig)
{
	return ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)sig) ? -1 : 0;
}

int luw_ptrace_detach(pid_t tid, int sig)
{
	return ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)sig) ? -1 : 0;
}

void luw_ptrace_release(pid_t tid)
{
	int st;

	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0)
		waitpid(tid, &st, __WALL);
	luw_ptrace_detach(tid, 0);
}

int luw_ptrace_threads(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while (n < max && (d = readdir(dir)))
		if (d->d_name[0] != '.')
			tids[n++] = (pid_t)strtol(d->d_name, NULL, 10);
	closedir(dir);
	return n;
}
