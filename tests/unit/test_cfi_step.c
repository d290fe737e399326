/*
 * The lookup and the unwind step of kmod/uwtable.c on
 * synthetic stacks: every rule, the frame-pointer fallback, and every
 * sanity check that must stop a walk over garbage.  The same code runs in
 * the kernel's sample handler, so its edge cases are pinned here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/cfi.h"
#include "testlib.h"

#define BASE 0x7ffd00001000ULL
#define SLOTS 64

/* A fake stack of SLOTS 8-byte slots at BASE; reads elsewhere fault. */
struct fake {
	__u64 slot[SLOTS];
	int reads;
};

static int fake_read(void *ctx, __u64 addr, __u64 *val)
{
	struct fake *f = ctx;

	f->reads++;
	if (addr < BASE || addr >= BASE + 8 * SLOTS || (addr & 7))
		return -1;
	*val = f->slot[(addr - BASE) / 8];
	return 0;
}

static __u64 at(int i)
{
	return BASE + 8 * (__u64)i;
}

static struct luw_uw_entry ent(int cfa, int rbp, int off, int aux)
{
	struct luw_uw_entry e = { .cfa_off = off, .aux = (__s16)aux, .ra_off = -8,
				  .rule = LUW_UW_RULE(cfa, rbp) };
	return e;
}

static struct luw_uw_regs regs(__u64 ip, __u64 sp, __u64 bp, __u32 flags)
{
	struct luw_uw_regs r = { .ip = ip, .sp = sp, .bp = bp,
				 .stack_end = BASE + 8 * SLOTS, .flags = flags };
	return r;
}

static void test_rules(void)
{
	struct fake f = { 0 };
	struct luw_uw_entry e;
	struct luw_uw_regs r, saved;
	int rc;

	/* rsp+24, rbp saved at CFA-24: a function that pushed rbp and rbx. */
	f.slot[2] = 0x401234;		/* return address at CFA-8 */
	f.slot[0] = at(40);		/* saved rbp at CFA-24 */
	e = ent(LUW_UW_CFA_RSP, LUW_UW_RBP_CFA, 24, -24);
	r = regs(0x400100, at(0), 0xdead, LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK, "rsp rule: rc %d", rc);
	CHECK(r.ip == 0x401234 && r.sp == at(3) && r.bp == at(40),
	      "rsp rule: ip %llx sp %llx bp %llx", r.ip, r.sp, r.bp);
	CHECK(r.flags == (LUW_UW_R_BP_VALID | LUW_UW_R_CALLER), "flags %x",
	      r.flags);
	CHECK(luw_uw_key(&r) == 0x401233, "caller key is ip - 1");

	/* rbp+16: classic frame, CFA from rbp, rbp at CFA-16. */
	memset(&f, 0, sizeof(f));
	f.slot[11] = 0x402000;
	f.slot[10] = at(30);
	e = ent(LUW_UW_CFA_RBP, LUW_UW_RBP_CFA, 16, -16);
	r = regs(0x400200, at(2), at(10), LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x402000 && r.sp == at(12) &&
	      r.bp == at(30), "rbp rule: rc %d ip %llx sp %llx bp %llx", rc,
	      r.ip, r.sp, r.bp);

	/* rbp-based CFA with rbp unknown: no guessing. */
	r = regs(0x400200, at(2), at(10), 0);
	saved = r;
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_ERR_NOINFO, "rbp rule without rbp: rc %d", rc);
	CHECK(!memcmp(&r, &saved, sizeof(r)), "regs changed on error");

	/* rbp SAME keeps rbp; rbp UNDEF forgets it. */
	memset(&f, 0, sizeof(f));
	f.slot[0] = 0x403000;
	e = ent(LUW_UW_CFA_RSP, LUW_UW_RBP_SAME, 8, 0);
	r = regs(0x400300, at(0), 0x1234, LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.bp == 0x1234 && (r.flags & LUW_UW_R_BP_VALID),
	      "rbp same: rc %d bp %llx", rc, r.bp);
	e = ent(LUW_UW_CFA_RSP, LUW_UW_RBP_UNDEF, 8, 0);
	r = regs(0x400300, at(0), 0x1234, LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && !(r.flags & LUW_UW_R_BP_VALID),
	      "rbp undef: rc %d flags %x", rc, r.flags);

	/* PLT: pushq in the first 11 bytes of an entry adds 8 after it. */
	memset(&f, 0, sizeof(f));
	f.slot[0] = 0x404000;
	f.slot[1] = 0x405000;
	e = ent(LUW_UW_CFA_PLT, LUW_UW_RBP_SAME, 8, 11);
	r = regs(0x401030, at(0), 0, 0);	/* jmp *GOT: nothing pushed */
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x404000 && r.sp == at(1),
	      "plt before push: rc %d ip %llx", rc, r.ip);
	r = regs(0x40103b, at(0), 0, 0);	/* after pushq $n */
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x405000 && r.sp == at(2),
	      "plt after push: rc %d ip %llx", rc, r.ip);

	/* END: complete, nothing read, nothing changed. */
	e = ent(LUW_UW_CFA_END, LUW_UW_RBP_SAME, 0, 0);
	r = regs(0x400400, at(0), 0, 0);
	saved = r;
	f.reads = 0;
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_END && f.reads == 0 && !memcmp(&r, &saved, sizeof(r)),
	      "end: rc %d", rc);
}

