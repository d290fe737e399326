/*
 * output/stacks.c, the stack aggregator, against hand-made cases and a
 * naive reference (folded strings, sorted with memcmp, equal lines
 * merged).
 */
#include "output/stacks.h"
#include "testlib.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int32_t in(struct luw_stacks *s, const char *name)
{
	return luw_stacks_intern(s, name, strlen(name));
}

/* Folded output of s as a malloc'd string. */
static char *folded(const struct luw_stacks *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f || luw_stacks_write_folded(s, f)) {
		fprintf(stderr, "write_folded failed\n");
		exit(1);
	}
	fclose(f);
	return buf;
}

static int read_str(struct luw_stacks *s, const char *text, char *err,
		    size_t errsize)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f) {
		perror("fmemopen");
		exit(1);
	}
	ret = luw_stacks_read_folded(s, f, err, errsize);
	fclose(f);
	return ret;
}

static void test_intern(void)
{
	struct luw_stacks *s = luw_stacks_new();
	const char *first;
	int32_t a, b, c, d, e;
	char big[100000];
	int i;

	a = in(s, "main");
	b = in(s, "lua_pcall");
	c = in(s, "main");
	CHECK(a >= 0 && b >= 0 && a != b, "ids %d %d", a, b);
	CHECK(a == c, "same name, ids %d %d", a, c);
	/* Prefixes, embedded spaces and odd bytes are distinct names. */
	d = luw_stacks_intern(s, "mainx", 4);
	CHECK(d == a, "length decides the name: %d %d", d, a);
	e = in(s, "outer @sw.lua:3");
	CHECK(e != a && strcmp(luw_stacks_name(s, e), "outer @sw.lua:3") == 0,
	      "spaces kept: '%s'", luw_stacks_name(s, e));
	CHECK(in(s, "") >= 0 && luw_stacks_name_len(s, in(s, "")) == 0,
	      "empty name");
	CHECK(luw_stacks_name(s, -1) == NULL && luw_stacks_name(s, 1000) == NULL,
	      "bad ids give NULL");
	first = luw_stacks_name(s, a);
	/* Many more names, and one bigger than an arena chunk: earlier
	 * pointers must not move. */
	for (i = 0; i < 50000; i++) {
		char nm[32];

		snprintf(nm, sizeof(nm), "fn_%d", i);
		CHECK(in(s, nm) >= 0, "intern %s", nm);
	}
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	c = in(s, big);
	CHECK(c >= 0 && luw_stacks_name_len(s, c) == sizeof(big) - 1,
	      "big name");
	CHECK(first == luw_stacks_name(s, a), "name pointer moved");
	CHECK(strcmp(luw_stacks_name(s, in(s, "fn_31337")), "fn_31337") == 0,
	      "lookup after growth");
	CHECK(luw_stacks_nnames(s) == 50000 + 5, "nnames %zu",
	      luw_stacks_nnames(s));
	luw_stacks_free(s);
}

static void test_merge_and_errors(void)
{
	struct luw_stacks *s = luw_stacks_new();
	int32_t f[3];
	char *txt;

	f[0] = in(s, "main");
	f[1] = in(s, "lua_pcall");
	f[2] = in(s, "c_leaf");
	CHECK(luw_stacks_add(s, f, 3, 2) == 0, "add");
	CHECK(luw_stacks_add(s, f, 2, 5) == 0, "add prefix");
	CHECK(luw_stacks_add(s, f, 3, 1) == 0, "add again");
	CHECK(luw_stacks_add(s, f, 3, 0) == 0, "add zero");
	CHECK(luw_stacks_count(s) == 2, "count %zu", luw_stacks_count(s));
	CHECK(luw_stacks_total(s) == 8, "total %" PRIu64, luw_stacks_total(s));
	txt = folded(s);
	CHECK(strcmp(txt, "main;lua_pcall 5\nmain;lua_pcall;c_leaf 3\n") == 0,
	      "folded:\n%s", txt);
	free(txt);

	errno = 0;
	CHECK(luw_stacks_add(s, f, 0, 1) == -1 && errno == EINVAL, "n == 0");
	f[1] = 12345;
	errno = 0;
	CHECK(luw_stacks_add(s, f, 3, 1) == -1 && errno == EINVAL, "bad id");
	f[1] = in(s, "lua_pcall");
	errno = 0;
	CHECK(luw_stacks_add(s, f, 1, UINT64_MAX) == -1 && errno == EOVERFLOW,
	      "overflow");
	CHECK(luw_stacks_total(s) == 8 && luw_stacks_count(s) == 2,
	      "a refused add changes nothing");
	luw_stacks_free(s);
}

