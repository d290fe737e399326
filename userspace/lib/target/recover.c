/*
 * recover: layout fields from machine code.  See target/recover.h.  The
 * interpreter's sweeps are target/recover_vm.c's.
 */
#include "target/recover.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/ehframe.h"
#include "elf/elf.h"
#include "elf/symbols.h"
#include "target/recover_vm.h"
#include "x86/decode.h"

/* What a register holds, as far as the analysis knows. */
enum val { V_UNK, V_L, V_G, V_ML, V_ZERO, V_LOADL };

struct regs {
	enum val v[16];
	int32_t disp[16];	/* V_LOADL: the offset loaded from L */
};

static void clobber_call(struct regs *s)
{
	size_t i;

	for (i = 0; i < LUW_DECODE_NCLOBBERED; i++)
		s->v[luw_decode_clobbered[i]] = V_UNK;
}

/* After a call: the caller-saved registers hold new unknown values. */
struct px_state;
static void clobber_call_px(struct px_state *s);

static void set_once(int *f, int v)
{
	if (*f == LUW_LJR_NONE)
		*f = v;
}

/* One function, straight-line from its entry to the first ret. */
static void analyse(csh h, const uint8_t *code, size_t len, uint64_t addr,
		    struct luw_recover_result *r, int gettop)
{
	cs_insn *in = cs_malloc(h);
	struct regs s;
	int n = 0;

