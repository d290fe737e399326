/*
 * flow: the path explorer of flow.h -- symbolic values, the data flow of
 * one instruction, and the walk over paths, jump tables, tail calls and
 * followed calls.  Apart from the LuaJIT goals (target/recover_paths.c)
 * so that what a goal looks for reads as its own row of hooks, not as
 * tests threaded through this data flow.
 */
#include "x86/flow.h"

#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"

#define PATHS 256
#define INSNS 40000

uint16_t luw_flow_new(struct luw_flow_path *s, uint8_t origin)
{
	if (s->nv >= LUW_FLOW_VALS)
		return 0;	/* id 0: the shared unknown */
	memset(&s->v[s->nv], 0, sizeof(s->v[0]));
	s->v[s->nv].origin = origin;
	return (uint16_t)s->nv++;
}

void luw_flow_set(struct luw_flow_path *s, int reg, uint8_t origin)
{
	s->r[reg].id = luw_flow_new(s, origin);
	s->r[reg].off = 0;
}

uint16_t luw_flow_load(struct luw_flow_path *s, uint16_t id, int32_t off,
		       uint8_t size)
{
	uint16_t n = luw_flow_new(s, LUW_FLOW_LOAD);

	s->v[n].src = id;
	s->v[n].off = off;
	s->v[n].size = size;
	return n;
}

int luw_flow_addr(const struct luw_flow_path *s, const cs_x86_op *o,
		  uint16_t *id, int32_t *off)
{
	int b;

	if (o->type != X86_OP_MEM || o->mem.index != X86_REG_INVALID ||
	    o->mem.segment != X86_REG_INVALID ||
	    (b = luw_decode_reg(o->mem.base)) < 0 || b == 7)
		return 0;
	*id = s->r[b].id;
	*off = s->r[b].off + (int32_t)o->mem.disp;
	return *id != 0;
}

uint16_t luw_flow_opval(struct luw_flow_path *s, const cs_x86_op *o)
{
	uint16_t id;
	int32_t off;
	int r;

	if (o->type == X86_OP_REG && (r = luw_decode_reg(o->reg)) >= 0 &&
	    !s->r[r].off)
		return s->r[r].id;
	if (o->type != X86_OP_MEM || !luw_flow_addr(s, o, &id, &off))
		return 0;
	return luw_flow_load(s, id, off, (uint8_t)o->size);
}

int luw_flow_marked(const struct luw_flow_path *s, uint16_t id, int32_t off)
{
	int i;

	for (i = 0; i < s->nm; i++)
		if (s->mid[i] == id && s->moff[i] == off)
			return 1;
	return 0;
}

void luw_flow_mark(struct luw_flow_path *s, uint16_t id, int32_t off)
{
	if (s->nm < LUW_FLOW_MARKS && !luw_flow_marked(s, id, off)) {
		s->mid[s->nm] = id;
		s->moff[s->nm++] = off;
	}
}

/* After a call: the caller-saved registers hold new unknown values. */
static void clobber_call(struct luw_flow_path *s)
{
	size_t i;

	for (i = 0; i < LUW_DECODE_NCLOBBERED; i++)
		luw_flow_set(s, luw_decode_clobbered[i], LUW_FLOW_UNK);
	s->v[s->r[0].id].origin = s->r[0].id ? LUW_FLOW_RET : LUW_FLOW_UNK;
	s->cmp_valid = 0;
}

/* mov and its kin, with two operands into register d. */
static void step_mov(struct luw_flow_path *s, const cs_insn *in, int d)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o1 = &x->operands[1];
	int src = luw_decode_reg_op(x, 1), b;
	uint16_t id;
	int32_t off;

	/* movsxd r, [table + idx*4]: a switch's jump table */
	if (in->id == X86_INS_MOVSXD && o1->type == X86_OP_MEM &&
	    o1->mem.index != X86_REG_INVALID && o1->mem.scale == 4 &&
	    !o1->mem.disp && (b = luw_decode_reg(o1->mem.base)) >= 0 &&
	    !s->r[b].off && s->v[s->r[b].id].origin == LUW_FLOW_CONST) {
		int64_t t = s->v[s->r[b].id].imm;

		luw_flow_set(s, d, LUW_FLOW_JTENT);
		s->v[s->r[d].id].imm = t;
		return;
	}
	if (o1->type == X86_OP_MEM) {
		if (!luw_flow_addr(s, o1, &id, &off)) {
			luw_flow_set(s, d, LUW_FLOW_UNK);
			return;
		}
		s->r[d].id = luw_flow_load(s, id, off, (uint8_t)o1->size);
		s->r[d].off = 0;
		return;
	}
	if (o1->type == X86_OP_REG && src >= 0) {
		s->r[d] = s->r[src];
		return;
	}
	if (o1->type == X86_OP_IMM) {
		luw_flow_set(s, d, LUW_FLOW_CONST);
		s->v[s->r[d].id].imm = o1->imm;
		return;
	}
	/* Anything else writing a register leaves it unknown. */
	luw_flow_set(s, d, LUW_FLOW_UNK);
}

