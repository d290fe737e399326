/* LuaJIT VM entry/exit sequences from machine code; see vmseq.h. */
#include "luajit/vmseq.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

#define REG_RBP 6

enum op { OP_OTHER, OP_PUSH, OP_POP, OP_SUB_RSP, OP_ADD_RSP, OP_RET, OP_JMP };

struct ins {
	uint64_t at;
	uint8_t size;
	uint8_t op;
	int8_t reg;		/* OP_PUSH/OP_POP: DWARF number */
	int64_t imm;		/* OP_SUB_RSP/OP_ADD_RSP */
};

/* A 64-bit callee-saved register (SysV) -> DWARF number, else -1. */
static int callee_saved(x86_reg r)
{
	switch (r) {
	case X86_REG_RBX: return 3;
	case X86_REG_RBP: return 6;
	case X86_REG_R12: return 12;
	case X86_REG_R13: return 13;
	case X86_REG_R14: return 14;
	case X86_REG_R15: return 15;
	default: return -1;
	}
}

/* What one instruction does to rsp, as far as the sequences care. */
static void classify(const cs_insn *in, struct ins *o)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *a = &x->operands[0], *b = &x->operands[1];

	o->op = OP_OTHER;
	o->reg = -1;
	o->imm = 0;
	switch (in->id) {
	case X86_INS_PUSH:
	case X86_INS_POP:
		if (x->op_count == 1 && a->type == X86_OP_REG && a->size == 8 &&
		    callee_saved(a->reg) >= 0) {
			o->op = in->id == X86_INS_PUSH ? OP_PUSH : OP_POP;
			o->reg = (int8_t)callee_saved(a->reg);
		}
		break;
	case X86_INS_SUB:
	case X86_INS_ADD:
		if (x->op_count == 2 && a->type == X86_OP_REG &&
		    a->reg == X86_REG_RSP && b->type == X86_OP_IMM &&
		    b->imm > 0 && b->imm < 4096 && b->imm % 8 == 0) {
			o->op = in->id == X86_INS_SUB ? OP_SUB_RSP : OP_ADD_RSP;
			o->imm = b->imm;
		}
		break;
	case X86_INS_RET:
		/* ret imm16 pops more than the return address. */
		if (x->op_count == 0)
			o->op = OP_RET;
		break;
	case X86_INS_JMP:
		o->op = OP_JMP;
		break;
	}
}

/* The register the FDE saves at CFA + s, or -1. */
static int slot_owner(const struct luw_vmseq_fde *f, int32_t s)
{
	for (int r = 0; r < 17; r++)
		if (f->slot[r] && f->slot[r] == s)
			return r;
	return -1;
}

/* Does register r going to/from CFA + s agree with the FDE? */
static int slot_ok(const struct luw_vmseq_fde *f, int r, int32_t s)
{
	if (f->slot[r])
		return f->slot[r] == s;
	return slot_owner(f, s) < 0;
}

static int push_seq(struct luw_vmseqs *out, const struct luw_vmseq *q)
{
	if (luw_grow((void **)&out->v, &out->cap, out->n + 1, sizeof(*out->v)))
		return -1;
	out->v[out->n++] = *q;
	return 0;
}

/* An entry starting at ins[i]: its length in instructions, or 0. */
static size_t entry_at(const struct ins *v, size_t n, size_t i,
		       const struct luw_vmseq_fde *f, struct luw_vmseq *q)
{
	size_t j = i, np;
	int32_t k0, rbp_slot = 0;
	unsigned int pushed = 0;

	while (j < n && v[j].op == OP_PUSH && j - i < LUW_VMSEQ_MAXINSN - 1)
		j++;
	np = j - i;
	if (!np || j >= n || v[j].op != OP_SUB_RSP)
		return 0;
	k0 = f->cfa - (int32_t)(8 * np) - (int32_t)v[j].imm;
	if (k0 < 8 || k0 % 8)
		return 0;
	for (size_t p = 0; p < np; p++) {
		int r = v[i + p].reg;
		int32_t s = -(k0 + 8 * (int32_t)p + 8);

		if ((pushed & (1u << r)) || !slot_ok(f, r, s))
			return 0;
		pushed |= 1u << r;
	}
	/* What the FDE says is saved and this does not push was before it. */
	for (int r = 0; r < 17; r++)
		if (f->slot[r] && !(pushed & (1u << r)) && r != 16 &&
		    (f->slot[r] < -k0 || f->slot[r] == -8))
			return 0;
	memset(q, 0, sizeof(*q));
	q->kind = LUW_VMSEQ_ENTRY;
	q->n = (unsigned int)np + 1;
	if (f->slot[REG_RBP] && !(pushed & (1u << REG_RBP)))
		rbp_slot = f->slot[REG_RBP];
	for (size_t p = 0; p <= np; p++) {
		q->at[p] = v[i + p].at;
		q->cfa[p] = k0 + 8 * (int32_t)p;
		q->rbp[p] = rbp_slot;
		if (p < np && v[i + p].reg == REG_RBP)
			rbp_slot = f->slot[REG_RBP] ? f->slot[REG_RBP] :
				   -(k0 + 8 * (int32_t)p + 8);
	}
	q->at[np + 1] = v[j].at + v[j].size;
	return np + 1;
}