	memset(&s, 0, sizeof(s));
	s.v[5] = V_L;	/* rdi: the lua_State * argument */
	while (in && n++ < 200 && cs_disasm_iter(h, &code, &len, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
		int d = luw_decode_reg_op(x, 0), b;
		int32_t disp;

		if (in->id == X86_INS_RET || in->id == X86_INS_JMP)
			break;
		if (in->id == X86_INS_CALL) {
			clobber_call(&s);
			continue;
		}
		if (in->id == X86_INS_MOV && d >= 0 && x->op_count == 2 &&
		    (b = luw_decode_mem_base(o1, &disp)) >= 0) {
			enum val nv = V_UNK;

			if (s.v[b] == V_L && !gettop && r->l_glref == LUW_LJR_NONE &&
			    (o1->size == 8 || o1->size == 4)) {
				r->l_glref = disp;
				r->ref_size = o1->size;
				nv = V_G;
			} else if (s.v[b] == V_L && gettop) {
				nv = V_LOADL;
				s.disp[d] = disp;
			} else if (s.v[b] == V_G && r->g_mainthref == LUW_LJR_NONE &&
				   o1->size == r->ref_size) {
				r->g_mainthref = disp;
				nv = V_ML;
			} else if (s.v[b] == V_ML && r->l_stack == LUW_LJR_NONE &&
				   o1->size == r->ref_size) {
				r->l_stack = disp;
			}
			s.v[d] = nv;
			continue;
		}
		if (in->id == X86_INS_SUB && gettop && d >= 0 &&
		    s.v[d] == V_LOADL && (b = luw_decode_mem_base(o1, &disp)) >= 0 &&
		    s.v[b] == V_L) {
			/* top - base */
			r->l_top = s.disp[d];
			r->l_base = disp;
			break;
		}
		if (in->id == X86_INS_MOV && x->op_count == 2 &&
		    (b = luw_decode_mem_base(o0, &disp)) >= 0 &&
		    ((o1->type == X86_OP_IMM && o1->imm == 0) ||
		     (o1->type == X86_OP_REG && luw_decode_reg(o1->reg) >= 0 &&
		      s.v[luw_decode_reg(o1->reg)] == V_ZERO))) {
			if (s.v[b] == V_G && o0->size == r->ref_size)
				set_once(&r->g_cur_l, disp);
			else if (s.v[b] == V_ML && o0->size == 1)
				set_once(&r->l_status, disp);
			else if (s.v[b] == V_ML && o0->size == 8 &&
				 disp != r->g_cur_l)
				set_once(&r->l_cframe, disp);
			continue;
		}
		if (in->id == X86_INS_MOV && d >= 0 && o1->type == X86_OP_REG &&
		    luw_decode_reg(o1->reg) >= 0) {
			s.v[d] = s.v[luw_decode_reg(o1->reg)];
			s.disp[d] = s.disp[luw_decode_reg(o1->reg)];
			continue;
		}
		if (in->id == X86_INS_XOR && d >= 0 && o1->type == X86_OP_REG &&
		    luw_decode_reg(o1->reg) == d) {
			s.v[d] = V_ZERO;
			continue;
		}
		if (d >= 0 && luw_decode_writes_op0(in))
			s.v[d] = V_UNK;
	}
	if (in)
		cs_free(in, 1);
}

/*
 * Path-exploring data flow, for functions whose fields sit behind
 * branches (a tag check, a size check).  Every path from the entry is
 * followed (both ways at a conditional branch, into direct jumps, a
 * bounded number of visits per address), with symbolic register values:
 * each value has an id; a load makes a new id and remembers where it was
 * loaded from (base id, offset, width), so two registers that address
 * the same place are seen as the same place.  Facts learnt from a branch
 * (this TValue is a function) belong to the path that took it.
 */
#define PX_VALS 192
#define PX_MARKS 8

enum px_origin {
	PO_UNK, PO_L, PO_LOAD, PO_CONST, PO_TAG, PO_FN,
	PO_PT,		/* lj_debug_line's GCproto * argument */
	PO_PCARG,	/* its BCPos argument */
	PO_RET,		/* what a call returned */
	PO_AR,		/* lua_getinfo's lua_Debug * argument */
	PO_SUM,		/* src + src2 */
	PO_JTENT,	/* an int32 read from the jump table at imm */
	PO_JTADDR,	/* imm + that int32: a case of the switch */
	PO_TRACE,	/* traceref(J, tr): J->trace[tr] */
	PO_TAGGED,	/* GC64: src (a call's result) | imm (its itype << 47) */
	PO_CURFN,	/* curr_func(L): the GCobj in the slot below L->base */
	PO_X8,		/* src * 8: a count of TValues in bytes */
};

struct px_val {
	uint8_t origin;		/* enum px_origin */
	uint8_t size;		/* PO_LOAD: width loaded */
	uint8_t tfn;		/* GC64: a tagged TValue known to be a function */
	uint16_t src;		/* PO_LOAD: id of the base; PO_TAG: tagged value */
	uint16_t src2;		/* PO_SUM: the other term */
	int32_t off;		/* PO_LOAD: offset from src */
	int64_t imm;		/* PO_CONST */
};

struct px_reg {
	uint16_t id;
	int32_t off;		/* value = vals[id] + off */
};

struct px_state {
	struct px_reg r[16];
	struct px_val v[PX_VALS];
	int nv;
	/* Addresses (id, off) of TValues a tag check proved functions. */
	uint16_t mid[PX_MARKS];
	int32_t moff[PX_MARKS];
	int nm;
	/* The last compare of a register with an immediate. */
	int cmp_valid;
	struct px_reg cmp_r;
	int64_t cmp_imm;
	/* A switch index bound: the entries of the next jump table. */
	int jt_bound;
	/* Calls followed into their callee on the way here. */
	int depth;
	/* The function this path is in (a tail jump moves it). */
	uint64_t lo, hi;
	/* checktrace: the value compared with the dword at G + trno_st */
	uint16_t trno_id;
	int32_t trno_st;
	/* push: a call's result was stored as the GCobj word at L->top */
	int ret_at_top;
};

/* What the analysis is after in one function. */
enum px_goal { PG_MAXSTACK, PG_ISCFUNC, PG_TOCFUNC, PG_GETINFO,
	       PG_DEBUGLINE, PG_CHECKTRACE, PG_PUSH, PG_STACKFREE, PG_FLUSH };

#define PX_CALLS 4

struct px_found {
	int ref_size, l_top, l_base, fn_pc;	/* inputs */
	int val, conflict;		/* PG_MAXSTACK, PG_ISCFUNC: fn_ffid */
	int pc, pc_conflict, f, f_conflict;	/* PG_TOCFUNC */
	/* PG_GETINFO: calls taking mref(fn->pc) - k, and the chunkname */
	int ncalls;
	uint64_t call_to[PX_CALLS];
	int call_k[PX_CALLS];
	int chunk_k, chunk_conflict;
	/* PG_DEBUGLINE */
	int sizebc, sizebc_conflict, numline, numline_conflict;
	int lineinfo, lineinfo_conflict;
	int fl_paths, nfl, fl_off[4], fl_cnt[4];
	/*
	 * lj_debug_line inlined into a helper (-DLUA_USE_ASSERT): pt's
	 * fields relative to mref(fn->pc), pt itself mref(fn->pc) - pt_k.
	 */
	int inl, pt_k, pt_k_conflict;
	/*
	 * PG_CHECKTRACE (jit.util's functions, jit_checktrace inlined):
	 * G-relative J->sizetrace (compared with the trace number) and
	 * J->trace (indexed by it); T->mcode, T->szmcode handed to
	 * lj_str_new by tracemc.
	 */
	int l_glref, st_g, st_conflict, tr_g, tr_conflict;
	int mc, mc_conflict, szmc, szmc_conflict;
	/*
	 * PG_PUSH (lua_pushlstring, lua_newthread, lua_pushcclosure): the
	 * tag stored with a call's result into L->top (set*V); the byte
	 * compares of curr_func(L) (getcurrenv).
	 * PG_STACKFREE (lua_close -> close_state): the dword of the thread
	 * whose L->stack is freed, times sizeof(TValue), is its stacksize.
	 */
	int have_tag, tag_conflict;
	int64_t tag;
	int l_stack, ss_off, ss_conflict;
	int ncfn, cfn_off[4], cfn_imm[4];	/* byte compares of curr_func */
	/*
	 * PG_FLUSH (luaJIT_setmode -> lj_trace_flush -> trace_flushroot, T
	 * from jit_checktrace's pattern): pt->trace == T->traceno compares a
	 * uint16 of the proto T->startpt refers to with T's own (startpt,
	 * traceno); trace_unpatch stores T->startins, a dword of T, through
	 * T->startpc.
	 */
	int fl_pt, fl_pt_c, fl_no, fl_no_c, fl_pc, fl_pc_c;
	int ndirect;
	uint64_t direct[16];
};

/* A GCproto * (lj_debug_line's pt), or inline, mref(fn->pc). */
static int px_is_pt(const struct px_state *s, uint16_t id,
		    const struct px_found *fd)
{
	const struct px_val *v = &s->v[id];

	if (v->origin == PO_PT)
		return 1;
	return fd->inl && id && v->origin == PO_LOAD && v->size == fd->ref_size &&
	       v->off == fd->fn_pc && v->src;
}

static void px_note(int *f, int *conflict, int v)
{
	if (*f == LUW_LJR_NONE)
		*f = v;
	else if (*f != v)
		*conflict = 1;
}

static uint16_t px_new(struct px_state *s, uint8_t origin)
{
	if (s->nv >= PX_VALS)
		return 0;	/* id 0: the shared unknown */
	memset(&s->v[s->nv], 0, sizeof(s->v[0]));
	s->v[s->nv].origin = origin;
	return (uint16_t)s->nv++;
}

static void px_set_new(struct px_state *s, int reg, uint8_t origin)
{
	s->r[reg].id = px_new(s, origin);
	s->r[reg].off = 0;
}

/* [base + disp], no index: the register's value plus disp; 0 if not. */
static int px_addr(const struct px_state *s, const cs_x86_op *o, uint16_t *id,
		   int32_t *off)
{
	int b;

	if (o->type != X86_OP_MEM || o->mem.index != X86_REG_INVALID ||
	    o->mem.segment != X86_REG_INVALID || (b = luw_decode_reg(o->mem.base)) < 0 ||
	    b == 7)
		return 0;
	*id = s->r[b].id;
	*off = s->r[b].off + (int32_t)o->mem.disp;
	return *id != 0;
}

static int px_marked(const struct px_state *s, uint16_t id, int32_t off)
{
	int i;

	for (i = 0; i < s->nm; i++)
		if (s->mid[i] == id && s->moff[i] == off)
			return 1;
	return 0;
}

/* The TValue at the place value id was loaded from is a function. */
static void px_mark_tv(struct px_state *s, uint16_t id, int32_t off)
{
	if (s->nm < PX_MARKS && !px_marked(s, id, off)) {
		s->mid[s->nm] = id;
		s->moff[s->nm++] = off;
	}
}

/*
 * The branch where the last compare found `tag == LJ_TFUNC` (~8): the
 * value it came from is a function.  GC64: the tag is the tagged value
 * shifted right by 47 (sar); 32-bit refs: the tag is the TValue's upper
 * word, loaded from 4 past the TValue, whose lower word is the GCobj.
 */
static void px_learn_fn(struct px_state *s)
{
	const struct px_val *t;

	if (!s->cmp_valid || (int32_t)s->cmp_imm != -9 || s->cmp_r.off)
		return;
	t = &s->v[s->cmp_r.id];
	if (t->origin == PO_TAG) {
		const struct px_val *tv = &s->v[t->src];

		s->v[t->src].tfn = 1;
		if (tv->origin == PO_LOAD && tv->size == 8)
			px_mark_tv(s, tv->src, tv->off);
	} else if (t->origin == PO_LOAD && t->size == 4) {
		px_mark_tv(s, t->src, t->off - 4);
	}
}

#define PX_NOOFF (-100000)

/* A dword of pt: its offset when o is one (a register or memory). */
static int px_pt_dword(struct px_state *s, const cs_x86_op *o,
		       const struct px_found *fd)
{
	uint16_t id;
	int32_t off;
	int r;

	if (o->size != 4)
		return -1;
	if (o->type == X86_OP_MEM && px_addr(s, o, &id, &off) &&
	    px_is_pt(s, id, fd))
		return off;
	if (o->type == X86_OP_REG && (r = luw_decode_reg(o->reg)) >= 0 && !s->r[r].off &&
	    s->v[s->r[r].id].origin == PO_LOAD && s->v[s->r[r].id].size == 4 &&
	    px_is_pt(s, s->v[s->r[r].id].src, fd))
		return s->v[s->r[r].id].off;
	return PX_NOOFF;
}

/*
 * lj_debug_line's compares: pc against pt->sizebc, pt->numline against
 * 255/256 and 65535/65536 (the width of a lineinfo entry).
 */
static void px_cmp_pt(struct px_state *s, const cs_x86_op *a,
		      const cs_x86_op *b, struct px_found *fd)
{
	int i;

	for (i = 0; i < 2; i++) {
		const cs_x86_op *p = i ? b : a, *q = i ? a : b;
		int o = px_pt_dword(s, p, fd), r;

		if (o == PX_NOOFF)
			continue;
		if (q->type == X86_OP_IMM &&
		    (q->imm == 0xff || q->imm == 0x100 || q->imm == 0xffff ||
		     q->imm == 0x10000))
			px_note(&fd->numline, &fd->numline_conflict, o);
		else if (q->type == X86_OP_REG && (r = luw_decode_reg(q->reg)) >= 0 &&
			 (s->v[s->r[r].id].origin == PO_PCARG ||
			  (fd->inl && s->v[s->r[r].id].origin == PO_RET)))
			px_note(&fd->sizebc, &fd->sizebc_conflict, o);
	}
}

/* Is value id (+ off) what L->top holds? */
static int px_is_top(const struct px_state *s, uint16_t id, const struct px_found *fd)
{
	const struct px_val *v = &s->v[id];

	return id && v->origin == PO_LOAD && v->size == 8 &&
	       v->off == fd->l_top && s->v[v->src].origin == PO_L;
}

/* Is [id + off], off < 0, a slot below L->base (a TValue * always)? */
static int px_below_base(const struct px_state *s, uint16_t id, int32_t off,
			 const struct px_found *fd)
{
	const struct px_val *v = &s->v[id];

	return id && off < 0 && off >= -16 && v->origin == PO_LOAD &&
	       v->size == 8 && v->off == fd->l_base && s->v[v->src].origin == PO_L;
}

static void px_note64(int64_t *f, int *have, int *conflict, int64_t v)
{
	if (!*have) {
		*f = v;
		*have = 1;
	} else if (*f != v) {
		*conflict = 1;
	}
}

/*
 * set*V(L, L->top, obj) after obj = a call's result, and the stores into
 * a new object (PG_PUSH, PG_NEWOBJ); 1 when the instruction was taken
 * care of.
 */
static int px_push(struct px_state *s, const cs_insn *in, enum px_goal goal,
		   struct px_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	int d = luw_decode_reg_op(x, 0);
	int sr = luw_decode_reg_op(x, 1);
	uint16_t id;
	int32_t off;

	if (x->op_count != 2)
		return 0;
	/* L->top - n slots (lua_pushcclosure pops its upvalues): still top */
	if (in->id == X86_INS_SUB && d >= 0 && sr >= 0 && !s->r[d].off &&
	    px_is_top(s, s->r[d].id, fd))
		return 1;
	/*
	 * curr_func(L) (getcurrenv): GC64 masks the slot's 47 bits, 32-bit
	 * refs load its low word.
	 */
	if (in->id == X86_INS_AND && d >= 0 && o1->type == X86_OP_MEM &&
	    s->v[s->r[d].id].origin == PO_CONST &&
	    s->v[s->r[d].id].imm == 0x7fffffffffffLL &&
	    px_addr(s, o1, &id, &off) && px_below_base(s, id, off, fd)) {
		px_set_new(s, d, PO_CURFN);
		return 1;
	}
	if (in->id == X86_INS_MOV && d >= 0 && fd->ref_size == 4 &&
	    o1->type == X86_OP_MEM && o1->size == 4 &&
	    px_addr(s, o1, &id, &off) && px_below_base(s, id, off, fd)) {
		px_set_new(s, d, PO_CURFN);
		return 1;
	}
	/* fn->c.gct == ~LJ_TFUNC (getcurrenv) */
	if (in->id == X86_INS_CMP && o0->type == X86_OP_MEM && o0->size == 1 &&
	    o1->type == X86_OP_IMM && px_addr(s, o0, &id, &off) &&
	    s->v[id].origin == PO_CURFN) {
		int i;

		for (i = 0; i < fd->ncfn && (fd->cfn_off[i] != off ||
					     fd->cfn_imm[i] != (uint8_t)o1->imm); i++)
			;
		if (i == fd->ncfn && i < 4) {
			fd->cfn_off[i] = off;
			fd->cfn_imm[i] = (uint8_t)o1->imm;
			fd->ncfn++;
		}
		return 0;
	}
	/* GC64: the tagged value, a call's result or'ed with a constant */
	if (in->id == X86_INS_OR && d >= 0 && sr >= 0 && !s->r[d].off &&
	    !s->r[sr].off) {
		const struct px_val *a = &s->v[s->r[d].id], *b = &s->v[s->r[sr].id];
		const struct px_val *ret = a->origin == PO_RET ? a : b;
		const struct px_val *k = a->origin == PO_RET ? b : a;
		uint16_t n;

		if (ret->origin != PO_RET || k->origin != PO_CONST || !s->r[d].id ||
		    !s->r[sr].id)
			return 0;
		n = px_new(s, PO_TAGGED);
		s->v[n].imm = k->imm;
		s->v[n].src = a->origin == PO_RET ? s->r[d].id : s->r[sr].id;
		s->r[d].id = n;
		s->r[d].off = 0;
		return 1;
	}
	if (in->id != X86_INS_MOV || o0->type != X86_OP_MEM ||
	    !px_addr(s, o0, &id, &off))
		return 0;
	if (goal == PG_PUSH && px_is_top(s, id, fd)) {
		const struct px_val *v = sr >= 0 && !s->r[sr].off ?
					 &s->v[s->r[sr].id] : NULL;

		if (off == 0 && o0->size == 8 && v && v->origin == PO_TAGGED) {
			px_note64(&fd->tag, &fd->have_tag, &fd->tag_conflict, v->imm);
		} else if (off == 0 && o0->size == 4 && v && v->origin == PO_RET) {
			s->ret_at_top = 1;	/* 32-bit refs: the GCobj word */
		} else if (off == 4 && o0->size == 4 && o1->type == X86_OP_IMM &&
			   s->ret_at_top) {
			px_note64(&fd->tag, &fd->have_tag, &fd->tag_conflict,
				  (int64_t)(uint32_t)o1->imm);
		}
		return 0;
	}
	return 0;
}

/* A dword loaded, times 8 (shl 3, or lea [x*8]): PO_X8 of it. */
static int px_stackfree(struct px_state *s, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o1 = &x->operands[1];
	int d = luw_decode_reg_op(x, 0);
	int k;
	uint16_t src;

	if (d < 0 || x->op_count != 2)
		return 0;
	if (in->id == X86_INS_SHL && o1->type == X86_OP_IMM && o1->imm == 3)
		k = d;
	else if (in->id == X86_INS_LEA && o1->mem.base == X86_REG_INVALID &&
		 o1->mem.scale == 8 && !o1->mem.disp &&
		 o1->mem.segment == X86_REG_INVALID)
		k = luw_decode_reg(o1->mem.index);
	else
		return 0;
	if (k < 0 || s->r[k].off || s->v[s->r[k].id].origin != PO_LOAD ||
	    s->v[s->r[k].id].size != 4)
		return 0;
	src = s->r[k].id;
	px_set_new(s, d, PO_X8);
	s->v[s->r[d].id].src = src;
	return 1;
}

/* Is value id G(L): the reference loaded from L->glref? */
static int px_is_g(const struct px_state *s, uint16_t id, int32_t off,
		   const struct px_found *fd)
{
	const struct px_val *v = &s->v[id];

	return id && !off && v->origin == PO_LOAD && v->size == fd->ref_size &&
	       v->off == fd->l_glref && s->v[v->src].origin == PO_L;
}

/*
 * jit_checktrace: `tr < J->sizetrace` (a compare of a value with a dword
 * of G(L) + GG_G2J) and traceref(J, tr) (a load indexed by that very
 * value from the pointer at G(L) + GG_G2J + trace): the bound of the
 * index is sizetrace.  1 when the instruction was taken care of.
 */
static int px_checktrace(struct px_state *s, const cs_insn *in,
			 struct px_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	uint16_t id;
	int32_t off;
	int i, b, k, d;

	if (x->op_count != 2)
		return 0;
	if (in->id == X86_INS_CMP) {
		for (i = 0; i < 2; i++) {
			const cs_x86_op *m = i ? o0 : o1, *t = i ? o1 : o0;

			if (m->type == X86_OP_MEM && m->size == 4 &&
			    t->type == X86_OP_REG && (k = luw_decode_reg(t->reg)) >= 0 &&
			    !s->r[k].off && s->r[k].id &&
			    px_addr(s, m, &id, &off) && px_is_g(s, id, 0, fd)) {
				s->trno_id = s->r[k].id;
				s->trno_st = off;
			}
		}
		return 0;
	}
	if ((in->id != X86_INS_MOV && in->id != X86_INS_MOVSXD) ||
	    o0->type != X86_OP_REG || (d = luw_decode_reg(o0->reg)) < 0 ||
	    o1->type != X86_OP_MEM || o1->mem.disp ||
	    o1->mem.segment != X86_REG_INVALID || o1->mem.scale != fd->ref_size ||
	    (b = luw_decode_reg(o1->mem.base)) < 0 || (k = luw_decode_reg(o1->mem.index)) < 0 ||
	    s->r[b].off || s->r[k].off || !s->trno_id ||
	    s->r[k].id != s->trno_id)
		return 0;
	{
		const struct px_val *a = &s->v[s->r[b].id];

		if (a->origin != PO_LOAD || a->size != 8 || !px_is_g(s, a->src, 0, fd))
			return 0;
		px_note(&fd->tr_g, &fd->tr_conflict, a->off);
		px_note(&fd->st_g, &fd->st_conflict, s->trno_st);
	}
	px_set_new(s, d, PO_TRACE);
	return 1;
}

/* A load of `size` bytes from the trace T: its offset, else -1. */
static int px_tload(const struct px_state *s, uint16_t id, int size)
{
	const struct px_val *v = &s->v[id];

	return id && v->origin == PO_LOAD && v->size == size &&
	       s->v[v->src].origin == PO_TRACE ? v->off : -1;
}

/* A value of operand o (register, or memory read): its id, else 0. */
static uint16_t px_opval(struct px_state *s, const cs_x86_op *o)
{
	uint16_t id, n;
	int32_t off;
	int r;

	if (o->type == X86_OP_REG && (r = luw_decode_reg(o->reg)) >= 0 && !s->r[r].off)
		return s->r[r].id;
	if (o->type != X86_OP_MEM || !px_addr(s, o, &id, &off))
		return 0;
	n = px_new(s, PO_LOAD);
	s->v[n].src = id;
	s->v[n].off = off;
	s->v[n].size = (uint8_t)o->size;
	return n;
}

/* trace_flushroot's compare and trace_unpatch's store (PG_FLUSH). */
static void px_flush(struct px_state *s, const cs_insn *in, struct px_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	uint16_t id;
	int32_t off;
	int i, r, a;

	if (x->op_count != 2)
		return;
	if (in->id == X86_INS_CMP && o0->size == 2 && o1->size == 2) {
		uint16_t v[2] = { px_opval(s, o0), px_opval(s, o1) };

		for (i = 0; i < 2; i++) {
			const struct px_val *p = &s->v[v[!i]];
			int no = px_tload(s, v[i], 2), pt;

			if (no < 0 || !v[!i] || p->origin != PO_LOAD || p->size != 2 ||
			    (pt = px_tload(s, p->src, fd->ref_size)) < 0)
				continue;
			px_note(&fd->fl_pt, &fd->fl_pt_c, pt);
			px_note(&fd->fl_no, &fd->fl_no_c, no);
		}
		return;
	}
	if (in->id == X86_INS_MOV && o0->type == X86_OP_MEM && o0->size == 4 &&
	    o1->type == X86_OP_REG && (r = luw_decode_reg(o1->reg)) >= 0 && !s->r[r].off &&
	    px_addr(s, o0, &id, &off) && !off &&
	    (a = px_tload(s, id, fd->ref_size)) >= 0 &&
	    px_tload(s, s->r[r].id, 4) >= 0)
		px_note(&fd->fl_pc, &fd->fl_pc_c, a);
}

static void px_step1(const cs_insn *in, struct px_state *s,
		     enum px_goal goal, struct px_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	int d = luw_decode_reg_op(x, 0);
	int src = luw_decode_reg_op(x, 1);
	uint16_t id;
	int32_t off;
	int i;

	/* lineinfo[pc]: an indexed access through a pointer read from pt. */
	for (i = 0; goal == PG_DEBUGLINE && i < x->op_count; i++) {
		const cs_x86_op *o = &x->operands[i];
		const struct px_val *bv;
		int b;

		if (o->type != X86_OP_MEM || o->mem.index == X86_REG_INVALID ||
		    (b = luw_decode_reg(o->mem.base)) < 0 || s->r[b].off)
			continue;
		bv = &s->v[s->r[b].id];
		if (bv->origin == PO_LOAD && bv->size == fd->ref_size &&
		    px_is_pt(s, bv->src, fd))
			px_note(&fd->lineinfo, &fd->lineinfo_conflict, bv->off);
	}
	if ((goal == PG_CHECKTRACE || goal == PG_FLUSH) && px_checktrace(s, in, fd))
		return;
	if (goal == PG_FLUSH)
		px_flush(s, in, fd);
	if (goal == PG_PUSH && px_push(s, in, goal, fd))
		return;
	if (goal == PG_STACKFREE && px_stackfree(s, in))
		return;
	switch (in->id) {
	case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSXD:
	case X86_INS_MOVABS: case X86_INS_LEA:
		break;	/* the flags of a compare survive these */
	default:
		s->cmp_valid = 0;
		break;
	}
	switch (in->id) {
	case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSXD:
	case X86_INS_MOVABS:
		/* ar->source = strdata(proto_chunkname(pt)) */
		if (goal == PG_GETINFO && x->op_count == 2 &&
		    o0->type == X86_OP_MEM && src >= 0 && px_addr(s, o0, &id, &off) &&
		    s->v[id].origin == PO_AR && off == 32 && s->r[src].off > 0) {
			const struct px_val *c = &s->v[s->r[src].id], *pc;

			pc = &s->v[c->src];
			if (c->origin == PO_LOAD && c->size == fd->ref_size &&
			    c->off < 0 && pc->origin == PO_LOAD &&
			    pc->size == fd->ref_size && pc->off == fd->fn_pc)
				px_note(&fd->chunk_k, &fd->chunk_conflict, -c->off);
		}
		if (d < 0 || x->op_count != 2)
			break;
		/* movsxd r, [table + idx*4]: a switch's jump table */
		if (in->id == X86_INS_MOVSXD && o1->type == X86_OP_MEM &&
		    o1->mem.index != X86_REG_INVALID && o1->mem.scale == 4 &&
		    !o1->mem.disp && luw_decode_reg(o1->mem.base) >= 0 &&
		    !s->r[luw_decode_reg(o1->mem.base)].off &&
		    s->v[s->r[luw_decode_reg(o1->mem.base)].id].origin == PO_CONST) {
			int64_t t = s->v[s->r[luw_decode_reg(o1->mem.base)].id].imm;

			px_set_new(s, d, PO_JTENT);
			s->v[s->r[d].id].imm = t;
			return;
		}
		if (o1->type == X86_OP_MEM) {
			uint16_t nid;
			int b = luw_decode_reg(o1->mem.base);

			/* A load through mref(fn->pc) - k held in a register: pt. */
			if (goal == PG_DEBUGLINE && fd->inl && b >= 0 && b != 7 &&
			    o1->mem.index == X86_REG_INVALID && s->r[b].off < 0 &&
			    s->r[b].off > -512 && px_is_pt(s, s->r[b].id, fd))
				px_note(&fd->pt_k, &fd->pt_k_conflict, -s->r[b].off);
			if (!px_addr(s, o1, &id, &off)) {
				px_set_new(s, d, PO_UNK);
				return;
			}
			/* 32-bit refs: the GCobj of a TValue proved a function. */
			if (o1->size == 4 && px_marked(s, id, off) && fd->ref_size == 4) {
				px_set_new(s, d, PO_FN);
				return;
			}
			nid = px_new(s, PO_LOAD);
			s->v[nid].src = id;
			s->v[nid].off = off;
			s->v[nid].size = (uint8_t)o1->size;
			if (o1->size == 8 && fd->ref_size == 8 && px_marked(s, id, off))
				s->v[nid].tfn = 1;
			s->r[d].id = nid;
			s->r[d].off = 0;
			/* A byte of a GCfunc: lua_iscfunction's ffid. */
			if (goal == PG_ISCFUNC && o1->size == 1 &&
			    s->v[id].origin == PO_FN)
				px_note(&fd->val, &fd->conflict, off);
			/* The byte a loaded pointer points at: c.pc's opcode. */
			if (goal == PG_TOCFUNC && o1->size == 1 && off == 0 &&
			    s->v[id].origin == PO_LOAD &&
			    s->v[id].size == fd->ref_size &&
			    s->v[s->v[id].src].origin == PO_FN)
				px_note(&fd->pc, &fd->pc_conflict, s->v[id].off);
			return;
		}
		if (o1->type == X86_OP_REG && src >= 0) {
			s->r[d] = s->r[src];
			return;
		}
		if (o1->type == X86_OP_IMM) {
			px_set_new(s, d, PO_CONST);
			s->v[s->r[d].id].imm = o1->imm;
			return;
		}
		break;
	case X86_INS_LEA:
		if (d >= 0 && o1->mem.base == X86_REG_RIP &&
		    o1->mem.index == X86_REG_INVALID) {
			px_set_new(s, d, PO_CONST);
			s->v[s->r[d].id].imm = (int64_t)(in->address + in->size) +
					       o1->mem.disp;
			return;
		}
		if (d >= 0 && o1->mem.index != X86_REG_INVALID &&
		    o1->mem.scale == 1 && !o1->mem.disp && luw_decode_reg(o1->mem.base) >= 0 &&
		    luw_decode_reg(o1->mem.index) >= 0) {
			uint16_t a = s->r[luw_decode_reg(o1->mem.base)].id;
			uint16_t b2 = s->r[luw_decode_reg(o1->mem.index)].id;

			px_set_new(s, d, PO_SUM);
			s->v[s->r[d].id].src = a;
			s->v[s->r[d].id].src2 = b2;
			return;
		}
		if (d >= 0 && px_addr(s, o1, &id, &off)) {
			s->r[d].id = id;
			s->r[d].off = off;
			return;
		}
		break;
	case X86_INS_SAR:
		if (d >= 0 && o1->type == X86_OP_IMM && o1->imm == 47 &&
		    !s->r[d].off && s->v[s->r[d].id].origin == PO_LOAD) {
			uint16_t v = s->r[d].id;

			px_set_new(s, d, PO_TAG);
			s->v[s->r[d].id].src = v;
			return;
		}
		break;
	case X86_INS_AND:
		/* GC64: a function's tagged value, its 47-bit address kept. */
		if (d >= 0 && !s->r[d].off && s->v[s->r[d].id].tfn) {
			int64_t m = 0;

			if (o1->type == X86_OP_IMM)
				m = o1->imm;
			else if (src >= 0 && s->v[s->r[src].id].origin == PO_CONST)
				m = s->v[s->r[src].id].imm;
			if (m == 0x7fffffffffffLL) {
				px_set_new(s, d, PO_FN);
				return;
			}
		}
		break;
	case X86_INS_ADD:
		if (d < 0 || x->op_count != 2)
			break;
		if (o1->type == X86_OP_IMM) {
			s->r[d].off += (int32_t)o1->imm;
			return;
		}
		if (src >= 0 && s->v[s->r[d].id].origin == PO_JTENT &&
		    s->v[s->r[src].id].origin == PO_CONST && !s->r[src].off &&
		    s->v[s->r[src].id].imm == s->v[s->r[d].id].imm) {
			int64_t t = s->v[s->r[d].id].imm;

			px_set_new(s, d, PO_JTADDR);
			s->v[s->r[d].id].imm = t;
			return;
		}
		{
			uint16_t a = s->r[d].id, b2 = 0;

			if (src >= 0) {
				b2 = s->r[src].id;
			} else if (px_addr(s, o1, &id, &off)) {
				b2 = px_new(s, PO_LOAD);
				s->v[b2].src = id;
				s->v[b2].off = off;
				s->v[b2].size = (uint8_t)o1->size;
			}
			px_set_new(s, d, PO_SUM);
			s->v[s->r[d].id].src = a;
			s->v[s->r[d].id].src2 = b2;
			return;
		}
	case X86_INS_SUB:
		if (d >= 0 && x->op_count == 2 && o1->type == X86_OP_IMM) {
			s->r[d].off -= (int32_t)o1->imm;
			return;
		}
		/* maxstack - top, both loaded from L: lj_state_checkstack. */
		if (goal == PG_MAXSTACK && d >= 0 && !s->r[d].off) {
			const struct px_val *a = &s->v[s->r[d].id], *b = NULL;
			struct px_val bm;

			if (src >= 0 && !s->r[src].off) {
				b = &s->v[s->r[src].id];
			} else if (o1->type == X86_OP_MEM && px_addr(s, o1, &id, &off)) {
				memset(&bm, 0, sizeof(bm));
				bm.origin = PO_LOAD;
				bm.src = id;
				bm.off = off;
				bm.size = (uint8_t)o1->size;
				b = &bm;
			}
			if (b && a->origin == PO_LOAD && b->origin == PO_LOAD &&
			    s->v[a->src].origin == PO_L && s->v[b->src].origin == PO_L &&
			    b->off == fd->l_top && a->off != fd->l_base &&
			    a->off != fd->l_top && a->size == fd->ref_size)
				px_note(&fd->val, &fd->conflict, a->off);
		}
		break;
	case X86_INS_CMP:
		if (x->op_count == 2 && o0->type == X86_OP_REG && d >= 0 &&
		    o1->type == X86_OP_IMM) {
			s->cmp_valid = 1;
			s->cmp_r = s->r[d];
			s->cmp_imm = o1->imm;
		}
		if (goal == PG_DEBUGLINE && x->op_count == 2)
			px_cmp_pt(s, o0, o1, fd);
		/* cmp byte [fn + ffid], 0: isluafunc(fn). */
		if (goal == PG_ISCFUNC && x->op_count == 2 && o0->size == 1 &&
		    px_addr(s, o0, &id, &off) && s->v[id].origin == PO_FN)
			px_note(&fd->val, &fd->conflict, off);
		break;
	default:
		break;
	}
	/* Anything else writing a register leaves it unknown. */
	if (d >= 0 && luw_decode_writes_op0(in))
		px_set_new(s, d, PO_UNK);
}

/* One instruction; id 0 (what a full value table hands out) stays unknown. */
static void px_step(const cs_insn *in, struct px_state *s,
		    enum px_goal goal, struct px_found *fd)
{
	px_step1(in, s, goal, fd);
	memset(&s->v[0], 0, sizeof(s->v[0]));
}

static void clobber_call_px(struct px_state *s)
{
	size_t i;

	for (i = 0; i < LUW_DECODE_NCLOBBERED; i++)
		px_set_new(s, luw_decode_clobbered[i], PO_UNK);
	s->v[s->r[0].id].origin = s->r[0].id ? PO_RET : PO_UNK;
	s->cmp_valid = 0;
}

#define PX_PATHS 256
#define PX_INSNS 40000


/* lj_debug_line returned: which of pt's dwords its result holds. */
static void px_ret_line(const struct px_state *s, struct px_found *fd)
{
	const struct px_val *v = &s->v[s->r[0].id];
	uint16_t ids[2];
	int n = 0, i, k, got = 0;

	if (s->r[0].off)
		return;
	if (v->origin == PO_SUM) {
		ids[n++] = v->src;
		ids[n++] = v->src2;
	} else {
		ids[n++] = s->r[0].id;
	}
	for (i = 0; i < n; i++) {
		const struct px_val *t = &s->v[ids[i]];

		if (!ids[i] || t->origin != PO_LOAD || t->size != 4 ||
		    !px_is_pt(s, t->src, fd))
			continue;
		for (k = 0; k < fd->nfl && fd->fl_off[k] != t->off; k++)
			;
		if (k == fd->nfl) {
			if (k == 4)
				continue;
			fd->fl_off[fd->nfl] = t->off;
			fd->fl_cnt[fd->nfl++] = 0;
		}
		fd->fl_cnt[k]++;
		got = 1;
	}
	fd->fl_paths += got;
}

/* Follows every path of the function at addr (see above). */
static void px_explore(csh h, Elf *elf, const struct luw_fdes *fdes,
		       uint64_t entry, uint64_t size, enum px_goal goal,
		       struct px_found *fd)
{
	struct { uint64_t at; struct px_state s; } *work;
	struct { uint64_t a; int n; } seen[1024];
	int nw = 0, nseen = 0, budget = PX_INSNS, i;
	cs_insn *in = cs_malloc(h);

