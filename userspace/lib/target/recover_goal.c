/*
 * recover_goal: the goals of target/recover_goal.h, each a row of hooks
 * the path explorer (x86/flow.c) calls through one client, lj_ops: the
 * row looks at an instruction first, then what LuaJIT's TValues are on
 * any path (px_tvalue, px_learn_fn).  Rows and not tests in the explorer,
 * so that a goal's matching and recording read in one place and the
 * explorer stays plain data flow.
 */
#include "target/recover_goal.h"

#include <string.h>

#include "target/recover.h"

/* LuaJIT's values, past the engine's own (x86/flow.h). */
enum {
	PO_L = LUW_FLOW_CLIENT,	/* the lua_State * argument */
	PO_TAG,		/* GC64: a tagged value (src) shifted right by 47 */
	PO_FN,		/* a GCfunc * */
	PO_PT,		/* lj_debug_line's GCproto * argument */
	PO_PCARG,	/* its BCPos argument */
	PO_AR,		/* lua_getinfo's lua_Debug * argument */
	PO_TRACE,	/* traceref(J, tr): J->trace[tr] */
	PO_TAGGED,	/* GC64: src (a call's result) | imm (its itype << 47) */
	PO_CURFN,	/* curr_func(L): the GCobj in the slot below L->base */
	PO_X8,		/* src * 8: a count of TValues in bytes */
};

/* What the analysis is after in one function: a row. */
struct luw_recover_goal {
	/* What the argument registers (DWARF numbers) hold, set in order. */
	struct { int8_t reg; uint8_t origin; } arg[6];
	int narg;
	/* lj_debug_line inlined: pt's fields relative to mref(fn->pc) */
	int inl;
	/* An instruction, before the engine's reading: 1 when taken care of. */
	int (*insn)(struct luw_flow_path *s, const cs_insn *in,
		    struct luw_recover_goal_found *fd);
	/* A call: 1 to follow a direct one into its callee. */
	int (*call)(const struct luw_flow_path *s, const cs_insn *in,
		    struct luw_recover_goal_found *fd);
	void (*ret)(const struct luw_flow_path *s,
		    struct luw_recover_goal_found *fd);
};

