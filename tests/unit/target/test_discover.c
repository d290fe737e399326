/*
 * target/discover.c on live processes: Debian's luajit and tarantool
 * (LuaJIT linked in, exporting nothing of it by name the test relies on)
 * running tests/fixtures/workloads/coro.lua are candidates, a shell is
 * not; a scan selects them by name, by executable and by parent, and
 * never this process.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/discover.h"
#include "testlib.h"

static int has(const pid_t *v, int n, pid_t pid)
{
	for (int i = 0; i < n && i < 256; i++)
		if (v[i] == pid)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	char coro[4096];
	pid_t lj, tt, sh, found[256], self = getpid();
	struct luw_discover_sel sel;
	int n;

	if (argc < 2) {
		fprintf(stderr, "usage: test_discover FIXTURES\n");
		return 2;
	}
	snprintf(coro, sizeof(coro), "%s/workloads/coro.lua", argv[1]);
	{
		char *a[] = { "luajit", coro, NULL };
		char *b[] = { "tarantool", coro, NULL };
		char *c[] = { "sh", "-c", "echo ready; exec sleep 120", NULL };

		lj = luw_test_spawn(a, NULL, NULL, 0, NULL);
		tt = luw_test_spawn(b, NULL, NULL, 0, NULL);
		sh = luw_test_spawn(c, NULL, NULL, 0, NULL);
	}
	CHECK(lj > 0 && tt > 0 && sh > 0, "spawn: %d %d %d", (int)lj,
	      (int)tt, (int)sh);
	if (lj <= 0 || tt <= 0 || sh <= 0)
		goto out;

	CHECK(luw_discover_luajit(lj) == 1, "luajit %d not a candidate",
	      (int)lj);
	CHECK(luw_discover_luajit(tt) == 1, "tarantool %d not a candidate",
	      (int)tt);
	CHECK(luw_discover_luajit(sh) == 0, "sleep %d a candidate", (int)sh);
	CHECK(luw_discover_luajit(self) == 0, "this test a candidate");
	/* Asked again: the files' answers come from the cache. */
	CHECK(luw_discover_luajit(lj) == 1, "luajit %d, asked again", (int)lj);

	memset(&sel, 0, sizeof(sel));
	n = luw_discover_scan(&sel, found, 256);
	CHECK(n >= 2 && has(found, n, lj) && has(found, n, tt) &&
	      !has(found, n, sh) && !has(found, n, self),
	      "scan of all: %d found", n);
	for (int i = 1; i < n && i < 256; i++)
		CHECK(found[i - 1] < found[i], "scan not in pid order");

	sel.comm = "tarantool";
	n = luw_discover_scan(&sel, found, 256);
	CHECK(has(found, n, tt) && !has(found, n, lj), "--comm tarantool: %d",
	      n);

	memset(&sel, 0, sizeof(sel));
	sel.exe = "/usr/bin/luajit";
	n = luw_discover_scan(&sel, found, 256);
	CHECK(has(found, n, lj) && !has(found, n, tt), "--exe luajit: %d", n);

	memset(&sel, 0, sizeof(sel));
	sel.roots = &self;
	sel.nroots = 1;
	n = luw_discover_scan(&sel, found, 256);
	CHECK(n == 2 && has(found, n, lj) && has(found, n, tt),
	      "children of this test: %d", n);
	sel.roots = &sh;
	n = luw_discover_scan(&sel, found, 256);
	CHECK(n == 0, "children of the shell: %d", n);
	CHECK(luw_discover_match(lj, &(struct luw_discover_sel){ .comm = "nope" }) == 0,
	      "a name that is not luajit's matched");
	CHECK(luw_discover_luajit(999999999) == -1, "a pid that is none");
	luw_discover_clear();
	CHECK(luw_discover_luajit(tt) == 1, "tarantool after clear");
out:
	if (lj > 0)
		luw_test_stop(lj);
	if (tt > 0)
		luw_test_stop(tt);
	if (sh > 0)
		luw_test_stop(sh);
	return luw_test_status("test_discover");
}
