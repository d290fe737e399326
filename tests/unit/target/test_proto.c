/*
 * target/proto.c on live processes (Debian luajit: GC64; tarantool 2.6:
 * 32-bit references) running tests/fixtures/workloads/protos.lua, against
 * what the VM itself says (jit.util.funcinfo, written by the script):
 * each proto's first line, line count and bytecode count, and the line
 * of every bytecode position -- with 8-bit (a file's function), 16-bit
 * (over 255 lines) and 32-bit (over 65535) line deltas; the chunk name as
 * tracebacks show it ("@file" as file, "=name" as name, a string chunk
 * as [string "its first line"], cut to 60 characters); fast-function
 * names by the ffid the VM gives; frames as text for every frame kind;
 * a table or a function taken for a proto refused; and 5000 protos of
 * 5000 chunks, more than the cache holds, all read right.
 *
 * usage: test_proto FIXTURES
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/layout.h"
#include "target/obj.h"
#include "target/proto.h"
#include "testlib.h"

enum { SMALL, MID, BIG, NAMED, LONGLINE, NFN };
static const char *const keys[NFN] = { "small", "mid", "big", "named",
				       "longline" };
#define NMANY 5000
#define NFF 4

/* What the script wrote (see protos.lua). */
struct truth {
	struct {
		int first, last, nbc;
		int *line;		/* nbc entries */
	} fn[NFN];
	struct {
		char name[32];
		unsigned int ffid;
	} ff[NFF];
	uint64_t tab;
	uint64_t many[NMANY];
};

static int read_truth(const char *path, struct truth *t)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, word[32], name[32];
	size_t cap = 0;
	int nff = 0, nfn = 0, nmany = 0;

	memset(t, 0, sizeof(*t));
	CHECK(f, "cannot read %s", path);
	while (f && getline(&line, &cap, f) > 0) {
		unsigned long long a;
		int i, k, n, first, last, nbc;
		char *p;

		if (sscanf(line, "%31s", word) != 1)
			continue;
		if (!strcmp(word, "fn") &&
		    sscanf(line, "fn %31s %d %d %d%n", name, &first, &last, &nbc,
			   &n) == 4) {
			for (k = 0; k < NFN && strcmp(keys[k], name); k++)
				;
			if (k == NFN || nbc <= 0 || t->fn[k].line)
				continue;
			t->fn[k].first = first;
			t->fn[k].last = last;
			t->fn[k].nbc = nbc;
			t->fn[k].line = calloc((size_t)nbc, sizeof(int));
			p = line + n;
			for (i = 0; t->fn[k].line && i < nbc; i++)
				t->fn[k].line[i] = (int)strtol(p, &p, 10);
			nfn++;
		} else if (!strcmp(word, "ff") && nff < NFF &&
			   sscanf(line, "ff %31s %u", t->ff[nff].name,
				  &t->ff[nff].ffid) == 2) {
			nff++;
		} else if (!strcmp(word, "tab")) {
			sscanf(line, "tab 0x%llx", &a);
			t->tab = a;
		} else if (!strcmp(word, "many") &&
			   sscanf(line, "many 0x%llx %d", &a, &i) == 2 &&
			   i >= 1 && i <= NMANY) {
			t->many[i - 1] = a;
			nmany++;
		}
	}
	free(line);
	if (f)
		fclose(f);
	CHECK(nfn == NFN && nff == NFF && t->tab && nmany == NMANY,
	      "%s: %d functions, %d fast functions, %d chunks, table 0x%llx",
	      path, nfn, nff, nmany, (unsigned long long)t->tab);
	return nfn == NFN && nff == NFF && t->tab && nmany == NMANY ? 0 : -1;
}

static void free_truth(struct truth *t)
{
	for (int k = 0; k < NFN; k++)
		free(t->fn[k].line);
}