/* Stacks whose folded order differs from a frame-by-frame order. */
static void test_order(void)
{
	static const char *const text =
		"a;b 1\n"
		"a!;z 2\n"
		"a 3\n"
		"ab 4\n"
		"a;b;c 5\n"
		"a;b!;x 6\n"
		"\xff;a 7\n"
		"a b;c 8\n"
		"B 9\n";
	static const char *const want =
		"B 9\n"
		"a 3\n"
		"a b;c 8\n"
		"a!;z 2\n"
		"a;b 1\n"
		"a;b!;x 6\n"
		"a;b;c 5\n"
		"ab 4\n"
		"\xff;a 7\n";
	struct luw_stacks *s = luw_stacks_new();
	char err[128];
	char *txt;

	CHECK(read_str(s, text, err, sizeof(err)) == 0, "read: %s", err);
	txt = folded(s);
	CHECK(strcmp(txt, want) == 0, "order:\n%s", txt);
	free(txt);
	luw_stacks_free(s);
}

static void test_read_errors(void)
{
	static const struct {
		const char *text;
		const char *msg;
	} bad[] = {
		{ "a;b 1\nnocount\n", "line 2: no space before the count" },
		{ "a;b 1\n\na;b x1\n", "line 3: the text after the last" },
		{ "a 1\nb -3\n", "line 2: the text after the last" },
		{ "a 99999999999999999999999\n", "line 1: the text after" },
		{ "a 1\nb 2\nc 3 \n", "line 3: the text after the last" },
		{ "a 18446744073709551615\nb 1\n", "line 2: the total count" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct luw_stacks *s = luw_stacks_new();
		char err[128] = "";

		CHECK(read_str(s, bad[i].text, err, sizeof(err)) == -1,
		      "case %zu accepted", i);
		CHECK(strncmp(err, bad[i].msg, strlen(bad[i].msg)) == 0,
		      "case %zu: got '%s', want '%s'", i, err, bad[i].msg);
		luw_stacks_free(s);
	}

	/* A NUL byte inside a line. */
	{
		static const char nul[] = "a 1\nb\0c 2\n";
		struct luw_stacks *s = luw_stacks_new();
		FILE *f = fmemopen((void *)nul, sizeof(nul) - 1, "r");
		char err[128] = "";

		CHECK(luw_stacks_read_folded(s, f, err, sizeof(err)) == -1 &&
		      strcmp(err, "line 2: NUL byte in the line") == 0,
		      "NUL: '%s'", err);
		/* What came before the bad line is kept. */
		CHECK(luw_stacks_total(s) == 1, "kept %" PRIu64,
		      luw_stacks_total(s));
		fclose(f);
		luw_stacks_free(s);
	}

	/* Accepted: tab before the count, CRLF, no final newline, empty
	 * lines, empty frames (the reference sysprof parser's lines). */
	{
		struct luw_stacks *s = luw_stacks_new();
		char err[128] = "";
		char *txt;

		CHECK(read_str(s, "a;b\t2\r\n\n;\t5\nx;y; 1\nq 7", err,
			       sizeof(err)) == 0, "lenient: %s", err);
		txt = folded(s);
		CHECK(strcmp(txt, "; 5\na;b 2\nq 7\nx;y; 1\n") == 0,
		      "lenient:\n%s", txt);
		free(txt);
		luw_stacks_free(s);
	}
}

static void test_fixture(const char *dir)
{
	static const char *const files[] = {
		"sysprof_callchain.expected.folded",
		"sysprof_callchain_jit.expected.folded",
		"sysprof_leaf.expected.folded",
		"sample.folded",
	};
	static const uint64_t totals[] = { 500, 500, 250, 1500 };
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096], err[128] = "";
		struct luw_stacks *s = luw_stacks_new(), *t = luw_stacks_new();
		FILE *f;
		char *a, *b;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		f = fopen(path, "r");
		if (!f) {
			CHECK(0, "%s: %s", path, strerror(errno));
			continue;
		}
		CHECK(luw_stacks_read_folded(s, f, err, sizeof(err)) == 0,
		      "%s: %s", path, err);
		fclose(f);
		CHECK(luw_stacks_total(s) == totals[i],
		      "%s: total %" PRIu64, path, luw_stacks_total(s));
		/* Our own output reads back to the same output. */
		a = folded(s);
		CHECK(read_str(t, a, err, sizeof(err)) == 0, "%s", err);
		b = folded(t);
		CHECK(strcmp(a, b) == 0, "%s: round trip differs", path);
		CHECK(luw_stacks_total(t) == luw_stacks_total(s) &&
		      luw_stacks_count(t) == luw_stacks_count(s),
		      "%s: round trip totals", path);
		free(a);
		free(b);
		luw_stacks_free(s);
		luw_stacks_free(t);
	}
}

