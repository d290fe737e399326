/*
 * decode: x86-64 instructions and the code of an ELF file, as the readers
 * of LuaJIT's machine code (target/recover*.c, x86/flow.c) ask for them;
 * see decode.h.  Here so that every reader names registers, operands and
 * code the same way.
 */
#include "x86/decode.h"

#include <gelf.h>

#include "elf/elf.h"

const int luw_decode_clobbered[LUW_DECODE_NCLOBBERED] = {
	0, 1, 2, 4, 5, 8, 9, 10, 11
};

int luw_decode_open(csh *h)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -1;
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

int luw_decode_reg(x86_reg r)
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

int luw_decode_reg_op(const cs_x86 *x, int i)
{
	return x->op_count > i && x->operands[i].type == X86_OP_REG ?
	       luw_decode_reg(x->operands[i].reg) : -1;
}

int luw_decode_mem_base(const cs_x86_op *o, int32_t *disp)
{
	if (o->type != X86_OP_MEM || o->mem.index != X86_REG_INVALID ||
	    o->mem.segment != X86_REG_INVALID)
		return -1;
	*disp = (int32_t)o->mem.disp;
	return luw_decode_reg(o->mem.base);
}

int luw_decode_is_mov(const cs_insn *in)
{
	switch (in->id) {
	case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSXD:
	case X86_INS_MOVABS:
		return 1;
	default:
		return 0;
	}
}

int luw_decode_writes_op0(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_PUSH:
		return 0;
	default:
		return x->op_count > 0 && x->operands[0].type == X86_OP_REG;
	}
}

uint64_t luw_decode_branch_target(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if ((in->id != X86_INS_CALL && in->id != X86_INS_JMP) ||
	    x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return 0;
	return (uint64_t)x->operands[0].imm;
}

uint64_t luw_decode_address(const cs_insn *in, int *reg)
{
	const cs_x86 *x = &in->detail->x86;

	/* Not PIC: an absolute address as an immediate. */
	if (in->id == X86_INS_MOV && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_IMM && x->operands[1].imm > 0) {
		*reg = luw_decode_reg(x->operands[0].reg);
		return (uint64_t)x->operands[1].imm;
	}
	if (in->id != X86_INS_LEA || x->op_count != 2 ||
	    x->operands[0].type != X86_OP_REG ||
	    x->operands[1].type != X86_OP_MEM ||
	    x->operands[1].mem.base != X86_REG_RIP ||
	    x->operands[1].mem.index != X86_REG_INVALID)
		return 0;
	*reg = luw_decode_reg(x->operands[0].reg);
	return in->address + in->size + (uint64_t)x->operands[1].mem.disp;
}

const uint8_t *luw_decode_code(Elf *elf, uint64_t addr, uint64_t n,
			       size_t *len)
{
	const uint8_t *code = luw_elf_bytes_at(elf, addr, 1, SHF_EXECINSTR, len);

	if (code && *len > n)
		*len = n;
	return code;
}

int luw_decode_at(const struct luw_decode_file *f, uint64_t *addr,
		  cs_insn *in)
{
	size_t len;
	const uint8_t *code = luw_decode_code(f->elf, *addr, UINT64_MAX, &len);

	return code && cs_disasm_iter(f->h, &code, &len, addr, in);
}

int luw_decode_sweep(csh h, const uint8_t **code, size_t *len,
		     uint64_t *addr, cs_insn *in)
{
	if (!*len)
		return -1;
	if (cs_disasm_iter(h, code, len, addr, in))
		return 1;
	(*code)++;
	(*len)--;
	(*addr)++;
	return 0;
}

/*
 * The distinct addresses the instructions of [a, a + n) put into a
 * register (luw_decode_address; into want_reg, or any register for an FDE
 * start) or, with branches set, call or jump to directly (FDE starts), up
 * to max.
 */
static int code_targets(const struct luw_decode_file *f, uint64_t a,
			uint64_t n, int branches, int want_reg, uint64_t *out,
			int max)
{
	const uint8_t *code;
	size_t len;
	cs_insn *in = cs_malloc(f->h);
	int k = 0, i, reg = -1;

	if (!in || !(code = luw_decode_code(f->elf, a, n, &len))) {
		if (in)
			cs_free(in, 1);
		return 0;
	}
	while (k < max && cs_disasm_iter(f->h, &code, &len, &a, in)) {
		uint64_t t = branches ? luw_decode_branch_target(in) :
			     luw_decode_address(in, &reg);

		if (!t || (!branches && want_reg >= 0 && reg != want_reg) ||
		    ((branches || want_reg < 0) && !luw_ehframe_end(f->fdes, t)))
			continue;
		for (i = 0; i < k && out[i] != t; i++)
			;
		if (i == k)
			out[k++] = t;
	}
	cs_free(in, 1);
	return k;
}

int luw_decode_addresses(const struct luw_decode_file *f, uint64_t a,
			 uint64_t n, int want_reg, uint64_t *out, int max)
{
	return code_targets(f, a, n, 0, want_reg, out, max);
}

int luw_decode_callees(const struct luw_decode_file *f, uint64_t a,
		       uint64_t n, uint64_t *out, int max)
{
	return code_targets(f, a, n, 1, -1, out, max);
}
