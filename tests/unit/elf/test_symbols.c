/*
 * elf/symbols.c (with proc/maps.c and elf/ehframe.c, which it builds on):
 * ELF symbolization and /proc/PID/maps parsing on real files: this test's
 * own PIE (.symtab, ASLR bias from its maps), the libc it runs with
 * (.dynsym, plus the libc6-dbg file found by build-id), Debian's stripped
 * luajit (.dynsym only; _start named from the CFI; unnamed VM code stays
 * unnamed), and a stripped copy of a test target whose symbols come back
 * through .gnu_debuglink, refused when the CRC does not match.  libc's
 * FDE ranges (ehframe.c) and the FDE lookup of unnamed code agree with
 * libdw's own lookup through .eh_frame_hdr.
 *
 * usage: test_symbols FIXTURES TARGET_ELF
 */
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "elf/ehframe.h"
#include "elf/symbols.h"
#include "proc/maps.h"
#include "testlib.h"

__attribute__((noinline)) int luw_test_marker(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int luw_test_local(int x)
{
	return x * 7 + 2;
}

static struct luw_maps maps;

/* Symbolize a live address of this process the way the tools do. */
static const char *name_of(const void *p, uint64_t *offp,
			   const struct luw_symbols **ep)
{
	uint64_t addr = (uint64_t)(uintptr_t)p, vaddr;
	const struct luw_map *mp = luw_maps_find(&maps, addr);
	const struct luw_symbols_sym *s;
	struct luw_symbols *e;
	char err[512];

	if (!mp || !luw_maps_is_file(mp))
		return NULL;
	e = luw_symbols_get(mp->path, err, sizeof(err));
	if (!e) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	if (ep)
		*ep = e;
	if (luw_symbols_off2vaddr(e, luw_maps_fileoff(mp, addr), &vaddr))
		return NULL;
	s = luw_symbols_at(e, vaddr);
	if (s && offp)
		*offp = vaddr - s->addr;
	return s ? s->name : NULL;
}

static void test_self(void)
{
	const struct luw_symbols *e = NULL;
	const char *n;
	uint64_t off = ~0ULL;

	n = name_of((const void *)(uintptr_t)luw_test_marker, &off, &e);
	CHECK(n && !strcmp(n, "luw_test_marker") && off == 0,
	      "own global function: %s+%llu", n ? n : "(null)",
	      (unsigned long long)off);
	n = name_of((const char *)(uintptr_t)luw_test_local + 3, &off, NULL);
	CHECK(n && !strcmp(n, "luw_test_local") && off == 3,
	      "own static function +3: %s+%llu", n ? n : "(null)",
	      (unsigned long long)off);
	CHECK(e && e->e_type == 3 /* ET_DYN: PIE, so a real bias */,
	      "test is not PIE");
	CHECK(luw_test_marker(1) + luw_test_local(1) == 13, "arith");
}

/*
 * Every FDE of libc as ehframe.c lists it: its first and last byte are
 * covered by an FDE for libdw too (which searches .eh_frame_hdr) and
 * luw_symbols_fde_start names its start for both; the byte after it, when
 * libdw finds no FDE there (padding between functions), is covered for
 * neither.
 */
static void test_fde_ranges(const char *path)
{
	struct luw_symbols *e;
	struct luw_fdes f;
	Dwarf_CFI *cfi;
	Dwarf_Frame *fr;
	size_t gaps = 0, bad = 0;
	char err[512];
	uint64_t st;
	Elf *elf;
	int fd;

	e = luw_symbols_get(path, err, sizeof(err));
	elf = luw_elf_open(path, &fd, err, sizeof(err));
	CHECK(e && elf, "%s", err);
	if (!e || !elf)
		return;
	cfi = dwarf_getcfi_elf(elf);
	CHECK(cfi, "%s: no CFI", path);
	CHECK(luw_ehframe_fdes(elf, &f) == 0 && f.n > 1000 && !f.bad,
	      "%s: %zu FDEs, %zu bad", path, f.n, f.bad);
	for (size_t i = 0; cfi && i < f.n; i++) {
		uint64_t s = f.v[i].start, end = f.v[i].end;

		if (luw_symbols_fde_start(e, s, &st) || st != s ||
		    luw_symbols_fde_start(e, end - 1, &st) || st != s ||
		    dwarf_cfi_addrframe(cfi, s, &fr)) {
			bad++;
			continue;
		}
		free(fr);
		if (dwarf_cfi_addrframe(cfi, end - 1, &fr)) {
			bad++;
			continue;
		}
		free(fr);
		if (dwarf_cfi_addrframe(cfi, end, &fr) == 0) {
			free(fr);	/* the next FDE starts right there */
			continue;
		}
		gaps++;
		if (luw_symbols_fde_start(e, end, &st) == 0)
			bad++;
	}
	CHECK(!bad, "%s: %zu of %zu FDEs disagree with libdw", path, bad, f.n);
	CHECK(gaps, "%s: no byte between two FDEs", path);
	printf("%s: %zu FDEs agree with libdw, %zu gaps between them\n", path,
	       f.n, gaps);
	luw_ehframe_free(&f);
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
	close(fd);
}

static void test_libc(void)
{
	const struct luw_symbols *e = NULL;
	const struct luw_symbols_sym *s;
	const char *n;
	uint64_t off;

	n = name_of((const void *)(uintptr_t)getpid, &off, &e);
	CHECK(n && (!strcmp(n, "getpid") || !strcmp(n, "__getpid")) && off == 0,
	      "libc getpid: %s", n ? n : "(null)");
	n = name_of((const char *)(uintptr_t)qsort + 1, &off, NULL);
	CHECK(n && strstr(n, "qsort") && off == 1, "libc qsort+1: %s",
	      n ? n : "(null)");
	if (!e)
		return;
	test_fde_ranges(e->path);
	/* libc6-dbg: the build-id debug file adds the static functions. */
	CHECK(e->debug_path && strstr(e->debug_path, "/usr/lib/debug/.build-id/"),
	      "libc debug file not found (is libc6-dbg installed?)");
	s = luw_symbols_named(e, "__libc_start_call_main");
	CHECK(s && luw_symbols_at(e, s->addr + 1) == s,
	      "static __libc_start_call_main not resolved");
	CHECK(e->build_id_len == 20, "libc build-id length %zu", e->build_id_len);
	for (size_t i = 0; i < e->nsyms; i++)
		if (strchr(e->syms[i].name, '@')) {
			CHECK(0, "version suffix kept: %s", e->syms[i].name);
			break;
		}
}

static void test_stripped_luajit(void)
{
	char err[512];
	struct luw_symbols *e = luw_symbols_load("/usr/bin/luajit", err, sizeof(err));
	struct luw_cfi *t = luw_cfi_build("/usr/bin/luajit", err, sizeof(err));
	const struct luw_symbols_sym *s;
	uint64_t vaddr;

	CHECK(e && t, "%s", err);
	if (!e || !t)
		goto out;
	CHECK(!e->debug_path, "luajit: unexpected debug file %s", e->debug_path);
	s = luw_symbols_named(e, "main");
	CHECK(s && s->end > s->addr, "luajit main from .dynsym");
	s = luw_symbols_named(e, "lua_pcall");
	CHECK(s && luw_symbols_at(e, s->addr + 4) == s, "luajit lua_pcall");
	s = luw_symbols_named(e, "_start");
	CHECK(s && s->addr == e->entry && s->end - s->addr >= 0x20,
	      "luajit _start from the entry's CFI");
	/* The VM: one FDE with a fixed frame over many KiB, no symbol. */
	for (uint32_t i = 0; i + 1 < t->n; i++)
		if (LUW_UW_CFA_OF(t->ent[i].rule) == LUW_UW_CFA_RSP &&
		    t->ent[i + 1].start - t->ent[i].start > 8192) {
			uint64_t mid = (t->ent[i].start + t->ent[i + 1].start) / 2;

			CHECK(!luw_symbols_off2vaddr(e, mid, &vaddr), "VM offset");
			s = luw_symbols_at(e, vaddr);
			CHECK(!s, "VM code named after a neighbour: %s", s->name);
			break;
		}
out:
	luw_symbols_free(e);
	luw_cfi_free(t);
}

static void test_debuglink(const char *target)
{
	char dir[64], path[4200], err[512];
	struct luw_symbols *e;

	if (luw_test_tmpdir("symbols", dir, sizeof(dir)))
		return;
	if (luw_test_sh("cd %s && cp '%s' t && objcopy --only-keep-debug t t.debug && "
			"objcopy --strip-all --add-gnu-debuglink=t.debug t t.stripped",
			dir, target))
		goto out;
	snprintf(path, sizeof(path), "%s/t.stripped", dir);
	e = luw_symbols_load(path, err, sizeof(err));
	CHECK(e, "%s", err);
	if (e) {
		CHECK(e->debug_path && strstr(e->debug_path, "/t.debug"),
		      "debuglink not followed: %s",
		      e->debug_path ? e->debug_path : "(none)");
		CHECK(luw_symbols_named(e, "rec_a") && luw_symbols_named(e, "leaf_spin"),
		      "symbols of the debug file missing");
		luw_symbols_free(e);
	}
	/* A debug file of another build: CRC differs, must be refused. */
	luw_test_sh("cd %s && printf x >> t.debug", dir);
	e = luw_symbols_load(path, err, sizeof(err));
	CHECK(e && !e->debug_path && !luw_symbols_named(e, "rec_a"),
	      "debug file with a wrong CRC used");
	luw_symbols_free(e);
	/* Cache: a second path of the same build-id gives the same object. */
	{
		struct luw_symbols *a, *b;

		snprintf(path, sizeof(path), "%s/t", dir);
		a = luw_symbols_get(target, err, sizeof(err));
		b = luw_symbols_get(path, err, sizeof(err));
		CHECK(a && a == b, "cache per build-id");
		CHECK(b == luw_symbols_get(path, err, sizeof(err)), "alias cache");
		/* Tables too: one per build-id, whatever the path. */
		CHECK(luw_cfi_get(target, err, sizeof(err)) ==
		      luw_cfi_get(path, err, sizeof(err)), "table cache per build-id");
		CHECK(luw_cfi_get(path, err, sizeof(err)) ==
		      luw_cfi_get(target, err, sizeof(err)), "table alias cache");
	}
out:
	luw_test_sh("rm -rf '%s'", dir);
}

static void test_maps_parse(void)
{
	static const char text[] =
		"55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234   /usr/bin/a b\n"
		"55d0c0a02000-55d0c0a09000 r-xp 00002000 08:01 1234   /usr/bin/a b\n"
		"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
		"7f0000001000-7f0000002000 r-xp 00001000 fd:00 99 /tmp/x.so (deleted)\n"
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0      [stack]\n";
	struct luw_maps m;
	const struct luw_map *mp;

	CHECK(luw_maps_parse(text, &m) == 0 && m.n == 5, "parse: %zu", m.n);
	if (m.n != 5)
		return;
	CHECK(!strcmp(m.v[1].path, "/usr/bin/a b") && m.v[1].offset == 0x2000 &&
	      m.v[1].prot == (LUW_MAP_R | LUW_MAP_X | LUW_MAP_P) &&
	      m.v[1].inode == 1234, "exec line");
	CHECK(!strcmp(m.v[2].path, "") && !luw_maps_is_file(&m.v[2]), "anon");
	CHECK(!strcmp(m.v[3].path, "/tmp/x.so") && m.v[3].deleted &&
	      m.v[3].dev_major == 0xfd, "deleted");
	CHECK(!strcmp(m.v[4].path, "[stack]") && !luw_maps_is_file(&m.v[4]),
	      "stack");
	mp = luw_maps_find(&m, 0x55d0c0a02000ULL);
	CHECK(mp == &m.v[1], "find at start");
	CHECK(luw_maps_find(&m, 0x55d0c0a01fffULL) == &m.v[0], "find at end-1");
	CHECK(luw_maps_find(&m, 0x55d0c0a09000ULL) == NULL, "find in a hole");
	CHECK(mp && luw_maps_fileoff(mp, 0x55d0c0a02010ULL) == 0x2010, "fileoff");
	luw_maps_free(&m);
	errno = 0;
	CHECK(luw_maps_parse("55d0c0a00000-55d0c0a02000 r--p zz\n", &m) == -1 &&
	      errno == EINVAL, "bad line accepted");
	CHECK(luw_maps_parse("2000-1000 r--p 0 0:0 0\n", &m) == -1,
	      "inverted range accepted");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_symbols FIXTURES TARGET_ELF\n");
		return 2;
	}
	if (luw_maps_read(0, &maps)) {
		perror("/proc/self/maps");
		return 1;
	}
	test_self();
	test_libc();
	test_stripped_luajit();
	test_debuglink(argv[2]);
	test_maps_parse();
	luw_maps_free(&maps);
	luw_symbols_cache_clear();
	luw_cfi_cache_clear();
	if (luw_test_status("test_symbols"))
		return 1;
	printf("ok\n");
	return 0;
}
