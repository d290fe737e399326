/* Compact unwind tables from .eh_frame with libdw; see cfi.h. */
#include "unwind/cfi.h"
#include "elf/ehframe.h"
#include "elf/symbols.h"
#include "util/fail.h"
#include "elf/filecache.h"
#include "luajit/vmseq.h"
#include "util/grow.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REG_RBP 6
#define REG_RSP 7
#define REG_R14 14
#define REG_RA 16

/* ---- rows ---- */

/* A row's r14 rule; ANY where the entry's rule makes it meaningless. */
struct r14rule {
	int16_t off;
	uint8_t rule;		/* LUW_UW_R14_* */
	bool any;
};

static const struct r14rule r14_any = { .any = true };

struct row {
	uint64_t start, end;	/* file offsets */
	struct luw_uw_entry r;	/* rule; r.start unused */
	struct r14rule x;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static int rows_push(struct rows *rs, const struct row *r)
{
	if (luw_grow((void **)&rs->v, &rs->cap, rs->n + 1, sizeof(*rs->v)))
		return -1;
	rs->v[rs->n++] = *r;
	return 0;
}

static int64_t sword(Dwarf_Word w)
{
	return (int64_t)w;
}

/* A "CFA + N" location: [DW_OP_call_frame_cfa (DW_OP_plus_uconst N)]. */
static int cfa_plus(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (nops == 1) {
		*off = 0;
		return 0;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = sword(ops[1].number);
		return 0;
	}
	return -1;
}

static int breg(const Dwarf_Op *op, int *reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx) {
		*reg = (int)op->number;
		*off = sword(op->number2);
		return 0;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = sword(op->number);
		return 0;
	}
	return -1;
}

/*
 * The .plt CFA: rsp + N + ((rip & 15) >= T ? 8 : 0), written as
 * breg7 N; breg16 0; lit15; and; litT; ge; lit3; shl; plus.
 */
static int plt_expr(const Dwarf_Op *o, size_t n, int64_t *off, int *thr)
{
	int reg;
	int64_t zero;

	if (n != 9 || breg(&o[0], &reg, off) || reg != REG_RSP ||
	    breg(&o[1], &reg, &zero) || reg != REG_RA || zero != 0 ||
	    o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and ||
	    o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15 ||
	    o[5].atom != DW_OP_ge || o[6].atom != DW_OP_lit3 ||
	    o[7].atom != DW_OP_shl || o[8].atom != DW_OP_plus)
		return -1;
	*thr = o[4].atom - DW_OP_lit0;
	return 0;
}

/*
 * A realigned frame's CFA, the DRAP value it saved: breg6 N; deref (or
 * breg7 N; deref).  Returns the CFA rule, or -1.
 */
static int deref_expr(const Dwarf_Op *o, size_t n, int64_t *off)
{
	int reg;

	if (n != 2 || breg(&o[0], &reg, off) || o[1].atom != DW_OP_deref)
		return -1;
	if (reg == REG_RBP)
		return LUW_UW_CFA_DEREF_RBP;
	if (reg == REG_RSP)
		return LUW_UW_CFA_DEREF_RSP;
	return -1;
}

static void set_unsup(struct luw_uw_entry *r)
{
	r->cfa_off = 0;
	r->aux = 0;
	r->ra_off = 0;
	r->rule = LUW_UW_RULE(LUW_UW_CFA_UNSUP, LUW_UW_RBP_UNDEF);
}

/*
 * Is a register's rule "saved at rbp + off", DW_CFA_expression breg6 off?
 * libdw hands an expression rule over with the DW_OP_call_frame_cfa that
 * DWARF pushes before it (a DW_CFA_val_expression also gets a
 * DW_OP_stack_value after it: a value, not a slot, so no match).
 */
static bool rbp_rel(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	int base;

	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa) {
		ops++;
		nops--;
	}
	return nops == 1 && !breg(&ops[0], &base, off) && base == REG_RBP &&
	       *off >= INT16_MIN && *off <= INT16_MAX;
}

/*
 * A callee-saved register's rule: SAME, saved at CFA + off (within S16),
 * or UNDEF for anything else (a register rule, an expression).  libdw
 * applies the psABI's initial rules, so a register no instruction
 * mentions reads as SAME.  For rbp only, one expression more: saved at
 * rbp + off (DW_CFA_expression r6: breg6 off), a realigned frame's.
 */
