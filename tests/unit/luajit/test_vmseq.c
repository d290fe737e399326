/*
 * luajit/vmseq.c: the exact rows unwind/cfi.c gives LuaJIT's VM entry
 * prologues and exit epilogues (vmseq.h), checked against the CPU
 * running them.
 *
 * For every LuaJIT build at hand -- each cell of the build matrix
 * (${LUW_CACHE:-/var/cache/luaunwind}/ljmatrix/CELL/luajit and
 * luajit.stripped), Debian's luajit and libluajit-5.1.so.2, OpenResty's
 * libluajit-5.1.so.2 (build/luajit2) and tarantool -- the table is built,
 * its sequences listed (with the symbol where the file has one), and each
 * one single-stepped under ptrace in a stopped process that maps the
 * file: an executable at its exec stop, a library dlopen()ed by a fork of
 * this test.  Registers and the stack get marker values; the truth is
 * what the CPU does:
 *   entry  run from an arbitrary rsp to the end of the sub; the true CFA
 *          is the FDE's body rule there (rsp + CFRAME_SIZE).  Before each
 *          instruction the row's CFA must be it, the return address slot
 *          must be untouched, the caller's rbp where the row says (rbp
 *          itself, or its slot: a second run puts the caller's rbp in
 *          slots the sequence does not write, as the FFI callback's
 *          trampoline does), and afterwards every register in the slot
 *          the FDE gives it.
 *   exit   a C frame laid out as the FDE says at rsp, a fake return
 *          address above it; the true CFA is rsp after the ret (or
 *          rsp + 8 at the tail jmp's target, the return address on top).
 *          Each row's CFA and rbp must match, and every callee-saved
 *          register must come back from its slot.
 * Each binary needs at least the four entries (lj_vm_resume, pcall,
 * call, cpcall) and one exit.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "unwind/cfi.h"
#include "elf/symbols.h"
#include "proc/ptrace.h"
#include "testlib.h"

#define RBP_CALLER	0x5eed0000cafe0006ULL	/* the caller's rbp */
#define RBP_OTHER	0x5eed0000cafe00f6ULL	/* rbp not the caller's */
#define RA_FAKE		0x00007f00dead0000ULL
#define MARK(r)		(0x5eed000000000000ULL | (uint64_t)(r) << 8)
#define PAT(a)		(0xa5a5000000000000ULL | ((a) & 0xffffffffffffULL))
#define WIN		1024	/* bytes filled either side of rsp */

static const int saved_regs[] = { 3, 6, 12, 13, 14, 15 };

/* DWARF register number -> its slot in user_regs_struct. */
static unsigned long long *ureg(struct user_regs_struct *u, int r)
{
	switch (r) {
	case 3: return &u->rbx;
	case 6: return &u->rbp;
	case 12: return &u->r12;
	case 13: return &u->r13;
	case 14: return &u->r14;
	default: return &u->r15;
	}
}

static int peek(pid_t pid, uint64_t a, uint64_t *v)
{
	errno = 0;
	*v = (uint64_t)ptrace(PTRACE_PEEKDATA, pid, (void *)a, NULL);
	return errno ? -1 : 0;
}

static int poke(pid_t pid, uint64_t a, uint64_t v)
{
	return ptrace(PTRACE_POKEDATA, pid, (void *)a, (void *)v) ? -1 : 0;
}

static int fill(pid_t pid, uint64_t sp)
{
	for (uint64_t a = sp - WIN; a < sp + WIN; a += 8)
		if (poke(pid, a, PAT(a)))
			return -1;
	return 0;
}

static int step(pid_t pid, struct user_regs_struct *u)
{
	int st;

	if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) ||
	    waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) ||
	    WSTOPSIG(st) != SIGTRAP || luw_ptrace_getregs(pid, u))
		return -1;
	return 0;
}

/* Where the file's offset off is mapped in pid, or 0. */
static uint64_t mapped_at(pid_t pid, const char *real, uint64_t off)
{
	char path[64], line[PATH_MAX + 128], file[PATH_MAX];
	uint64_t lo, hi, moff, at = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!at && fgets(line, sizeof(line), f)) {
		char perm[8];

		file[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
			   " %*s %*s %4095s", &lo, &hi, perm, &moff, file) < 4 ||
		    perm[2] != 'x' || strcmp(file, real))
			continue;
		if (off >= moff && off - moff < hi - lo)
			at = lo + (off - moff);
	}
	fclose(f);
	return at;
}

