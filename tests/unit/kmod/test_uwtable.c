/*
 * The lookup and the unwind step of kmod/uwtable.c on
 * synthetic stacks: every rule, the frame-pointer fallback, and every
 * sanity check that must stop a walk over garbage.  The same code runs in
 * the kernel's sample handler, so its edge cases are pinned here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"
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

/*
 * A SYSCALL row (a stub's entry rule after its syscall): taken for the
 * thread inside the call (LUW_UW_R_SYSCALL), whose return address is at
 * rsp; any other thread at that pc (a clone child on its own stack) gets
 * what a pc without CFI gets -- frame pointers -- and the flag does not
 * outlive the innermost frame.
 */
static void test_syscall(void)
{
	struct fake f = { 0 };
	struct luw_uw_entry e = ent(LUW_UW_CFA_RSP, LUW_UW_RBP_SAME, 8, 0);
	struct luw_uw_regs r;
	int rc;

	e.rule |= LUW_UW_SYSCALL;
	f.slot[1] = 0x407777;		/* the stub's return address, at rsp */
	f.slot[5] = at(20);		/* a frame record at rbp */
	f.slot[6] = 0x406000;
	r = regs(0x400500, at(1), at(5), LUW_UW_R_BP_VALID | LUW_UW_R_SYSCALL);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x407777 && r.sp == at(2) &&
	      r.bp == at(5) && !(r.flags & LUW_UW_R_SYSCALL),
	      "inside the syscall: rc %d ip %llx sp %llx flags %x", rc, r.ip,
	      r.sp, r.flags);
	r = regs(0x400500, at(1), at(5), LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK_FP && r.ip == 0x406000 && r.sp == at(7),
	      "not inside it: rc %d ip %llx (frame pointers wanted)", rc, r.ip);
	r = regs(0x400500, at(1), at(5), LUW_UW_R_BP_VALID | LUW_UW_R_SYSCALL);
	rc = luw_uw_step(NULL, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK_FP && !(r.flags & LUW_UW_R_SYSCALL),
	      "the flag after a frame-pointer step: %x", r.flags);
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

/*
 * A frame gcc realigned through a DRAP register, as at the body of
 *   lea 8(%rsp),%r10; and $-64,%rsp; push -8(%r10); push %rbp;
 *   mov %rsp,%rbp; push %r14; push %r13; push %r12; push %r10; ...
 * whose CFI says CFA = *(rbp - 32) (the pushed r10) and rbp saved at
 * rbp + 0.  Slots: rbp at at(8); the DRAP at at(4); the copied return
 * address at at(9); padding at(10..12) looks like code, as what a
 * caller's rsp-based rule would read from the guessed sp at(10) might;
 * the real CFA is at(14), the return address at at(13).
 */
static void realigned_stack(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->slot[4] = at(14);		/* the pushed r10: the CFA */
	f->slot[8] = at(40);		/* the caller's rbp */
	f->slot[9] = 0x401111;		/* the copy of the return address */
	f->slot[10] = 0x40dead;		/* padding: looks like code */
	f->slot[11] = 0x40dead;
	f->slot[12] = 0x40dead;
	f->slot[13] = 0x401111;		/* the return address */
	f->slot[20] = 0x402222;		/* the caller's caller, at(14) + 48 */
}

