/*
 * recover_vm: the interpreter's code read by linear sweeps (see
 * target/recover_vm.h): votes over its many handlers, where one site
 * alone could be any code.  Apart from target/recover.c, whose readers
 * follow one function's data flow, because these count sites instead.
 */
#include "target/recover_vm.h"

#include <string.h>

/*
 * The interpreter's fixed registers (see target/recover.h), over a linear
 * sweep of its code, straight-line runs only (state is dropped at every
 * unconditional jmp and ret, caller-saved registers at every call):
 *  - the dispatch: `mov R32, [P]`, `movzx OP, R8(low)`, `add P, 4`
 *    (a 32-bit add in the 32-bit-reference VM), `jmp [D + OP*8]` -- P
 *    is PC, D is DISPATCH;
 *  - BASE: what `mov X, [L + l_base]` loads, L being what the C frame's
 *    saved L (`[rsp + cframe_ofs_l]`) was loaded into;
 *  - KBASE: what `mov X, [PC + d]` of a reference loads with d inside
 *    the GCproto before the bytecode (PC2PROTO(k) - 4, BC_FUNCF's
 *    `mov KBASE, [PC-4+PC2PROTO(k)]`).
 * Each is kept only when every site agrees and there are enough sites.
 */
#define VOTE_KEYS 16

struct vote {
	int key[VOTE_KEYS];
	unsigned int n[VOTE_KEYS];
	int nk, bad;
};

static void vote_add(struct vote *v, int key)
{
	int i;

	for (i = 0; i < v->nk && v->key[i] != key; i++)
		;
	if (i == v->nk) {
		if (v->nk == VOTE_KEYS) {
			v->bad = 1;
			return;
		}
		v->key[v->nk++] = key;
	}
	v->n[i]++;
}

/* The one key every site gave, seen at least min times; else NONE. */
static int vote_one(const struct vote *v, unsigned int min)
{
	return !v->bad && v->nk == 1 && v->n[0] >= min ? v->key[0] : LUW_LJR_NONE;
}

/* What the sweep knows of a register: 0 when nothing. */
struct vm_reg {
	int ld;		/* R = dword [P]: P + 1 */
	int op;		/* R = the low byte of such: P + 1 */
	int isl;	/* R holds the C frame's saved L */
	int adv;	/* R is a P whose instruction was loaded, plus 4 */
};