static int saved_reg(Dwarf_Frame *fr, int reg, uint8_t *rule, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	*off = 0;
	if (dwarf_frame_register(fr, reg, mem, &ops, &nops))
		return -1;
	if (nops == 0)
		*rule = ops == mem ? LUW_UW_RBP_UNDEF : LUW_UW_RBP_SAME;
	else if (!cfa_plus(ops, nops, off) && *off >= INT16_MIN &&
		 *off <= INT16_MAX)
		*rule = LUW_UW_RBP_CFA;
	else if (reg == REG_RBP && rbp_rel(ops, nops, off))
		*rule = LUW_UW_RBP_RBP;
	else
		*rule = LUW_UW_RBP_UNDEF;
	if (*rule != LUW_UW_RBP_CFA && *rule != LUW_UW_RBP_RBP)
		*off = 0;
	return 0;
}

/* Reduce one CFI row to a table rule and its r14 rule. */
static void eval_row(Dwarf_Frame *fr, struct luw_uw_entry *r,
		     struct r14rule *x, struct luw_cfi_stats *st)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off, ra_off, rbp_off = 0, r14_off;
	int cfa_kind, rbp_kind, reg, thr = 0;
	uint8_t rule;
	bool signal = false;

	memset(r, 0, sizeof(*r));
	*x = r14_any;
	if (dwarf_frame_info(fr, NULL, NULL, &signal) < 0 || signal)
		goto unsup;
	/* The return address first: undefined means the outermost frame. */
	if (dwarf_frame_register(fr, REG_RA, mem, &ops, &nops))
		goto unsup;
	if (nops == 0 && ops == mem) {
		r->rule = LUW_UW_RULE(LUW_UW_CFA_END, LUW_UW_RBP_SAME);
		st->end++;
		return;
	}
	if (cfa_plus(ops, nops, &ra_off) || ra_off < -128 || ra_off > 127)
		goto unsup;

	if (dwarf_frame_cfa(fr, &ops, &nops) || nops == 0)
		goto unsup;
	if (nops == 1 && !breg(&ops[0], &reg, &off) &&
	    (reg == REG_RSP || reg == REG_RBP)) {
		cfa_kind = reg == REG_RSP ? LUW_UW_CFA_RSP : LUW_UW_CFA_RBP;
	} else if (!plt_expr(ops, nops, &off, &thr)) {
		cfa_kind = LUW_UW_CFA_PLT;
	} else if ((cfa_kind = deref_expr(ops, nops, &off)) < 0) {
		goto unsup;
	}
	if (off < INT32_MIN || off > INT32_MAX)
		goto unsup;

	if (saved_reg(fr, REG_RBP, &rule, &rbp_off))
		goto unsup;
	rbp_kind = rule;
	/* r14 unknown is no reason to give up the frame: UNDEF. */
	if (saved_reg(fr, REG_R14, &rule, &r14_off)) {
		rule = LUW_UW_R14_UNDEF;
		r14_off = 0;
	}
	/*
	 * rbp + N names this frame's slot only while rbp is this frame's
	 * own, i.e. while the CFA is computed from it.  gcc leaves the rule
	 * in place at the ret of a realigned function, after the epilogue
	 * has popped rbp (CFA rsp + 8 there): read through the caller's
	 * rbp, it would give the wrong rbp.
	 */
	if (rbp_kind == LUW_UW_RBP_RBP && cfa_kind != LUW_UW_CFA_RBP &&
	    cfa_kind != LUW_UW_CFA_DEREF_RBP) {
		rbp_kind = LUW_UW_RBP_UNDEF;
		rbp_off = 0;
	}
	/* PLT reuses aux for its threshold; a PLT stub never saves rbp. */
	if (cfa_kind == LUW_UW_CFA_PLT) {
		if (rbp_kind != LUW_UW_RBP_SAME)
			goto unsup;
		rbp_off = thr;
		st->plt++;
	}
	if (cfa_kind == LUW_UW_CFA_DEREF_RBP || cfa_kind == LUW_UW_CFA_DEREF_RSP)
		st->deref++;
	if (rbp_kind == LUW_UW_RBP_RBP)
		st->rbp_rbp++;
	r->cfa_off = (int32_t)off;
	r->aux = (int16_t)rbp_off;
	r->ra_off = (int8_t)ra_off;
	r->rule = LUW_UW_RULE(cfa_kind, rbp_kind);
	x->any = false;
	x->rule = rule;
	x->off = (int16_t)r14_off;
	if (rule == LUW_UW_R14_CFA)
		st->r14_saved++;
	else if (rule == LUW_UW_R14_UNDEF)
		st->r14_undef++;
	return;