static void test_deref(void)
{
	struct fake f;
	struct luw_uw_entry e;
	struct luw_uw_regs r, saved;
	int rc;

	realigned_stack(&f);
	e = ent(LUW_UW_CFA_DEREF_RBP, LUW_UW_RBP_RBP, -32, 0);
	r = regs(0x400700, at(0), at(8), LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x401111 && r.sp == at(14) &&
	      r.bp == at(40) && r.flags == (LUW_UW_R_BP_VALID | LUW_UW_R_CALLER),
	      "deref rbp: rc %d ip %llx sp %llx bp %llx flags %x", rc, r.ip,
	      r.sp, r.bp, r.flags);

	/* rbp unknown: neither the CFA nor the saved rbp can be found. */
	r = regs(0x400700, at(0), at(8), 0);
	saved = r;
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_ERR_NOINFO && !memcmp(&r, &saved, sizeof(r)),
	      "deref rbp without rbp: rc %d", rc);

	/* The saved CFA is read like any slot: a fault stops the walk. */
	e = ent(LUW_UW_CFA_DEREF_RBP, LUW_UW_RBP_RBP, -4096, 0);
	r = regs(0x400700, at(0), at(8), LUW_UW_R_BP_VALID);
	saved = r;
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_ERR_READ && !memcmp(&r, &saved, sizeof(r)),
	      "deref rbp, unreadable slot: rc %d", rc);

	/* A saved CFA that is garbage meets the same checks as any CFA. */
	e = ent(LUW_UW_CFA_DEREF_RBP, LUW_UW_RBP_RBP, -32, 0);
	f.slot[4] = at(0);
	r = regs(0x400700, at(0), at(8), LUW_UW_R_BP_VALID);
	CHECK(luw_uw_step(&e, &r, fake_read, &f) == LUW_UW_ERR_CFA,
	      "deref rbp: CFA == sp accepted");
	f.slot[4] = 0;
	CHECK(luw_uw_step(&e, &r, fake_read, &f) == LUW_UW_ERR_CFA,
	      "deref rbp: CFA 0 accepted");
	f.slot[4] = BASE + 8 * SLOTS + 8;
	CHECK(luw_uw_step(&e, &r, fake_read, &f) == LUW_UW_ERR_CFA,
	      "deref rbp: CFA past the stack accepted");

	/* The caller's rbp comes from this frame's rbp + aux, not the CFA. */
	realigned_stack(&f);
	f.slot[7] = at(41);
	e = ent(LUW_UW_CFA_DEREF_RBP, LUW_UW_RBP_RBP, -32, -8);
	r = regs(0x400700, at(0), at(8), LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.bp == at(41), "rbp at rbp-8: rc %d bp %llx",
	      rc, r.bp);
	/* ... and is unknown when this frame's rbp is. */
	e = ent(LUW_UW_CFA_RSP, LUW_UW_RBP_RBP, 8, 0);
	f.slot[0] = 0x403333;
	r = regs(0x400700, at(0), at(8), 0);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x403333 &&
	      !(r.flags & LUW_UW_R_BP_VALID), "rbp at rbp+0, rbp unknown: rc %d "
	      "flags %x", rc, r.flags);

	/* DEREF_RSP: the saved CFA at rsp + N. */
	realigned_stack(&f);
	f.slot[2] = at(14);
	e = ent(LUW_UW_CFA_DEREF_RSP, LUW_UW_RBP_SAME, 16, 0);
	r = regs(0x400700, at(0), 0x1234, LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x401111 && r.sp == at(14) &&
	      r.bp == 0x1234, "deref rsp: rc %d ip %llx sp %llx", rc, r.ip,
	      r.sp);
}

/*
 * A frame stepped by frame pointers because its CFI is UNSUP leaves a
 * guessed sp: rules from sp refuse it, rules from rbp go on and make sp
 * exact again; NONE and no table do not guess.
 */
static void test_sp_guess(void)
{
	static const int sp_kinds[] = { LUW_UW_CFA_RSP, LUW_UW_CFA_PLT,
					LUW_UW_CFA_DEREF_RSP };
	struct fake f;
	struct luw_uw_entry e, unsup, none;
	struct luw_uw_regs r, g, saved;
	int rc;

	unsup = ent(LUW_UW_CFA_UNSUP, LUW_UW_RBP_UNDEF, 0, 0);
	none = ent(LUW_UW_CFA_NONE, LUW_UW_RBP_SAME, 0, 0);
	/*
	 * The realigned frame's body stepped as UNSUP (what tables without
	 * DEREF_RBP said): the right ip, an sp 32 bytes short.
	 */
	realigned_stack(&f);
	r = regs(0x400700, at(0), at(8), LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&unsup, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK_FP && r.ip == 0x401111 && r.sp == at(10) &&
	      (r.flags & LUW_UW_R_SP_GUESS), "unsup fallback: rc %d sp %llx "
	      "flags %x", rc, r.sp, r.flags);
	g = r;
	/* The caller's rsp + 32 would read padding: refused, regs kept. */
	for (size_t i = 0; i < sizeof(sp_kinds) / sizeof(sp_kinds[0]); i++) {
		e = ent(sp_kinds[i], LUW_UW_RBP_SAME, 32, 0);
		r = g;
		saved = r;
		rc = luw_uw_step(&e, &r, fake_read, &f);
		CHECK(rc == LUW_UW_ERR_GUESS && !memcmp(&r, &saved, sizeof(r)),
		      "cfa rule %d on a guessed sp: rc %d", sp_kinds[i], rc);
	}
	/* A further frame-pointer step goes on and keeps the mark. */
	f.slot[40] = 0;
	f.slot[41] = 0x404444;
	r = g;
	rc = luw_uw_step(&none, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK_FP && r.ip == 0x404444 && r.sp == at(42) &&
	      (r.flags & LUW_UW_R_SP_GUESS), "fp after guess: rc %d flags %x",
	      rc, r.flags);
	r = g;
	rc = luw_uw_step(NULL, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK_FP && (r.flags & LUW_UW_R_SP_GUESS),
	      "fp (no table) after guess: rc %d flags %x", rc, r.flags);
	/* An rbp-based CFA is exact again: the mark goes. */
	e = ent(LUW_UW_CFA_RBP, LUW_UW_RBP_CFA, 16, -16);
	r = g;
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x404444 && r.sp == at(42) &&
	      !(r.flags & LUW_UW_R_SP_GUESS), "rbp rule after guess: rc %d "
	      "flags %x", rc, r.flags);
	f.slot[36] = at(42);
	e = ent(LUW_UW_CFA_DEREF_RBP, LUW_UW_RBP_RBP, -32, 0);
	r = g;
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x404444 && r.sp == at(42) &&
	      !(r.flags & LUW_UW_R_SP_GUESS), "deref rbp after guess: rc %d "
	      "flags %x", rc, r.flags);
	/* Once exact, rsp-based rules apply again. */
	f.slot[47] = 0x405555;
	e = ent(LUW_UW_CFA_RSP, LUW_UW_RBP_SAME, 48, 0);
	rc = luw_uw_step(&e, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK && r.ip == 0x405555, "rsp rule after an exact "
	      "CFA: rc %d", rc);

	/* NONE and no table: the frame record's own sp, no mark. */
	realigned_stack(&f);
	r = regs(0x400700, at(0), at(8), LUW_UW_R_BP_VALID);
	rc = luw_uw_step(&none, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK_FP && !(r.flags & LUW_UW_R_SP_GUESS),
	      "none fallback marked sp: flags %x", r.flags);
	r = regs(0x400700, at(0), at(8), LUW_UW_R_BP_VALID);
	rc = luw_uw_step(NULL, &r, fake_read, &f);
	CHECK(rc == LUW_UW_OK_FP && !(r.flags & LUW_UW_R_SP_GUESS),
	      "no-table fallback marked sp: flags %x", r.flags);
}

