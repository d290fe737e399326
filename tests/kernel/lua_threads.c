/*
 * A C host with NTHREADS threads, each running its own lua_State (so its
 * own global_State): design section 6, shape 6.  Thread i loads a chunk
 * named "@thread<i>.lua" whose function work_<i mod 4> recurses
 * LUA_DEPTH + i mod 4 Lua frames deep, then calls the lua_CFunction
 * cleaf, which recurses C_DEPTH frames of c_rec and spins at the top;
 * the chunk repeats that forever.  Every thread's stack is known exactly:
 *   start_thread; thread_main; lua_pcall; @thread<i>.lua:0;
 *   work_<k> x (LUA_DEPTH + k); cleaf; c_rec x C_DEPTH
 * and no Lua frame of one thread can show up in another's sample.
 * Prints "thread I tid T" per thread, then "ready" once every thread runs
 * Lua; exits after SECONDS (default or 0: never).  "r14": c_rec spins
 * with r14 (the VM's DISPATCH register) zeroed.  "gc": the JIT stays on
 * and thread i runs gc_chunk instead (LUA_DEPTH and C_DEPTH unused): its
 * alloc_<i> (line 3 of @thread<i>.lua) loops allocating tables it keeps,
 * so the loop's trace calls the GC itself (lj_gc_step_jit) and a sample
 * in the GC reads: the GC's C code; the trace; alloc_<i>; the main chunk
 * @thread<i>.lua:0; lua_pcall; thread_main; start_thread.
 *   lua_threads NTHREADS LUA_DEPTH C_DEPTH [SECONDS [r14|gc]]
 * Built -O2 -fomit-frame-pointer: host frames come from unwind tables.
 * Threads get 512 KiB stacks: attach scans every writable anonymous
 * mapping for global_States, and 32 default 8 MiB stacks make that scan
 * take most of a minute under TCG.
 */
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int lua_depth, c_depth, clobber_r14, gc_mode;
static atomic_int running;
static volatile unsigned long sink;

/* Long enough that nearly every sample lands here, even under TCG. */
#define SPIN 200000

__attribute__((noinline)) static int c_rec(int n)
{
	if (n <= 1 && clobber_r14) {
		long cnt = SPIN;

		/*
		 * r14 is DISPATCH in LuaJIT's VM, and C code called from it
		 * usually leaves it alone: zero it while spinning, so the
		 * walk cannot take G from it.
		 */
		__asm__ volatile("xor %%r14d, %%r14d\n"
				 "1: dec %0\n"
				 "jnz 1b" : "+r"(cnt) : : "r14", "cc");
	} else if (n <= 1) {
		for (int i = 0; i < SPIN; i++)
			sink++;
	} else {
		c_rec(n - 1);
	}
	/* Keeps the call from becoming a jump. */
	return (int)sink + n;
}

static int cleaf(lua_State *L)
{
	lua_pushinteger(L, c_rec((int)luaL_checkinteger(L, 1)));
	return 1;
}

/*
 * Non-tail calls only, so every level keeps its frame; the first pass
 * signals the host that this thread runs Lua.
 */
static const char chunk_fmt[] =
	"local leaf, started, ldepth, cdepth = ...\n"
	"local function work_%d(n)\n"
	"  if n <= 1 then\n"
	"    local r = leaf(cdepth)\n"
	"    return r\n"
	"  end\n"
	"  local r = work_%d(n - 1)\n"
	"  return r\n"
	"end\n"
	"work_%d(ldepth)\n"
	"started()\n"
	"while true do work_%d(ldepth) end\n";

/*
 * t_lua_gcthreads' workload, t_lua_gcjit's gcjit.lua with names of its
 * own per thread: the last 64 tables stay referenced (allocation sinking
 * cannot remove them), so the trace allocates and steps the GC.
 */
static const char gc_chunk_fmt[] =
	"local started = ...\n"
	"local keep = {}\n"
	"local function alloc_%d(n)\n"
	"  for j = 1, n do keep[j %% 64 + 1] = { j, j + 1 } end\n"
	"end\n"
	"alloc_%d(100)\n"
	"started()\n"
	"while true do alloc_%d(100000) end\n";

static int started(lua_State *L)
{
	(void)L;
	atomic_fetch_add(&running, 1);
	return 0;
}

__attribute__((noinline)) static void *thread_main(void *arg)
{
	int i = (int)(long)arg, k = i % 4;
	char code[sizeof(chunk_fmt) + sizeof(gc_chunk_fmt) + 64], name[32];
	lua_State *L = luaL_newstate();

	if (!L) {
		fprintf(stderr, "thread %d: luaL_newstate failed\n", i);
		exit(1);
	}
	luaL_openlibs(L);
	/* The test asserts on interpreted frames; traces have their own test. */
	if (gc_mode) {
		snprintf(code, sizeof(code), gc_chunk_fmt, i, i, i);
	} else {
		luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
		snprintf(code, sizeof(code), chunk_fmt, k, k, k, k);
	}
	snprintf(name, sizeof(name), "@thread%d.lua", i);
	if (luaL_loadbuffer(L, code, strlen(code), name)) {
		fprintf(stderr, "thread %d: %s\n", i, lua_tostring(L, -1));
		exit(1);
	}
	if (gc_mode) {
		lua_pushcfunction(L, started);
	} else {
		lua_pushcfunction(L, cleaf);
		lua_pushcfunction(L, started);
		lua_pushinteger(L, lua_depth + k);
		lua_pushinteger(L, c_depth);
	}
	printf("thread %d tid %ld\n", i, (long)syscall(SYS_gettid));
	fflush(stdout);
	if (lua_pcall(L, gc_mode ? 1 : 4, 0, 0)) {
		fprintf(stderr, "thread %d: %s\n", i, lua_tostring(L, -1));
		exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	int n, secs;

	if (argc < 4) {
		fprintf(stderr, "usage: lua_threads NTHREADS LUA_DEPTH C_DEPTH [SECONDS [r14|gc]]\n");
		return 2;
	}
	n = atoi(argv[1]);
	lua_depth = atoi(argv[2]);
	c_depth = atoi(argv[3]);
	secs = argc > 4 ? atoi(argv[4]) : 0;
	clobber_r14 = argc > 5 && !strcmp(argv[5], "r14");
	gc_mode = argc > 5 && !strcmp(argv[5], "gc");
	if (n < 1 || lua_depth < 1 || c_depth < 1) {
		fprintf(stderr, "lua_threads: counts must be >= 1\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 512 << 10);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, &attr, thread_main, (void *)(long)i)) {
			perror("pthread_create");
			return 1;
		}
	}
	while (atomic_load(&running) < n)
		usleep(10000);
	puts("ready");
	fflush(stdout);
	if (secs) {
		sleep(secs);
		exit(0);
	}
	for (;;)
		pause();
}