/* The row the table gives file offset off, as "rsp+N" and rbp. */
static const struct luw_uw_entry *row(const struct luw_cfi *t, uint64_t off)
{
	return luw_cfi_find(t, off);
}

struct ctx {
	pid_t pid;
	struct user_regs_struct base;	/* the stopped process's registers */
	const struct luw_cfi *t;
	const char *name;
	uint64_t bias;			/* address - file offset */
	int32_t body_cfa;		/* the FDE's rule: rsp + this */
	int32_t fde_slot[17];
};

/*
 * Each row of q against the truth: at[k] the registers before instruction
 * k, rbp_mem[k] what the row's rbp slot held then, cfa the true CFA.
 */
static int check_rows(struct ctx *c, const struct luw_vmseq *q,
		      const struct user_regs_struct *at, const uint64_t *rbp_mem,
		      uint64_t cfa, const char *what)
{
	int bad = 0;

	for (unsigned int k = 0; k < q->n; k++) {
		const struct luw_uw_entry *e = row(c->t, q->at[k]);
		uint64_t rcfa;

		if (!e || !(e->rule & LUW_UW_VMSEQ) ||
		    LUW_UW_CFA_OF(e->rule) != LUW_UW_CFA_RSP || e->ra_off != -8) {
			CHECK(0, "%s: %s +0x%" PRIx64 ": no vmseq rsp row", c->name,
			      what, q->at[k]);
			return 1;
		}
		rcfa = at[k].rsp + (int64_t)e->cfa_off;
		if (rcfa != cfa) {
			CHECK(0, "%s: %s insn %u at 0x%" PRIx64 ": row CFA rsp%+d = 0x%"
			      PRIx64 ", true 0x%" PRIx64, c->name, what, k, q->at[k],
			      e->cfa_off, rcfa, cfa);
			bad++;
		}
		if (LUW_UW_RBP_OF(e->rule) == LUW_UW_RBP_CFA) {
			if (rbp_mem[k] != RBP_CALLER) {
				CHECK(0, "%s: %s insn %u at 0x%" PRIx64 ": rbp at c%+d holds 0x%"
				      PRIx64, c->name, what, k, q->at[k], e->aux,
				      rbp_mem[k]);
				bad++;
			}
		} else if (at[k].rbp != RBP_CALLER) {
			CHECK(0, "%s: %s insn %u at 0x%" PRIx64 ": row says rbp=same, rbp 0x%"
			      PRIx64, c->name, what, k, q->at[k],
			      (uint64_t)at[k].rbp);
			bad++;
		}
	}
	return bad;
}