unsup:
	set_unsup(r);
	st->unsup++;
}

/* The executable segment holding vaddr, or NULL. */
static const struct luw_elf_seg *xseg(const struct luw_elf_seg *s, size_t n,
				  uint64_t vaddr)
{
	for (size_t i = 0; i < n; i++)
		if ((s[i].flags & PF_X) && vaddr >= s[i].vaddr &&
		    vaddr - s[i].vaddr < s[i].filesz)
			return &s[i];
	return NULL;
}

static int add_row(struct rows *rs, const struct luw_elf_seg *segs, size_t nsegs,
		   uint64_t lo, uint64_t hi, const struct luw_uw_entry *rule,
		   const struct r14rule *x)
{
	const struct luw_elf_seg *s = xseg(segs, nsegs, lo);
	struct row r;

	if (!s || hi <= lo)
		return 0;	/* CFI for non-code bytes: nothing to unwind */
	if (hi - s->vaddr > s->filesz)
		hi = s->vaddr + s->filesz;
	r.start = s->offset + (lo - s->vaddr);
	r.end = s->offset + (hi - s->vaddr);
	r.r = *rule;
	r.x = *x;
	return rows_push(rs, &r);
}

/* The file's bytes: the code an FDE covers is checked against them. */
struct image {
	const uint8_t *p;
	size_t size;
};

/*
 * An FDE whose first row already puts the CFA at rbp + 16 describes its
 * body, not its entry: at a function's first instruction the call has
 * just pushed the return address and the CFA is rsp + 8, whatever rbp
 * holds.  LuaJIT's buildvm writes such an FDE for lj_vm_ffi_call (and
 * the same in its forks), so a sample at its entry read a return address
 * through the caller's rbp.  When the code starts with the standard
 * prologue that makes the FDE true (push %rbp; mov %rsp,%rbp), the two
 * instructions before it get their real rules; returns the bytes covered.
 */
static uint64_t fix_fp_prologue(const struct image *img,
				const struct luw_elf_seg *segs, size_t nsegs,
				uint64_t lo, uint64_t hi,
				const struct luw_uw_entry *first,
				const struct r14rule *first_x,
				struct rows *rs)
{
	static const uint8_t prologue[] = { 0x55, 0x48, 0x89, 0xe5 };
	const struct luw_elf_seg *s = xseg(segs, nsegs, lo);
	struct luw_uw_entry r = { 0 };
	/*
	 * Before the push nothing is saved yet: the body's r14 rule holds
	 * only when it is SAME.
	 */
	struct r14rule x = { .rule = LUW_UW_R14_UNDEF };
	uint64_t off;

	if (!s || !img->p || hi - lo < sizeof(prologue) ||
	    first->rule != LUW_UW_RULE(LUW_UW_CFA_RBP, LUW_UW_RBP_CFA) ||
	    first->cfa_off != 16 || first->aux != -16 || first->ra_off != -8)
		return 0;
	off = s->offset + (lo - s->vaddr);
	if (off > img->size || img->size - off < sizeof(prologue) ||
	    lo - s->vaddr + sizeof(prologue) > s->filesz ||
	    memcmp(img->p + off, prologue, sizeof(prologue)))
		return 0;
	if (!first_x->any && first_x->rule == LUW_UW_R14_SAME)
		x.rule = LUW_UW_R14_SAME;
	r.ra_off = -8;
	r.rule = LUW_UW_RULE(LUW_UW_CFA_RSP, LUW_UW_RBP_SAME);
	r.cfa_off = 8;
	if (add_row(rs, segs, nsegs, lo, lo + 1, &r, &x))
		return (uint64_t)-1;
	r.rule = LUW_UW_RULE(LUW_UW_CFA_RSP, LUW_UW_RBP_CFA);
	r.cfa_off = 16;
	r.aux = -16;
	if (add_row(rs, segs, nsegs, lo + 1, lo + sizeof(prologue), &r, &x))
		return (uint64_t)-1;
	return sizeof(prologue);
}