/* The chunk names as tracebacks show them. */
static void want_chunk(int k, char *buf, size_t n)
{
	switch (k) {
	case SMALL:
		snprintf(buf, n, "protos.lua");	/* the end of the path */
		break;
	case MID:
	case BIG:
		snprintf(buf, n, "[string \"return function(x)\"]");
		break;
	case NAMED:
		snprintf(buf, n, "custom");
		break;
	default:
		/* Its one line, cut to 60 characters. */
		snprintf(buf, n, "[string \"return function(x) return x end --"
			 "%.26s\"]", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
		break;
	}
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* One function: header, chunk, the line of every position. */
static void check_fn(const char *prog, struct luw_proto_ctx *c,
		     const struct luw_lj_layout *ly, int k, uint64_t pt,
		     const struct truth *t)
{
	const struct luw_proto_info *p, *again;
	uint64_t bc = pt + ly->pt_size;
	char want[128];
	int bad = 0;

	if (luw_proto_get(c, pt, &p)) {
		CHECK(0, "%s: %s: proto 0x%llx unreadable", prog, keys[k],
		      (unsigned long long)pt);
		return;
	}
	want_chunk(k, want, sizeof(want));
	CHECK(k == SMALL ? ends_with(p->chunk, "/protos.lua") :
			   !strcmp(p->chunk, want),
	      "%s: %s: chunk \"%s\", want \"%s\"", prog, keys[k], p->chunk, want);
	CHECK(p->firstline == t->fn[k].first &&
	      p->firstline + p->numline == t->fn[k].last &&
	      (int)p->sizebc == t->fn[k].nbc,
	      "%s: %s: lines %d+%d, %u bytecodes; the VM: %d..%d, %d", prog,
	      keys[k], p->firstline, p->numline, p->sizebc, t->fn[k].first,
	      t->fn[k].last, t->fn[k].nbc);
	CHECK(!luw_proto_get(c, pt, &again) && again == p,
	      "%s: %s: not cached", prog, keys[k]);
	for (int i = 0; i < t->fn[k].nbc && bad < 5; i++) {
		int32_t at = luw_proto_line(c, pt, bc + 4u * (uint64_t)i, 0);
		int32_t after = luw_proto_line(c, pt, bc + 4u * (uint64_t)i + 4, 1);

		if (at != t->fn[k].line[i] || after != t->fn[k].line[i]) {
			CHECK(0, "%s: %s: position %d: line %d (after: %d), the VM %d",
			      prog, keys[k], i, at, after, t->fn[k].line[i]);
			bad++;
		}
	}
	/* Past the last instruction: the function's end; then nothing. */
	CHECK(luw_proto_line(c, pt, bc + 4u * p->sizebc, 0) == t->fn[k].last,
	      "%s: %s: the end position", prog, keys[k]);
	CHECK(luw_proto_line(c, pt, bc + 4u * p->sizebc + 4, 0) == -1 &&
	      luw_proto_line(c, pt, bc, 1) == -1 &&
	      luw_proto_line(c, pt, bc + 2, 0) == -1 &&
	      luw_proto_line(c, pt, bc - 4, 0) == -1 &&
	      luw_proto_line(c, pt, 0, 0) == -1,
	      "%s: %s: a position outside the bytecode has a line", prog,
	      keys[k]);
}

static void expect_frame(const char *prog, struct luw_proto_ctx *c,
			 const struct luw_lj_frame *f, const char *want)
{
	char buf[512];

	luw_proto_frame_str(c, f, buf, sizeof(buf));
	CHECK(!strcmp(buf, want), "%s: frame kind %u: \"%s\", want \"%s\"",
	      prog, f->kind, buf, want);
}

/* Every frame kind as text. */
static void check_frames(const char *prog, struct luw_proto_ctx *c,
			 const struct luw_lj_layout *ly, uint64_t pt,
			 const struct truth *t)
{
	const struct luw_proto_info *p;
	uint64_t bc = pt + ly->pt_size;
	struct luw_lj_frame f;
	char want[512];
	int l3 = t->fn[SMALL].line[3];

	if (luw_proto_get(c, pt, &p))
		return;
	memset(&f, 0, sizeof(f));
	f.kind = LUW_LJF_LUA;
	f.proto = pt;
	f.pc = bc + 16;		/* past position 3 */
	snprintf(want, sizeof(want), "lua:%s:%d:%d", p->chunk, p->firstline, l3);
	expect_frame(prog, c, &f, want);
	f.flags = LUW_LJF_PC_TRACE;	/* at position 3 */
	f.pc = bc + 12;
	expect_frame(prog, c, &f, want);
	f.flags = 0;
	f.pc = 0;
	snprintf(want, sizeof(want), "lua:%s:%d:?", p->chunk, p->firstline);
	expect_frame(prog, c, &f, want);
	f.proto = t->tab;
	snprintf(want, sizeof(want), "lua:?0x%llx", (unsigned long long)t->tab);
	expect_frame(prog, c, &f, want);

	memset(&f, 0, sizeof(f));
	f.kind = LUW_LJF_TRACE;
	f.trace = 7;
	f.proto = pt;
	f.pc = bc + 12;
	snprintf(want, sizeof(want), "trace:7:%s:%d", p->chunk, l3);
	expect_frame(prog, c, &f, want);
	f.proto = 0;
	expect_frame(prog, c, &f, "trace:7");

	memset(&f, 0, sizeof(f));
	f.kind = LUW_LJF_C;
	f.pc = 0x5a5a10;
	expect_frame(prog, c, &f, "c:0x5a5a10");
	f.kind = 99;
	expect_frame(prog, c, &f, "?");
	f.kind = LUW_LJF_FF;
	for (int i = 0; i < NFF; i++) {
		f.ffid = (uint8_t)t->ff[i].ffid;
		snprintf(want, sizeof(want), "ff:%s", t->ff[i].name);
		expect_frame(prog, c, &f, want);
	}
	f.ffid = 255;
	expect_frame(prog, c, &f, "ff:#255");
}

/* 5000 chunks: more protos than the cache keeps, each read right. */
static void check_many(const char *prog, struct luw_proto_ctx *c, pid_t pid,
		       const struct luw_lj_layout *ly, const struct truth *t,
		       uint64_t small_pt)
{
	const struct luw_proto_info *p;
	char want[64];
	int bad = 0;

	for (int i = 0; i < NMANY && bad < 5; i++) {
		uint64_t pt = luw_test_proto_of(pid, ly, t->many[i]);

		snprintf(want, sizeof(want),
			 "[string \"return function() return %d end\"]", i + 1);
		if (!pt || luw_proto_get(c, pt, &p) || strcmp(p->chunk, want) ||
		    p->firstline != 1) {
			CHECK(0, "%s: chunk %d: \"%s\"", prog, i + 1,
			      pt && !luw_proto_get(c, pt, &p) ? p->chunk : "?");
			bad++;
		}
	}
	CHECK(!luw_proto_get(c, small_pt, &p) && ends_with(p->chunk, "/protos.lua"),
	      "%s: small after the cache filled up", prog);
}

/* Not protos: a table, a function (its GCfunc, not its proto), 0. */
static void check_refused(const char *prog, struct luw_proto_ctx *c,
			  const struct truth *t)
{
	const struct luw_proto_info *p;

	CHECK(luw_proto_get(c, t->tab, &p) == -1 &&
	      luw_proto_get(c, t->many[0], &p) == -1 &&
	      luw_proto_get(c, 0, &p) == -1 &&
	      luw_proto_line(c, t->tab, t->tab + 64, 0) == -1,
	      "%s: a table, a function or 0 read as a proto", prog);
}

static void check_ffnames(const char *prog, pid_t pid,
			  const struct luw_layout_target *t,
			  const struct truth *tr)
{
	struct luw_proto_ctx *c = luw_proto_new(pid, &t->layout, &t->ff);
	struct luw_lj_frame f = { .kind = LUW_LJF_FF };
	char want[32];

	CHECK(c, "%s: luw_proto_new", prog);
	for (int i = 0; c && i < NFF; i++) {
		const char *nm = luw_proto_ffname(c, tr->ff[i].ffid);

		CHECK(nm && !strcmp(nm, tr->ff[i].name),
		      "%s: ffid %u: \"%s\", want \"%s\"", prog, tr->ff[i].ffid,
		      nm ? nm : "(none)", tr->ff[i].name);
	}
	CHECK(c && !luw_proto_ffname(c, 0) && !luw_proto_ffname(c, 1),
	      "%s: ffid 0 (Lua) or 1 (C) named", prog);
	luw_proto_free(c);
	/* Without names: fast functions by number. */
	c = luw_proto_new(pid, &t->layout, NULL);
	CHECK(c, "%s: luw_proto_new", prog);
	if (!c)
		return;
	f.ffid = (uint8_t)tr->ff[0].ffid;
	snprintf(want, sizeof(want), "ff:#%u", tr->ff[0].ffid);
	expect_frame(prog, c, &f, want);
	luw_proto_free(c);
}

static void run(const char *prog, const char *script)
{
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	struct truth *tr = calloc(1, sizeof(*tr));
	struct luw_proto_ctx *c = NULL;
	char dir[64], facts[96];
	uint64_t pt[NFN];
	pid_t pid = -1;

	CHECK(t && tr, "out of memory");
	if (!t || !tr || luw_test_tmpdir("proto", dir, sizeof(dir))) {
		free(tr);
		free(t);
		return;
	}
	snprintf(facts, sizeof(facts), "%s/facts", dir);
	setenv("LUW_TEST_OUT", facts, 1);
	pid = luw_test_lua(prog, script, keys, NFN, t, pt);
	if (pid < 0 || read_truth(facts, tr))
		goto out;
	c = luw_proto_new(pid, &t->layout, &t->ff);
	CHECK(c, "%s: luw_proto_new", prog);
	if (!c)
		goto out;
	for (int k = 0; k < NFN; k++)
		check_fn(prog, c, &t->layout, k, pt[k], tr);
	check_frames(prog, c, &t->layout, pt[SMALL], tr);
	check_refused(prog, c, tr);
	check_many(prog, c, pid, &t->layout, tr, pt[SMALL]);
	check_ffnames(prog, pid, t, tr);
	printf("%s: %d protos, every bytecode position's line as the VM's\n",
	       prog, NFN + NMANY);
out:
	luw_proto_free(c);
	luw_test_stop(pid);
	luw_test_sh("rm -rf '%s'", dir);
	free_truth(tr);
	free(tr);
	free(t);
}

int main(int argc, char **argv)
{
	char script[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: test_proto FIXTURES\n");
		return 2;
	}
	snprintf(script, sizeof(script), "%s/workloads/protos.lua", argv[1]);
	run("luajit", script);
	run("tarantool", script);
	if (luw_test_status("test_proto"))
		return 1;
	printf("test_proto: ok\n");
	return 0;
}