/* One run of an entry; rbp_pre: put the caller's rbp in unwritten slots. */
static int run_entry(struct ctx *c, const struct luw_vmseq *q, int pass,
		     const uint64_t *unwritten_rbp, uint64_t *cfa_out,
		     uint64_t *rbp_slot_written)
{
	struct user_regs_struct u = c->base, at[LUW_VMSEQ_MAXINSN];
	uint64_t sp = (c->base.rsp - 16384) & ~15ULL, v, cfa, rbp_mem[LUW_VMSEQ_MAXINSN];
	int bad = 0;

	if (fill(c->pid, sp))
		return -1;
	for (size_t i = 0; i < 6; i++)
		*ureg(&u, saved_regs[i]) = MARK(saved_regs[i]);
	u.rbp = pass && unwritten_rbp ? RBP_OTHER : RBP_CALLER;
	if (pass && unwritten_rbp && poke(c->pid, *unwritten_rbp, RBP_CALLER))
		return -1;
	u.rip = c->bias + q->at[0];
	u.rsp = sp;
	u.orig_rax = (unsigned long long)-1;
	u.eflags &= ~0x100ULL;
	if (ptrace(PTRACE_SETREGS, c->pid, NULL, &u))
		return -1;
	for (unsigned int k = 0; k < q->n; k++) {
		at[k] = u;
		if (u.rip != c->bias + q->at[k])
			return -1;
		if (step(c->pid, &u))
			return -1;
	}
	if (u.rip != c->bias + q->at[q->n])
		return -1;
	cfa = u.rsp + (int64_t)c->body_cfa;
	*cfa_out = cfa;
	if (!pass) {
		/* Did the sequence write the FDE's rbp slot? */
		*rbp_slot_written = !peek(c->pid, cfa + c->fde_slot[6], &v) &&
				    v != PAT(cfa + c->fde_slot[6]);
		return 0;
	}
	/* The slot contents as the rows would read them, per instruction:
	 * slots only ever get written once, so the final memory is theirs
	 * once written; a slot read before its push must not be used. */
	for (unsigned int k = 0; k < q->n; k++) {
		const struct luw_uw_entry *e = row(c->t, q->at[k]);

		rbp_mem[k] = 0;
		if (e && LUW_UW_RBP_OF(e->rule) == LUW_UW_RBP_CFA) {
			uint64_t a = cfa + e->aux;

			/* Written by instruction j < k, or before the run. */
			if (a < at[k].rsp && !unwritten_rbp)
				rbp_mem[k] = 0xbad;
			else if (peek(c->pid, a, &rbp_mem[k]))
				return -1;
		}
	}
	bad += check_rows(c, q, at, rbp_mem, cfa, "entry");
	if (!peek(c->pid, cfa - 8, &v) && v != PAT(cfa - 8)) {
		CHECK(0, "%s: entry 0x%" PRIx64 ": the return address slot was written",
		      c->name, q->at[0]);
		bad++;
	}
	for (size_t i = 0; i < 6; i++) {
		int r = saved_regs[i];
		uint64_t want = r == 6 ? RBP_CALLER : MARK(r);

		if (!c->fde_slot[r])
			continue;
		if (peek(c->pid, cfa + c->fde_slot[r], &v) || v != want) {
			CHECK(0, "%s: entry 0x%" PRIx64 ": after it reg %d's FDE slot c%+d holds 0x%"
			      PRIx64, c->name, q->at[0], r, c->fde_slot[r], v);
			bad++;
		}
	}
	return bad;
}

static int check_entry(struct ctx *c, const struct luw_vmseq *q)
{
	uint64_t cfa, written = 1, slot;
	int rc;

	if (run_entry(c, q, 0, NULL, &cfa, &written))
		return -1;
	slot = cfa + c->fde_slot[6];
	rc = run_entry(c, q, 1, written ? NULL : &slot, &cfa, &written);
	return rc;
}