/*
 * Is this row a fixed frame set up before the FDE's first byte (CFA =
 * rsp + N, N > 8, from the start to the end of the FDE)?  No function
 * entered by a call starts like that: it is LuaJIT's VM (vmseq.h), whose
 * body rule is then its saved-register slots.
 */
static int vm_body(Dwarf_Frame *fr, const struct luw_uw_entry *rule,
		   struct luw_vmseq_fde *f)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	if (rule->rule != LUW_UW_RULE(LUW_UW_CFA_RSP, LUW_UW_RBP_CFA) ||
	    rule->cfa_off <= 8 || rule->ra_off != -8)
		return 0;
	memset(f, 0, sizeof(*f));
	f->cfa = rule->cfa_off;
	for (int r = 0; r < 17; r++) {
		if (r == REG_RSP ||
		    dwarf_frame_register(fr, r, mem, &ops, &nops))
			continue;
		if (nops && !cfa_plus(ops, nops, &off) && off < 0 &&
		    off >= -(int64_t)f->cfa)
			f->slot[r] = (int32_t)off;
	}
	return f->slot[REG_RA] == -8;
}

/*
 * The VM's one-rule FDE [lo, hi): its exact rows in the entry and exit
 * sequences vmseq.c finds, the FDE's rule everywhere else.  The
 * sequences are kept in t (file offsets) for whoever lists them.
 */
static int vm_rows(const struct image *img, const struct luw_elf_seg *segs,
		   size_t nsegs, uint64_t lo, uint64_t hi,
		   const struct luw_uw_entry *body, const struct r14rule *bx,
		   const struct luw_vmseq_fde *f, struct rows *rs,
		   struct luw_vmseqs *vs, struct luw_cfi_stats *st)
{
	const struct luw_elf_seg *s = xseg(segs, nsegs, lo);
	size_t first = vs->n;
	uint64_t at = lo, off;

	if (!s || !img->p)
		return add_row(rs, segs, nsegs, lo, hi, body, bx);
	if (hi - s->vaddr > s->filesz)
		hi = s->vaddr + s->filesz;
	off = s->offset + (lo - s->vaddr);
	if (off > img->size || img->size - off < hi - lo)
		return add_row(rs, segs, nsegs, lo, hi, body, bx);
	if (luw_vmseq_find(img->p + off, hi - lo, lo, f, vs))
		return -1;
	for (size_t i = first; i < vs->n; i++) {
		struct luw_vmseq *q = &vs->v[i];

		if (add_row(rs, segs, nsegs, at, q->at[0], body, bx))
			return -1;
		for (unsigned int k = 0; k < q->n; k++) {
			struct luw_uw_entry r = { 0 };

			r.cfa_off = q->cfa[k];
			r.ra_off = -8;
			r.aux = (int16_t)q->rbp[k];
			r.rule = LUW_UW_RULE(LUW_UW_CFA_RSP,
					     q->rbp[k] ? LUW_UW_RBP_CFA :
							 LUW_UW_RBP_SAME) |
				 LUW_UW_VMSEQ;
			/* The kernel follows no r14 through a vmseq row. */
			if (add_row(rs, segs, nsegs, q->at[k], q->at[k + 1], &r,
				    &r14_any))
				return -1;
		}
		at = q->at[q->n];
		/* From here on the table's currency: file offsets. */
		for (unsigned int k = 0; k <= q->n; k++)
			q->at[k] = s->offset + (q->at[k] - s->vaddr);
		if (q->kind == LUW_VMSEQ_ENTRY)
			st->vm_entries++;
		else
			st->vm_exits++;
	}
	return add_row(rs, segs, nsegs, at, hi, body, bx);
}

/* Walk one FDE [lo, hi) row by row. */
static int walk_fde(Dwarf_CFI *cfi, uint64_t lo, uint64_t hi,
		    const struct luw_elf_seg *segs, size_t nsegs,
		    const struct image *img, struct rows *rs,
		    struct luw_vmseqs *vs, struct luw_cfi_stats *st)
{
	uint64_t addr = lo;