/* lea into register d: an address, a sum, or a place plus an offset. */
static void step_lea(struct luw_flow_path *s, const cs_insn *in, int d)
{
	const cs_x86_op *o1 = &in->detail->x86.operands[1];
	int b, k;
	uint16_t id;
	int32_t off;

	if (o1->mem.base == X86_REG_RIP && o1->mem.index == X86_REG_INVALID) {
		luw_flow_set(s, d, LUW_FLOW_CONST);
		s->v[s->r[d].id].imm = (int64_t)(in->address + in->size) +
				       o1->mem.disp;
		return;
	}
	if (o1->mem.index != X86_REG_INVALID && o1->mem.scale == 1 &&
	    !o1->mem.disp && (b = luw_decode_reg(o1->mem.base)) >= 0 &&
	    (k = luw_decode_reg(o1->mem.index)) >= 0) {
		uint16_t a = s->r[b].id, b2 = s->r[k].id;

		luw_flow_set(s, d, LUW_FLOW_SUM);
		s->v[s->r[d].id].src = a;
		s->v[s->r[d].id].src2 = b2;
		return;
	}
	if (luw_flow_addr(s, o1, &id, &off)) {
		s->r[d].id = id;
		s->r[d].off = off;
		return;
	}
	luw_flow_set(s, d, LUW_FLOW_UNK);
}

/* add into register d, two operands: an offset, a switch case, a sum. */
static void step_add(struct luw_flow_path *s, const cs_insn *in, int d)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o1 = &x->operands[1];
	int src = luw_decode_reg_op(x, 1);
	uint16_t a = s->r[d].id, b2 = 0, id;
	int32_t off;

	if (o1->type == X86_OP_IMM) {
		s->r[d].off += (int32_t)o1->imm;
		return;
	}
	if (src >= 0 && s->v[s->r[d].id].origin == LUW_FLOW_JTENT &&
	    s->v[s->r[src].id].origin == LUW_FLOW_CONST && !s->r[src].off &&
	    s->v[s->r[src].id].imm == s->v[s->r[d].id].imm) {
		int64_t t = s->v[s->r[d].id].imm;

		luw_flow_set(s, d, LUW_FLOW_JTADDR);
		s->v[s->r[d].id].imm = t;
		return;
	}
	if (src >= 0)
		b2 = s->r[src].id;
	else if (luw_flow_addr(s, o1, &id, &off))
		b2 = luw_flow_load(s, id, off, (uint8_t)o1->size);
	luw_flow_set(s, d, LUW_FLOW_SUM);
	s->v[s->r[d].id].src = a;
	s->v[s->r[d].id].src2 = b2;
}

/* One instruction's data flow, after the client had its look. */
static void step1(struct luw_flow *f, struct luw_flow_path *s,
		  const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o1 = &x->operands[1];
	int d = luw_decode_reg_op(x, 0);

	if (f->ops->insn && f->ops->insn(f, s, in))
		return;
	/* The flags of a compare survive a mov. */
	if (!luw_decode_is_mov(in))
		s->cmp_valid = 0;
	if (luw_decode_is_mov(in) && d >= 0 && x->op_count == 2) {
		step_mov(s, in, d);
		return;
	}
	if (in->id == X86_INS_LEA && d >= 0) {
		step_lea(s, in, d);
		return;
	}
	if (in->id == X86_INS_ADD && d >= 0 && x->op_count == 2) {
		step_add(s, in, d);
		return;
	}
	if (in->id == X86_INS_SUB && d >= 0 && x->op_count == 2 &&
	    o1->type == X86_OP_IMM) {
		s->r[d].off -= (int32_t)o1->imm;
		return;
	}
	if (in->id == X86_INS_CMP && x->op_count == 2 && d >= 0 &&
	    o1->type == X86_OP_IMM) {
		s->cmp_valid = 1;
		s->cmp_r = s->r[d];
		s->cmp_imm = o1->imm;
	}
	/* Anything else writing a register leaves it unknown. */
	if (d >= 0 && luw_decode_writes_op0(in))
		luw_flow_set(s, d, LUW_FLOW_UNK);
}

/* One instruction; id 0 (what a full value table hands out) stays unknown. */
static void step(struct luw_flow *f, struct luw_flow_path *s,
		 const cs_insn *in)
{
	step1(f, s, in);
	memset(&s->v[0], 0, sizeof(s->v[0]));
}

struct work {
	uint64_t at;
	struct luw_flow_path s;
};

/*
 * A switch: each case its jump table names, relative (PIC: table + int32)
 * or absolute ([table + idx*8]).
 */
