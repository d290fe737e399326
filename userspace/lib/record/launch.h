/*
 * launch: `record -- CMD ARGS`, a program started under the profiler (as
 * perf record -- CMD and py-spy record -- CMD start theirs), attached
 * before its first Lua instruction.
 *
 *   1. fork; the child stops itself and execs CMD; the parent seizes it
 *      (PTRACE_SEIZE with TRACEEXEC and TRACECLONE: the threads it makes
 *      are traced too; EXITKILL: if the profiler dies before letting it
 *      go, a breakpoint left in it cannot kill it later, it dies now);
 *   2. at the exec, a breakpoint at the program's entry (AT_ENTRY), where
 *      the dynamic linker has mapped every library the program links;
 *   3. there, the object that holds LuaJIT's interpreter
 *      (target/discover.h) and the entries into the VM it exports --
 *      lua_call, lua_pcall, lua_cpcall, lua_resume: no Lua runs but
 *      through one of them -- get a breakpoint each;
 *   4. the first thread to reach one stops there, so do the others, the
 *      breakpoints are taken out, and luw_launch_start returns: the
 *      process has a lua_State and has run no Lua.  The caller attaches
 *      it, then luw_launch_release lets every thread go.
 *
 * An image without LuaJIT at its entry (a shell script that execs its
 * interpreter, a host that dlopens LuaJIT later, as nginx its Lua module)
 * runs on, traced, until an exec (back to step 2) or a mapping of LuaJIT
 * (looked for every 10 ms: step 3 there, the process stopped first).
 * A LuaJIT that exports none of the entries (a static, stripped host) is
 * stopped where it was found (at_lua 0): the caller lets it go and
 * attaches it as soon as attach succeeds, and its first Lua may be
 * missed.
 */
#ifndef LUW_RECORD_LAUNCH_H
#define LUW_RECORD_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

#define LUW_LAUNCH_MAX_THREADS	256

struct luw_launch {
	pid_t pid;
	int at_lua;		/* 1: stopped at its first entry into the VM */
	char entry[32];		/* which one ("lua_pcall"), "" at the entry */
	pid_t tids[LUW_LAUNCH_MAX_THREADS];	/* traced, all stopped */
	int sig[LUW_LAUNCH_MAX_THREADS];	/* the signal each stopped
						 * with, delivered at release */
	int ntids;
};

/*
 * Steps 1-4 for argv (argv[0] searched in PATH).  0 with every thread of
 * l->pid stopped; -1 with a message in err (the program could not be
 * started, or exited first: then it is reaped, and err says how it
 * ended).
 */
int luw_launch_start(char *const argv[], struct luw_launch *l, char *err,
		     size_t n);

/* Lets every thread of l go, untraced. */
void luw_launch_release(struct luw_launch *l);

#endif