	work = calloc(PX_PATHS, sizeof(*work));
	if (!work || !in)
		goto out;
	work[0].at = entry;
	work[0].s.lo = entry;
	work[0].s.hi = entry + size;
	px_new(&work[0].s, PO_UNK);		/* id 0: unknown */
	for (i = 0; i < 16; i++)
		work[0].s.r[i].id = 0;
	if (goal == PG_DEBUGLINE && fd->inl) {
		static const int args[] = { 5, 4, 1, 2, 8, 9 };

		for (i = 0; i < 6; i++)
			px_set_new(&work[0].s, args[i], PO_UNK);
	} else if (goal == PG_DEBUGLINE) {
		px_set_new(&work[0].s, 5, PO_PT);	/* rdi: pt */
		px_set_new(&work[0].s, 4, PO_PCARG);	/* esi: pc */
	} else {
		px_set_new(&work[0].s, 5, PO_L);	/* rdi: the lua_State * */
		if (goal == PG_FLUSH) {
			/* luaJIT_setmode(L, idx, mode): idx is the trace number */
			px_set_new(&work[0].s, 4, PO_UNK);
			px_set_new(&work[0].s, 1, PO_UNK);
		}
		if (goal == PG_GETINFO)
			px_set_new(&work[0].s, 1, PO_AR);	/* rdx: ar */
	}
	nw = 1;
	while (nw > 0 && budget > 0) {
		struct px_state s = work[nw - 1].s;
		uint64_t addr = work[--nw].at;
		const uint8_t *code;
		size_t len;

		for (;;) {
			const cs_x86 *x;
			int k;

			/*
			 * Inside the function only: past a call that does not
			 * return (an assertion's) lies other code.
			 */
			if (addr < s.lo || addr >= s.hi)
				break;
			for (k = 0; k < nseen && seen[k].a != addr; k++)
				;
			if (k == nseen) {
				if (nseen == 1024)
					break;
				seen[nseen].a = addr;
				seen[nseen++].n = 0;
			}
			if (++seen[k].n > 3 || --budget <= 0)
				break;
			if (!(code = luw_decode_code(elf, addr, UINT64_MAX, &len)) ||
			    !cs_disasm_iter(h, &code, &len, &addr, in))
				break;
			x = &in->detail->x86;
			if (in->id == X86_INS_RET) {
				/* The C function pointer lua_tocfunction returns. */
				const struct px_val *v = &s.v[s.r[0].id];

				if (goal == PG_TOCFUNC && !s.r[0].off &&
				    v->origin == PO_LOAD && v->size == 8 &&
				    s.v[v->src].origin == PO_FN)
					px_note(&fd->f, &fd->f_conflict, v->off);
				if (goal == PG_DEBUGLINE)
					px_ret_line(&s, fd);
				break;
			}
			if (in->id == X86_INS_CALL) {
				/*
				 * A call taking mref(fn->pc) - k as its first
				 * argument: funcproto(fn), k = sizeof(GCproto).
				 */
				const struct px_val *a = &s.v[s.r[5].id];
				const struct px_val *a2 = &s.v[s.r[4].id];
				const struct px_val *a3 = &s.v[s.r[1].id];

				/*
				 * allocf(ud, L->stack, L->stacksize * 8, 0):
				 * lj_mem_freevec of a thread's stack
				 */
				if (goal == PG_STACKFREE && !s.r[4].off && !s.r[1].off &&
				    a2->origin == PO_LOAD && a2->size == fd->ref_size &&
				    a2->off == fd->l_stack && a3->origin == PO_X8 &&
				    s.v[a3->src].origin == PO_LOAD &&
				    s.v[s.v[a3->src].src].origin != PO_UNK &&
				    s.v[a3->src].src == a2->src)
					px_note(&fd->ss_off, &fd->ss_conflict,
						s.v[a3->src].off);
				/* lj_str_new(L, T->mcode, T->szmcode) */
				if (goal == PG_CHECKTRACE && !s.r[4].off && !s.r[1].off &&
				    !s.r[5].off && a->origin == PO_L &&
				    a2->origin == PO_LOAD && a2->size == 8 &&
				    s.v[a2->src].origin == PO_TRACE &&
				    a3->origin == PO_LOAD && a3->size == 4 &&
				    s.v[a3->src].origin == PO_TRACE) {
					px_note(&fd->mc, &fd->mc_conflict, a2->off);
					px_note(&fd->szmc, &fd->szmc_conflict, a3->off);
				}

				if (goal == PG_GETINFO && s.r[5].off < 0 &&
				    s.r[5].off > -512 && a->origin == PO_LOAD &&
				    a->size == fd->ref_size && a->off == fd->fn_pc &&
				    x->operands[0].type == X86_OP_IMM) {
					int c;

					for (c = 0; c < fd->ncalls &&
					     (fd->call_to[c] != (uint64_t)x->operands[0].imm ||
					      fd->call_k[c] != -s.r[5].off); c++)
						;
					if (c == fd->ncalls && c < PX_CALLS) {
						fd->call_to[c] = (uint64_t)x->operands[0].imm;
						fd->call_k[c] = -s.r[5].off;
						fd->ncalls++;
					}
				} else if ((goal == PG_GETINFO || goal == PG_FLUSH) &&
					   !s.depth &&
					   x->operands[0].type == X86_OP_IMM &&
					   nw < PX_PATHS) {
					uint64_t t = (uint64_t)x->operands[0].imm;
					int c;

					for (c = 0; c < fd->ndirect && fd->direct[c] != t; c++)
						;
					if (c == fd->ndirect && c < 16)
						fd->direct[fd->ndirect++] = t;
					/*
					 * lj_debug_getinfo's helpers (debug_frameline
					 * when not inlined) take fn in registers: their
					 * paths are followed with the caller's values.
					 */
					uint64_t to = (uint64_t)x->operands[0].imm;
					uint64_t end = luw_ehframe_end(fdes, to);

					if (end) {
						work[nw].at = to;
						work[nw].s = s;
						work[nw].s.lo = to;
						work[nw].s.hi = end;
						work[nw].s.depth = 1;
						work[nw].s.cmp_valid = 0;
						nw++;
					}
				}
				clobber_call_px(&s);
				continue;
			}
			/*
			 * A switch: each case its jump table names, relative
			 * (PIC: table + int32) or absolute ([table + idx*8]).
			 */
			if (in->id == X86_INS_JMP && x->op_count == 1 &&
			    (x->operands[0].type == X86_OP_REG ||
			     x->operands[0].type == X86_OP_MEM)) {
				const cs_x86_op *o = &x->operands[0];
				int r = o->type == X86_OP_REG ? luw_decode_reg(o->reg) : -1, e;
				const struct px_val *v = r >= 0 ? &s.v[s.r[r].id] : NULL;
				int rel = v && !s.r[r].off && v->origin == PO_JTADDR;
				int ab = o->type == X86_OP_MEM &&
					 o->mem.base == X86_REG_INVALID &&
					 o->mem.index != X86_REG_INVALID &&
					 o->mem.scale == 8 &&
					 o->mem.segment == X86_REG_INVALID;

				for (e = 0; (rel || ab) && e < s.jt_bound && nw < PX_PATHS; e++) {
					int32_t r32;
					uint64_t to;

					if (rel) {
						if (luw_elf_read_at(elf, (uint64_t)v->imm +
								    4u * (unsigned)e, &r32, 4))
							break;
						to = (uint64_t)v->imm + (uint64_t)(int64_t)r32;
					} else if (luw_elf_read_at(elf, (uint64_t)o->mem.disp +
								   8u * (unsigned)e, &to, 8)) {
						break;
					}
					if (to < s.lo || to >= s.hi)
						continue;
					work[nw].at = to;
					work[nw].s = s;
					work[nw].s.jt_bound = 0;
					nw++;
				}
				break;
			}
			if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
			    cs_insn_group(h, in, CS_GRP_JUMP)) {
				uint64_t to = (uint64_t)x->operands[0].imm;

				if (in->id == X86_INS_JMP) {
					/* A tail call: into the next function. */
					if (to < s.lo || to >= s.hi) {
						uint64_t end = luw_ehframe_end(fdes, to);

						if (!end)
							break;
						s.lo = to;
						s.hi = end;
					}
					addr = to;
					continue;
				}
				/* ja not taken: the switch index is at most imm. */
				if (in->id == X86_INS_JA && s.cmp_valid &&
				    s.cmp_imm >= 0 && s.cmp_imm < 256)
					s.jt_bound = (int)s.cmp_imm + 1;
				if (nw < PX_PATHS) {
					work[nw].at = to;
					work[nw].s = s;
					/* je: the taken way is the equal one. */
					if (in->id == X86_INS_JE)
						px_learn_fn(&work[nw].s);
					work[nw].s.cmp_valid = 0;
					nw++;
				}
				if (in->id == X86_INS_JNE)
					px_learn_fn(&s);
				s.cmp_valid = 0;
				continue;
			}
			if (cs_insn_group(h, in, CS_GRP_JUMP))
				break;	/* indirect: not followed */
			px_step(in, &s, goal, fd);
		}
	}
out:
	free(work);
	if (in)
		cs_free(in, 1);
}