static void px_note(int *f, int *conflict, int v)
{
	if (*f == LUW_LJR_NONE)
		*f = v;
	else if (*f != v)
		*conflict = 1;
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

/* Is value id a load of `size` bytes from L at offset off? */
static int px_from_l(const struct luw_flow_path *s, uint16_t id, int32_t off,
		     int size)
{
	const struct luw_flow_val *v = &s->v[id];

	return id && v->origin == LUW_FLOW_LOAD && v->size == size &&
	       v->off == off && s->v[v->src].origin == PO_L;
}

/* Is value id (+ off) what L->top holds? */
static int px_is_top(const struct luw_flow_path *s, uint16_t id,
		     const struct luw_recover_goal_found *fd)
{
	return px_from_l(s, id, fd->l_top, 8);
}

/* Is [id + off], off < 0, a slot below L->base (a TValue * always)? */
static int px_below_base(const struct luw_flow_path *s, uint16_t id,
			 int32_t off, const struct luw_recover_goal_found *fd)
{
	return off < 0 && off >= -16 && px_from_l(s, id, fd->l_base, 8);
}

/* Is value id G(L): the reference loaded from L->glref? */
static int px_is_g(const struct luw_flow_path *s, uint16_t id, int32_t off,
		   const struct luw_recover_goal_found *fd)
{
	return !off && px_from_l(s, id, fd->l_glref, fd->ref_size);
}

/*
 * The TValues of every path, whatever the goal.  The branch where the
 * last compare found `tag == LJ_TFUNC` (~8): the value it came from is a
 * function.  GC64: the tag is the tagged value shifted right by 47 (sar);
 * 32-bit refs: the tag is the TValue's upper word, loaded from 4 past the
 * TValue, whose lower word is the GCobj.
 */
static void px_learn_fn(struct luw_flow *f, struct luw_flow_path *s)
{
	const struct luw_flow_val *t;

	(void)f;
	if (!s->cmp_valid || (int32_t)s->cmp_imm != -9 || s->cmp_r.off)
		return;
	t = &s->v[s->cmp_r.id];
	if (t->origin == PO_TAG) {
		const struct luw_flow_val *tv = &s->v[t->src];

		s->v[t->src].mark = 1;
		if (tv->origin == LUW_FLOW_LOAD && tv->size == 8)
			luw_flow_mark(s, tv->src, tv->off);
	} else if (t->origin == LUW_FLOW_LOAD && t->size == 4) {
		luw_flow_mark(s, t->src, t->off - 4);
	}
}

/* A mov of any kind loading a register from memory? */
static int is_load(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	return luw_decode_is_mov(in) && luw_decode_reg_op(x, 0) >= 0 &&
	       x->op_count == 2 && x->operands[1].type == X86_OP_MEM;
}

/*
 * What a TValue proved a function (px_learn_fn) loads, and GC64's tag
 * and address of a tagged value; 1 when the instruction was taken care
 * of.  sar and and set the flags: the last compare is gone with them.
 */
static int px_tvalue(struct luw_flow_path *s, const cs_insn *in,
		     const struct luw_recover_goal_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o1 = &x->operands[1];
	int d = luw_decode_reg_op(x, 0), src = luw_decode_reg_op(x, 1);
	uint16_t id;
	int32_t off;

	if (is_load(in) && luw_flow_addr(s, o1, &id, &off) &&
	    luw_flow_marked(s, id, off)) {
		/* 32-bit refs: the GCobj of a TValue proved a function. */
		if (o1->size == 4 && fd->ref_size == 4) {
			luw_flow_set(s, d, PO_FN);
			return 1;
		}
		if (o1->size == 8 && fd->ref_size == 8) {
			s->r[d].id = luw_flow_load(s, id, off, 8);
			s->r[d].off = 0;
			s->v[s->r[d].id].mark = 1;
			return 1;
		}
		return 0;
	}
	if (in->id == X86_INS_SAR && d >= 0 && o1->type == X86_OP_IMM &&
	    o1->imm == 47 && !s->r[d].off &&
	    s->v[s->r[d].id].origin == LUW_FLOW_LOAD) {
		uint16_t v = s->r[d].id;

		s->cmp_valid = 0;
		luw_flow_set(s, d, PO_TAG);
		s->v[s->r[d].id].src = v;
		return 1;
	}
	/* GC64: a function's tagged value, its 47-bit address kept. */
	if (in->id == X86_INS_AND && d >= 0 && !s->r[d].off &&
	    s->v[s->r[d].id].mark) {
		int64_t m = 0;

		if (o1->type == X86_OP_IMM)
			m = o1->imm;
		else if (src >= 0 && s->v[s->r[src].id].origin == LUW_FLOW_CONST)
			m = s->v[s->r[src].id].imm;
		if (m == 0x7fffffffffffLL) {
			s->cmp_valid = 0;
			luw_flow_set(s, d, PO_FN);
			return 1;
		}
	}
	return 0;
}

/* The engine's client: the goal's row first, then the TValues. */
static void lj_entry(struct luw_flow *f, struct luw_flow_path *s)
{
	const struct luw_recover_goal_found *fd = f->client;
	int i;

	for (i = 0; i < fd->goal->narg; i++)
		luw_flow_set(s, fd->goal->arg[i].reg, fd->goal->arg[i].origin);
}

static int lj_insn(struct luw_flow *f, struct luw_flow_path *s,
		   const cs_insn *in)
{
	struct luw_recover_goal_found *fd = f->client;

	if (fd->goal->insn && fd->goal->insn(s, in, fd))
		return 1;
	return px_tvalue(s, in, fd);
}

static int lj_call(struct luw_flow *f, const struct luw_flow_path *s,
		   const cs_insn *in)
{
	struct luw_recover_goal_found *fd = f->client;

	return fd->goal->call ? fd->goal->call(s, in, fd) : 0;
}

static void lj_ret(struct luw_flow *f, const struct luw_flow_path *s)
{
	struct luw_recover_goal_found *fd = f->client;

	if (fd->goal->ret)
		fd->goal->ret(s, fd);
}

static const struct luw_flow_ops lj_ops = {
	.entry = lj_entry,
	.insn = lj_insn,
	.equal = px_learn_fn,
	.call = lj_call,
	.ret = lj_ret,
};

void luw_recover_goal_explore(const struct luw_decode_file *file,
			      uint64_t entry, uint64_t size,
			      const struct luw_recover_goal *g,
			      struct luw_recover_goal_found *fd)
{
	struct luw_flow f = { .file = file, .ops = &lj_ops, .client = fd };

	fd->goal = g;
	luw_flow_explore(&f, entry, size);
	fd->ndirect = f.ncallees;
	memcpy(fd->direct, f.callee, sizeof(fd->direct));
}

/*
 * maxstack: lua_checkstack's maxstack - top, both loaded from L
 * (lj_state_checkstack).
 */
static int maxstack_insn(struct luw_flow_path *s, const cs_insn *in,
			 struct luw_recover_goal_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o1 = &x->operands[1];
	int d = luw_decode_reg_op(x, 0), src = luw_decode_reg_op(x, 1);
	const struct luw_flow_val *a, *b = NULL;
	struct luw_flow_val bm;
	uint16_t id;
	int32_t off;

	/* maxstack - top, both loaded from L: lj_state_checkstack. */
	if (in->id != X86_INS_SUB || d < 0 || s->r[d].off)
		return 0;
	a = &s->v[s->r[d].id];
	if (src >= 0 && !s->r[src].off) {
		b = &s->v[s->r[src].id];
	} else if (o1->type == X86_OP_MEM && luw_flow_addr(s, o1, &id, &off)) {
		memset(&bm, 0, sizeof(bm));
		bm.origin = LUW_FLOW_LOAD;
		bm.src = id;
		bm.off = off;
		bm.size = (uint8_t)o1->size;
		b = &bm;
	}
	if (b && a->origin == LUW_FLOW_LOAD && b->origin == LUW_FLOW_LOAD &&
	    s->v[a->src].origin == PO_L && s->v[b->src].origin == PO_L &&
	    b->off == fd->l_top && a->off != fd->l_base &&
	    a->off != fd->l_top && a->size == fd->ref_size)
		px_note(&fd->val, &fd->conflict, a->off);
	return 0;
}

/* iscfunc: lua_iscfunction's ffid, read or compared. */
static int iscfunc_insn(struct luw_flow_path *s, const cs_insn *in,
			struct luw_recover_goal_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	uint16_t id;
	int32_t off;

	/* A byte of a GCfunc: lua_iscfunction's ffid. */
	if (is_load(in) && o1->size == 1 &&
	    luw_flow_addr(s, o1, &id, &off) && s->v[id].origin == PO_FN)
		px_note(&fd->val, &fd->conflict, off);
	/* cmp byte [fn + ffid], 0: isluafunc(fn). */
	if (in->id == X86_INS_CMP && x->op_count == 2 && o0->size == 1 &&
	    luw_flow_addr(s, o0, &id, &off) && s->v[id].origin == PO_FN)
		px_note(&fd->val, &fd->conflict, off);
	return 0;
}

/*
 * tocfunc: lua_tocfunction's c.pc, the reference whose target's first
 * byte (the opcode) is read, and the C function pointer it returns.
 */
static int tocfunc_insn(struct luw_flow_path *s, const cs_insn *in,
			struct luw_recover_goal_found *fd)
{
	const cs_x86_op *o1 = &in->detail->x86.operands[1];
	uint16_t id;
	int32_t off;

	/* The byte a loaded pointer points at: c.pc's opcode. */
	if (is_load(in) && o1->size == 1 &&
	    luw_flow_addr(s, o1, &id, &off) && off == 0 &&
	    s->v[id].origin == LUW_FLOW_LOAD &&
	    s->v[id].size == fd->ref_size &&
	    s->v[s->v[id].src].origin == PO_FN)
		px_note(&fd->pc, &fd->pc_conflict, s->v[id].off);
	return 0;
}

static void tocfunc_ret(const struct luw_flow_path *s,
			struct luw_recover_goal_found *fd)
{
	const struct luw_flow_val *v = &s->v[s->r[0].id];

	/* The C function pointer lua_tocfunction returns. */
	if (!s->r[0].off && v->origin == LUW_FLOW_LOAD && v->size == 8 &&
	    s->v[v->src].origin == PO_FN)
		px_note(&fd->f, &fd->f_conflict, v->off);
}

/* getinfo: ar->source = strdata(proto_chunkname(pt)) */
static int getinfo_insn(struct luw_flow_path *s, const cs_insn *in,
			struct luw_recover_goal_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0];
	int src = luw_decode_reg_op(x, 1);
	uint16_t id;
	int32_t off;

	if (luw_decode_is_mov(in) && x->op_count == 2 &&
	    o0->type == X86_OP_MEM && src >= 0 && luw_flow_addr(s, o0, &id, &off) &&
	    s->v[id].origin == PO_AR && off == 32 && s->r[src].off > 0) {
		const struct luw_flow_val *c = &s->v[s->r[src].id], *pc;

		pc = &s->v[c->src];
		if (c->origin == LUW_FLOW_LOAD && c->size == fd->ref_size &&
		    c->off < 0 && pc->origin == LUW_FLOW_LOAD &&
		    pc->size == fd->ref_size && pc->off == fd->fn_pc)
			px_note(&fd->chunk_k, &fd->chunk_conflict, -c->off);
	}
	return 0;
}

