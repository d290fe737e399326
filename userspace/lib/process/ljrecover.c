/*
 * ljrecover: layout fields from machine code.  See ljrecover.h.
 */
#include "process/ljrecover.h"

#include <capstone/capstone.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "process/elf_symbols.h"

/* x86 register (any width) -> DWARF number 0..15, or -1. */
static int canon(x86_reg r)
{
	static const x86_reg fam[16][4] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL },
		{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL },
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL },
		{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL },
		{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B },
		{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B },
	};
	int i, j;

	for (i = 0; i < 16; i++)
		for (j = 0; j < 4; j++)
			if (fam[i][j] == r)
				return i;
	return -1;
}

/* What a register holds, as far as the analysis knows. */
enum val { V_UNK, V_L, V_G, V_ML, V_ZERO, V_LOADL };

struct regs {
	enum val v[16];
	int32_t disp[16];	/* V_LOADL: the offset loaded from L */
};

static const int caller_saved[] = { 0, 1, 2, 4, 5, 8, 9, 10, 11 };

static void clobber_call(struct regs *s)
{
	size_t i;

	for (i = 0; i < sizeof(caller_saved) / sizeof(caller_saved[0]); i++)
		s->v[caller_saved[i]] = V_UNK;
}

/* The bytes of `len` at link-time address `addr`, from its section. */
static const uint8_t *code_at(Elf *elf, uint64_t addr, size_t *len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr >= sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return NULL;
		*len = sh.sh_addr + sh.sh_size - addr;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

/* A memory operand [reg + disp] without index: the register, else -1. */
static int mem_base(const cs_x86_op *o, int32_t *disp)
{
	if (o->type != X86_OP_MEM || o->mem.index != X86_REG_INVALID ||
	    o->mem.segment != X86_REG_INVALID)
		return -1;
	*disp = (int32_t)o->mem.disp;
	return canon(o->mem.base);
}

/* Does the instruction write register r (its first operand)? */
static int writes_op0(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_PUSH:
		return 0;
	default:
		return x->op_count > 0 && x->operands[0].type == X86_OP_REG;
	}
}

static void set_once(int *f, int v)
{
	if (*f == LUW_LJR_NONE)
		*f = v;
}

/* One function, straight-line from its entry to the first ret. */
static void analyse(csh h, const uint8_t *code, size_t len, uint64_t addr,
		    struct luw_ljr_result *r, int gettop)
{
	cs_insn *in = cs_malloc(h);
	struct regs s;
	int n = 0;