/*
 * The whole walk over a realigned frame between two rsp-based ones, as
 * its table has it now (DEREF_RBP) and as it had it before (UNSUP): the
 * right caller chain or a stop, never the padding's 0x40dead.
 */
static void test_realigned_walk(void)
{
	static const struct luw_uw_entry deref_tab[] = {
		{ .start = 0x100, .cfa_off = 8, .ra_off = -8,
		  .rule = LUW_UW_RULE(LUW_UW_CFA_RSP, LUW_UW_RBP_SAME) },
		{ .start = 0x200, .cfa_off = -32, .ra_off = -8,
		  .rule = LUW_UW_RULE(LUW_UW_CFA_DEREF_RBP, LUW_UW_RBP_RBP) },
		{ .start = 0x300, .cfa_off = 56, .ra_off = -8,
		  .rule = LUW_UW_RULE(LUW_UW_CFA_RSP, LUW_UW_RBP_SAME) },
		{ .start = 0x400, .rule = LUW_UW_RULE(LUW_UW_CFA_END, 0) },
		{ .start = 0x440, .rule = 0 },
	};
	const __u64 vma = 0x555555554000ULL;
	struct luw_uw_entry unsup_tab[5];
	struct fake f;

	memcpy(unsup_tab, deref_tab, sizeof(unsup_tab));
	unsup_tab[1] = (struct luw_uw_entry){ .start = 0x200,
		.rule = LUW_UW_RULE(LUW_UW_CFA_UNSUP, LUW_UW_RBP_UNDEF) };
	for (int pass = 0; pass < 2; pass++) {
		const struct luw_uw_entry *tab = pass ? unsup_tab : deref_tab;
		struct luw_uw_regs r;
		int n = 0, rc = 0;
		__u64 ips[8];

		realigned_stack(&f);
		/* leaf at(0) -> realigned at(1).. -> caller at(14).. -> root */
		f.slot[0] = vma + 0x250;
		f.slot[9] = f.slot[13] = vma + 0x350;
		f.slot[20] = vma + 0x410;
		/* What the caller's rule reads from the guessed sp at(10). */
		f.slot[16] = vma + 0x150;
		r = regs(vma + 0x120, at(0), at(8), LUW_UW_R_BP_VALID);
		while (n < 8) {
			const struct luw_uw_entry *e = luw_uw_find(tab, 5,
				luw_uw_rel(luw_uw_key(&r), vma, 0));

			ips[n++] = r.ip;
			rc = luw_uw_step(e, &r, fake_read, &f);
			if (rc < 0 || rc == LUW_UW_END)
				break;
		}
		if (!pass)
			CHECK(rc == LUW_UW_END && n == 4 &&
			      ips[1] == vma + 0x250 && ips[2] == vma + 0x350 &&
			      ips[3] == vma + 0x410,
			      "realigned walk: rc %d frames %d", rc, n);
		else
			CHECK(rc == LUW_UW_ERR_GUESS && n == 3 &&
			      ips[2] == vma + 0x350,
			      "realigned walk, unsup: rc %d frames %d", rc, n);
	}
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
	test_syscall();
	test_garbage();
	test_walk();
	test_deref();
	test_sp_guess();
	test_realigned_walk();
	test_find();
	if (luw_test_status("test_uwtable"))
		return 1;
	printf("ok\n");
	return 0;
}
