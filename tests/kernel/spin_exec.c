/*
 * Test target for exec and access checks:
 *   spin_exec GOFILE [--nodump] [--idle] [PROG ARG...]
 * burns the CPU in this process while GOFILE exists, then execs PROG (or
 * exits).
 * --nodump first makes the process non-dumpable, as ssh-agent and
 * gpg-agent do (prctl PR_SET_DUMPABLE 0), which ptrace read access
 * refuses to anyone without CAP_SYS_PTRACE.
 * --idle sleeps instead of burning: an access check needs no running
 * target, and burners slow a two-CPU guest's every other process down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const struct timespec nap = { 0, 20 * 1000 * 1000 };
	volatile unsigned long x = 0;
	int i = 2, idle = 0;

	if (argc < 2)
		return 2;
	if (i < argc && !strcmp(argv[i], "--nodump")) {
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			return 1;
		i++;
	}
	if (i < argc && !strcmp(argv[i], "--idle")) {
		idle = 1;
		i++;
	}
	do {
		if (idle)
			nanosleep(&nap, NULL);
		else
			for (int k = 0; k < 1000000; k++)
				x++;
	} while (access(argv[1], F_OK) == 0);
	if (i >= argc)
		return 0;
	execv(argv[i], argv + i);
	perror(argv[i]);
	return 1;
}
