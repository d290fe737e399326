/*
 * record/launch.c on real programs, without the module: a program
 * started by luw_launch_start is stopped before its first Lua -- the
 * script's first statement, which creates a file, has not run -- at one
 * of the VM's entries, with all its threads stopped; released, it runs
 * to its end.  So for Debian's luajit, for tarantool (its LuaJIT linked
 * in), and for a host that starts two threads before its first Lua
 * (common/targets/threadsfirst.c): three threads stopped.  So too a
 * shell script that execs luajit (no LuaJIT at the shell's entry: traced
 * on to the exec) and a host that dlopens libluajit after 200 ms
 * (common/targets/lua_dlopen.c: traced on to the mapping).  A program
 * that does not exist is an error that says how it ended.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/procinfo.h"
#include "record/launch.h"
#include "testlib.h"

static char dir[4096];

/* Every thread of pid in a stop ('t' in /proc/PID/task/TID/stat). */
static int all_stopped(const struct luw_launch *l)
{
	for (int i = 0; i < l->ntids; i++) {
		char path[128], buf[512], *p;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat",
			 (int)l->pid, (int)l->tids[i]);
		f = fopen(path, "r");
		if (!f)
			return 0;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		p = p ? strrchr(buf, ')') : NULL;
		if (!p || p[2] != 't')
			return 0;
	}
	return l->ntids > 0;
}

static void one(const char *what, char *const argv[], const char *mark,
		int min_threads)
{
	struct luw_launch l;
	char err[512];
	struct stat sb;
	int st;

	unlink(mark);
	if (luw_launch_start(argv, &l, err, sizeof(err))) {
		CHECK(0, "%s: %s", what, err);
		return;
	}
	CHECK(l.at_lua && l.entry[0], "%s: not stopped at a VM entry", what);
	CHECK(stat(mark, &sb), "%s: its first Lua ran before the stop", what);
	CHECK(l.ntids >= min_threads, "%s: %d threads traced (want >= %d)",
	      what, l.ntids, min_threads);
	CHECK(all_stopped(&l), "%s: not every thread stopped", what);
	printf("%s: stopped at %s, %d threads\n", what, l.entry, l.ntids);
	luw_launch_release(&l);
	CHECK(waitpid(l.pid, &st, 0) == l.pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0, "%s: did not end well (0x%x)", what, st);
	CHECK(!stat(mark, &sb), "%s: its Lua did not run after release",
	      what);
}

int main(int argc, char **argv)
{
	char script[4200], mark[4200], sh[4200], err[512];
	struct luw_launch l;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: test_launch FIXTURES THREADSFIRST "
			"LUA_DLOPEN\n");
		return 2;
	}
	if (luw_test_tmpdir("test_launch", dir, sizeof(dir)))
		return 1;
	snprintf(script, sizeof(script), "%s/first.lua", dir);
	snprintf(mark, sizeof(mark), "%s/mark", dir);
	snprintf(sh, sizeof(sh), "%s/run.sh", dir);
	f = fopen(script, "w");
	if (f) {
		fprintf(f, "io.open(%s, 'w'):close()\n"
			"local s = 0 for i = 1, 1e6 do s = s + i %% 3 end\n"
			"os.exit(0)\n", "arg[1]");
		fclose(f);
	}
	f = fopen(sh, "w");
	if (f) {
		fprintf(f, "#!/bin/sh\nexec luajit \"$@\"\n");
		fclose(f);
		chmod(sh, 0755);
	}
	{
		char *a[] = { "luajit", script, mark, NULL };
		char *b[] = { "tarantool", script, mark, NULL };
		char *c[] = { sh, script, mark, NULL };
		char *d[] = { argv[2], script, mark, NULL };
		char *e[] = { argv[3], script, mark, NULL };

		one("luajit", a, mark, 1);
		one("tarantool", b, mark, 1);
		one("threadsfirst", d, mark, 3);
		one("a script", c, mark, 1);
		one("dlopen", e, mark, 1);
	}
	{
		char *a[] = { "/no/such/program", NULL };

		CHECK(luw_launch_start(a, &l, err, sizeof(err)) &&
		      strstr(err, "exit status 127") &&
		      strstr(err, "before it ran any Lua"),
		      "a program that is not there: '%s'", err);
	}
	luw_test_sh("rm -rf '%s'", dir);
	return luw_test_status("test_launch");
}