/*
 * A call taking mref(fn->pc) - k as its first argument: funcproto(fn),
 * k = sizeof(GCproto).  Any other direct call is followed:
 * lj_debug_getinfo's helpers (debug_frameline when not inlined) take fn
 * in registers: their paths are followed with the caller's values.
 */
static int getinfo_call(const struct luw_flow_path *s, const cs_insn *in,
			struct luw_recover_goal_found *fd)
{
	const struct luw_flow_val *a = &s->v[s->r[5].id];
	const cs_x86_op *o = &in->detail->x86.operands[0];
	int c;

	if (s->r[5].off >= 0 || s->r[5].off <= -512 ||
	    a->origin != LUW_FLOW_LOAD || a->size != fd->ref_size ||
	    a->off != fd->fn_pc || o->type != X86_OP_IMM)
		return 1;
	for (c = 0; c < fd->ncalls && (fd->call_to[c] != (uint64_t)o->imm ||
				       fd->call_k[c] != -s->r[5].off); c++)
		;
	if (c == fd->ncalls && c < LUW_RECOVER_GOAL_CALLS) {
		fd->call_to[c] = (uint64_t)o->imm;
		fd->call_k[c] = -s->r[5].off;
		fd->ncalls++;
	}
	return 0;
}

/* A GCproto * (lj_debug_line's pt), or inline, mref(fn->pc). */
static int px_is_pt(const struct luw_flow_path *s, uint16_t id,
		    const struct luw_recover_goal_found *fd)
{
	const struct luw_flow_val *v = &s->v[id];

	if (v->origin == PO_PT)
		return 1;
	return fd->goal->inl && id && v->origin == LUW_FLOW_LOAD &&
	       v->size == fd->ref_size && v->off == fd->fn_pc && v->src;
}

