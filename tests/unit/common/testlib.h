/*
 * testlib: what the userspace tests share, one copy each.
 *
 * CHECK(cond, fmt, ...) counts a failure and prints "FAIL FILE:LINE: msg"
 * on stderr when cond is false, then goes on; luw_test_status() turns
 * the count into the exit status.  luw_test_load() reads a fixture,
 * luw_test_sh() runs a shell command, luw_test_tmpdir() makes a scratch
 * directory.
 *
 * Live targets: luw_test_spawn() starts a program with its stdout on a
 * pipe and waits for the line "ready" it prints once set up; before it,
 * lines "KEY 0xADDR" hand over addresses (the workloads print their Lua
 * functions' GCfunc that way).  luw_test_lua() is the whole preamble of
 * the naming tests: start a Lua script, attach (luw_layout_attach) and find the
 * GCproto of every function it printed.
 */
#ifndef LUW_TESTLIB_H
#define LUW_TESTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct luw_layout_target;
struct luw_lj_layout;
struct luw_lua_frame;
struct luw_splice;

extern int luw_test_failures;

void luw_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define CHECK(cond, ...) do {						\
	if (!(cond))							\
		luw_test_fail(__FILE__, __LINE__, __VA_ARGS__);		\
} while (0)

/* 0 when no CHECK failed; else 1, after "NAME: N failure(s)" on stderr. */
int luw_test_status(const char *name);

/* The file at path, whole (one spare byte after len); exits 1 if not. */
uint8_t *luw_test_load(const char *path, size_t *len);

/*
 * The shell command printf(fmt, ...) makes, run: 0 when it exited 0, else
 * its status after a CHECK failure naming it.
 */
int luw_test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A new scratch directory /tmp/luw-NAME-XXXXXX, its path in dir (len at
 * least strlen(name) + 16): 0, or -1 after a CHECK failure.  The test
 * removes it: luw_test_sh("rm -rf '%s'", dir).
 */
int luw_test_tmpdir(const char *name, char *dir, size_t len);

/*
 * Starts argv (argv[0] searched in PATH) with stdout on a pipe, with
 * LD_LIBRARY_PATH=libpath when libpath is not NULL, under an alarm so it
 * never outlives the test.  Reads its lines up to one starting "ready";
 * a line "KEY 0xADDR" before it whose KEY is keys[i] (i < nkeys) stores
 * ADDR in addrs[i].  The pid; -1 (the child killed and reaped) when its
 * output ends first or a key did not come.
 */
pid_t luw_test_spawn(char *const argv[], const char *libpath,
		     const char *const *keys, int nkeys, uint64_t *addrs);

/*
 * A sample record of the module's stream (include/luaunwind.h) at out,
 * 8-aligned, with room for it (LUW_RECORD_MAX): the header (pid as pid
 * and tid, vmstate), the nh host pcs, nl Lua frames, ns splices.  Its
 * size.
 */
size_t luw_test_sample(void *out, uint32_t pid, uint8_t vmstate,
		       const uint64_t *host, unsigned int nh,
		       const struct luw_lua_frame *lua, unsigned int nl,
		       const struct luw_splice *sp, unsigned int ns);

/* Kills and reaps a spawned target. */
void luw_test_stop(pid_t pid);

/* The GCproto of the Lua function (GCfunc) at fn, 0 if unreadable. */
uint64_t luw_test_proto_of(pid_t pid, const struct luw_lj_layout *ly,
			   uint64_t fn);

/*
 * PROG SCRIPT, attached: t is filled by luw_layout_attach and pt[i] holds the
 * GCproto of the function the script printed as keys[i].  The pid (stop
 * it with luw_test_stop), or -1 after a CHECK failure saying what went
 * wrong (the child stopped).
 */
pid_t luw_test_lua(const char *prog, const char *script,
		   const char *const *keys, int nkeys, struct luw_layout_target *t,
		   uint64_t *pt);

#endif
