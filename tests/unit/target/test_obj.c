/*
 * target/obj.c, the remote object model, on live processes: Debian's
 * luajit (GC64, no DWARF: tables from the lj_obj.h model) and tarantool
 * (32-bit references, DWARF) running tests/fixtures/workloads/objects.lua,
 * which hands over a table, its metatable, a Lua function and a C
 * function.  Each reader must read them as the script made them, and
 * refuse an object of another type.
 * usage: test_obj FIXTURES
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/layout.h"
#include "target/obj.h"
#include "testlib.h"

enum { TAB, META, FN, CF, NK };
static const char *const keys[NK] = { "tab", "meta", "fn", "cf" };

struct seen {
	int alpha, fn, cf;
};

/* Table T's hash part: every key the script put in it, with its value. */
static void check_table(const char *prog, const struct luw_obj *o,
			const uint64_t *a)
{
	struct seen s = { 0, 0, 0 };
	uint8_t *nodes;
	uint32_t count;

	if (luw_obj_tab_nodes(o, a[TAB], 1024, &nodes, &count)) {
		CHECK(0, "%s: T's nodes unreadable", prog);
		return;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct luw_obj_tv k, v;
		char key[32], val[32];
		uint32_t len = 0;

		luw_obj_node(o, nodes, i, &k, &v);
		if (k.t != LUW_OBJ_STR)
			continue;
		CHECK(!luw_obj_str(o, k.gc, key, sizeof(key), &len),
		      "%s: key of node %u is no string", prog, i);
		if (!strcmp(key, "alpha")) {
			s.alpha = v.t == LUW_OBJ_STR &&
				  !luw_obj_str(o, v.gc, val, sizeof(val), &len) &&
				  len == 11 && !strcmp(val, "hello world");
			/* Cut to fit, the whole length still told. */
			CHECK(!luw_obj_str(o, v.gc, val, 6, &len) && len == 11 &&
			      !strcmp(val, "hello"), "%s: cut string", prog);
		} else if (!strcmp(key, "fn")) {
			s.fn = v.t == LUW_OBJ_FUNC && v.gc == a[FN];
		} else if (!strcmp(key, "cf")) {
			s.cf = v.t == LUW_OBJ_FUNC && v.gc == a[CF];
		}
	}
	free(nodes);
	CHECK(s.alpha, "%s: T.alpha not read as \"hello world\"", prog);
	CHECK(s.fn, "%s: T.fn not the function printed", prog);
	CHECK(s.cf, "%s: T.cf not the C function printed", prog);
	CHECK(luw_obj_tab_meta(o, a[TAB]) == a[META], "%s: T's metatable", prog);
	CHECK(!luw_obj_tab_meta(o, a[META]), "%s: a metatable where none", prog);
	/* A function is no table. */
	CHECK(luw_obj_tab_nodes(o, a[FN], 1024, &nodes, &count),
	      "%s: a function's hash part", prog);
}

/* The globals table of the main thread holds T. */
static void check_globals(const char *prog, const struct luw_obj *o,
			  uint64_t g, uint64_t tab)
{
	uint64_t l = luw_obj_mainthread(o, g), env = l ? luw_obj_env(o, l) : 0;
	uint8_t *nodes;
	uint32_t count;
	int found = 0;

	CHECK(l && env, "%s: main thread 0x%llx, env 0x%llx", prog,
	      (unsigned long long)l, (unsigned long long)env);
	if (!env || luw_obj_tab_nodes(o, env, 1 << 16, &nodes, &count))
		return;
	for (uint32_t i = 0; i < count; i++) {
		struct luw_obj_tv k, v;
		char key[8];
		uint32_t len;

		luw_obj_node(o, nodes, i, &k, &v);
		if (k.t == LUW_OBJ_STR && !luw_obj_str(o, k.gc, key, sizeof(key), &len) &&
		    !strcmp(key, "T"))
			found = v.t == LUW_OBJ_TAB && v.gc == tab;
	}
	free(nodes);
	CHECK(found, "%s: _G.T is not the table printed", prog);
}