	memset(&s, 0, sizeof(s));
	s.v[5] = V_L;	/* rdi: the lua_State * argument */
	while (in && n++ < 200 && cs_disasm_iter(h, &code, &len, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
		int d = x->op_count > 0 && o0->type == X86_OP_REG ?
			canon(o0->reg) : -1, b;
		int32_t disp;

		if (in->id == X86_INS_RET || in->id == X86_INS_JMP)
			break;
		if (in->id == X86_INS_CALL) {
			clobber_call(&s);
			continue;
		}
		if (in->id == X86_INS_MOV && d >= 0 && x->op_count == 2 &&
		    (b = mem_base(o1, &disp)) >= 0) {
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
		    s.v[d] == V_LOADL && (b = mem_base(o1, &disp)) >= 0 &&
		    s.v[b] == V_L) {
			/* top - base */
			r->l_top = s.disp[d];
			r->l_base = disp;
			break;
		}
		if (in->id == X86_INS_MOV && x->op_count == 2 &&
		    (b = mem_base(o0, &disp)) >= 0 &&
		    ((o1->type == X86_OP_IMM && o1->imm == 0) ||
		     (o1->type == X86_OP_REG && canon(o1->reg) >= 0 &&
		      s.v[canon(o1->reg)] == V_ZERO))) {
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
		    canon(o1->reg) >= 0) {
			s.v[d] = s.v[canon(o1->reg)];
			s.disp[d] = s.disp[canon(o1->reg)];
			continue;
		}
		if (in->id == X86_INS_XOR && d >= 0 && o1->type == X86_OP_REG &&
		    canon(o1->reg) == d) {
			s.v[d] = V_ZERO;
			continue;
		}
		if (d >= 0 && writes_op0(in))
			s.v[d] = V_UNK;
	}
	if (in)
		cs_free(in, 1);
}

/* Distinct ~LJ_VMST_* constants stored at each DISPATCH offset. */
struct vmst_seen {
	int32_t disp[32];
	uint32_t imms[32];	/* bit k: ~k stored */
	int n;
};

static void vmst_note(struct vmst_seen *v, const cs_x86 *x, unsigned int dreg)
{
	int32_t disp;
	int64_t imm;
	int i;

	if (x->op_count != 2 || x->operands[0].size != 4 ||
	    x->operands[1].type != X86_OP_IMM ||
	    mem_base(&x->operands[0], &disp) != (int)dreg)
		return;
	imm = x->operands[1].imm;
	if ((int32_t)imm >= 0 || (int32_t)imm < -16)
		return;
	for (i = 0; i < v->n && v->disp[i] != disp; i++)
		;
	if (i == v->n) {
		if (v->n == 32)
			return;
		v->disp[v->n++] = disp;
		v->imms[i] = 0;
	}
	v->imms[i] |= 1u << (~(int32_t)imm);
}

/* lea ARG1, [DISPATCH + disp] followed by a call with ARG1 untouched. */
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

static void vm_leas(csh h, const uint8_t *code, size_t len, uint64_t addr,
		    unsigned int dreg, unsigned int breg, struct luw_ljr_result *r)
{
	int window = 0, hjb = 0, htl = 0, jbset = 0, tlset = 0;
	uint32_t savel = 0;	/* registers holding SAVE_L */
	cs_insn *in = cs_malloc(h);
	int32_t pending = 0;
	int have = 0, age = 0, i, best = 0, jreg = -1, jn = 0;
	struct vmst_seen vs = { .n = 0 };
	int32_t jdisp = 0, jfirst = 0;

	while (in && len) {
		const cs_x86 *x;
		int32_t disp;

		if (!cs_disasm_iter(h, &code, &len, &addr, in)) {
			/* Not code (alignment, data): resume a byte later. */
			code++;
			len--;
			addr++;
			have = 0;
			continue;
		}
		x = &in->detail->x86;
		if (in->id == X86_INS_MOV)
			vmst_note(&vs, x, dreg);
		/* J->trace[idx]: an indexed load from what DISPATCH+x held. */
		if (jreg >= 0 && x->op_count == 2 &&
		    x->operands[1].type == X86_OP_MEM &&
		    canon(x->operands[1].mem.base) == jreg &&
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
			    canon(x->operands[1].mem.base) == 7 &&
			    (rr = canon(x->operands[0].reg)) >= 0) {
				savel |= 1u << rr;
			} else if (in->id == X86_INS_MOV && x->op_count == 2 &&
				   x->operands[1].type == X86_OP_REG &&
				   mem_base(&x->operands[0], &d2) == (int)dreg &&
				   (rr = canon(x->operands[1].reg)) >= 0) {
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
		    mem_base(&x->operands[1], &jdisp) == (int)dreg)
			jreg = canon(x->operands[0].reg);
		if (in->id == X86_INS_LEA && x->op_count == 2 &&
		    canon(x->operands[0].reg) == 5 &&
		    mem_base(&x->operands[1], &disp) == (int)dreg) {
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
					 canon(x->operands[0].reg) == 5 &&
					 writes_op0(in))) {
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
		} else if (k == best) {
			r->have_vmstate = 0;
		}
	}
	if (best < 2)
		r->have_vmstate = 0;
	if (jn > 0) {
		r->jtrace_disp = jfirst;
		r->have_jtrace = 1;
	}
	r->have_jitbase = hjb > 0;
	r->have_tmpbufl = htl > 0;
}

int luw_ljr_recover(Elf *elf, uint64_t vm_start, uint64_t vm_end,
		unsigned int dispatch_reg, unsigned int base_reg,
		struct luw_ljr_result *r, char *why, size_t n)
{
	uint64_t a;
	const uint8_t *code;
	size_t len;
	csh h;

	memset(r, 0, sizeof(*r));
	r->ref_size = r->l_glref = r->g_mainthref = r->g_cur_l = LUW_LJR_NONE;
	r->l_stack = r->l_status = r->l_cframe = r->l_top = r->l_base = LUW_LJR_NONE;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		snprintf(why, n, "capstone: cannot open x86-64");
		return -1;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	if (luw_elf_symbol(elf, SHT_DYNSYM, "lua_close", 1, &a) || !(code = code_at(elf, a, &len))) {
		snprintf(why, n, "no lua_close in .dynsym");
		cs_close(&h);
		return -1;
	}
	analyse(h, code, len, a, r, 0);
	if (luw_elf_symbol(elf, SHT_DYNSYM, "lua_gettop", 1, &a) || !(code = code_at(elf, a, &len))) {
		snprintf(why, n, "no lua_gettop in .dynsym");
		cs_close(&h);
		return -1;
	}
	analyse(h, code, len, a, r, 1);
	if ((code = code_at(elf, vm_start, &len))) {
		if (len > vm_end - vm_start)
			len = vm_end - vm_start;
		vm_leas(h, code, len, vm_start, dispatch_reg, base_reg, r);
	}
	cs_close(&h);
	return 0;
}