	while (addr < hi) {
		Dwarf_Frame *fr;
		Dwarf_Addr s, e;
		struct luw_uw_entry rule;
		struct r14rule x;

		if (dwarf_cfi_addrframe(cfi, addr, &fr)) {
			/* libdw refused the FDE's program: keep the gap honest. */
			set_unsup(&rule);
			st->unsup++;
			return add_row(rs, segs, nsegs, addr, hi, &rule, &r14_any);
		}
		if (dwarf_frame_info(fr, &s, &e, NULL) < 0 || e <= addr) {
			free(fr);
			set_unsup(&rule);
			st->unsup++;
			return add_row(rs, segs, nsegs, addr, hi, &rule, &r14_any);
		}
		eval_row(fr, &rule, &x, st);
		st->rows++;
		if (addr == lo && e >= hi) {
			struct luw_vmseq_fde f;

			if (vm_body(fr, &rule, &f)) {
				free(fr);
				return vm_rows(img, segs, nsegs, lo, hi, &rule,
					       &x, &f, rs, vs, st);
			}
		}
		free(fr);
		if (e > hi)
			e = hi;
		if (addr == lo) {
			uint64_t done = fix_fp_prologue(img, segs, nsegs, lo,
							e, &rule, &x, rs);

			if (done == (uint64_t)-1)
				return -1;
			addr += done;
		}
		if (add_row(rs, segs, nsegs, addr, e, &rule, &x))
			return -1;
		addr = e;
	}
	return 0;
}

/*
 * Stubs whose FDE ends at a `syscall` instruction, in the state of their
 * entry (CFA = rsp + 8): glibc's clone and clone3 end their CFI there,
 * because the child comes back on another stack.  For the thread inside
 * the call, the parent, that entry rule still holds at the pc after it:
 * one SYSCALL row there (luaunwind_unwind.h), unless an FDE covers it.
 */
static int syscall_tails(Dwarf_CFI *cfi, const struct luw_fdes *f,
			 const struct luw_elf_seg *segs, size_t nsegs,
			 const struct image *img, struct rows *rs,
			 struct luw_cfi_stats *st)
{
	for (size_t i = 0; i < f->n; i++) {
		uint64_t lo = f->v[i].start, hi = f->v[i].end, pc = hi + 2, off;
		const struct luw_elf_seg *s = xseg(segs, nsegs, hi);
		struct luw_cfi_stats scratch = { 0 };
		struct luw_uw_entry rule;
		struct r14rule x;
		Dwarf_Frame *fr;
		bool covered = false;

		if (!s || hi <= lo || pc - s->vaddr > s->filesz)
			continue;
		off = s->offset + (hi - s->vaddr);
		if (off + 2 > img->size || img->p[off] != 0x0f ||
		    img->p[off + 1] != 0x05)
			continue;
		for (size_t k = 0; k < f->n && !covered; k++)
			covered = pc >= f->v[k].start && pc < f->v[k].end;
		if (covered || dwarf_cfi_addrframe(cfi, hi - 1, &fr))
			continue;
		eval_row(fr, &rule, &x, &scratch);
		free(fr);
		if (rule.rule != LUW_UW_RULE(LUW_UW_CFA_RSP, LUW_UW_RBP_SAME) ||
		    rule.cfa_off != 8 || rule.ra_off != -8)
			continue;
		rule.rule |= LUW_UW_SYSCALL;
		if (add_row(rs, segs, nsegs, pc, pc + 1, &rule, &r14_any))
			return -1;
		st->syscall_tails++;
	}
	return 0;
}

/* Walk every FDE of .eh_frame. */
static int walk_eh_frame(Elf *elf, Dwarf_CFI *cfi, const struct luw_elf_seg *segs,
			 size_t nsegs, struct rows *rs, struct luw_vmseqs *vs,
			 struct luw_cfi_stats *st)
{
	struct luw_fdes f;
	struct image img;
	int rc = 0;