/*
 * The C frame a VM entry builds (see target/recover.h): lua_pcall calls
 * lj_vm_pcall, an address inside the interpreter's FDE, not at its start.
 */
static void cframe_recover(csh h, Elf *elf, const struct luw_fdes *fdes,
			   struct luw_recover_result *r)
{
	struct { int32_t ofs; int size; unsigned int pcst; } lst[4];
	uint64_t a, sz, entry = 0, lo = 0, hi = 0, addr;
	const uint8_t *code;
	size_t len, i;
	int nl = 0, n = 0, k, isl[16] = { 0 }, prev[16] = { 0 }, done = 0, got;
	int32_t ofs_prev = LUW_LJR_NONE;
	Elf_Scn *text;
	GElf_Shdr sh;
	cs_insn *in;

	if (r->l_cframe == LUW_LJR_NONE ||
	    luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_pcall", 1, &a, &sz) ||
	    !(code = luw_decode_code(elf, a, sz, &len)) || !(in = cs_malloc(h)))
		return;
	text = luw_elf_section_at(elf, a, 1, SHF_ALLOC, &sh);
	addr = a;
	while (cs_disasm_iter(h, &code, &len, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		uint64_t t;

		if (in->id != X86_INS_CALL || x->op_count != 1 ||
		    x->operands[0].type != X86_OP_IMM)
			continue;
		t = (uint64_t)x->operands[0].imm;
		/* Not a PLT stub (the PLT's FDE covers every stub). */
		if (luw_elf_section_at(elf, t, 1, SHF_ALLOC, &sh) != text)
			continue;
		for (i = 0; i < fdes->n; i++) {
			if (t <= fdes->v[i].start || t >= fdes->v[i].end)
				continue;
			if (entry && entry != t)
				goto out;	/* two VM entries: decide nothing */
			entry = t;
			lo = fdes->v[i].start;
			hi = fdes->v[i].end;
		}
	}
	if (!entry)
		goto out;
	/*
	 * The entry, up to L->cframe = rsp: the saved L (a store of the L
	 * argument), the previous cframe (a store of what L->cframe held),
	 * and the saved PC, which the entry also fills with L ("any value
	 * outside of bytecode").
	 */
	isl[5] = 1;
	addr = entry;
	while (!done && n++ < 64 &&
	       (code = luw_decode_code(elf, addr, UINT64_MAX, &len)) &&
	       cs_disasm_iter(h, &code, &len, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
		int d = luw_decode_reg_op(x, 0);
		int sr = luw_decode_reg_op(x, 1);

		if (in->id == X86_INS_JMP && x->op_count == 1 && o0->type == X86_OP_IMM) {
			addr = (uint64_t)o0->imm;
			continue;
		}
		if (in->id == X86_INS_RET || in->id == X86_INS_CALL ||
		    cs_insn_group(h, in, CS_GRP_JUMP))
			break;
		if (in->id != X86_INS_MOV || x->op_count != 2) {
			if (d >= 0 && luw_decode_writes_op0(in))
				isl[d] = prev[d] = 0;
			continue;
		}
		if (o0->type == X86_OP_MEM && o0->mem.index == X86_REG_INVALID) {
			int b = luw_decode_reg(o0->mem.base);

			if (b == 7 && sr >= 0 && prev[sr])
				ofs_prev = (int32_t)o0->mem.disp;
			else if (b == 7 && sr >= 0 && isl[sr] && nl < 4) {
				lst[nl].ofs = (int32_t)o0->mem.disp;
				lst[nl].size = o0->size;
				lst[nl++].pcst = 0;
			} else if (b >= 0 && isl[b] && o0->mem.disp == r->l_cframe &&
				   sr == 7)
				done = 1;
			continue;
		}
		if (d < 0)
			continue;
		if (sr >= 0) {
			isl[d] = isl[sr];
			prev[d] = prev[sr];
		} else if (o1->type == X86_OP_MEM && o1->mem.index == X86_REG_INVALID &&
			   luw_decode_reg(o1->mem.base) >= 0 && isl[luw_decode_reg(o1->mem.base)] &&
			   o1->mem.disp == r->l_cframe && o1->size == 8) {
			isl[d] = 0;
			prev[d] = 1;
		} else {
			isl[d] = prev[d] = 0;
		}
	}
	if (!done || ofs_prev == LUW_LJR_NONE || nl != 2)
		goto out;
	/*
	 * Of the two, the saved PC is the one the interpreter also stores its
	 * PC register (rbx, vm_x64.dasc and vm_x86.dasc's x64 mode) into.
	 */
	code = luw_decode_code(elf, lo, hi - lo, &len);
	if (!code)
		goto out;
	addr = lo;
	while ((got = luw_decode_sweep(h, &code, &len, &addr, in)) >= 0) {
		const cs_x86 *x = &in->detail->x86;

		if (!got)
			continue;
		if (in->id != X86_INS_MOV || x->op_count != 2 ||
		    x->operands[0].type != X86_OP_MEM ||
		    luw_decode_reg(x->operands[0].mem.base) != 7 ||
		    x->operands[0].mem.index != X86_REG_INVALID ||
		    x->operands[1].type != X86_OP_REG ||
		    luw_decode_reg(x->operands[1].reg) != 3)
			continue;
		for (k = 0; k < nl; k++)
			if (lst[k].ofs == (int32_t)x->operands[0].mem.disp)
				lst[k].pcst++;
	}
	if ((lst[0].pcst > 0) == (lst[1].pcst > 0))
		goto out;
	k = lst[0].pcst > 0;
	r->cframe_ofs_l = lst[k].ofs;
	r->cframe_l_size = lst[k].size;
	r->cframe_ofs_pc = lst[!k].ofs;
	r->cframe_ofs_prev = ofs_prev;
out:
	cs_free(in, 1);
}

/*
 * Reads the function at `to` as lj_debug_line (inl: with it inlined,
 * fields relative to mref(fn->pc)).  Fills r's pt_* when it is one; 1 when
 * two candidates disagreed (r's pt_* then cleared), else 0.
 */
static int debug_line(csh h, Elf *elf, const struct luw_fdes *fdes,
		      const struct px_found *fd, uint64_t to, int inl, int k,
		      struct luw_recover_result *r)
{
	struct px_found l = *fd;
	uint64_t end = luw_ehframe_end(fdes, to);
	int i, fl = LUW_LJR_NONE, nfl = 0, b = 0;

	if (!end)
		return 0;
	l.sizebc = l.numline = l.lineinfo = LUW_LJR_NONE;
	l.sizebc_conflict = l.numline_conflict = l.lineinfo_conflict = 0;
	l.fl_paths = l.nfl = 0;
	l.inl = inl;
	l.pt_k = LUW_LJR_NONE;
	l.pt_k_conflict = 0;
	px_explore(h, elf, fdes, to, end - to, PG_DEBUGLINE, &l);
	/* firstline: in every result read from pt, and not numline. */
	for (i = 0; i < l.nfl; i++)
		if (l.fl_cnt[i] == l.fl_paths && l.fl_off[i] != l.numline) {
			fl = l.fl_off[i];
			nfl++;
		}
	if (l.sizebc == LUW_LJR_NONE || l.sizebc_conflict ||
	    l.numline == LUW_LJR_NONE || l.numline_conflict ||
	    l.lineinfo == LUW_LJR_NONE || l.lineinfo_conflict ||
	    nfl != 1 || l.fl_paths < 2)
		return 0;	/* not lj_debug_line */
	/* Inline: pt's fields were read relative to mref(fn->pc). */
	if (inl) {
		if (l.pt_k == LUW_LJR_NONE || l.pt_k_conflict)
			return 0;
		k = b = l.pt_k;
	}
	if (b + l.sizebc < 0 || b + l.numline < 0 || b + l.lineinfo < 0 ||
	    b + fl < 0 || l.sizebc == l.numline || l.numline == fl ||
	    l.sizebc == fl)
		return 0;
	if (r->pt_size != LUW_LJR_NONE &&
	    (r->pt_size != k || r->pt_sizebc != b + l.sizebc ||
	     r->pt_numline != b + l.numline || r->pt_lineinfo != b + l.lineinfo ||
	     r->pt_firstline != b + fl)) {
		r->pt_size = LUW_LJR_NONE;	/* two answers: none */
		r->pt_sizebc = r->pt_numline = LUW_LJR_NONE;
		r->pt_lineinfo = r->pt_firstline = LUW_LJR_NONE;
		return 1;
	}
	r->pt_size = k;
	r->pt_sizebc = b + l.sizebc;
	r->pt_numline = b + l.numline;
	r->pt_lineinfo = b + l.lineinfo;
	r->pt_firstline = b + fl;
	return 0;
}

/*
 * The pointer stored at link-time address addr: a relative relocation's
 * addend (PIC: .data.rel.ro is filled at load time), else the file's
 * bytes.  0, or -1.
 */
static int ptr_at(Elf *elf, uint64_t addr, uint64_t *v)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela ra;

			if (!gelf_getrela(d, (int)i, &ra) || ra.r_offset != addr)
				continue;
			if (GELF_R_TYPE(ra.r_info) != R_X86_64_RELATIVE)
				return -1;
			*v = (uint64_t)ra.r_addend;
			return 0;
		}
	}
	return luw_elf_read_at(elf, addr, v, 8);
}

