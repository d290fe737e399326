/*
 * target/layout.c: layout detection and validation on live processes:
 * Debian's luajit, OpenResty's luajit2 (unpacked by
 * scripts/luajit2-fetch.sh) and tarantool 2.6 each run tests/fixtures/workloads/coro.lua, and a host of Debian's
 * libluajit empties its main thread's globals as ts_lua does
 * (common/targets/emptyglobals.c); for each, luw_layout_attach must
 * pick the right layout, tarantool's DWARF layout must equal the table
 * generated from its sources, and a layout with any one offset moved must
 * be refused with a message naming the binary and its build-id.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "luajit/known.h"
#include "target/layout.h"
#include "target/validate.h"
#include "kmod/ljwalk.h"
#include "testlib.h"

struct field {
	const char *name;
	size_t off;
	int size;
};

#define F(x) { #x, offsetof(struct luw_lj_layout, x), \
	       (int)sizeof(((struct luw_lj_layout *)0)->x) }

/* Every one of these, moved by a few bytes, must be caught. */
static const struct field fields[] = {
	F(gg_g2disp), F(gg_g2l), F(gg_ndisp), F(g_mainthref), F(g_strempty),
	F(l_glref), F(l_stack), F(l_stacksize), F(l_maxstack),
	F(gc_gct), F(str_len), F(cframe_size), F(cframe_ofs_l),
};

static void mutate(struct luw_lj_layout *ly, const struct field *f, int d)
{
	unsigned char *p = (unsigned char *)ly + f->off;

	if (f->size == 2) {
		__u16 v;

		memcpy(&v, p, 2);
		v = (__u16)(v + d);
		memcpy(p, &v, 2);
	} else {
		__u32 v;

		memcpy(&v, p, 4);
		v = (__u32)(v + d);
		memcpy(p, &v, 4);
	}
}

static const struct luw_lj_layout *known_by_name(const char *prefix)
{
	size_t n, i;
	const struct luw_known *k = luw_known_layouts(&n);

	for (i = 0; i < n; i++)
		if (!k[i].build_id && !strncmp(k[i].name, prefix, strlen(prefix)))
			return k[i].layout;
	return NULL;
}

static void check_target(const char *what, char *const argv[],
			 const char *libpath, enum luw_layout_source want_src,
			 const char *wrong_family)
{
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	char err[1024];
	pid_t pid = luw_test_spawn(argv, libpath, NULL, 0, NULL);
	size_t i;
	int d;

	CHECK(pid > 0, "%s: could not start %s", what, argv[0]);
	if (pid <= 0 || !t) {
		free(t);
		luw_test_stop(pid);
		return;
	}
	usleep(100000);	/* "ready" came: let its stack settle */
	if (luw_layout_attach(pid, t, err, sizeof(err))) {
		CHECK(0, "%s: attach: %s", what, err);
		goto out;
	}
	printf("%s: %s build-id %s layout \"%s\", %d state(s), vm 0x%llx-0x%llx\n",
	       what, t->path, t->build_id, t->layout_name, t->nstates,
	       (unsigned long long)t->vm_start, (unsigned long long)t->vm_end);
	CHECK(t->src == want_src, "%s: layout source %d, want %d", what,
	       t->src, want_src);
	CHECK(t->nstates == 1, "%s: %d states, want 1", what, t->nstates);
	CHECK(t->interp_end - t->vm_start > 10000 &&
	       t->interp_end - t->vm_start < 200000,
	       "%s: interpreter of %llu bytes", what,
	       (unsigned long long)(t->interp_end - t->vm_start));
	CHECK(t->vm_end > t->interp_end, "%s: no lj_vm_ffi_call after the VM",
	       what);
	if (want_src == LUW_LJL_SRC_DWARF) {
		const struct luw_lj_layout *k = known_by_name("Tarantool 2.6");
		struct luw_lj_layout want;

		/* CFRAME_SIZE_JIT is a macro: DWARF leaves it unknown (0). */
		if (k) {
			want = *k;
			want.cframe_size_jit = 0;
		}
		CHECK(k && !memcmp(&want, &t->layout, sizeof(want)),
		       "%s: DWARF layout differs from the generated table", what);
	}
	/* Each moved field is refused, with binary and build-id named. */
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		for (d = -8; d <= 8; d += 16) {
			struct luw_lj_layout bad = t->layout;
			struct luw_layout_target *c = malloc(sizeof(*c));

			if (!c)
				break;
			*c = *t;
			mutate(&bad, &fields[i], d);
			err[0] = 0;
			CHECK(luw_validate_use(c, &bad, "mutated", err,
					      sizeof(err)) != 0,
			       "%s: %s%+d accepted", what, fields[i].name, d);
			CHECK(strstr(err, t->path) && strstr(err, t->build_id) &&
			       strstr(err, "refusing"),
			       "%s: %s%+d: unclear message: %s", what,
			       fields[i].name, d, err);
			if (d > 0)
				printf("  %s%+d refused: %s\n", fields[i].name, d,
				       strstr(err, "process: ") ?
				       strstr(err, "process: ") + 9 : err);
			free(c);
		}
	}
	/* Another target's layout is refused too. */
	{
		const struct luw_lj_layout *w = known_by_name(wrong_family);
		struct luw_layout_target *c = malloc(sizeof(*c));

		if (w && c) {
			*c = *t;
			CHECK(luw_validate_use(c, w, wrong_family, err,
					      sizeof(err)) != 0,
			       "%s: layout %s accepted", what, wrong_family);
			printf("  %s layout refused: %s\n", wrong_family, err);
		}
		free(c);
	}
out:
	luw_test_stop(pid);
	free(t);
}

int main(int argc, char **argv)
{
	char coro[4096], l2[4096], l2lib[4096], cmd[8300];

	if (argc < 3) {
		fprintf(stderr, "usage: test_layout FIXTURES TARGET_EMPTYGLOBALS\n");
		return 2;
	}
	snprintf(coro, sizeof(coro), "%s/workloads/coro.lua", argv[1]);
	snprintf(l2, sizeof(l2), "%s/../../build/luajit2/usr/bin/luajit", argv[1]);
	snprintf(l2lib, sizeof(l2lib),
		 "%s/../../build/luajit2/usr/lib/x86_64-linux-gnu", argv[1]);
	snprintf(cmd, sizeof(cmd), "%s/../../scripts/luajit2-fetch.sh %s/../../build/luajit2",
		 argv[1], argv[1]);
	{
		char *a[] = { "luajit", coro, NULL };

		check_target("luajit", a, NULL, LUW_LJL_SRC_KNOWN, "OpenResty");
	}
	{
		char *a[] = { "tarantool", coro, NULL };

		check_target("tarantool", a, NULL, LUW_LJL_SRC_DWARF, "LuaJIT 2.1 GC64");
	}
	{
		char *a[] = { argv[2], NULL };

		check_target("emptyglobals", a, NULL, LUW_LJL_SRC_KNOWN,
			     "OpenResty");
	}
	CHECK(system(cmd) == 0, "cannot unpack luajit2: %s", cmd);
	{
		char *a[] = { l2, coro, NULL };

		check_target("luajit2", a, l2lib, LUW_LJL_SRC_KNOWN, "LuaJIT 2.1 GC64");
	}
	printf("%s\n", luw_test_failures ? "FAILED" : "ok");
	return luw_test_status("test_layout");
}