static void check_functions(const char *prog, const struct luw_obj *o,
			    const uint64_t *a)
{
	uint64_t pt = luw_obj_lua_proto(o, a[FN]);
	struct luw_obj_proto p;
	char chunk[256];
	uint32_t len;
	uint8_t ffid = 9;
	const char *tail = "/objects.lua";

	CHECK(pt, "%s: no proto for the Lua function", prog);
	CHECK(!luw_obj_proto(o, pt, &p), "%s: proto unreadable", prog);
	CHECK(p.firstline == 4 && p.numparams == 2 && p.sizebc > 1 &&
	      p.k >= p.bc + 4ull * p.sizebc,
	      "%s: proto firstline %u numparams %u sizebc %u", prog,
	      p.firstline, p.numparams, p.sizebc);
	CHECK(!luw_obj_str(o, p.chunkname, chunk, sizeof(chunk), &len) &&
	      len > strlen(tail) && chunk[0] == '@' &&
	      !strcmp(chunk + len - strlen(tail), tail),
	      "%s: chunk name '%s'", prog, chunk);
	CHECK(!luw_obj_ffid(o, a[FN], &ffid) && ffid == LUW_LJ_FF_LUA,
	      "%s: Lua function's ffid %u", prog, ffid);
	CHECK(!luw_obj_cfunc(o, a[FN]), "%s: a Lua function read as C", prog);
	CHECK(luw_obj_cfunc(o, a[CF]), "%s: C function's code", prog);
	CHECK(!luw_obj_lua_proto(o, a[CF]), "%s: a C function's proto", prog);
	/* Objects of other types are refused. */
	CHECK(luw_obj_proto(o, a[TAB], &p), "%s: a table read as proto", prog);
	CHECK(luw_obj_str(o, a[TAB], chunk, sizeof(chunk), &len),
	      "%s: a table read as string", prog);
	CHECK(!luw_obj_lua_proto(o, a[TAB]), "%s: a table's proto", prog);
	CHECK(luw_obj_is(o, a[TAB], LUW_OBJ_TAB) && !luw_obj_is(o, a[FN], LUW_OBJ_TAB),
	      "%s: luw_obj_is", prog);
	CHECK(luw_obj_read(o, 0, chunk, 1), "%s: a read at 0", prog);
}

static void run(const char *prog, const char *script, int want_dwarf)
{
	char *argv[] = { (char *)prog, (char *)script, NULL };
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	uint64_t a[NK] = { 0 }, tr;
	struct luw_obj o;
	char err[1024];
	pid_t pid;

	CHECK(t, "out of memory");
	if (!t)
		return;
	pid = luw_test_spawn(argv, NULL, keys, NK, a);
	CHECK(pid > 0, "%s: did not start or print its objects", prog);
	if (pid <= 0)
		goto out;
	if (luw_layout_attach(pid, t, err, sizeof(err))) {
		CHECK(0, "%s: luw_layout_attach: %s", prog, err);
		goto stop;
	}
	/* The target's offsets: worked out once, kept for the next reader. */
	if (luw_layout_obj(t, &o, err, sizeof(err))) {
		CHECK(0, "%s: luw_layout_obj: %s", prog, err);
		goto stop;
	}
	CHECK(o.ref == (t->layout.flags & LUW_LJ_F_GC64 ? 8u : 4u), "%s: ref", prog);
	CHECK(t->offs_state == 1 && !memcmp(&t->offs, &o.off, sizeof(o.off)),
	      "%s: offsets not kept in the target", prog);
	CHECK((o.off.src == LUW_OBJ_DWARF) == want_dwarf, "%s: tables from %s", prog,
	      o.off.src == LUW_OBJ_DWARF ? "DWARF" : "the model");
	check_table(prog, &o, a);
	check_globals(prog, &o, t->states[0], a[TAB]);
	check_functions(prog, &o, a);
	/* The hot loop's trace; trace 0 is never used. */
	tr = luw_obj_trace(&o, t->states[0], 1);
	CHECK(tr, "%s: no trace 1", prog);
	CHECK(!luw_obj_trace(&o, t->states[0], 0) &&
	      !luw_obj_trace(&o, t->states[0], 1u << 20), "%s: traces 0, 2^20", prog);
	printf("%s: objects read (%s tables, ref %u, trace 1 at 0x%llx)\n", prog,
	       o.off.src == LUW_OBJ_DWARF ? "DWARF" : "model", o.ref, (unsigned long long)tr);
stop:
	luw_test_stop(pid);
out:
	free(t);
}

int main(int argc, char **argv)
{
	char script[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: test_obj FIXTURES\n");
		return 2;
	}
	snprintf(script, sizeof(script), "%s/workloads/objects.lua", argv[1]);
	run("luajit", script, 0);
	run("tarantool", script, 1);
	if (luw_test_status("test_obj"))
		return 1;
	printf("test_obj: ok\n");
	return 0;
}