/*
 * J->sizetrace, J->trace, T->mcode and T->szmcode from jit.util (see
 * target/recover.h): luaopen_jit hands luaopen_jit_util to lj_lib_prereg (a
 * function address lea'd in luaopen_jit), which hands its lua_CFunction
 * array to lj_lib_register (lea'd into the fourth argument, rcx); each
 * function of the array is read for jit_checktrace and tracemc's call.
 */
static void checktrace_recover(csh h, Elf *elf, const struct luw_fdes *fdes,
			       struct luw_recover_result *r)
{
	uint64_t a, sz, fns[16], arrs[8];
	int nf, na, i, j, e, nread = 0;
	struct px_found fd;
	struct luw_decode_file file = { .h = h, .elf = elf, .fdes = fdes };

	if (r->ref_size == LUW_LJR_NONE || r->l_glref == LUW_LJR_NONE ||
	    luw_elf_symbol_sized(elf, SHT_DYNSYM, "luaopen_jit", 1, &a, &sz))
		return;
	memset(&fd, 0, sizeof(fd));
	fd.ref_size = r->ref_size;
	fd.l_glref = r->l_glref;
	fd.st_g = fd.tr_g = fd.mc = fd.szmc = LUW_LJR_NONE;
	nf = luw_decode_addresses(&file, a, sz, -1, fns, 16);
	for (i = 0; i < nf; i++) {
		uint64_t end = luw_ehframe_end(fdes, fns[i]);

		na = luw_decode_addresses(&file, fns[i], end - fns[i], 2, arrs, 8);
		for (j = 0; j < na; j++) {
			for (e = 0; e < 64; e++) {
				uint64_t f, fe;

				if (ptr_at(elf, arrs[j] + 8u * (unsigned)e, &f) ||
				    !(fe = luw_ehframe_end(fdes, f)))
					break;
				px_explore(h, elf, fdes, f, fe - f, PG_CHECKTRACE, &fd);
				nread++;
			}
		}
	}
	r->ncheck_fns = nread;
	if (fd.st_g != LUW_LJR_NONE && !fd.st_conflict &&
	    fd.tr_g != LUW_LJR_NONE && !fd.tr_conflict) {
		r->jsizetrace_g = fd.st_g;
		r->jtrace_g = fd.tr_g;
	}
	/* luaJIT_setmode(L, tr, LUAJIT_MODE_TRACE|FLUSH) -> lj_trace_flush */
	if (!luw_elf_symbol_sized(elf, SHT_DYNSYM, "luaJIT_setmode", 1, &a, &sz)) {
		struct px_found ff;

		memset(&ff, 0, sizeof(ff));
		ff.ref_size = r->ref_size;
		ff.l_glref = r->l_glref;
		ff.st_g = ff.tr_g = ff.mc = ff.szmc = LUW_LJR_NONE;
		ff.fl_pt = ff.fl_no = ff.fl_pc = LUW_LJR_NONE;
		px_explore(h, elf, fdes, a, sz, PG_FLUSH, &ff);
		if (ff.fl_pt != LUW_LJR_NONE && !ff.fl_pt_c &&
		    ff.fl_no != LUW_LJR_NONE && !ff.fl_no_c && ff.fl_pt != ff.fl_no) {
			r->tr_startpt = ff.fl_pt;
			r->tr_traceno = ff.fl_no;
		}
		if (ff.fl_pc != LUW_LJR_NONE && !ff.fl_pc_c &&
		    ff.fl_pc != ff.fl_pt)
			r->tr_startpc = ff.fl_pc;
	}
	if (fd.mc != LUW_LJR_NONE && !fd.mc_conflict &&
	    fd.szmc != LUW_LJR_NONE && !fd.szmc_conflict && fd.mc != fd.szmc) {
		r->tr_mcode = fd.mc;
		r->tr_szmcode = fd.szmc;
	}
}

