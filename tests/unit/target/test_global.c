/*
 * target/global.c: luw_global_names on live processes (Debian luajit:
 * GC64, no DWARF, the lj_obj.h model; tarantool 2.6: 32-bit refs, DWARF) running
 * tests/fixtures/workloads/heldnames.lua, whose defining chunk has
 * finished: a global function is named by its global ("event"), a
 * module's by module and field ("svcmod.handle"); a function held by no
 * name (a local) or by two (an alias) and the main chunk stay unnamed.
 * usage: test_global FIXTURES
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target/global.h"
#include "target/layout.h"
#include "target/obj.h"
#include "testlib.h"

#define NF 5
static const char *const keys[NF] = {
	"event", "handle", "hidden", "aliased", "main"
};
static const char *const want[NF] = {
	"event", "svcmod.handle", NULL, NULL, NULL
};

static void run(const char *prog, const char *script, int want_dwarf)
{
	uint64_t pt[NF];
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	struct luw_obj o;
	char err[1024], *names[NF];
	pid_t pid = t ? luw_test_lua(prog, script, keys, NF, t, pt) : -1;
	int n;

	CHECK(t, "out of memory");
	if (pid < 0) {
		free(t);
		return;
	}
	if (luw_layout_obj(t, &o, err, sizeof(err))) {
		CHECK(0, "%s: luw_layout_obj: %s", prog, err);
		goto out;
	}
	CHECK((o.off.src == LUW_OBJ_DWARF) == want_dwarf, "%s: offsets from %s, want %s", prog,
	      o.off.src == LUW_OBJ_DWARF ? "DWARF" : "the model", want_dwarf ? "DWARF" : "the model");
	n = luw_global_names(&o, t->states, t->nstates, pt, NF, names);
	for (int i = 0; i < NF; i++) {
		CHECK(want[i] ? names[i] && !strcmp(names[i], want[i]) : !names[i],
		      "%s: %s named '%s', want '%s'", prog, keys[i],
		      names[i] ? names[i] : "(none)", want[i] ? want[i] : "(none)");
		free(names[i]);
	}
	printf("%s: %d held functions named (offsets from %s: env %u node %u "
	       "hmask %u Node %u key %u)\n", prog, n, o.off.src == LUW_OBJ_DWARF ? "DWARF" : "model",
	       o.off.l_env, o.off.t_node, o.off.t_hmask, o.off.node_size, o.off.node_key);
out:
	luw_test_stop(pid);
	free(t);
}

int main(int argc, char **argv)
{
	char script[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: test_global FIXTURES\n");
		return 2;
	}
	snprintf(script, sizeof(script), "%s/workloads/heldnames.lua", argv[1]);
	run("luajit", script, 0);
	run("tarantool", script, 1);
	if (luw_test_status("test_global"))
		return 1;
	printf("test_global: ok\n");
	return 0;
}
