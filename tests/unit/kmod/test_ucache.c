/*
 * The read cache of kmod/ucache.c, which sits between the
 * walkers and the kernel's nofault copy: over a synthetic address space
 * with readable and unreadable pages, every read it answers must be
 * exactly what a copy of those bytes alone gives (bytes and failure
 * alike), while it makes few copies: the stack window, lines, prefetched
 * ranges, and what happens at the stack's end, at unreadable pages, with
 * its storage full and with the budget refusing copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmod/ucache.h"
#include "testlib.h"

#define PG 4096ULL
/* The stack: 2 readable pages, nothing above (the mapping ends). */
#define STK 0x7ffd00000000ULL
#define STK_PAGES 2
/* A heap: 6 pages, the third unreadable. */
#define HEAP 0x7f0000000000ULL
#define HEAP_PAGES 6
#define HEAP_HOLE 2

struct space {
	unsigned int copies;
	unsigned long long bytes;
	unsigned int refuse_after;	/* 0: never */
};

static int readable(__u64 a)
{
	if (a >= STK && a < STK + STK_PAGES * PG)
		return 1;
	if (a >= HEAP && a < HEAP + HEAP_PAGES * PG)
		return (a - HEAP) / PG != HEAP_HOLE;
	return 0;
}

static __u8 byte_at(__u64 a)
{
	return (__u8)(a * 131 + (a >> 9));
}

/* Like copy_from_user_nmi(): stops at the first unreadable byte. */
static __u32 space_copy(void *ctx, __u64 addr, void *dst, __u32 len)
{
	struct space *s = ctx;
	__u8 *d = dst;
	__u32 i;

	if (s->refuse_after && s->copies >= s->refuse_after)
		return 0;
	s->copies++;
	s->bytes += len;
	for (i = 0; i < len && readable(addr + i); i++)
		d[i] = byte_at(addr + i);
	return i;
}

/* What a copy of exactly these bytes gives: 0 and the bytes, or -1. */
static int direct(__u64 addr, __u8 *dst, __u32 len)
{
	__u32 i;

	for (i = 0; i < len; i++) {
		if (!readable(addr + i))
			return -1;
		dst[i] = byte_at(addr + i);
	}
	return 0;
}

static __u8 stk_buf[8192], span_buf[8192];

static void setup(struct luw_uc *uc, struct space *s, __u64 sp, __u32 cap)
{
	memset(s, 0, sizeof(*s));
	luw_uc_init(uc, space_copy, s, sp, sp + (64ULL << 20), stk_buf,
		    sizeof(stk_buf), span_buf, cap);
}

/* Read through the cache and check against the direct copy. */
static int rd(struct luw_uc *uc, __u64 addr, __u32 len, int line)
{
	__u8 got[16], want[16];
	int rc = luw_uc_read(uc, addr, got, len);
	int wrc = direct(addr, want, len);

	CHECK(rc == (wrc ? -EFAULT : 0) && (rc || !memcmp(got, want, len)),
	      "line %d: read %#llx+%u: rc %d, direct %d", line,
	      (unsigned long long)addr, len, rc, wrc);
	return rc;
}

#define RD(uc, a, l) rd(uc, a, l, __LINE__)

static void test_stack(void)
{
	struct luw_uc uc;
	struct space s;
	__u64 sp = STK + 0x40;
	unsigned int c;
	int i;

	setup(&uc, &s, sp, sizeof(span_buf));
	RD(&uc, sp, 8);
	CHECK(s.copies == 1 && s.bytes >= LUW_UC_STACK_FIRST,
	      "first stack read: %u copies, %llu bytes", s.copies, s.bytes);
	for (i = 0; i < 100; i++)
		RD(&uc, sp + 8 * (i % 120), 8);
	CHECK(s.copies == 1, "reads in the window copied again: %u", s.copies);
	/* Above the window: it grows, at least doubling. */
	RD(&uc, sp + 3000, 8);
	CHECK(s.copies == 2 && uc.stack_len >= 3008,
	      "growth: %u copies, window %u", s.copies, uc.stack_len);
	c = s.copies;
	RD(&uc, sp + 2000, 8);
	CHECK(s.copies == c, "read below the window's end copied");
	/* The mapping ends at STK + 2 pages: the window keeps what it got. */
	RD(&uc, STK + STK_PAGES * PG - 8, 8);
	CHECK(uc.stack_len <= STK_PAGES * PG - 0x40,
	      "window holds bytes past the mapping: %u", uc.stack_len);
	CHECK(RD(&uc, STK + STK_PAGES * PG + 16, 8) == -EFAULT,
	      "a read past the stack succeeded");
	c = s.copies;
	RD(&uc, sp + 16, 8);
	RD(&uc, STK + STK_PAGES * PG - 16, 8);
	CHECK(s.copies == c, "reads in the window after its end copied");
}