#define PX_NOOFF (-100000)

/* A dword of pt: its offset when o is one (a register or memory). */
static int px_pt_dword(struct luw_flow_path *s, const cs_x86_op *o,
		       const struct luw_recover_goal_found *fd)
{
	uint16_t id;
	int32_t off;
	int r;

	if (o->size != 4)
		return -1;
	if (o->type == X86_OP_MEM && luw_flow_addr(s, o, &id, &off) &&
	    px_is_pt(s, id, fd))
		return off;
	if (o->type == X86_OP_REG && (r = luw_decode_reg(o->reg)) >= 0 &&
	    !s->r[r].off && s->v[s->r[r].id].origin == LUW_FLOW_LOAD &&
	    s->v[s->r[r].id].size == 4 &&
	    px_is_pt(s, s->v[s->r[r].id].src, fd))
		return s->v[s->r[r].id].off;
	return PX_NOOFF;
}

/*
 * lj_debug_line's compares: pc against pt->sizebc, pt->numline against
 * 255/256 and 65535/65536 (the width of a lineinfo entry).
 */
static void px_cmp_pt(struct luw_flow_path *s, const cs_x86_op *a,
		      const cs_x86_op *b, struct luw_recover_goal_found *fd)
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
			  (fd->goal->inl && s->v[s->r[r].id].origin == LUW_FLOW_RET)))
			px_note(&fd->sizebc, &fd->sizebc_conflict, o);
	}
}

