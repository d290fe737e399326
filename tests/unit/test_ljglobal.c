/*
 * ljg_names on live processes (Debian luajit: GC64, no DWARF, the
 * lj_obj.h model; tarantool 2.6: 32-bit refs, DWARF) running
 * tests/fixtures/workloads/heldnames.lua, whose defining chunk has
 * finished: a global function is named by its global ("event"), a
 * module's by module and field ("svcmod.handle"); a function held by no
 * name (a local) or by two (an alias) and the main chunk stay unnamed.
 * usage: test_ljglobal FIXTURES
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ljglobal.h"
#include "ljlayout.h"
#include "livelua.h"

static int failures;

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: ", \
	__FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); failures++; } } while (0)

#define NF 5
static const char *const keys[NF] = {
	"event", "handle", "hidden", "aliased", "main"
};
static const char *const want[NF] = {
	"event", "svcmod.handle", NULL, NULL, NULL
};

static void run(const char *prog, const char *script, int want_dwarf)
{
	uint64_t fn[NF] = { 0 }, pt[NF];
	struct ljl_target *t = calloc(1, sizeof(*t));
	struct ljg_offs o;
	char err[1024], *names[NF];
	pid_t pid = livelua_start(prog, script, keys, NF, fn);
	int n;

	if (pid < 0 || !t) {
		CHECK(0, "%s: did not start or print its functions", prog);
		free(t);
		return;
	}
	if (ljl_attach(pid, t, err, sizeof(err))) {
		CHECK(0, "%s: ljl_attach: %s", prog, err);
		goto out;
	}
	if (ljg_offsets(t->path, &t->layout, &o, err, sizeof(err))) {
		CHECK(0, "%s: ljg_offsets: %s", prog, err);
		goto out;
	}
	CHECK(o.dwarf == want_dwarf, "%s: offsets from %s, want %s", prog,
	      o.dwarf ? "DWARF" : "the model", want_dwarf ? "DWARF" : "the model");
	for (int i = 0; i < NF; i++) {
		pt[i] = livelua_proto_of(pid, &t->layout, fn[i]);
		CHECK(pt[i], "%s: proto of %s", prog, keys[i]);
	}
	if (failures)
		goto out;
	n = ljg_names(pid, &t->layout, &o, t->states, t->nstates, pt, NF, names);
	for (int i = 0; i < NF; i++) {
		CHECK(want[i] ? names[i] && !strcmp(names[i], want[i]) : !names[i],
		      "%s: %s named '%s', want '%s'", prog, keys[i],
		      names[i] ? names[i] : "(none)", want[i] ? want[i] : "(none)");
		free(names[i]);
	}
	printf("%s: %d held functions named (offsets from %s: env %u node %u "
	       "hmask %u Node %u key %u)\n", prog, n, o.dwarf ? "DWARF" : "model",
	       o.l_env, o.t_node, o.t_hmask, o.node_size, o.node_key);
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(t);
}

int main(int argc, char **argv)
{
	char script[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: test_ljglobal FIXTURES\n");
		return 2;
	}
	snprintf(script, sizeof(script), "%s/workloads/heldnames.lua", argv[1]);
	run("luajit", script, 0);
	run("tarantool", script, 1);
	if (failures)
		return 1;
	printf("test_ljglobal: ok\n");
	return 0;
}
