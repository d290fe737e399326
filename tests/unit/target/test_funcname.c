/*
 * target/funcname.c: luw_funcname_def_name on live processes (Debian
 * luajit and tarantool 2.6 running tests/fixtures/workloads/defnames.lua):
 * every function the script defines is named from its parent proto's
 * FNEW and the store after it --
 * local, global, M.f, obj:m, upvalue, table-constructor field; a closure
 * passed as an argument is found (2) but unnamed; a proto that is not the
 * parent gives 0; the tail-call chain top -> vararg -> mid gets three
 * different names whatever calls them.
 * usage: test_funcname FIXTURES
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target/layout.h"
#include "target/funcname.h"
#include "testlib.h"

#define NF 12
static const char *const names[NF] = {
	"main", "lf", "gf", "M.mf", "obj:meth", "up", "field", "anon", "mid",
	"vararg", "top", "setup"
};

static void expect(pid_t pid, const struct luw_lj_layout *ly, const char *who,
		   uint64_t parent, uint64_t child, int want_rc,
		   const char *want)
{
	char out[256] = "";
	int rc = luw_funcname_def_name(pid, ly, parent, child, out, sizeof(out));

	CHECK(rc == want_rc && (!want || !strcmp(out, want)),
	      "%s: %s: rc %d name '%s', want %d '%s'", who,
	      want ? want : "(none)", rc, rc == 1 ? out : "", want_rc,
	      want ? want : "");
}

static void run(const char *prog, const char *script)
{
	uint64_t pt[NF];
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	pid_t pid = t ? luw_test_lua(prog, script, names, NF, t, pt) : -1;

	CHECK(t, "out of memory");
	if (pid < 0) {
		free(t);
		return;
	}
	/* Defined in the main chunk: named by the store after FNEW. */
	for (int i = 1; i < NF; i++) {
		if (!strcmp(names[i], "up"))
			continue;
		if (!strcmp(names[i], "anon"))
			expect(pid, &t->layout, prog, pt[0], pt[i], 2, NULL);
		else
			expect(pid, &t->layout, prog, pt[0], pt[i], 1, names[i]);
	}
	/* up = function ... in setup: an upvalue store (USETV). */
	expect(pid, &t->layout, prog, pt[11], pt[5], 1, "up");
	expect(pid, &t->layout, prog, pt[0], pt[5], 0, NULL);
	/* Not parents: a sibling, the child itself, a child of its parent. */
	expect(pid, &t->layout, prog, pt[1], pt[2], 0, NULL);
	expect(pid, &t->layout, prog, pt[8], pt[8], 0, NULL);
	expect(pid, &t->layout, prog, pt[11], pt[0], 0, NULL);
	printf("%s: %d functions named by definition\n", prog, NF - 2);
	luw_test_stop(pid);
	free(t);
}

int main(int argc, char **argv)
{
	char script[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: test_funcname FIXTURES\n");
		return 2;
	}
	snprintf(script, sizeof(script), "%s/workloads/defnames.lua", argv[1]);
	run("luajit", script);
	run("tarantool", script);
	if (luw_test_status("test_funcname"))
		return 1;
	printf("test_funcname: ok\n");
	return 0;
}