void luw_recover_vm_regs(csh h, const uint8_t *code, size_t len,
			 uint64_t addr, struct luw_recover_result *r)
{
	struct vm_reg rs[16];
	struct vote disp = { .nk = 0 }, base = { .nk = 0 }, kb = { .nk = 0 };
	cs_insn *in = cs_malloc(h);
	int i, k, got;

	memset(rs, 0, sizeof(rs));
	while (in && (got = luw_decode_sweep(h, &code, &len, &addr, in)) >= 0) {
		const cs_x86 *x;
		const cs_x86_op *o0, *o1;
		int d, s1, b;
		int32_t dsp;

		if (!got || in->id == X86_INS_RET) {
			memset(rs, 0, sizeof(rs));
			continue;
		}
		x = &in->detail->x86;
		o0 = &x->operands[0];
		o1 = &x->operands[1];
		d = luw_decode_reg_op(x, 0);
		s1 = luw_decode_reg_op(x, 1);
		if (in->id == X86_INS_JMP) {
			if (x->op_count == 1 && o0->type == X86_OP_MEM &&
			    o0->size == 8 && o0->mem.scale == 8 &&
			    o0->mem.segment == X86_REG_INVALID &&
			    (b = luw_decode_reg(o0->mem.base)) >= 0 &&
			    (k = luw_decode_reg(o0->mem.index)) >= 0 && rs[k].op &&
			    rs[rs[k].op - 1].adv)
				vote_add(&disp, b * 16 + rs[k].op - 1);
			memset(rs, 0, sizeof(rs));
			continue;
		}
		if (in->id == X86_INS_CALL) {
			for (i = 0; i < LUW_DECODE_NCLOBBERED; i++)
				memset(&rs[luw_decode_clobbered[i]], 0, sizeof(rs[0]));
			continue;
		}
		if (d < 0 || !luw_decode_writes_op0(in))
			continue;
		/* add P, 4 after P's instruction was loaded: PC advanced. */
		if (in->id == X86_INS_ADD && (o0->size == 8 || o0->size == 4) &&
		    x->op_count == 2 &&
		    o1->type == X86_OP_IMM && o1->imm == 4) {
			for (k = 0; k < 16; k++)
				if (rs[k].ld == d + 1 || rs[k].op == d + 1)
					rs[d].adv = 1;
			rs[d].isl = 0;
			continue;
		}
		if (in->id == X86_INS_MOV && x->op_count == 2 &&
		    (b = luw_decode_mem_base(o1, &dsp)) >= 0) {
			int nl = 0;

			if (b != 7 && rs[b].isl && r->l_base != LUW_LJR_NONE &&
			    dsp == r->l_base && o1->size == r->ref_size)
				vote_add(&base, d);
			if (b == 7 && r->cframe_ofs_l != LUW_LJR_NONE &&
			    dsp == r->cframe_ofs_l && o1->size == r->cframe_l_size)
				nl = 1;
			/* mov KBASE, [PC - 4 + PC2PROTO(k)] */
			if (b != 7 && r->pt_size != LUW_LJR_NONE && o1->size == r->ref_size &&
			    dsp < -4 && dsp + 4 + r->pt_size >= 0 &&
			    (dsp + 4 + r->pt_size) % r->ref_size == 0)
				vote_add(&kb, (-dsp) << 8 | d << 4 | b);
			for (k = 0; k < 16; k++)
				if (rs[k].ld == d + 1 || rs[k].op == d + 1)
					rs[k].ld = rs[k].op = 0;
			rs[d].ld = dsp == 0 && o1->size == 4 ? b + 1 : 0;
			rs[d].op = 0;
			rs[d].isl = nl;
			rs[d].adv = 0;
			continue;
		}
		if (in->id == X86_INS_MOVZX && x->op_count == 2 && s1 >= 0 &&
		    o1->size == 1 && rs[s1].ld) {
			rs[d].op = rs[s1].ld;
			rs[d].ld = rs[d].isl = rs[d].adv = 0;
			continue;
		}
		if (in->id == X86_INS_MOV && s1 >= 0 && o0->size == 8) {
			rs[d] = rs[s1];
			rs[d].adv = 0;
			continue;
		}
		memset(&rs[d], 0, sizeof(rs[d]));
	}
	if (in)
		cs_free(in, 1);
	k = vote_one(&disp, 16);
	if (k != LUW_LJR_NONE) {
		r->reg_dispatch = k / 16;
		r->reg_pc = k % 16;
	}
	r->reg_base = vote_one(&base, 4);
	/*
	 * KBASE: of the loads relative to PC (other bases are BASE's slots,
	 * BC_RET's [KBASE + PC2PROTO(k)]), one register and one offset.
	 */
	for (i = 0, k = LUW_LJR_NONE; r->reg_pc != LUW_LJR_NONE && i < kb.nk; i++) {
		if ((kb.key[i] & 15) != r->reg_pc)
			continue;
		if (k != LUW_LJR_NONE || kb.bad) {
			k = LUW_LJR_NONE;
			break;
		}
		k = kb.key[i];
		r->nvote_kbase = kb.n[i];
	}
	if (k != LUW_LJR_NONE && r->nvote_kbase >= 2 && (k >> 4 & 15) != r->reg_pc)
		r->reg_kbase = k >> 4 & 15;
	r->nvote_disp = disp.nk ? disp.n[0] : 0;
	r->nvote_base = base.nk ? base.n[0] : 0;
}

/*
 * Distinct ~LJ_VMST_* constants stored at each DISPATCH offset, and the
 * roles three kinds of site give them (bit k: ~k stored there):
 *  - before_call: stored right before an indirect call (BC_FUNCC and
 *    BC_FUNCCW call the C function through a register or memory: the
 *    state of C code, LJ_VMST_C, Tarantool's LJ_VMST_CFUNC);
 *  - after_call: stored right after that call returns (LJ_VMST_INTERP);
 *  - after_load: stored right after the same slot was read into a
 *    register (->vm_exit_handler reads the number of the trace that
 *    exited from G->vmstate, then sets LJ_VMST_EXIT, then hands the
 *    number to J->parent).
 */
