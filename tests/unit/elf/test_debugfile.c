/*
 * elf/debugfile.c on real ELF files: build-ids against binutils' readelf
 * -n (the two test targets, Debian's luajit and libc), and the search for
 * a separate debug file among files objcopy made from the test targets
 * (A and B, two builds of one program):
 *   found by .gnu_debuglink next to the object, then in .debug/ beside it;
 *   refused when the CRC the link states does not match (the file
 *   changed), or when the CRC matches but the build-id is another
 *   build's (a stripped A linked to B's debug file);
 *   taken on the CRC alone when the object has no build-id;
 *   found under a root (/proc/PID/root) by debuglink and by build-id
 *   (ROOT/usr/lib/debug/.build-id/xx/rest.debug), the path given without
 *   the root, and not found without it;
 *   libc's debug file (libc6-dbg) by its build-id, when installed.
 *
 * usage: test_debugfile FIXTURES TARGET_A TARGET_B
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/debugfile.h"
#include "elf/elf.h"
#include "testlib.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* path's build-id as readelf -n prints it, "" when none. */
static void readelf_build_id(const char *path, char *hex, size_t len)
{
	char cmd[4200], line[512];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	p = popen(cmd, "r");
	CHECK(p, "cannot run %s", cmd);
	while (p && fgets(line, sizeof(line), p))
		if (sscanf(line, " Build ID: %127s", hex) == 1 && strlen(hex) < len)
			break;
	if (p)
		pclose(p);
}

/* path's build-id as debugfile.c reads and prints it. */
static size_t our_build_id(const char *path, char *hex)
{
	uint8_t id[LUW_BUILD_ID_MAX];
	char err[512];
	size_t n = 0;
	int fd = -1;
	Elf *elf = luw_elf_open(path, &fd, err, sizeof(err));

	hex[0] = '\0';
	CHECK(elf, "%s", err);
	if (!elf)
		return 0;
	n = luw_debugfile_build_id(elf, id, sizeof(id));
	if (n)
		luw_debugfile_build_id_hex(id, n, hex);
	/* No room for it: none given. */
	CHECK(!n || luw_debugfile_build_id(elf, id, n - 1) == 0,
	      "%s: a %zu-byte build-id into %zu bytes", path, n, n - 1);
	elf_end(elf);
	close(fd);
	return n;
}

static void check_build_id(const char *path)
{
	char ours[2 * LUW_BUILD_ID_MAX + 1], theirs[128];
	size_t n = our_build_id(path, ours);

	readelf_build_id(path, theirs, sizeof(theirs));
	CHECK(n >= 16 && !strcmp(ours, theirs),
	      "%s: build-id \"%s\" (%zu bytes), readelf \"%s\"", path, ours, n,
	      theirs);
}

/*
 * The debug file of dir/obj (opened as objpath under root when root is
 * given) must be want (relative to dir unless it starts with '/'), or
 * none when want is NULL.  A file found must be ELF with build-id id_hex
 * (when not NULL).
 */
static void check_open(const char *what, const char *dir, const char *obj,
		       const char *objpath, const char *root, const char *want,
		       const char *id_hex)
{
	char file[4200], path[4200] = "", wantpath[4200], err[512], hex[130];
	uint8_t id[LUW_BUILD_ID_MAX];
	Elf *elf, *delf = NULL;
	int fd = -1, dfd = -1, rc;

	snprintf(file, sizeof(file), "%s/%s", dir, obj);
	elf = luw_elf_open(file, &fd, err, sizeof(err));
	CHECK(elf, "%s: %s", what, err);
	if (!elf)
		return;
	rc = luw_debugfile_open(elf, objpath ? objpath : file, root, path,
				sizeof(path), &dfd, &delf);
	if (!want) {
		CHECK(rc == -1, "%s: a debug file found: %s", what, path);
	} else {
		snprintf(wantpath, sizeof(wantpath), "%s%s%s",
			 want[0] == '/' ? "" : dir, want[0] == '/' ? "" : "/", want);
		CHECK(rc == 0 && !strcmp(path, wantpath),
		      "%s: rc %d, path \"%s\", want \"%s\"", what, rc, path, wantpath);
	}
	if (!rc && id_hex) {
		size_t n = luw_debugfile_build_id(delf, id, sizeof(id));

		luw_debugfile_build_id_hex(id, n, hex);
		CHECK(elf_kind(delf) == ELF_K_ELF && !strcmp(hex, id_hex),
		      "%s: the debug file's build-id %s, want %s", what, hex,
		      id_hex);
	}
	if (!rc) {
		elf_end(delf);
		close(dfd);
	}
	elf_end(elf);
	close(fd);
}

