/*
 * elf/dwstruct.c on this test's own DWARF (built with -g), against the
 * compiler's offsetof: the structs below are found by name and each
 * member's offset is offsetof's; member types come back with typedefs,
 * const and volatile peeled (a struct through four of them), other types
 * (a pointer, an array, a base type) as they are; a chain of typedefs
 * longer than the peeling follows (15) is refused, its offset still
 * given; a struct only declared in the first compilation unit is
 * found at its definition in the second (dwstruct_def.c); unknown
 * structs and members are -1.
 *
 * usage: test_dwstruct FIXTURES
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf/dwstruct.h"
#include "testlib.h"

struct luw_tdw_inner {
	int a;
	char b;
};
typedef struct luw_tdw_inner luw_tdw_inner_t;
typedef const volatile luw_tdw_inner_t luw_tdw_cv_t;

/* Typedefs over int: the peeling looks at 16 DIEs, so it gets through
 * 15 typedefs and not through 16. */
typedef int luw_tdw_t0;
#define TD(a, b) typedef luw_tdw_t##a luw_tdw_t##b;
TD(0, 1) TD(1, 2) TD(2, 3) TD(3, 4) TD(4, 5) TD(5, 6) TD(6, 7) TD(7, 8)
TD(8, 9) TD(9, 10) TD(10, 11) TD(11, 12) TD(12, 13) TD(13, 14) TD(14, 15)
#undef TD

struct luw_tdw_s {
	char c;
	double d;
	luw_tdw_cv_t in;
	uint64_t arr[3];
	struct luw_tdw_inner *p;
	luw_tdw_t14 deep15;	/* 15 typedefs: peeled */
	luw_tdw_t15 deep16;	/* 16: not */
	unsigned int tail;
};

/* Declared only: its definition is dwstruct_def.c's. */
struct luw_tdw_fwd;
extern struct luw_tdw_fwd *luw_tdw_fwd_ptr;
extern const long luw_tdw_fwd_off_b, luw_tdw_fwd_off_c;

/* Instances keep the types in the DWARF. */
struct luw_tdw_s luw_tdw_s_var;

static void check_member(Dwarf_Die *s, const char *name, long want,
			 int want_tag, const char *want_type)
{
	Dwarf_Die t;
	long off = -1;
	int rc = luw_dwstruct_member(s, name, &off, &t);
	const char *tn = rc ? NULL : dwarf_diename(&t);

	CHECK(rc == 0 && off == want, "%s: rc %d, offset %ld, offsetof %ld",
	      name, rc, off, want);
	if (rc)
		return;
	CHECK(dwarf_tag(&t) == want_tag &&
	      (!want_type || (tn && !strcmp(tn, want_type))),
	      "%s: type tag 0x%x \"%s\", want 0x%x \"%s\"", name, dwarf_tag(&t),
	      tn ? tn : "", want_tag, want_type ? want_type : "");
	off = -1;
	CHECK(luw_dwstruct_member(s, name, &off, NULL) == 0 && off == want,
	      "%s without its type: offset %ld", name, off);
}

static void test_struct(Dwarf *dw)
{
	Dwarf_Die s;
	long off = 0;

	if (luw_dwstruct_struct(dw, "luw_tdw_s", &s)) {
		CHECK(0, "struct luw_tdw_s not found");
		return;
	}
	CHECK(dwarf_tag(&s) == DW_TAG_structure_type &&
	      !strcmp(dwarf_diename(&s), "luw_tdw_s"), "not luw_tdw_s's DIE");
	check_member(&s, "c", offsetof(struct luw_tdw_s, c), DW_TAG_base_type,
		     "char");
	check_member(&s, "d", offsetof(struct luw_tdw_s, d), DW_TAG_base_type,
		     "double");
	check_member(&s, "in", offsetof(struct luw_tdw_s, in),
		     DW_TAG_structure_type, "luw_tdw_inner");
	check_member(&s, "arr", offsetof(struct luw_tdw_s, arr),
		     DW_TAG_array_type, NULL);
	check_member(&s, "p", offsetof(struct luw_tdw_s, p),
		     DW_TAG_pointer_type, NULL);
	check_member(&s, "deep15", offsetof(struct luw_tdw_s, deep15),
		     DW_TAG_base_type, "int");
	check_member(&s, "tail", offsetof(struct luw_tdw_s, tail),
		     DW_TAG_base_type, "unsigned int");
	/* Too deep to peel: refused with a type, not without. */
	{
		Dwarf_Die t;

		CHECK(luw_dwstruct_member(&s, "deep16", &off, &t) == -1,
		      "deep16: 16 typedefs peeled");
		CHECK(luw_dwstruct_member(&s, "deep16", &off, NULL) == 0 &&
		      off == (long)offsetof(struct luw_tdw_s, deep16),
		      "deep16 without its type: offset %ld", off);
	}
	CHECK(luw_dwstruct_member(&s, "nosuch", &off, NULL) == -1,
	      "a member that is not there");
	/* luw_tdw_inner's own members, not luw_tdw_s's. */
	CHECK(!luw_dwstruct_struct(dw, "luw_tdw_inner", &s) &&
	      !luw_dwstruct_member(&s, "b", &off, NULL) &&
	      off == (long)offsetof(struct luw_tdw_inner, b) &&
	      luw_dwstruct_member(&s, "tail", &off, NULL) == -1,
	      "luw_tdw_inner's members");
	CHECK(luw_dwstruct_struct(dw, "luw_tdw_nosuch", &s) == -1,
	      "a struct that is not there");
	/* A typedef's name is no struct's. */
	CHECK(luw_dwstruct_struct(dw, "luw_tdw_inner_t", &s) == -1,
	      "a typedef taken for a struct");
}

/* Declared in this unit, defined in the next: the definition. */
static void test_declared(Dwarf *dw)
{
	Dwarf_Die s;
	long off = -1;

	if (luw_dwstruct_struct(dw, "luw_tdw_fwd", &s)) {
		CHECK(0, "struct luw_tdw_fwd not found");
		return;
	}
	CHECK(dwarf_haschildren(&s), "luw_tdw_fwd: the declaration found");
	CHECK(!luw_dwstruct_member(&s, "b", &off, NULL) &&
	      off == luw_tdw_fwd_off_b, "luw_tdw_fwd.b: %ld, offsetof %ld",
	      off, luw_tdw_fwd_off_b);
	CHECK(!luw_dwstruct_member(&s, "c", &off, NULL) &&
	      off == luw_tdw_fwd_off_c, "luw_tdw_fwd.c: %ld, offsetof %ld",
	      off, luw_tdw_fwd_off_c);
}

int main(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;

	CHECK(dw, "no DWARF in this test's binary");
	if (dw) {
		test_struct(dw);
		test_declared(dw);
		dwarf_end(dw);
	}
	if (fd >= 0)
		close(fd);
	/* The pointer is used, so the declaration stays in this unit. */
	CHECK(luw_tdw_fwd_ptr != NULL, "luw_tdw_fwd_ptr");
	if (luw_test_status("test_dwstruct"))
		return 1;
	printf("test_dwstruct: ok\n");
	return 0;
}