/* debugline: lj_debug_line(pt, pc)'s lineinfo, pt itself, its compares. */
static int debugline_insn(struct luw_flow_path *s, const cs_insn *in,
			  struct luw_recover_goal_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o1 = &x->operands[1];
	int i, b;

	/* lineinfo[pc]: an indexed access through a pointer read from pt. */
	for (i = 0; i < x->op_count; i++) {
		const cs_x86_op *o = &x->operands[i];
		const struct luw_flow_val *bv;

		if (o->type != X86_OP_MEM || o->mem.index == X86_REG_INVALID ||
		    (b = luw_decode_reg(o->mem.base)) < 0 || s->r[b].off)
			continue;
		bv = &s->v[s->r[b].id];
		if (bv->origin == LUW_FLOW_LOAD && bv->size == fd->ref_size &&
		    px_is_pt(s, bv->src, fd))
			px_note(&fd->lineinfo, &fd->lineinfo_conflict, bv->off);
	}
	/* A load through mref(fn->pc) - k held in a register: pt. */
	if (fd->goal->inl && is_load(in) &&
	    (b = luw_decode_reg(o1->mem.base)) >= 0 && b != 7 &&
	    o1->mem.index == X86_REG_INVALID && s->r[b].off < 0 &&
	    s->r[b].off > -512 && px_is_pt(s, s->r[b].id, fd))
		px_note(&fd->pt_k, &fd->pt_k_conflict, -s->r[b].off);
	if (in->id == X86_INS_CMP && x->op_count == 2)
		px_cmp_pt(s, &x->operands[0], o1, fd);
	return 0;
}

/* lj_debug_line returned: which of pt's dwords its result holds. */
static void px_ret_line(const struct luw_flow_path *s,
			struct luw_recover_goal_found *fd)
{
	const struct luw_flow_val *v = &s->v[s->r[0].id];
	uint16_t ids[2];
	int n = 0, i, k, got = 0;

	if (s->r[0].off)
		return;
	if (v->origin == LUW_FLOW_SUM) {
		ids[n++] = v->src;
		ids[n++] = v->src2;
	} else {
		ids[n++] = s->r[0].id;
	}
	for (i = 0; i < n; i++) {
		const struct luw_flow_val *t = &s->v[ids[i]];

		if (!ids[i] || t->origin != LUW_FLOW_LOAD || t->size != 4 ||
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

/*
 * jit_checktrace: `tr < J->sizetrace` (a compare of a value with a dword
 * of G(L) + GG_G2J) and traceref(J, tr) (a load indexed by that very
 * value from the pointer at G(L) + GG_G2J + trace): the bound of the
 * index is sizetrace.  The value and the dword's offset are the path's
 * note.  1 when the instruction was taken care of.
 */
static int px_checktrace(struct luw_flow_path *s, const cs_insn *in,
			 struct luw_recover_goal_found *fd)
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
			    luw_flow_addr(s, m, &id, &off) && px_is_g(s, id, 0, fd)) {
				s->note_id = s->r[k].id;
				s->note_off = off;
			}
		}
		return 0;
	}
	if ((in->id != X86_INS_MOV && in->id != X86_INS_MOVSXD) ||
	    o0->type != X86_OP_REG || (d = luw_decode_reg(o0->reg)) < 0 ||
	    o1->type != X86_OP_MEM || o1->mem.disp ||
	    o1->mem.segment != X86_REG_INVALID || o1->mem.scale != fd->ref_size ||
	    (b = luw_decode_reg(o1->mem.base)) < 0 ||
	    (k = luw_decode_reg(o1->mem.index)) < 0 ||
	    s->r[b].off || s->r[k].off || !s->note_id ||
	    s->r[k].id != s->note_id)
		return 0;
	{
		const struct luw_flow_val *a = &s->v[s->r[b].id];

		if (a->origin != LUW_FLOW_LOAD || a->size != 8 ||
		    !px_is_g(s, a->src, 0, fd))
			return 0;
		px_note(&fd->tr_g, &fd->tr_conflict, a->off);
		px_note(&fd->st_g, &fd->st_conflict, s->note_off);
	}
	luw_flow_set(s, d, PO_TRACE);
	return 1;
}