static void test_fallback(void)
{
	static const int kinds[] = { LUW_UW_CFA_NONE, LUW_UW_CFA_UNSUP, -1 };
	struct fake f = { 0 };
	struct luw_uw_regs r;
	int rc;

	f.slot[5] = at(20);		/* saved rbp */
	f.slot[6] = 0x406000;		/* return address */
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct luw_uw_entry e = ent(kinds[i] < 0 ? 0 : kinds[i], 0, 0, 0);
		const struct luw_uw_entry *ep = kinds[i] < 0 ? NULL : &e;

		r = regs(0x400500, at(1), at(5), LUW_UW_R_BP_VALID);
		rc = luw_uw_step(ep, &r, fake_read, &f);
		CHECK(rc == LUW_UW_OK_FP && r.ip == 0x406000 && r.sp == at(7) &&
		      r.bp == at(20), "fp fallback %d: rc %d ip %llx sp %llx", kinds[i],
		      rc, r.ip, r.sp);
		r = regs(0x400500, at(1), at(5), LUW_UW_R_BP_VALID | LUW_UW_R_NO_FP);
		rc = luw_uw_step(ep, &r, fake_read, &f);
		CHECK(rc == LUW_UW_ERR_NOINFO, "no-fp %d: rc %d", kinds[i], rc);
	}
	/* rbp below sp, unknown, or past the stack: not a frame pointer. */
	r = regs(0x400500, at(6), at(5), LUW_UW_R_BP_VALID);
	CHECK(luw_uw_step(NULL, &r, fake_read, &f) == LUW_UW_ERR_NOINFO,
	      "rbp below sp accepted");
	r = regs(0x400500, at(1), at(5), 0);
	CHECK(luw_uw_step(NULL, &r, fake_read, &f) == LUW_UW_ERR_NOINFO,
	      "unknown rbp accepted");
	r = regs(0x400500, at(1), BASE + 8 * SLOTS - 8, LUW_UW_R_BP_VALID);
	CHECK(luw_uw_step(NULL, &r, fake_read, &f) == LUW_UW_ERR_NOINFO,
	      "rbp at the stack's end accepted");
	/* rbp 0: the end of the frame-pointer chain, a complete stack. */
	r = regs(0x400500, at(1), 0, LUW_UW_R_BP_VALID);
	CHECK(luw_uw_step(NULL, &r, fake_read, &f) == LUW_UW_END,
	      "rbp 0 not taken as the outermost frame");
}

static void test_garbage(void)
{
	struct fake f = { 0 };
	struct luw_uw_entry e;
	struct luw_uw_regs r, saved;
	int rc;

	/* A CFA that does not move up would loop forever. */
	e = ent(LUW_UW_CFA_RSP, 0, 0, 0);
	r = regs(0x400600, at(4), 0, 0);
	CHECK(luw_uw_step(&e, &r, fake_read, &f) == LUW_UW_ERR_CFA,
	      "CFA == sp accepted");
	e = ent(LUW_UW_CFA_RSP, 0, -16, 0);
	CHECK(luw_uw_step(&e, &r, fake_read, &f) == LUW_UW_ERR_CFA,
	      "CFA below sp accepted");
	/* Beyond the stack, and a wrap-around of the address space. */
	e = ent(LUW_UW_CFA_RSP, 0, 8 * SLOTS + 64, 0);
	CHECK(luw_uw_step(&e, &r, fake_read, &f) == LUW_UW_ERR_CFA,
	      "CFA past the stack accepted");
	e = ent(LUW_UW_CFA_RBP, 0, 16, 0);
	r = regs(0x400600, at(4), ~0ULL - 8, LUW_UW_R_BP_VALID);
	CHECK(luw_uw_step(&e, &r, fake_read, &f) == LUW_UW_ERR_CFA,
	      "wrapped CFA accepted");
	/* Readable CFA, unreadable slot. */
	r = regs(0x400600, at(4), 0, 0);
	r.stack_end = BASE + 8 * SLOTS + 4096;
	e = ent(LUW_UW_CFA_RSP, 0, 8 * SLOTS, 0);
	saved = r;
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_ERR_READ && !memcmp(&r, &saved, sizeof(r)),
	      "faulting read: rc %d", rc);
	/* Saved rbp unreadable: fails as a whole, no half update. */
	f.slot[4] = 0x407000;		/* return address at CFA-8 */
	e = ent(LUW_UW_CFA_RSP, LUW_UW_RBP_CFA, 8, 4096);
	r = regs(0x400600, at(4), 0, 0);
	saved = r;
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_ERR_READ && !memcmp(&r, &saved, sizeof(r)),
	      "faulting rbp read: rc %d", rc);
	/* Return address 0 ends nothing silently. */
	f.slot[4] = 0;
	e = ent(LUW_UW_CFA_RSP, 0, 8, 0);
	CHECK(luw_uw_step(&e, &r, fake_read, &f) == LUW_UW_ERR_RA,
	      "zero return address accepted");
}

