/*
 * target/ffscan.c on live processes against the VM's own numbering:
 * Debian luajit and tarantool 2.6 run tests/fixtures/workloads/ffnames.lua,
 * which writes the ffid (jit.util.funcinfo) of every fast function its
 * library tables hold, under each name it is held by.  The names
 * luw_ffscan_names reads from the same tables must give every such ffid
 * one of those names; where the build's own names (DWARF for tarantool,
 * the known build's list for luajit, taken at attach) name an id too,
 * both must agree; ids no table holds (ipairs_aux, io.method.*) must be
 * named from the list.
 * luw_ffscan_check_strings must pass on every live G and fail with a
 * string field moved, on memory that is no G, and on an unreadable
 * address.  A host whose globals are an empty table (ts_lua's shape,
 * target_emptyglobals) has no fast function in its tables, yet its
 * strings check.
 *
 * usage: test_ffscan FIXTURES TARGET_EMPTYGLOBALS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luajit/ffnames.h"
#include "target/ffscan.h"
#include "target/layout.h"
#include "testlib.h"

/* The script's "FFID NAME" lines. */
struct held {
	unsigned int ffid;
	char name[128];
};

static int read_held(const char *path, struct held **out)
{
	FILE *f = fopen(path, "r");
	struct held *v = NULL, h;
	char line[256];
	int n = 0;

	CHECK(f, "cannot read %s", path);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %127s", &h.ffid, h.name) != 2 ||
		    h.ffid >= LUW_FF_MAX)
			continue;
		v = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!v) {
			perror("realloc");
			exit(1);
		}
		v[n++] = h;
	}
	if (f)
		fclose(f);
	*out = v;
	return n;
}

/* ffid's name must be one the tables hold it by. */
static int held_as(const struct held *v, int n, unsigned int ffid,
		   const char *name)
{
	for (int i = 0; i < n; i++)
		if (v[i].ffid == ffid && !strcmp(v[i].name, name))
			return 1;
	return 0;
}

static void check_names(const char *prog, const struct luw_ffnames *ff,
			const struct luw_ffnames *own, const struct held *v,
			int n)
{
	unsigned int agree = 0, listed = 0;

	for (int i = 0; i < n; i++) {
		const char *nm = luw_ffnames_get(ff, v[i].ffid);

		CHECK(nm && held_as(v, n, v[i].ffid, nm),
		      "%s: ffid %u (held as %s) named \"%s\"", prog, v[i].ffid,
		      v[i].name, nm ? nm : "(none)");
	}
	for (unsigned int id = 2; id < LUW_FF_MAX; id++) {
		const char *nm = luw_ffnames_get(ff, id);
		const char *o = luw_ffnames_get(own, id);
		int held = 0;

		for (int i = 0; i < n && !held; i++)
			held = v[i].ffid == id;
		if (nm && !held) {
			CHECK(luw_ffnames_listed(nm),
			      "%s: ffid %u held by no table named \"%s\"", prog,
			      id, nm);
			listed++;
		}
		if (nm && o) {
			CHECK(!strcmp(nm, o), "%s: ffid %u: tables \"%s\", %s \"%s\"",
			      prog, id, nm, own->src, o);
			agree++;
		}
	}
	CHECK(agree >= 100, "%s: %u ids named both by the tables and by %s",
	      prog, agree, own->src);
	/* ipairs_aux, io.method.*, ffi.meta.*: in no table, from the list. */
	CHECK(listed >= 5, "%s: %u ids held by no table named", prog, listed);
	printf("%s: %d names held, %u ids from the list, %u agree with %s\n",
	       prog, n, listed, agree, own->src);
}