/* A load of `size` bytes from the trace T: its offset, else -1. */
static int px_tload(const struct luw_flow_path *s, uint16_t id, int size)
{
	const struct luw_flow_val *v = &s->v[id];

	return id && v->origin == LUW_FLOW_LOAD && v->size == size &&
	       s->v[v->src].origin == PO_TRACE ? v->off : -1;
}

/* checktrace: tracemc's lj_str_new(L, T->mcode, T->szmcode) */
static int checktrace_call(const struct luw_flow_path *s, const cs_insn *in,
			   struct luw_recover_goal_found *fd)
{
	const struct luw_flow_val *a = &s->v[s->r[5].id];
	const struct luw_flow_val *a2 = &s->v[s->r[4].id];
	const struct luw_flow_val *a3 = &s->v[s->r[1].id];

	(void)in;
	if (!s->r[4].off && !s->r[1].off && !s->r[5].off && a->origin == PO_L &&
	    a2->origin == LUW_FLOW_LOAD && a2->size == 8 &&
	    s->v[a2->src].origin == PO_TRACE &&
	    a3->origin == LUW_FLOW_LOAD && a3->size == 4 &&
	    s->v[a3->src].origin == PO_TRACE) {
		px_note(&fd->mc, &fd->mc_conflict, a2->off);
		px_note(&fd->szmc, &fd->szmc_conflict, a3->off);
	}
	return 0;
}

/* trace_flushroot's compare and trace_unpatch's store (flush). */
static void px_flush(struct luw_flow_path *s, const cs_insn *in,
		     struct luw_recover_goal_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	uint16_t id;
	int32_t off;
	int i, r, a;

	if (x->op_count != 2)
		return;
	if (in->id == X86_INS_CMP && o0->size == 2 && o1->size == 2) {
		uint16_t v[2] = { luw_flow_opval(s, o0), luw_flow_opval(s, o1) };

		for (i = 0; i < 2; i++) {
			const struct luw_flow_val *p = &s->v[v[!i]];
			int no = px_tload(s, v[i], 2), pt;

			if (no < 0 || !v[!i] || p->origin != LUW_FLOW_LOAD ||
			    p->size != 2 ||
			    (pt = px_tload(s, p->src, fd->ref_size)) < 0)
				continue;
			px_note(&fd->fl_pt, &fd->fl_pt_c, pt);
			px_note(&fd->fl_no, &fd->fl_no_c, no);
		}
		return;
	}
	if (in->id == X86_INS_MOV && o0->type == X86_OP_MEM && o0->size == 4 &&
	    o1->type == X86_OP_REG && (r = luw_decode_reg(o1->reg)) >= 0 &&
	    !s->r[r].off && luw_flow_addr(s, o0, &id, &off) && !off &&
	    (a = px_tload(s, id, fd->ref_size)) >= 0 &&
	    px_tload(s, s->r[r].id, 4) >= 0)
		px_note(&fd->fl_pc, &fd->fl_pc_c, a);
}