struct vmst_seen {
	int32_t disp[32];
	uint32_t imms[32];
	uint32_t before_call[32], after_call[32], after_load[32];
	int n;
};

/* The slot index and state of `mov dword [DISPATCH + x], ~k`, or -1. */
static int vmst_note(struct vmst_seen *v, const cs_x86 *x, unsigned int dreg,
		     int *k)
{
	int32_t disp = 0;
	int64_t imm;
	int i;

	if (x->op_count != 2 || x->operands[0].size != 4 ||
	    x->operands[1].type != X86_OP_IMM ||
	    luw_decode_mem_base(&x->operands[0], &disp) != (int)dreg)
		return -1;
	imm = x->operands[1].imm;
	if ((int32_t)imm >= 0 || (int32_t)imm < -16)
		return -1;
	for (i = 0; i < v->n && v->disp[i] != disp; i++)
		;
	if (i == v->n) {
		if (v->n == 32)
			return -1;
		v->disp[v->n++] = disp;
		v->imms[i] = v->before_call[i] = 0;
		v->after_call[i] = v->after_load[i] = 0;
	}
	*k = ~(int32_t)imm;
	v->imms[i] |= 1u << *k;
	return i;
}

/* The one bit set in m, or LUW_LJR_NONE when none or several. */
static int one_bit(uint32_t m)
{
	return m && !(m & (m - 1)) ? __builtin_ctz(m) : LUW_LJR_NONE;
}

/* One value seen at several sites: kept while they agree. */
static void agree(int32_t v, int32_t *out, int *have)
{
	if (*have == 0) {
		*out = v;
		*have = 1;
	} else if (*have > 0 && *out != v) {
		*have = -1;
	}
}

/*
 * The DISPATCH-relative facts of target/recover.h: the vmstate slot (and
 * each state's role), J->trace, jit_base and tmpbuf.L (BASE and the
 * saved L, stored within a few instructions of a J->trace[idx] load), and
 * lea ARG1, [DISPATCH + disp] followed by a call with ARG1 untouched.
 */
