/*
 * Test target for exec and access checks:
 *   spin_exec GOFILE [--nodump] [PROG ARG...]
 * burns the CPU in this process while GOFILE exists, then execs PROG (or
 * exits).
 * --nodump first makes the process non-dumpable, as ssh-agent and
 * gpg-agent do (prctl PR_SET_DUMPABLE 0), which ptrace read access
 * refuses to anyone without CAP_SYS_PTRACE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile unsigned long x = 0;
	int i = 2;

	if (argc < 2)
		return 2;
	if (argc > 2 && !strcmp(argv[2], "--nodump")) {
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			return 1;
		i++;
	}
	do {
		for (int k = 0; k < 1000000; k++)
			x++;
	} while (access(argv[1], F_OK) == 0);
	if (i >= argc)
		return 0;
	execv(argv[i], argv + i);
	perror(argv[i]);
	return 1;
}