/* flush: T by jit_checktrace's pattern, then what trace_flushroot does. */
static int flush_insn(struct luw_flow_path *s, const cs_insn *in,
		      struct luw_recover_goal_found *fd)
{
	if (px_checktrace(s, in, fd))
		return 1;
	px_flush(s, in, fd);
	return 0;
}

/* luaJIT_setmode's callees: lj_trace_flush, read with its values. */
static int flush_call(const struct luw_flow_path *s, const cs_insn *in,
		      struct luw_recover_goal_found *fd)
{
	(void)s;
	(void)in;
	(void)fd;
	return 1;
}

/*
 * set*V(L, L->top, obj) after obj = a call's result (push); the path's
 * note flag: 32-bit refs stored the result as the GCobj word at L->top.
 * 1 when the instruction was taken care of.
 */
static int px_push(struct luw_flow_path *s, const cs_insn *in,
		   struct luw_recover_goal_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	int d = luw_decode_reg_op(x, 0), sr = luw_decode_reg_op(x, 1);
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
	    s->v[s->r[d].id].origin == LUW_FLOW_CONST &&
	    s->v[s->r[d].id].imm == 0x7fffffffffffLL &&
	    luw_flow_addr(s, o1, &id, &off) && px_below_base(s, id, off, fd)) {
		luw_flow_set(s, d, PO_CURFN);
		return 1;
	}
	if (in->id == X86_INS_MOV && d >= 0 && fd->ref_size == 4 &&
	    o1->type == X86_OP_MEM && o1->size == 4 &&
	    luw_flow_addr(s, o1, &id, &off) && px_below_base(s, id, off, fd)) {
		luw_flow_set(s, d, PO_CURFN);
		return 1;
	}
	/* fn->c.gct == ~LJ_TFUNC (getcurrenv) */
	if (in->id == X86_INS_CMP && o0->type == X86_OP_MEM && o0->size == 1 &&
	    o1->type == X86_OP_IMM && luw_flow_addr(s, o0, &id, &off) &&
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
		const struct luw_flow_val *a = &s->v[s->r[d].id], *b = &s->v[s->r[sr].id];
		const struct luw_flow_val *ret = a->origin == LUW_FLOW_RET ? a : b;
		const struct luw_flow_val *k = a->origin == LUW_FLOW_RET ? b : a;
		uint16_t n;

		if (ret->origin != LUW_FLOW_RET || k->origin != LUW_FLOW_CONST ||
		    !s->r[d].id || !s->r[sr].id)
			return 0;
		n = luw_flow_new(s, PO_TAGGED);
		s->v[n].imm = k->imm;
		s->v[n].src = a->origin == LUW_FLOW_RET ? s->r[d].id : s->r[sr].id;
		s->r[d].id = n;
		s->r[d].off = 0;
		return 1;
	}
	if (in->id != X86_INS_MOV || o0->type != X86_OP_MEM ||
	    !luw_flow_addr(s, o0, &id, &off) || !px_is_top(s, id, fd))
		return 0;
	{
		const struct luw_flow_val *v = sr >= 0 && !s->r[sr].off ?
					       &s->v[s->r[sr].id] : NULL;

		if (off == 0 && o0->size == 8 && v && v->origin == PO_TAGGED) {
			px_note64(&fd->tag, &fd->have_tag, &fd->tag_conflict, v->imm);
		} else if (off == 0 && o0->size == 4 && v &&
			   v->origin == LUW_FLOW_RET) {
			s->note_flag = 1;	/* 32-bit refs: the GCobj word */
		} else if (off == 4 && o0->size == 4 && o1->type == X86_OP_IMM &&
			   s->note_flag) {
			px_note64(&fd->tag, &fd->have_tag, &fd->tag_conflict,
				  (int64_t)(uint32_t)o1->imm);
		}
	}
	return 0;
}

