/*
 * luajit/luaname.c against LuaJIT's own parser: for every string of up
 * to three characters over an alphabet of letters, digits, '_', '+',
 * '.' and a byte above 0x7f, and for each reserved word and words that
 * differ from one by a letter or its case, luw_luaname_ident must say
 * "a name" exactly when luajit compiles `local S` (a declaration takes
 * one name and nothing else) -- but for the two places where it means to
 * be stricter than this luajit (luaname.h): a byte above 0x7f and `goto`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luajit/luaname.h"
#include "testlib.h"

static const char alpha[] = "aZ_0+.\xc3";

static const char *const words[] = {
	"and", "break", "do", "else", "elseif", "end", "false", "for",
	"function", "goto", "if", "in", "local", "nil", "not", "or", "repeat",
	"return", "then", "true", "until", "while",
	"End", "ends", "nil_", "_end", "self", "_G", "ENV", "_ENV", "gotoo",
	"cache", "users9", "x1y2", "continue", "elsif",
};

/* Each candidate on its own line of f; their number. */
static int candidates(FILE *f, char (*out)[16], int max)
{
	int n = 0;
	size_t na = sizeof(alpha) - 1;

	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
		snprintf(out[n++], 16, "%s", words[w]);
	for (size_t len = 1; len <= 3; len++) {
		size_t total = 1;

		for (size_t i = 0; i < len; i++)
			total *= na;
		for (size_t k = 0; k < total && n < max; k++) {
			size_t v = k;

			for (size_t i = 0; i < len; i++, v /= na)
				out[n][i] = alpha[v % na];
			out[n][len] = 0;
			n++;
		}
	}
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n", out[i]);
	return n;
}

int main(int argc, char **argv)
{
	static char cand[1024][16];
	char dir[64], path[128], cmd[512], line[64];
	FILE *f, *p;
	int n, i = 0, names = 0;

	(void)argc;
	(void)argv;
	CHECK(!luw_luaname_ident("", 0), "the empty string is no name");
	if (luw_test_tmpdir("luaname", dir, sizeof(dir)))
		return luw_test_status("test_luaname");
	snprintf(path, sizeof(path), "%s/cands", dir);
	f = fopen(path, "w");
	CHECK(f != NULL, "%s: cannot write", path);
	if (!f)
		return luw_test_status("test_luaname");
	n = candidates(f, cand, 1024);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "luajit -e 'for s in io.lines(\"%s\") do "
		 "print(loadstring(\"local \" .. s) and 1 or 0) end'",
		 path);
	p = popen(cmd, "r");
	CHECK(p != NULL, "cannot run luajit");
	while (p && fgets(line, sizeof(line), p) && i < n) {
		int want = line[0] == '1', got;

		/* Where luaname means to differ, luajit must still say a name
		 * (else the difference is gone and the test needs a look). */
		if (!strcmp(cand[i], "goto") || !strcmp(cand[i], "a\xc3"))
			CHECK(want, "\"%s\": luajit no longer takes it as a name",
			      cand[i]);
		if (strchr(cand[i], '\xc3') || !strcmp(cand[i], "goto"))
			want = 0;

		got = luw_luaname_ident(cand[i], strlen(cand[i]));
		CHECK(got == want, "\"%s\": luajit says %s, luaname says %s",
		      cand[i], want ? "a name" : "no name", got ? "a name" : "no name");
		names += want;
		i++;
	}
	CHECK(p && pclose(p) == 0, "luajit failed");
	CHECK(i == n, "luajit answered %d of %d candidates", i, n);
	CHECK(names > 50, "only %d names among the candidates", names);
	printf("%d candidates, %d of them names, as luajit parses them\n", n, names);
	luw_test_sh("rm -rf '%s'", dir);
	return luw_test_status("test_luaname");
}