/*
 * Scratch files from A and B, see the opening comment; the debug links
 * are made from files of the names they will be looked up by.
 */
static int make_files(const char *d, const char *a, const char *b,
		      const char *bhex)
{
	return luw_test_sh(
		"cd %1$s && cp '%2$s' A && cp '%3$s' B && "
		/* a -> a.debug, A's */
		"objcopy --only-keep-debug A a.debug && "
		"objcopy --strip-debug --add-gnu-debuglink=a.debug A a && "
		/* b: A stripped, linked to B's debug file named b.debug */
		"objcopy --only-keep-debug B b.debug && "
		"objcopy --strip-debug --add-gnu-debuglink=b.debug A b && "
		/* c: no build-id, linked to A's debug file (with one) */
		"cp a.debug c.debug && "
		"objcopy --remove-section=.note.gnu.build-id --strip-debug "
		"--add-gnu-debuglink=c.debug A c && "
		/* e: A's copy whose debug file is in .debug/ */
		"mkdir .debug && cp a.debug .debug/e.debug && "
		"objcopy --strip-debug --add-gnu-debuglink=.debug/e.debug A e && "
		/* f: a.debug changed after the link was made */
		"cp a.debug f.debug && "
		"objcopy --strip-debug --add-gnu-debuglink=f.debug A f && "
		"printf x >>f.debug && "
		/* a root: root/x/prog -> root/x/a.debug; B by build-id */
		"mkdir -p root/x root/usr/lib/debug/.build-id/%4$.2s && "
		"cp a root/x/prog && cp a.debug root/x/ && "
		"cp b.debug root/usr/lib/debug/.build-id/%4$.2s/%5$s.debug && "
		"objcopy --strip-debug B bstripped",
		d, a, b, bhex, bhex + 2);
}

static void test_search(const char *a, const char *b)
{
	char d[64], ahex[130], bhex[130];

	our_build_id(a, ahex);
	our_build_id(b, bhex);
	CHECK(ahex[0] && bhex[0] && strcmp(ahex, bhex),
	      "the two targets' build-ids %s and %s", ahex, bhex);
	if (luw_test_tmpdir("debugfile", d, sizeof(d)))
		return;
	if (make_files(d, a, b, bhex))
		goto out;
	check_build_id(a);
	check_open("debuglink", d, "a", NULL, NULL, "a.debug", ahex);
	check_open("debuglink in .debug/", d, "e", NULL, NULL, ".debug/e.debug",
		   ahex);
	check_open("CRC changed", d, "f", NULL, NULL, NULL, NULL);
	check_open("another build's debug file", d, "b", NULL, NULL, NULL, NULL);
	{
		char c[128], hex[130];

		snprintf(c, sizeof(c), "%s/c", d);
		CHECK(!our_build_id(c, hex), "c has a build-id %s", hex);
	}
	check_open("no build-id: the CRC decides", d, "c", NULL, NULL,
		   "c.debug", ahex);
	{
		char root[128], want[200];

		snprintf(root, sizeof(root), "%s/root", d);
		check_open("debuglink under a root", root, "x/prog", "/x/prog",
			   root, "/x/a.debug", ahex);
		check_open("debuglink not under the root", root, "x/prog",
			   "/x/prog", NULL, NULL, NULL);
		snprintf(want, sizeof(want), "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 bhex, bhex + 2);
		check_open("build-id under a root", d, "bstripped", NULL, root,
			   want, bhex);
		check_open("build-id not under the root", d, "bstripped", NULL,
			   NULL, NULL, NULL);
	}
out:
	luw_test_sh("rm -rf '%s'", d);
}

/* libc6-dbg's file for the libc here, found by build-id. */
static void test_libc(void)
{
	char hex[130], want[300];

	check_build_id(LIBC);
	if (!our_build_id(LIBC, hex))
		return;
	snprintf(want, sizeof(want), "/usr/lib/debug/.build-id/%.2s/%s.debug",
		 hex, hex + 2);
	if (access(want, R_OK)) {
		printf("skip: %s (libc6-dbg) not installed\n", want);
		return;
	}
	check_open("libc by build-id", "/lib/x86_64-linux-gnu", "libc.so.6",
		   NULL, NULL, want, hex);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: test_debugfile FIXTURES TARGET_A TARGET_B\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	check_build_id(argv[3]);
	check_build_id("/usr/bin/luajit");
	test_search(argv[2], argv[3]);
	test_libc();
	if (luw_test_status("test_debugfile"))
		return 1;
	printf("test_debugfile: ok\n");
	return 0;
}