/* A dword loaded, times 8 (shl 3, or lea [x*8]): PO_X8 of it. */
static int px_stackfree(struct luw_flow_path *s, const cs_insn *in,
			struct luw_recover_goal_found *fd)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o1 = &x->operands[1];
	int d = luw_decode_reg_op(x, 0);
	int k;
	uint16_t src;

	(void)fd;
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
	if (k < 0 || s->r[k].off || s->v[s->r[k].id].origin != LUW_FLOW_LOAD ||
	    s->v[s->r[k].id].size != 4)
		return 0;
	src = s->r[k].id;
	luw_flow_set(s, d, PO_X8);
	s->v[s->r[d].id].src = src;
	return 1;
}

/*
 * allocf(ud, L->stack, L->stacksize * 8, 0): lj_mem_freevec of a
 * thread's stack
 */
static int stackfree_call(const struct luw_flow_path *s, const cs_insn *in,
			  struct luw_recover_goal_found *fd)
{
	const struct luw_flow_val *a2 = &s->v[s->r[4].id];
	const struct luw_flow_val *a3 = &s->v[s->r[1].id];

	(void)in;
	if (!s->r[4].off && !s->r[1].off &&
	    a2->origin == LUW_FLOW_LOAD && a2->size == fd->ref_size &&
	    a2->off == fd->l_stack && a3->origin == PO_X8 &&
	    s->v[a3->src].origin == LUW_FLOW_LOAD &&
	    s->v[s->v[a3->src].src].origin != LUW_FLOW_UNK &&
	    s->v[a3->src].src == a2->src)
		px_note(&fd->ss_off, &fd->ss_conflict, s->v[a3->src].off);
	return 0;
}

/*
 * The goals (target/recover_goal.h), a row each: what the argument
 * registers (DWARF numbers) hold on entry, and the hooks above that match
 * and record.
 */
#define ARG_L { 5, PO_L }	/* rdi: the lua_State * */
#define ARG_UNK(reg) { reg, LUW_FLOW_UNK }

const struct luw_recover_goal luw_recover_goal_maxstack = {
	.arg = { ARG_L }, .narg = 1, .insn = maxstack_insn,
};
const struct luw_recover_goal luw_recover_goal_iscfunc = {
	.arg = { ARG_L }, .narg = 1, .insn = iscfunc_insn,
};
const struct luw_recover_goal luw_recover_goal_tocfunc = {
	.arg = { ARG_L }, .narg = 1, .insn = tocfunc_insn, .ret = tocfunc_ret,
};
const struct luw_recover_goal luw_recover_goal_getinfo = {
	.arg = { ARG_L, { 1, PO_AR } }, .narg = 2,	/* rdx: ar */
	.insn = getinfo_insn, .call = getinfo_call,
};
const struct luw_recover_goal luw_recover_goal_debugline = {
	/* rdi: pt, esi: pc */
	.arg = { { 5, PO_PT }, { 4, PO_PCARG } }, .narg = 2,
	.insn = debugline_insn, .ret = px_ret_line,
};
/* Inlined into a helper: its arguments unknown, pt found as it is used. */
const struct luw_recover_goal luw_recover_goal_debugline_inl = {
	.arg = { ARG_UNK(5), ARG_UNK(4), ARG_UNK(1), ARG_UNK(2), ARG_UNK(8),
		 ARG_UNK(9) }, .narg = 6,
	.inl = 1, .insn = debugline_insn, .ret = px_ret_line,
};
const struct luw_recover_goal luw_recover_goal_checktrace = {
	.arg = { ARG_L }, .narg = 1,
	.insn = px_checktrace, .call = checktrace_call,
};
/* luaJIT_setmode(L, idx, mode): idx is the trace number */
const struct luw_recover_goal luw_recover_goal_flush = {
	.arg = { ARG_L, ARG_UNK(4), ARG_UNK(1) }, .narg = 3,
	.insn = flush_insn, .call = flush_call,
};
const struct luw_recover_goal luw_recover_goal_push = {
	.arg = { ARG_L }, .narg = 1, .insn = px_push,
};
const struct luw_recover_goal luw_recover_goal_stackfree = {
	.arg = { ARG_L }, .narg = 1,
	.insn = px_stackfree, .call = stackfree_call,
};