static int check_exit(struct ctx *c, const struct luw_vmseq *q)
{
	struct user_regs_struct u = c->base, at[LUW_VMSEQ_MAXINSN];
	uint64_t sp = (c->base.rsp - 16384) & ~15ULL, cfa, v, rbp_mem[LUW_VMSEQ_MAXINSN];
	const struct luw_uw_entry *last = row(c->t, q->at[q->n - 1]);
	int bad = 0;

	if (fill(c->pid, sp))
		return -1;
	/* The frame as the FDE lays it out, the registers elsewhere. */
	cfa = sp + (uint64_t)c->body_cfa;
	for (size_t i = 0; i < 6; i++) {
		int r = saved_regs[i];

		*ureg(&u, r) = MARK(r) ^ 0xff;
		if (c->fde_slot[r] &&
		    poke(c->pid, cfa + c->fde_slot[r], r == 6 ? RBP_CALLER : MARK(r)))
			return -1;
	}
	u.rbp = RBP_OTHER;
	if (poke(c->pid, cfa - 8, RA_FAKE))
		return -1;
	u.rip = c->bias + q->at[0];
	u.rsp = sp;
	u.orig_rax = (unsigned long long)-1;
	u.eflags &= ~0x100ULL;
	if (ptrace(PTRACE_SETREGS, c->pid, NULL, &u))
		return -1;
	for (unsigned int k = 0; k < q->n; k++) {
		const struct luw_uw_entry *e = row(c->t, q->at[k]);

		at[k] = u;
		if (u.rip != c->bias + q->at[k])
			return -1;
		rbp_mem[k] = 0;
		if (e && LUW_UW_RBP_OF(e->rule) == LUW_UW_RBP_CFA &&
		    peek(c->pid, u.rsp + e->cfa_off + e->aux, &rbp_mem[k]))
			return -1;
		if (step(c->pid, &u))
			return -1;
	}
	/* The CPU's answer: where the caller resumes, and with which rsp. */
	if (last && u.rip == RA_FAKE) {
		cfa = u.rsp;
	} else if (!peek(c->pid, u.rsp, &v) && v == RA_FAKE) {
		cfa = u.rsp + 8;	/* tail jmp: the return address on top */
	} else {
		CHECK(0, "%s: exit 0x%" PRIx64 ": left at 0x%llx with no return address",
		      c->name, q->at[0], u.rip);
		return 1;
	}
	CHECK(cfa == sp + (uint64_t)c->body_cfa,
	      "%s: exit 0x%" PRIx64 ": true CFA 0x%" PRIx64 " is not the FDE's rsp%+d",
	      c->name, q->at[0], cfa, c->body_cfa);
	bad += check_rows(c, q, at, rbp_mem, cfa, "exit");
	for (size_t i = 0; i < 6; i++) {
		int r = saved_regs[i];
		uint64_t want = r == 6 ? RBP_CALLER : MARK(r);

		if (c->fde_slot[r] && *ureg(&u, r) != want) {
			CHECK(0, "%s: exit 0x%" PRIx64 ": reg %d not restored from c%+d",
			      c->name, q->at[0], r, c->fde_slot[r]);
			bad++;
		}
	}
	return bad;
}

/*
 * The FDE's own body rule and slots, read with libdw where the first
 * entry's sequence ends (not from the table under test).
 */
static int body_of(struct ctx *c, const char *path, const struct luw_symbols *elf)
{
	const struct luw_vmseq *q = NULL;
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops;
	Dwarf_CFI *cfi;
	size_t nops;
	uint64_t va;
	char err[256];
	int fd, rc = -1;
	Elf *e;

	for (size_t i = 0; i < c->t->vm.n && !q; i++)
		if (c->t->vm.v[i].kind == LUW_VMSEQ_ENTRY)
			q = &c->t->vm.v[i];
	if (!q || luw_symbols_off2vaddr(elf, q->at[q->n], &va))
		return -1;
	e = luw_elf_open(path, &fd, err, sizeof(err));
	if (!e)
		return -1;
	cfi = dwarf_getcfi_elf(e);
	if (!cfi || dwarf_cfi_addrframe(cfi, va, &fr) ||
	    dwarf_frame_cfa(fr, &ops, &nops) || nops != 1)
		goto out;
	if (ops[0].atom == DW_OP_breg7)
		c->body_cfa = (int32_t)ops[0].number;
	else if (ops[0].atom == DW_OP_bregx && ops[0].number == 7)
		c->body_cfa = (int32_t)ops[0].number2;
	else
		goto out;
	memset(c->fde_slot, 0, sizeof(c->fde_slot));
	for (size_t i = 0; i < 6; i++) {
		int r = saved_regs[i];

		if (!dwarf_frame_register(fr, r, mem, &ops, &nops) && nops == 2 &&
		    ops[0].atom == DW_OP_call_frame_cfa &&
		    ops[1].atom == DW_OP_plus_uconst)
			c->fde_slot[r] = (int32_t)(int64_t)ops[1].number;
	}
	rc = c->fde_slot[6] ? 0 : -1;
out:
	free(fr);
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(e);
	close(fd);
	return rc;
}

static pid_t stop_exec(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };

		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(path, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		if (pid > 0)
			kill(pid, SIGKILL);
		return -1;
	}
	return pid;
}

static pid_t stop_dlopen(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (!dlopen(path, RTLD_NOW | RTLD_LOCAL))
			_exit(126);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		if (pid > 0)
			kill(pid, SIGKILL);
		return -1;
	}
	return pid;
}