static void test_lines(void)
{
	struct luw_uc uc;
	struct space s;
	__u64 a = HEAP + 0x500;

	setup(&uc, &s, STK + 0x40, sizeof(span_buf));
	RD(&uc, a, 8);
	CHECK(s.copies == 1 && s.bytes == LUW_UC_LINE, "a line: %u copies, %llu bytes",
	      s.copies, s.bytes);
	RD(&uc, a + LUW_UC_LINE / 4, 4);
	RD(&uc, a - LUW_UC_LINE / 4, 1);
	CHECK(s.copies == 1, "reads around the line copied: %u", s.copies);
	/* Next to the line: twice as much, continuing it. */
	RD(&uc, a + LUW_UC_LINE, 8);
	CHECK(s.copies == 2 && s.bytes == 3 * LUW_UC_LINE,
	      "adjoining line: %u copies, %llu bytes", s.copies, s.bytes);
	/* An unreadable page: one attempt, a failure, as a copy alone. */
	CHECK(RD(&uc, HEAP + HEAP_HOLE * PG + 0x100, 8) == -EFAULT,
	      "read in the hole succeeded");
	CHECK(s.copies == 3, "the hole took %u copies", s.copies - 2);
	/* Lines end at pages: a read next to the hole still works. */
	RD(&uc, HEAP + HEAP_HOLE * PG - 8, 8);
	RD(&uc, HEAP + (HEAP_HOLE + 1) * PG, 8);
	/* Across a page: copied alone, and failing where a page fails. */
	RD(&uc, HEAP + PG - 4, 8);
	CHECK(RD(&uc, HEAP + (HEAP_HOLE + 1) * PG - 4, 8) == -EFAULT,
	      "a read into the hole succeeded");
	/* Nothing LuaJIT owns: faults, no crash. */
	CHECK(RD(&uc, 0x10, 8) == -EFAULT, "read at 0x10 succeeded");
}

static void test_prefetch(void)
{
	struct luw_uc uc;
	struct space s;
	__u64 lo = HEAP + 3 * PG + 0x100;
	unsigned int c;
	int i;

	setup(&uc, &s, STK + 0x40, sizeof(span_buf));
	luw_uc_prefetch(&uc, lo, 2000);
	CHECK(s.copies == 1 && s.bytes == 2000, "prefetch: %u copies, %llu bytes",
	      s.copies, s.bytes);
	for (i = 0; i < 250; i++)
		RD(&uc, lo + 8 * i, 8);
	CHECK(s.copies == 1, "reads in the range copied: %u", s.copies);
	luw_uc_prefetch(&uc, lo + 64, 1000);
	CHECK(s.copies == 1, "a held range copied again");
	/* Only what is not held yet. */
	luw_uc_prefetch(&uc, lo + 1000, 2000);
	CHECK(s.copies == 2 && s.bytes == 3000, "overlap: %u copies, %llu bytes",
	      s.copies, s.bytes);
	/* Too long: its upper end. */
	c = s.copies;
	luw_uc_prefetch(&uc, HEAP + 4 * PG, 3 * LUW_UC_RANGE_MAX);
	CHECK(s.copies == c + 1 && s.bytes == 3000 + LUW_UC_RANGE_MAX,
	      "long range: %llu bytes", s.bytes - 3000);
	/* Over the hole: the part before it is kept, the rest fails. */
	setup(&uc, &s, STK + 0x40, sizeof(span_buf));
	luw_uc_prefetch(&uc, HEAP + HEAP_HOLE * PG - 1024, 2048);
	RD(&uc, HEAP + HEAP_HOLE * PG - 512, 8);
	CHECK(s.copies == 1, "read before the hole copied again");
	CHECK(RD(&uc, HEAP + HEAP_HOLE * PG + 512, 8) == -EFAULT,
	      "read in the hole after a prefetch succeeded");
}

static void test_limits(void)
{
	struct luw_uc uc;
	struct space s;
	int i;

	/* No storage for lines: every read copied alone, still right. */
	setup(&uc, &s, STK + 0x40, 100);
	for (i = 0; i < 20; i++)
		RD(&uc, HEAP + 0x800 + 8 * i, 8);
	CHECK(s.copies == 20 && s.bytes == 160, "no storage: %u copies", s.copies);
	/* Storage runs out: lines, then copies alone, all right. */
	setup(&uc, &s, STK + 0x40, 2 * LUW_UC_LINE);
	for (i = 0; i < 5 * HEAP_PAGES; i++)
		RD(&uc, HEAP + (i % HEAP_PAGES) * PG + 0x400 * (i / HEAP_PAGES), 8);
	CHECK(uc.used <= 2 * LUW_UC_LINE, "storage overrun: %u", uc.used);
	/* The budget refuses: reads fail, none is served wrong. */
	setup(&uc, &s, STK + 0x40, sizeof(span_buf));
	s.refuse_after = 2;
	RD(&uc, STK + 0x40, 8);
	RD(&uc, HEAP, 8);
	__u8 b[8];
	CHECK(luw_uc_read(&uc, HEAP + PG + 8, b, 8) == -EFAULT,
	      "a refused copy read");
	CHECK(luw_uc_read(&uc, HEAP + 8, b, 8) == 0, "a held line refused");
}

/* Random reads of 1..8 bytes anywhere near the regions: all as copied. */
static void test_random(void)
{
	struct luw_uc uc;
	struct space s;
	unsigned int seed = 12345, n, direct_copies = 0;
	int round, i;

	for (round = 0; round < 200; round++) {
		setup(&uc, &s, STK + 8 * (round % 50), sizeof(span_buf));
		if (round & 1)
			luw_uc_prefetch(&uc, HEAP + 4 * PG + 64 * round, 1500);
		for (i = 0; i < 300; i++) {
			__u64 base, a;

			seed = seed * 1103515245 + 12345;
			base = (seed >> 16) & 1 ? STK : HEAP;
			seed = seed * 1103515245 + 12345;
			a = base + ((seed >> 8) % ((HEAP_PAGES + 1) * PG));
			seed = seed * 1103515245 + 12345;
			n = 1 + (seed >> 16) % 8;
			RD(&uc, a, n);
		}
		direct_copies += s.copies;
	}
	printf("random: %u copies for %d reads\n", direct_copies, 200 * 300);
}

int main(void)
{
	test_stack();
	test_lines();
	test_prefetch();
	test_limits();
	test_random();
	if (luw_test_status("test_ucache"))
		return 1;
	printf("test_ucache: ok\n");
	return 0;
}