/* An exit starting at ins[i]: its length in instructions, or 0. */
static size_t exit_at(const struct ins *v, size_t n, size_t i,
		      const struct luw_vmseq_fde *f, struct luw_vmseq *q)
{
	int32_t k;
	unsigned int popped = 0;
	size_t j;

	if (v[i].op != OP_ADD_RSP || v[i].imm >= f->cfa)
		return 0;
	k = f->cfa - (int32_t)v[i].imm;
	for (j = i + 1; j < n && v[j].op == OP_POP &&
	     j - i < LUW_VMSEQ_MAXINSN - 1; j++) {
		int r = v[j].reg;

		if ((popped & (1u << r)) || !slot_ok(f, r, -k))
			return 0;
		popped |= 1u << r;
		k -= 8;
	}
	if (j >= n || k != 8 || (v[j].op != OP_RET && v[j].op != OP_JMP))
		return 0;
	for (int r = 0; r < 16; r++)
		if (f->slot[r] && f->slot[r] < -8 && !(popped & (1u << r)))
			return 0;
	memset(q, 0, sizeof(*q));
	q->kind = LUW_VMSEQ_EXIT;
	q->n = (unsigned int)(j - i) + 1;
	k = f->cfa;
	for (size_t p = 0; p < q->n; p++) {
		const struct ins *in = &v[i + p];

		q->at[p] = in->at;
		q->cfa[p] = k;
		q->rbp[p] = (popped & (1u << REG_RBP)) ? f->slot[REG_RBP] : 0;
		if (in->op == OP_ADD_RSP)
			k -= (int32_t)in->imm;
		else if (in->op == OP_POP) {
			k -= 8;
			if (in->reg == REG_RBP)
				popped &= ~(1u << REG_RBP);
		}
	}
	q->at[q->n] = v[j].at + v[j].size;
	return q->n;
}

int luw_vmseq_find(const uint8_t *code, size_t len, uint64_t addr,
		   const struct luw_vmseq_fde *fde, struct luw_vmseqs *out)
{
	struct ins *v = NULL;
	size_t n = 0, cap = 0;
	cs_insn *in;
	csh h;
	int rc = -1;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -1;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	if (!in)
		goto out;
	while (len) {
		uint64_t at = addr;

		if (!cs_disasm_iter(h, &code, &len, &addr, in)) {
			/* Not code: step over the byte, no sequence spans it. */
			code++;
			len--;
			addr++;
			out->skipped++;
			if (luw_grow((void **)&v, &cap, n + 1, sizeof(*v)))
				goto out;
			v[n++] = (struct ins){ .at = at, .size = 1, .op = OP_OTHER,
					       .reg = -1 };
			continue;
		}
		if (luw_grow((void **)&v, &cap, n + 1, sizeof(*v)))
			goto out;
		v[n].at = at;
		v[n].size = (uint8_t)in->size;
		classify(in, &v[n]);
		n++;
	}
	out->insns += n;
	for (size_t i = 0; i < n;) {
		struct luw_vmseq q;
		size_t got = entry_at(v, n, i, fde, &q);

		if (!got)
			got = exit_at(v, n, i, fde, &q);
		if (!got) {
			i++;
			continue;
		}
		if (push_seq(out, &q))
			goto out;
		i += got;
	}
	rc = 0;
out:
	if (in)
		cs_free(in, 1);
	cs_close(&h);
	free(v);
	return rc;
}

void luw_vmseq_free(struct luw_vmseqs *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