/* The strings check on G, and with one string field moved. */
static void check_strings(const char *prog, const struct luw_layout_target *t)
{
	struct luw_lj_layout ly;
	char why[512];

	for (int i = 0; i < t->nstates; i++)
		CHECK(!luw_ffscan_check_strings(t->pid, &t->layout, t->states[i],
						why, sizeof(why)),
		      "%s: G 0x%llx: %s", prog,
		      (unsigned long long)t->states[i], why);
	ly = t->layout;
	ly.str_len += 4;
	CHECK(luw_ffscan_check_strings(t->pid, &ly, t->states[0], why,
				       sizeof(why)) == -1 &&
	      strstr(why, "no metamethod names"),
	      "%s: str_len moved, yet the strings check", prog);
	ly = t->layout;
	ly.str_size += 8;
	CHECK(luw_ffscan_check_strings(t->pid, &ly, t->states[0], why,
				       sizeof(why)) == -1,
	      "%s: str_size moved, yet the strings check", prog);
	ly = t->layout;
	ly.gct_str ^= 1;
	CHECK(luw_ffscan_check_strings(t->pid, &ly, t->states[0], why,
				       sizeof(why)) == -1,
	      "%s: another gct taken for strings, yet they check", prog);
	/* G's metamethod names are in its first bytes: not 1 KiB further. */
	CHECK(luw_ffscan_check_strings(t->pid, &t->layout, t->states[0] + 1024,
				       why, sizeof(why)) == -1,
	      "%s: memory past G taken for G", prog);
	CHECK(luw_ffscan_check_strings(t->pid, &t->layout, 0x1000, why,
				       sizeof(why)) == -1 &&
	      strstr(why, "unreadable"), "%s: address 0x1000: %s", prog, why);
}

static void run(const char *prog, const char *script)
{
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	struct luw_ffnames own;
	struct held *held = NULL;
	char dir[64], facts[96], why[512];
	pid_t pid = -1;
	int n;

	CHECK(t, "out of memory");
	if (!t || luw_test_tmpdir("ffscan", dir, sizeof(dir))) {
		free(t);
		return;
	}
	snprintf(facts, sizeof(facts), "%s/facts", dir);
	setenv("LUW_TEST_OUT", facts, 1);
	pid = luw_test_lua(prog, script, NULL, 0, t, NULL);
	if (pid < 0)
		goto out;
	n = read_held(facts, &held);
	CHECK(n >= 100, "%s: %d fast functions held by the tables", prog, n);
	own = t->ff;
	CHECK(own.count >= 100, "%s: %u names at attach (%s)", prog, own.count,
	      own.src);
	if (luw_ffscan_names(t, why, sizeof(why))) {
		CHECK(0, "%s: luw_ffscan_names: %s", prog, why);
	} else {
		CHECK(!strncmp(t->ff.src, "library tables (", 16),
		      "%s: names from \"%s\"", prog, t->ff.src);
		check_names(prog, &t->ff, &own, held, n);
	}
	check_strings(prog, t);
out:
	luw_test_stop(pid);
	luw_test_sh("rm -rf '%s'", dir);
	free(held);
	free(t);
}

/* Globals emptied: nothing to name from, the strings still check. */
static void run_emptyglobals(const char *path)
{
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	char *argv[] = { (char *)path, NULL };
	char err[1024], why[512];
	pid_t pid = luw_test_spawn(argv, NULL, NULL, 0, NULL);

	CHECK(t && pid > 0, "%s did not start", path);
	if (!t || pid <= 0)
		goto out;
	if (luw_layout_attach(pid, t, err, sizeof(err))) {
		CHECK(0, "emptyglobals: luw_layout_attach: %s", err);
		goto out;
	}
	CHECK(luw_ffscan_names(t, why, sizeof(why)) == -1 &&
	      strstr(why, "no fast function"),
	      "emptyglobals: names from empty globals (%u, %s)", t->ff.count,
	      why);
	check_strings("emptyglobals", t);
out:
	luw_test_stop(pid);
	free(t);
}

int main(int argc, char **argv)
{
	char script[4096];

	if (argc < 3) {
		fprintf(stderr, "usage: test_ffscan FIXTURES TARGET_EMPTYGLOBALS\n");
		return 2;
	}
	snprintf(script, sizeof(script), "%s/workloads/ffnames.lua", argv[1]);
	run("luajit", script);
	run("tarantool", script);
	run_emptyglobals(argv[2]);
	if (luw_test_status("test_ffscan"))
		return 1;
	printf("test_ffscan: ok\n");
	return 0;
}