/*
 * The GC type a set*V store tagged: gct = ~itype (low byte), from GC64's
 * itype << 47 or the 32-bit tag word; -1 when it is not one.
 */
static int tag_gct(int64_t tag, int ref_size)
{
	uint64_t t = (uint64_t)tag;

	if (ref_size == 8) {
		if (t & ((1ull << 47) - 1) || (t >> 47) < 0x1fff0)
			return -1;
		return (int)(~(t >> 47) & 0xff);
	}
	if (t < 0xfffffff0u || t > 0xffffffffu)
		return -1;
	return (int)(~t & 0xff);
}

/* The type tag a dynsym function stores with the object it pushes. */
static int push_gct(csh h, Elf *elf, const struct luw_fdes *fdes,
		    struct luw_recover_result *r, const char *fn)
{
	struct px_found fd;
	uint64_t a, sz;

	if (luw_elf_symbol_sized(elf, SHT_DYNSYM, fn, 1, &a, &sz))
		return -1;
	memset(&fd, 0, sizeof(fd));
	fd.ref_size = r->ref_size;
	fd.l_top = r->l_top;
	fd.l_base = r->l_base;
	px_explore(h, elf, fdes, a, sz, PG_PUSH, &fd);
	if (!fd.have_tag || fd.tag_conflict)
		return -1;
	/*
	 * lua_pushcclosure's getcurrenv: curr_func(L)->c.gct == ~LJ_TFUNC,
	 * the byte compared with the type of the function it pushes (other
	 * compares of curr_func's bytes, the ffid's, want other values).
	 */
	if (!strcmp(fn, "lua_pushcclosure")) {
		int i, t = tag_gct(fd.tag, r->ref_size), k = LUW_LJR_NONE, bad = 0;

		for (i = 0; t >= 0 && i < fd.ncfn; i++) {
			if (fd.cfn_imm[i] != t)
				continue;
			if (k != LUW_LJR_NONE && k != fd.cfn_off[i])
				bad = 1;
			k = fd.cfn_off[i];
		}
		if (k != LUW_LJR_NONE && !bad)
			r->gc_gct = k;
	}
	return tag_gct(fd.tag, r->ref_size);
}