/* A three-frame walk as the kernel does it: lookup, step, until END. */
static void test_walk(void)
{
	static const struct luw_uw_entry tab[] = {
		{ .start = 0x100, .cfa_off = 16, .aux = -16, .ra_off = -8,
		  .rule = LUW_UW_RULE(LUW_UW_CFA_RSP, LUW_UW_RBP_CFA) },
		{ .start = 0x200, .cfa_off = 16, .aux = -16, .ra_off = -8,
		  .rule = LUW_UW_RULE(LUW_UW_CFA_RBP, LUW_UW_RBP_CFA) },
		{ .start = 0x300, .rule = LUW_UW_RULE(LUW_UW_CFA_END, 0) },
		{ .start = 0x340, .rule = 0 },
	};
	const __u64 vma = 0x555555554000ULL, off = 0;
	struct fake f = { 0 };
	struct luw_uw_regs r;
	int n = 0, rc = 0;
	__u64 ips[8];

	/* leaf in 0x1xx (rsp+16), caller in 0x2xx (rbp+16), root 0x3xx. */
	f.slot[0] = at(9);		/* leaf saved the caller's rbp */
	f.slot[1] = vma + 0x250;	/* leaf returns into the caller */
	f.slot[9] = 0;			/* caller's saved rbp */
	f.slot[10] = vma + 0x310;	/* caller returns into the root */
	r = regs(vma + 0x120, at(0), 0x1, LUW_UW_R_BP_VALID);
	while (n < 8) {
		const struct luw_uw_entry *e = luw_uw_find(tab, 4,
			luw_uw_rel(luw_uw_key(&r), vma, off));

		ips[n++] = r.ip;
		rc = luw_uw_step(e, &r, fake_read, &f);
		if (rc != LUW_UW_OK)
			break;
	}
	CHECK(rc == LUW_UW_END && n == 3 && ips[0] == vma + 0x120 &&
	      ips[1] == vma + 0x250 && ips[2] == vma + 0x310,
	      "walk: rc %d frames %d", rc, n);
}

static void test_find(void)
{
	static const struct luw_uw_entry tab[] = {
		{ .start = 0x10, .rule = 1 }, { .start = 0x20, .rule = 2 },
		{ .start = 0x30, .rule = 0 },
	};
	char err[512];
	struct luw_cfi *t;
	unsigned int seed = 12345;

	CHECK(luw_uw_find(tab, 3, 0x0f) == NULL, "below the first entry");
	CHECK(luw_uw_find(tab, 3, 0x10) == &tab[0], "first byte");
	CHECK(luw_uw_find(tab, 3, 0x1f) == &tab[0], "last byte of entry 0");
	CHECK(luw_uw_find(tab, 3, 0x20) == &tab[1], "first byte of entry 1");
	CHECK(luw_uw_find(tab, 3, 0x30) == &tab[2], "terminator");
	CHECK(luw_uw_find(tab, 3, 0x123456) == &tab[2], "past the end");
	CHECK(luw_uw_find(tab, 1, 0x10) == &tab[0], "single entry");

	/* The binary search against a linear one on a real table. */
	t = luw_cfi_build("/usr/bin/luajit", err, sizeof(err));
	CHECK(t != NULL, "%s", err);
	if (!t)
		return;
	for (int i = 0; i < 20000; i++) {
		/* Every entry's first byte, then random offsets. */
		__u64 off = i < (int)t->n ? t->ent[i].start :
			    (__u64)rand_r(&seed) % (t->hdr->text_hi + 64);
		const struct luw_uw_entry *want = NULL;

		for (__u32 k = 0; k < t->n && t->ent[k].start <= off; k++)
			want = &t->ent[k];
		if (luw_uw_find(t->ent, t->n, off) != want) {
			CHECK(0, "find(%llx) disagrees with linear search", off);
			break;
		}
	}
	luw_cfi_free(t);
}

int main(void)
{
	test_rules();
	test_fallback();
	test_garbage();
	test_walk();
	test_find();
	if (luw_test_status("test_cfi_step"))
		return 1;
	printf("ok\n");
	return 0;
}