void luw_recover_vm_dispatch(csh h, const uint8_t *code, size_t len,
			     uint64_t addr, unsigned int dreg,
			     unsigned int breg, struct luw_recover_result *r)
{
	int window = 0, hjb = 0, htl = 0, jbset = 0, tlset = 0;
	uint32_t savel = 0;	/* registers holding SAVE_L */
	cs_insn *in = cs_malloc(h);
	int32_t pending = 0;
	int have = 0, age = 0, i, best = 0, jreg = -1, jn = 0;
	struct vmst_seen vs = { .n = 0 };
	int32_t jdisp = 0, jfirst = 0, d, ld_disp = 0;
	/* instruction counts of the last state store, slot load, call */
	long sites = 0, st_at = -100, ld_at = -100, call_at = -100;
	int si, sk, st_i = 0, st_k = 0, got;

	while (in && (got = luw_decode_sweep(h, &code, &len, &addr, in)) >= 0) {
		const cs_x86 *x;
		int32_t disp;

		if (!got) {
			/* Not code (alignment, data): resume a byte later. */
			have = 0;
			continue;
		}
		x = &in->detail->x86;
		sites++;
		if (in->id == X86_INS_MOV &&
		    (si = vmst_note(&vs, x, dreg, &sk)) >= 0) {
			if (sites - ld_at <= 2 && ld_disp == vs.disp[si])
				vs.after_load[si] |= 1u << sk;
			if (sites - call_at <= 4)
				vs.after_call[si] |= 1u << sk;
			st_at = sites;
			st_i = si;
			st_k = sk;
		} else if (in->id == X86_INS_MOV && x->op_count == 2 &&
			   x->operands[0].type == X86_OP_REG &&
			   x->operands[0].size == 4 &&
			   luw_decode_mem_base(&x->operands[1], &d) == (int)dreg) {
			ld_at = sites;
			ld_disp = d;
		} else if (in->id == X86_INS_CALL && x->op_count == 1 &&
			   (x->operands[0].type == X86_OP_REG ||
			    (x->operands[0].type == X86_OP_MEM &&
			     x->operands[0].mem.base != X86_REG_RIP))) {
			if (sites - st_at <= 3)
				vs.before_call[st_i] |= 1u << st_k;
			call_at = sites;
		}
		/* J->trace[idx]: an indexed load from what DISPATCH+x held. */
		if (jreg >= 0 && x->op_count == 2 &&
		    x->operands[1].type == X86_OP_MEM &&
		    luw_decode_reg(x->operands[1].mem.base) == jreg &&
		    x->operands[1].mem.index != X86_REG_INVALID &&
		    x->operands[1].mem.scale == r->ref_size &&
		    x->operands[1].mem.disp == 0) {
			if (!jn++)
				jfirst = jdisp;
			else if (jdisp != jfirst)
				jn = -1000;	/* two candidates: decide nothing */
			window = 12;
			savel = 0;
			jbset = tlset = 0;
		} else if (window > 0) {
			int32_t d2;
			int rr;

			window--;
			if (in->id == X86_INS_MOV && x->op_count == 2 &&
			    x->operands[0].type == X86_OP_REG &&
			    x->operands[1].type == X86_OP_MEM &&
			    luw_decode_reg(x->operands[1].mem.base) == 7 &&
			    (rr = luw_decode_reg(x->operands[0].reg)) >= 0) {
				savel |= 1u << rr;
			} else if (in->id == X86_INS_MOV && x->op_count == 2 &&
				   x->operands[1].type == X86_OP_REG &&
				   luw_decode_mem_base(&x->operands[0], &d2) == (int)dreg &&
				   (rr = luw_decode_reg(x->operands[1].reg)) >= 0) {
				if (rr == (int)breg && !jbset) {
					agree(d2, &r->jitbase_disp, &hjb);
					jbset = 1;
				} else if ((savel & (1u << rr)) && !tlset) {
					agree(d2, &r->tmpbufl_disp, &htl);
					tlset = 1;
				}
			} else if (in->id == X86_INS_JMP || in->id == X86_INS_CALL) {
				window = 0;
			}
		}
		jreg = -1;
		if (in->id == X86_INS_MOV && x->op_count == 2 &&
		    x->operands[0].type == X86_OP_REG &&
		    (x->operands[0].size == 8 ||
		     x->operands[0].size == r->ref_size) &&
		    luw_decode_mem_base(&x->operands[1], &jdisp) == (int)dreg)
			jreg = luw_decode_reg(x->operands[0].reg);
		if (in->id == X86_INS_LEA && x->op_count == 2 &&
		    luw_decode_reg(x->operands[0].reg) == 5 &&
		    luw_decode_mem_base(&x->operands[1], &disp) == (int)dreg) {
			pending = disp;
			have = 1;
			age = 0;
			continue;
		}
		if (!have)
			continue;
		if (in->id == X86_INS_CALL) {
			for (i = 0; i < r->ndisp && r->disp[i] != pending; i++)
				;
			if (i == r->ndisp && r->ndisp < LUW_LJR_MAX_DISP)
				r->disp[r->ndisp++] = pending;
			if (i < r->ndisp)
				r->disp_count[i]++;
			have = 0;
		} else if (++age > 8 || (x->op_count > 0 &&
					 x->operands[0].type == X86_OP_REG &&
					 luw_decode_reg(x->operands[0].reg) == 5 &&
					 luw_decode_writes_op0(in))) {
			have = 0;
		}
	}
	if (in)
		cs_free(in, 1);
	/* The offset that took the most states; a tie decides nothing. */
	for (i = 0; i < vs.n; i++) {
		int k = __builtin_popcount(vs.imms[i]);

		if (k > best) {
			best = k;
			r->vmstate_disp = vs.disp[i];
			r->have_vmstate = 1;
			r->vmst_c = one_bit(vs.before_call[i]);
			r->vmst_interp = one_bit(vs.after_call[i]);
			r->vmst_exit = one_bit(vs.after_load[i]);
		} else if (k == best) {
			r->have_vmstate = 0;
		}
	}
	if (best < 2)
		r->have_vmstate = 0;
	if (!r->have_vmstate)
		r->vmst_c = r->vmst_interp = r->vmst_exit = LUW_LJR_NONE;
	if (jn > 0) {
		r->jtrace_disp = jfirst;
		r->have_jtrace = 1;
	}
	r->have_jitbase = hjb > 0;
	r->have_tmpbufl = htl > 0;
}