/*
 * gct_str, gct_thread, gct_func from what lua_pushlstring, lua_newthread
 * and lua_pushcclosure push; gc_gct and l_stacksize from the stores into
 * lua_pushcclosure's getcurrenv (curr_func(L)->c.gct == ~LJ_TFUNC: the
 * byte compared with the type the function pushes), l_stacksize from
 * lua_close freeing the main thread's stack.
 */
static void gct_recover(csh h, Elf *elf, const struct luw_fdes *fdes,
			struct luw_recover_result *r)
{
	struct px_found fd;
	struct luw_decode_file file = { .h = h, .elf = elf, .fdes = fdes };
	uint64_t a, sz;

	if (r->ref_size == LUW_LJR_NONE || r->l_top == LUW_LJR_NONE)
		return;
	r->gct_str = push_gct(h, elf, fdes, r, "lua_pushlstring");
	r->gct_func = push_gct(h, elf, fdes, r, "lua_pushcclosure");
	r->gct_thread = push_gct(h, elf, fdes, r, "lua_newthread");
	if (r->gct_str < 0)
		r->gct_str = LUW_LJR_NONE;
	if (r->gct_func < 0)
		r->gct_func = LUW_LJR_NONE;
	if (r->gct_thread < 0)
		r->gct_thread = LUW_LJR_NONE;
	/*
	 * lua_close frees the main thread's stack (close_state, tail-called
	 * or called): lj_mem_freevec(g, tvref(L->stack), L->stacksize,
	 * TValue), the dword of the same thread times 8.
	 */
	memset(&fd, 0, sizeof(fd));
	fd.ref_size = r->ref_size;
	fd.l_stack = r->l_stack;
	fd.ss_off = LUW_LJR_NONE;
	if (r->l_stack != LUW_LJR_NONE &&
	    !luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_close", 1, &a, &sz)) {
		uint64_t to[16];
		int n = luw_decode_callees(&file, a, sz, to, 16), i;

		px_explore(h, elf, fdes, a, sz, PG_STACKFREE, &fd);
		/* close_state(L), called or tail-called with the main thread */
		for (i = 0; i < n; i++)
			px_explore(h, elf, fdes, to[i], luw_ehframe_end(fdes, to[i]) - to[i],
				   PG_STACKFREE, &fd);
	}
	if (fd.ss_off != LUW_LJR_NONE && !fd.ss_conflict)
		r->l_stacksize = fd.ss_off;
}