static void test_top(void)
{
	static const char *const want =
		"Heaviest stacks (2 of 3, 7 samples):\n"
		"         3  42.86%  a;b;a\n"
		"         3  42.86%  a;c\n"
		"\n"
		"Frames by self samples (2 of 4):\n"
		"      self  self%     total total%  frame\n"
		"         3  42.86%         6  85.71%  a\n"
		"         3  42.86%         3  42.86%  c\n";
	struct luw_stacks *s = luw_stacks_new();
	char err[128], *buf = NULL;
	size_t len = 0;
	FILE *f;

	/* Recursion (a under a) counts once in a's total; ties go by text. */
	CHECK(read_str(s, "x 1\na;c 3\na;b;a 3\n", err, sizeof(err)) == 0,
	      "%s", err);
	f = open_memstream(&buf, &len);
	CHECK(luw_stacks_write_top(s, f, 2, NULL) == 0, "write_top");
	fclose(f);
	CHECK(strcmp(buf, want) == 0, "top:\n%s", buf);
	free(buf);
	luw_stacks_free(s);
}

/* xorshift: same sequence on every run. */
static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct ref_line {
	char *text;
	uint64_t count;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct ref_line *x = a, *y = b;
	size_t lx = strlen(x->text), ly = strlen(y->text);
	int c = memcmp(x->text, y->text, lx < ly ? lx : ly);

	if (c)
		return c;
	return (lx > ly) - (lx < ly);
}

static void test_random(void)
{
	/* Names chosen so that prefixes, spaces and high bytes collide in
	 * the ordering. */
	static const char *const names[] = {
		"main", "lua_pcall", "lua_call", "a", "ab", "a b", "a!",
		"outer @sw.lua:3", "inner @sw.lua:9", "c_leaf", "TRACE_1",
		"\xc3\xa9t\xc3\xa9", "~", "A", "lj_BC_FUNCC", "x;",
	};
	enum { NNAMES = sizeof(names) / sizeof(names[0]), ADDS = 200000 };
	struct luw_stacks *s = luw_stacks_new();
	struct ref_line *ref = malloc(ADDS * sizeof(*ref));
	int32_t ids[NNAMES], frames[40];
	size_t i, nref = 0, off = 0;
	char *got, *want = NULL;
	size_t wantlen = 0;
	FILE *w;

	for (i = 0; i < NNAMES; i++)
		ids[i] = in(s, names[i]);
	for (i = 0; i < ADDS; i++) {
		/* Skewed choice: few names at each depth, so stacks repeat. */
		size_t n = 1 + rnd() % 12, k, pos = 0;
		uint64_t count = 1 + rnd() % 3;
		char buf[1024];

		for (k = 0; k < n; k++) {
			/* ';' inside "x;" would make text ambiguous: only
			 * use it as the leaf, where it is still unique. */
			size_t pick = rnd() % (k + 1 == n ? NNAMES : NNAMES - 1);

			if (k < 3)
				pick %= 3;
			frames[k] = ids[pick];
			pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos,
						"%s%s", k ? ";" : "", names[pick]);
		}
		CHECK(luw_stacks_add(s, frames, n, count) == 0, "add");
		ref[nref].text = strdup(buf);
		ref[nref++].count = count;
	}
	qsort(ref, nref, sizeof(*ref), cmp_ref);
	w = open_memstream(&want, &wantlen);
	for (i = 0; i < nref; i = off) {
		uint64_t c = 0;

		for (off = i; off < nref && strcmp(ref[off].text, ref[i].text) == 0;
		     off++)
			c += ref[off].count;
		fprintf(w, "%s %" PRIu64 "\n", ref[i].text, c);
	}
	fclose(w);
	got = folded(s);
	CHECK(strcmp(got, want) == 0, "random load differs from reference");
	for (i = 0; i < nref; i++)
		free(ref[i].text);
	free(ref);
	free(got);
	free(want);
	luw_stacks_free(s);
}

/* Figures only: the sanitizer build is many times slower. */
static void bench(void)
{
	struct luw_stacks *s = luw_stacks_new();
	int32_t ids[64], frames[32];
	struct timespec t0, t1;
	size_t i, k, adds = 2000000;
	double secs;

	for (i = 0; i < 64; i++) {
		char nm[32];

		snprintf(nm, sizeof(nm), "frame_%zu @x.lua:%zu", i, i * 7);
		ids[i] = in(s, nm);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < adds; i++) {
		uint64_t r = rnd();

		for (k = 0; k < 24; k++)
			frames[k] = ids[k];
		frames[24] = ids[24 + r % 20];
		frames[25] = ids[44 + (r >> 8) % 20];
		CHECK(luw_stacks_add(s, frames, 26, 1) == 0, "add");
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(luw_stacks_total(s) == adds && luw_stacks_count(s) == 400,
	      "bench totals");
	printf("stacks: %.2f M adds/s (26 frames, 400 distinct stacks)\n",
	       (double)adds / secs / 1e6);
	luw_stacks_free(s);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	test_intern();
	test_merge_and_errors();
	test_order();
	test_read_errors();
	test_top();
	test_fixture(argv[1]);
	test_random();
	bench();
	if (luw_test_status("test_stacks"))
		return 1;
	printf("test_stacks: all checks passed\n");
	return 0;
}