	if (luw_ehframe_fdes(elf, &f))
		return -1;
	st->fdes += f.total;
	st->fdes_bad += f.bad;
	img.p = (const uint8_t *)elf_rawfile(elf, &img.size);
	for (size_t i = 0; i < f.n && !rc; i++)
		rc = walk_fde(cfi, f.v[i].start, f.v[i].end, segs, nsegs, &img,
			      rs, vs, st);
	if (!rc)
		rc = syscall_tails(cfi, &f, segs, nsegs, &img, rs, st);
	luw_ehframe_free(&f);
	return rc;
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static int same_rule(const struct luw_uw_entry *a, const struct luw_uw_entry *b)
{
	return a->rule == b->rule && a->cfa_off == b->cfa_off &&
	       a->aux == b->aux && a->ra_off == b->ra_off;
}

/*
 * Sorted rows -> entries: gaps become NONE, equal neighbours merge.  The
 * r14 rows change only where a row that has an r14 rule has another one
 * than the last: rows without (NONE, UNSUP, END, vmseq) and gaps do not
 * split them.  The first starts at text-lo.
 */
static struct luw_uw_hdr *compact(struct rows *rs, size_t *nout,
				  size_t *nx_out)
{
	struct luw_uw_hdr *h, *hh;
	struct luw_uw_entry *e;
	struct luw_uw_r14 *x;
	uint64_t prev_end = 0;
	size_t k = 0, nx = 0;

	if (rs->n)
		qsort(rs->v, rs->n, sizeof(*rs->v), row_cmp);
	/* Worst case every row plus a gap before each, plus the end. */
	h = calloc(1, sizeof(*h) + (2 * rs->n + 1) * sizeof(*e));
	x = calloc(rs->n + 1, sizeof(*x));
	if (!h || !x) {
		free(h);
		free(x);
		return NULL;
	}
	e = (struct luw_uw_entry *)(h + 1);
	for (size_t i = 0; i < rs->n; i++) {
		struct row *r = &rs->v[i];

		if (k && r->start < prev_end) {
			/* Overlapping FDEs: the earlier one keeps its bytes. */
			if (r->end <= prev_end)
				continue;
			r->start = prev_end;
		}
		if (!r->x.any &&
		    !(nx && x[nx - 1].rule == r->x.rule &&
		      x[nx - 1].off == r->x.off)) {
			x[nx].start = (uint32_t)r->start;
			x[nx].rule = r->x.rule;
			x[nx].off = r->x.off;
			nx++;
		}
		if (k && r->start > prev_end)
			e[k++] = (struct luw_uw_entry){ .start = (uint32_t)prev_end };
		if (!(k && same_rule(&e[k - 1], &r->r) &&
		      r->start == prev_end)) {
			e[k] = r->r;
			e[k].start = (uint32_t)r->start;
			k++;
		}
		prev_end = r->end;
	}
	e[k++] = (struct luw_uw_entry){ .start = (uint32_t)prev_end };
	if (nx)
		x[0].start = e[0].start;
	hh = realloc(h, sizeof(*h) + k * sizeof(*e) + nx * sizeof(*x));
	if (!hh) {
		free(h);
		free(x);
		return NULL;
	}
	h = hh;
	memcpy((struct luw_uw_entry *)(h + 1) + k, x, nx * sizeof(*x));
	free(x);
	*nout = k;
	*nx_out = nx;
	return h;
}

struct luw_cfi *luw_cfi_build_elf(Elf *elf, const char *name, char *err,
				  size_t errlen)
{
	struct luw_cfi_stats st = { 0 };
	struct luw_vmseqs vs = { 0 };
	struct rows rs = { 0 };
	struct luw_elf_seg *segs = NULL;
	size_t nsegs = 0, n, nx;
	struct luw_uw_hdr *h;
	struct luw_cfi *t;
	Dwarf_CFI *cfi;
	uint8_t id[LUW_BUILD_ID_MAX];
	size_t idlen;

	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
		luw_fail(err, errlen, "%s: not a 64-bit ELF file", name);
		return NULL;
	}
	if (luw_elf_read_segs(elf, &segs, &nsegs)) {
		luw_fail(err, errlen, "%s: truncated, or bad program headers", name);
		return NULL;
	}
	for (size_t i = 0; i < nsegs; i++)
		if (segs[i].offset + segs[i].filesz > UINT32_MAX) {
			luw_fail(err, errlen, "%s: code beyond 4 GiB of file offset",
			       name);
			free(segs);
			return NULL;
		}
	cfi = dwarf_getcfi_elf(elf);
	if (cfi && walk_eh_frame(elf, cfi, segs, nsegs, &rs, &vs, &st)) {
		luw_fail(err, errlen, "%s: out of memory", name);
		goto fail;
	}
	h = compact(&rs, &n, &nx);
	if (!h) {
		luw_fail(err, errlen, "%s: out of memory", name);
		goto fail;
	}
	h->magic = LUW_UW_MAGIC;
	h->version = LUW_UW_VERSION;
	h->hdr_size = sizeof(*h);
	h->entry_size = sizeof(struct luw_uw_entry);
	h->nentries = (uint32_t)n;
	h->r14_size = sizeof(struct luw_uw_r14);
	h->nr14 = (uint32_t)nx;
	h->text_lo = luw_uw_entries(h)[0].start;
	h->text_hi = luw_uw_entries(h)[n - 1].start;
	idlen = luw_debugfile_build_id(elf, id, sizeof(id));
	if (idlen && idlen <= LUW_UW_BUILD_ID_MAX) {
		h->flags |= LUW_UW_F_BUILD_ID;
		h->build_id_len = (uint8_t)idlen;
		memcpy(h->build_id, id, idlen);
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(name))) {
		free(t);
		free(h);
		luw_fail(err, errlen, "%s: out of memory", name);
		goto fail;
	}
	t->hdr = h;
	t->size = sizeof(*h) + n * sizeof(struct luw_uw_entry) +
		  nx * sizeof(struct luw_uw_r14);
	t->ent = luw_uw_entries(h);
	t->n = (uint32_t)n;
	t->r14 = luw_uw_r14s(h);
	t->nr14 = (uint32_t)nx;
	t->st = st;
	t->vm = vs;
	vs = (struct luw_vmseqs){ 0 };
	if (cfi)
		dwarf_cfi_end(cfi);
	free(rs.v);
	free(segs);
	if (luw_uw_check(t->hdr, t->size)) {
		luw_fail(err, errlen, "%s: built an inconsistent table", name);
		luw_cfi_free(t);
		return NULL;
	}
	return t;