static void jump_table(struct luw_flow *f, const struct luw_flow_path *s,
		       const cs_x86_op *o, struct work *work, int *nw)
{
	int r = o->type == X86_OP_REG ? luw_decode_reg(o->reg) : -1, e;
	const struct luw_flow_val *v = r >= 0 ? &s->v[s->r[r].id] : NULL;
	int rel = v && !s->r[r].off && v->origin == LUW_FLOW_JTADDR;
	int ab = o->type == X86_OP_MEM && o->mem.base == X86_REG_INVALID &&
		 o->mem.index != X86_REG_INVALID && o->mem.scale == 8 &&
		 o->mem.segment == X86_REG_INVALID;
	Elf *elf = f->file->elf;

	for (e = 0; (rel || ab) && e < s->jt_bound && *nw < PATHS; e++) {
		int32_t r32;
		uint64_t to;

		if (rel) {
			if (luw_elf_read_at(elf, (uint64_t)v->imm + 4u * (unsigned)e,
					    &r32, 4))
				break;
			to = (uint64_t)v->imm + (uint64_t)(int64_t)r32;
		} else if (luw_elf_read_at(elf, (uint64_t)o->mem.disp +
					   8u * (unsigned)e, &to, 8)) {
			break;
		}
		if (to < s->lo || to >= s->hi)
			continue;
		work[*nw].at = to;
		work[*nw].s = *s;
		work[*nw].s.jt_bound = 0;
		(*nw)++;
	}
}

/*
 * A call: the client looks first; a direct call it wants followed, made
 * by the entry function, is read with the caller's values (a callee that
 * takes them in registers), and listed.
 */
static void call(struct luw_flow *f, struct luw_flow_path *s,
		 const cs_insn *in, struct work *work, int *nw)
{
	const cs_x86_op *o = &in->detail->x86.operands[0];
	uint64_t t, end;
	int c;

	if (f->ops->call && f->ops->call(f, s, in) && !s->depth &&
	    o->type == X86_OP_IMM && *nw < PATHS) {
		t = (uint64_t)o->imm;
		for (c = 0; c < f->ncallees && f->callee[c] != t; c++)
			;
		if (c == f->ncallees && c < LUW_FLOW_CALLEES)
			f->callee[f->ncallees++] = t;
		end = luw_ehframe_end(f->file->fdes, t);
		if (end) {
			work[*nw].at = t;
			work[*nw].s = *s;
			work[*nw].s.lo = t;
			work[*nw].s.hi = end;
			work[*nw].s.depth = 1;
			work[*nw].s.cmp_valid = 0;
			(*nw)++;
		}
	}
	clobber_call(s);
}

void luw_flow_explore(struct luw_flow *f, uint64_t entry, uint64_t size)
{
	struct work *work;
	struct { uint64_t a; int n; } seen[1024];
	int nw = 0, nseen = 0, budget = INSNS, i;
	cs_insn *in = cs_malloc(f->file->h);
	csh h = f->file->h;

	work = calloc(PATHS, sizeof(*work));
	if (!work || !in)
		goto out;
	work[0].at = entry;
	work[0].s.lo = entry;
	work[0].s.hi = entry + size;
	luw_flow_new(&work[0].s, LUW_FLOW_UNK);		/* id 0: unknown */
	for (i = 0; i < 16; i++)
		work[0].s.r[i].id = 0;
	if (f->ops->entry)
		f->ops->entry(f, &work[0].s);
	nw = 1;
	while (nw > 0 && budget > 0) {
		struct luw_flow_path s = work[nw - 1].s;
		uint64_t addr = work[--nw].at;

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
			if (!luw_decode_at(f->file, &addr, in))
				break;
			x = &in->detail->x86;
			if (in->id == X86_INS_RET) {
				if (f->ops->ret)
					f->ops->ret(f, &s);
				break;
			}
			if (in->id == X86_INS_CALL) {
				call(f, &s, in, work, &nw);
				continue;
			}
			if (in->id == X86_INS_JMP && x->op_count == 1 &&
			    (x->operands[0].type == X86_OP_REG ||
			     x->operands[0].type == X86_OP_MEM)) {
				jump_table(f, &s, &x->operands[0], work, &nw);
				break;
			}
			if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
			    cs_insn_group(h, in, CS_GRP_JUMP)) {
				uint64_t to = (uint64_t)x->operands[0].imm;

				if (in->id == X86_INS_JMP) {
					/* A tail call: into the next function. */
					if (to < s.lo || to >= s.hi) {
						uint64_t end = luw_ehframe_end(f->file->fdes, to);

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
				if (nw < PATHS) {
					work[nw].at = to;
					work[nw].s = s;
					/* je: the taken way is the equal one. */
					if (in->id == X86_INS_JE && f->ops->equal)
						f->ops->equal(f, &work[nw].s);
					work[nw].s.cmp_valid = 0;
					nw++;
				}
				if (in->id == X86_INS_JNE && f->ops->equal)
					f->ops->equal(f, &s);
				s.cmp_valid = 0;
				continue;
			}
			if (cs_insn_group(h, in, CS_GRP_JUMP))
				break;	/* indirect: not followed */
			step(f, &s, in);
		}
	}
out:
	free(work);
	if (in)
		cs_free(in, 1);
}
