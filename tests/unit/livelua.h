/*
 * Test helper: a live LuaJIT target for the unit tests that read one.
 * livelua_start runs PROG SCRIPT with its stdout on a pipe, reads lines
 * "KEY 0xADDR" until "ready" and stores the address of each of the nkeys
 * keys in fn; the pid, or -1 (the child killed) unless every key came.
 * livelua_proto_of gives the GCproto of the Lua function at fn, 0 if
 * unreadable.
 */
#ifndef LUW_TEST_LIVELUA_H
#define LUW_TEST_LIVELUA_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ljlayout.h"
#include "procmem.h"

static pid_t livelua_start(const char *prog, const char *script,
			   const char *const *keys, int nkeys, uint64_t *fn)
{
	int p[2];
	pid_t pid;
	FILE *f;
	char line[256];
	int got = 0;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		alarm(60);
		execlp(prog, prog, script, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char k[64];
		unsigned long long a;

		if (!strncmp(line, "ready", 5))
			break;
		if (sscanf(line, "%63s 0x%llx", k, &a) != 2)
			continue;
		for (int i = 0; i < nkeys; i++)
			if (!strcmp(k, keys[i])) {
				fn[i] = a;
				got++;
			}
	}
	if (f)
		fclose(f);
	if (got != nkeys) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static uint64_t livelua_proto_of(pid_t pid, const struct luw_lj_layout *ly,
			 uint64_t fn)
{
	uint64_t pc = 0;

	if (luw_pmem_ref(pid, fn + ly->fn_pc,
			 ly->flags & LUW_LJ_F_GC64 ? 8 : 4, &pc))
		return 0;
	return pc ? pc - ly->pt_size : 0;
}

#endif