fail:
	if (cfi)
		dwarf_cfi_end(cfi);
	luw_vmseq_free(&vs);
	free(rs.v);
	free(segs);
	return NULL;
}

struct luw_cfi *luw_cfi_build(const char *path, char *err, size_t errlen)
{
	struct luw_cfi *t;
	Elf *elf;
	int fd;

	elf = luw_elf_open(path, &fd, err, errlen);
	if (!elf)
		return NULL;
	t = luw_cfi_build_elf(elf, path, err, errlen);
	elf_end(elf);
	close(fd);
	return t;
}

void luw_cfi_free(struct luw_cfi *t)
{
	if (!t)
		return;
	free(t->hdr);
	free(t->path);
	luw_vmseq_free(&t->vm);
	free(t);
}

/* ---- cache ---- */

LUW_FILECACHE_DEFINE(struct luw_cfi, luw_cfi_get, luw_cfi_cache_clear,
		  luw_cfi_build, luw_cfi_free)

void luw_cfi_format(const struct luw_uw_entry *e, char *buf, size_t len)
{
	static const char *const cfa[] = { "none", "rsp", "rbp", "plt", "end",
					   "unsup", "*rbp", "*rsp" };
	int k = LUW_UW_CFA_OF(e->rule), b = LUW_UW_RBP_OF(e->rule);
	char rbp[32];

	if (k > LUW_UW_CFA_MAX) {
		snprintf(buf, len, "bad rule 0x%02x", e->rule);
		return;
	}
	if (k == LUW_UW_CFA_NONE || k == LUW_UW_CFA_END ||
	    k == LUW_UW_CFA_UNSUP) {
		snprintf(buf, len, "%s", cfa[k]);
		return;
	}
	if (b == LUW_UW_RBP_CFA)
		snprintf(rbp, sizeof(rbp), "c%+d", e->aux);
	else if (b == LUW_UW_RBP_RBP)
		snprintf(rbp, sizeof(rbp), "rbp%+d", e->aux);
	else
		snprintf(rbp, sizeof(rbp), "%s", b == LUW_UW_RBP_SAME ? "same" : "u");
	if (k == LUW_UW_CFA_PLT)
		snprintf(buf, len, "plt(rsp%+d,%d) ra=c%+d rbp=%s", e->cfa_off,
			 e->aux, e->ra_off, rbp);
	else if (k == LUW_UW_CFA_DEREF_RBP || k == LUW_UW_CFA_DEREF_RSP)
		snprintf(buf, len, "*(%s%+d) ra=c%+d rbp=%s", cfa[k] + 1,
			 e->cfa_off, e->ra_off, rbp);
	else
		snprintf(buf, len, "%s%+d ra=c%+d rbp=%s%s%s", cfa[k], e->cfa_off,
			 e->ra_off, rbp, (e->rule & LUW_UW_VMSEQ) ? " vmseq" : "",
			 (e->rule & LUW_UW_SYSCALL) ? " syscall" : "");
}