/* The GCfunc fields and L->maxstack (see target/recover.h). */
static void px_recover(csh h, Elf *elf, struct luw_recover_result *r)
{
	struct px_found fd;
	struct luw_fdes fdes;
	uint64_t a, sz;
	int c;

	if (r->ref_size == LUW_LJR_NONE)
		return;
	memset(&fd, 0, sizeof(fd));
	fd.ref_size = r->ref_size;
	fd.val = fd.pc = fd.f = LUW_LJR_NONE;
	if (luw_ehframe_fdes(elf, &fdes))
		memset(&fdes, 0, sizeof(fdes));
	if (r->l_top != LUW_LJR_NONE && r->l_base != LUW_LJR_NONE &&
	    !luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_checkstack", 1, &a, &sz)) {
		fd.l_top = r->l_top;
		fd.l_base = r->l_base;
		px_explore(h, elf, &fdes, a, sz, PG_MAXSTACK, &fd);
		if (!fd.conflict)
			r->l_maxstack = fd.val;
	}
	fd.val = LUW_LJR_NONE;
	fd.conflict = 0;
	if (!luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_iscfunction", 1, &a, &sz)) {
		px_explore(h, elf, &fdes, a, sz, PG_ISCFUNC, &fd);
		if (!fd.conflict)
			r->fn_ffid = fd.val;
	}
	if (!luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_tocfunction", 1, &a, &sz)) {
		px_explore(h, elf, &fdes, a, sz, PG_TOCFUNC, &fd);
		if (!fd.pc_conflict)
			r->fn_pc = fd.pc;
		if (!fd.f_conflict && fd.f != fd.pc)
			r->fn_f = fd.f;
	}
	/*
	 * GCproto: lua_getinfo (into lj_debug_getinfo, a tail call or a
	 * call) hands funcproto(fn) to lj_debug_line (sizeof(GCproto) from
	 * the subtraction), whose compares and loads name four fields; its
	 * 'S' case stores strdata(chunkname) to ar->source (lua_Debug's
	 * offset 32 is the Lua 5.1 ABI).
	 */
	fd.fn_pc = r->fn_pc;
	fd.chunk_k = LUW_LJR_NONE;
	if (r->fn_pc != LUW_LJR_NONE &&
	    !luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_getinfo", 1, &a, &sz))
		px_explore(h, elf, &fdes, a, sz, PG_GETINFO, &fd);
	for (c = 0; c < fd.ncalls; c++)
		if (debug_line(h, elf, &fdes, &fd, fd.call_to[c], 0, fd.call_k[c], r))
			break;
	/*
	 * No call hands funcproto(fn) over: lj_debug_line may be inlined into
	 * a helper lj_debug_getinfo calls (debug_frameline, with
	 * -DLUA_USE_ASSERT); each callee is read for it, pt being where the
	 * helper subtracts sizeof(GCproto) from mref(fn->pc).
	 */
	for (c = 0; r->pt_size == LUW_LJR_NONE && c < fd.ndirect; c++)
		if (debug_line(h, elf, &fdes, &fd, fd.direct[c], 1, 0, r))
			break;
	if (r->pt_size != LUW_LJR_NONE && fd.chunk_k != LUW_LJR_NONE &&
	    !fd.chunk_conflict && fd.chunk_k < r->pt_size)
		r->pt_chunkname = r->pt_size - fd.chunk_k;
	cframe_recover(h, elf, &fdes, r);
	checktrace_recover(h, elf, &fdes, r);
	gct_recover(h, elf, &fdes, r);
	luw_ehframe_free(&fdes);
}

/*
 * The rbp rule of the FDE starting at vm_start (the interpreter's, whose
 * one rule holds in its whole body): rbp saved at CFA - k gives k.
 */
static int fde_rbp(Elf *elf, uint64_t vm_start)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int k = LUW_LJR_NONE;

	if (!cfi)
		return LUW_LJR_NONE;
	if (!dwarf_cfi_addrframe(cfi, vm_start, &fr) &&
	    !dwarf_frame_register(fr, 6, mem, &ops, &nops) && nops == 2 &&
	    ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst &&
	    (int64_t)ops[1].number < 0 && (int64_t)ops[1].number >= -4096)
		k = (int)-(int64_t)ops[1].number;
	free(fr);
	dwarf_cfi_end(cfi);
	return k;
}

int luw_recover(Elf *elf, uint64_t vm_start, uint64_t vm_end,
		unsigned int dispatch_reg, unsigned int base_reg,
		struct luw_recover_result *r, char *why, size_t n)
{
	uint64_t a;
	const uint8_t *code;
	size_t len;
	csh h;

	memset(r, 0, sizeof(*r));
	r->ref_size = r->l_glref = r->g_mainthref = r->g_cur_l = LUW_LJR_NONE;
	r->l_stack = r->l_status = r->l_cframe = r->l_top = r->l_base = LUW_LJR_NONE;
	r->l_maxstack = r->fn_ffid = r->fn_pc = r->fn_f = LUW_LJR_NONE;
	r->pt_size = r->pt_sizebc = r->pt_chunkname = LUW_LJR_NONE;
	r->pt_firstline = r->pt_numline = r->pt_lineinfo = LUW_LJR_NONE;
	r->cframe_ofs_l = r->cframe_ofs_prev = r->cframe_ofs_pc = LUW_LJR_NONE;
	r->cframe_l_size = LUW_LJR_NONE;
	r->reg_base = r->reg_pc = r->reg_dispatch = r->reg_kbase = LUW_LJR_NONE;
	r->cframe_rbp_cfa = LUW_LJR_NONE;
	r->jsizetrace_g = r->jtrace_g = r->tr_mcode = r->tr_szmcode = LUW_LJR_NONE;
	r->gc_gct = r->l_stacksize = LUW_LJR_NONE;
	r->tr_startpt = r->tr_startpc = r->tr_traceno = LUW_LJR_NONE;
	r->gct_str = r->gct_thread = r->gct_func = LUW_LJR_NONE;
	r->vmst_c = r->vmst_interp = r->vmst_exit = LUW_LJR_NONE;
	if (luw_decode_open(&h)) {
		snprintf(why, n, "capstone: cannot open x86-64");
		return -1;
	}
	if (luw_elf_symbol(elf, SHT_DYNSYM, "lua_close", 1, &a) ||
	    !(code = luw_decode_code(elf, a, UINT64_MAX, &len))) {
		snprintf(why, n, "no lua_close in .dynsym");
		cs_close(&h);
		return -1;
	}
	analyse(h, code, len, a, r, 0);
	if (luw_elf_symbol(elf, SHT_DYNSYM, "lua_gettop", 1, &a) ||
	    !(code = luw_decode_code(elf, a, UINT64_MAX, &len))) {
		snprintf(why, n, "no lua_gettop in .dynsym");
		cs_close(&h);
		return -1;
	}
	analyse(h, code, len, a, r, 1);
	px_recover(h, elf, r);
	if (vm_end > vm_start &&
	    (code = luw_decode_code(elf, vm_start, vm_end - vm_start, &len))) {
		luw_recover_vm_regs(h, code, len, vm_start, r);
		/* The VM's own registers where its code showed them. */
		if (r->reg_dispatch != LUW_LJR_NONE)
			dispatch_reg = (unsigned int)r->reg_dispatch;
		if (r->reg_base != LUW_LJR_NONE)
			base_reg = (unsigned int)r->reg_base;
		luw_recover_vm_dispatch(h, code, len, vm_start, dispatch_reg,
					base_reg, r);
		r->cframe_rbp_cfa = fde_rbp(elf, vm_start);
	}
	cs_close(&h);
	return 0;
}