static void check_binary(const char *path, int is_lib)
{
	char err[512], real[PATH_MAX];
	struct luw_cfi *t = luw_cfi_build(path, err, sizeof(err));
	struct luw_symbols *elf = luw_symbols_get(path, err, sizeof(err));
	struct ctx c = { .t = t, .name = path };
	size_t nent = 0, nexit = 0, ok = 0;
	uint64_t a;

	CHECK(t && elf, "%s: %s", path, err);
	if (!t || !elf || !realpath(path, real))
		goto out;
	for (size_t i = 0; i < t->vm.n; i++) {
		const struct luw_vmseq *q = &t->vm.v[i];
		const struct luw_symbols_sym *s = NULL;
		uint64_t va;

		if (!luw_symbols_off2vaddr(elf, q->at[0], &va))
			s = luw_symbols_at(elf, va);
		printf("  %s 0x%" PRIx64 " %-24s %u instructions\n",
		       q->kind == LUW_VMSEQ_ENTRY ? "entry" : "exit ", q->at[0],
		       s ? s->name : "-", q->n);
		if (q->kind == LUW_VMSEQ_ENTRY)
			nent++;
		else
			nexit++;
	}
	CHECK(nent >= 4 && nexit >= 1, "%s: %zu entries, %zu exits found", path,
	      nent, nexit);
	if (body_of(&c, path, elf)) {
		CHECK(0, "%s: no rsp-based FDE rule with rbp saved after the first entry",
		      path);
		goto out;
	}
	c.pid = is_lib ? stop_dlopen(path) : stop_exec(path);
	CHECK(c.pid > 0, "%s: cannot start a process mapping it", path);
	if (c.pid <= 0)
		goto out;
	if (luw_ptrace_getregs(c.pid, &c.base) ||
	    !(a = mapped_at(c.pid, real, t->vm.v[0].at[0]))) {
		CHECK(0, "%s: not mapped executable in pid %d", path, (int)c.pid);
		goto kill;
	}
	c.bias = a - t->vm.v[0].at[0];
	for (size_t i = 0; i < t->vm.n; i++) {
		const struct luw_vmseq *q = &t->vm.v[i];
		int rc = q->kind == LUW_VMSEQ_ENTRY ? check_entry(&c, q) :
						      check_exit(&c, q);

		CHECK(rc >= 0, "%s: %s 0x%" PRIx64 ": could not single-step it", path,
		      q->kind == LUW_VMSEQ_ENTRY ? "entry" : "exit", q->at[0]);
		ok += rc == 0;
	}
	printf("%s: %zu entries, %zu exits; %zu of %zu right under single-step\n",
	       path, nent, nexit, ok, t->vm.n);
kill:
	kill(c.pid, SIGKILL);
	waitpid(c.pid, NULL, 0);
out:
	luw_cfi_free(t);
}

int main(int argc, char **argv)
{
	const char *cache = getenv("LUW_CACHE");
	char dir[PATH_MAX], p[PATH_MAX + 300], cmd[3 * PATH_MAX];
	struct dirent **cells;
	int n, ncells = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: test_vmseq FIXTURES\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(dir, sizeof(dir), "%s/ljmatrix", cache ? cache : "/var/cache/luaunwind");
	n = scandir(dir, &cells, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		static const char *const fl[] = { "luajit", "luajit.stripped" };

		for (size_t k = 0; k < 2; k++) {
			snprintf(p, sizeof(p), "%s/%s/%s", dir, cells[i]->d_name, fl[k]);
			if (access(p, X_OK))
				continue;
			ncells++;
			check_binary(p, 0);
		}
		free(cells[i]);
	}
	if (n >= 0)
		free(cells);
	CHECK(ncells > 0, "no built cell in %s: test_ljmatrix builds them", dir);
	check_binary("/usr/bin/luajit", 0);
	check_binary("/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2", 1);
	snprintf(cmd, sizeof(cmd), "%s/../../scripts/luajit2-fetch.sh %s/../../build/luajit2",
		 argv[1], argv[1]);
	CHECK(system(cmd) == 0, "cannot unpack luajit2: %s", cmd);
	snprintf(p, sizeof(p),
		 "%s/../../build/luajit2/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2",
		 argv[1]);
	check_binary(p, 1);
	check_binary("/usr/bin/tarantool", 0);
	return luw_test_status("test_vmseq");
}
