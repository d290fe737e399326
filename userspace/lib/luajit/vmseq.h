/*
 * The entry prologues and exit epilogues of a LuaJIT VM, from its machine
 * code (capstone).
 *
 * LuaJIT's .eh_frame describes the whole VM with one rule: CFA = rsp +
 * CFRAME_SIZE, the callee-saved registers at fixed slots below it.  That
 * holds in the interpreter's body, where the C frame is set up, but not
 * while lj_vm_call/pcall/cpcall/resume (and the FFI callback) push the
 * callee-saved registers and reserve the frame (vm_x64.dasc's saveregs),
 * nor while an exit (->vm_leave_unw, ->vm_unwind_rethrow) releases it
 * (restoreregs, then ret or a tail jmp).  This finds those sequences and
 * gives the exact rule at each of their instructions, so cfi.c can put
 * rows for them into the host unwind table.
 *
 * What counts as a sequence, over a linear sweep of the FDE's code (the
 * VM has no data between its instructions):
 *   entry  push r1 ... push rn; sub rsp, imm
 *          -- every pushed register is callee-saved, lands on the slot
 *          the FDE gives it (or on one the FDE gives no register), and
 *          after the sub the FDE's CFRAME_SIZE is reached exactly: CFA =
 *          rsp + k at the first push with k >= 8.  Every slot the FDE
 *          names is either pushed here or lies in [CFA - k, CFA) (the FFI
 *          callback: its trampoline pushed rbp before jumping in).
 *   exit   add rsp, imm; pop r1 ... pop rn; ret | jmp
 *          -- from the body rule, each pop reads its register's FDE slot,
 *          every slot the FDE names below CFA - 8 is popped, and the ret
 *          (no immediate) or jmp runs at CFA = rsp + 8.
 * The rows are worked backwards (entries) or forwards (exits) from the
 * FDE's own body rule by each instruction's effect on rsp, so they are
 * exact wherever the FDE is.  Anything else is not a sequence: the table
 * keeps the FDE's rule there, and the walker its old caution.
 */
#ifndef LUW_LUAJIT_VMSEQ_H
#define LUW_LUAJIT_VMSEQ_H

#include <stddef.h>
#include <stdint.h>

#define LUW_VMSEQ_ENTRY		1
#define LUW_VMSEQ_EXIT		2
#define LUW_VMSEQ_MAXINSN	16

/* The FDE's body: CFA = rsp + cfa; register r saved at CFA + slot[r]. */
struct luw_vmseq_fde {
	int32_t cfa;
	int32_t slot[17];	/* DWARF numbering; 0 = not saved */
};

struct luw_vmseq {
	int kind;			/* LUW_VMSEQ_* */
	unsigned int n;			/* instructions */
	uint64_t at[LUW_VMSEQ_MAXINSN + 1]; /* each one's address; at[n]: end */
	int32_t cfa[LUW_VMSEQ_MAXINSN];	/* CFA = rsp + cfa[i] before insn i */
	int32_t rbp[LUW_VMSEQ_MAXINSN];	/* rbp saved at CFA + rbp[i]; 0: in rbp */
};

struct luw_vmseqs {
	struct luw_vmseq *v;
	size_t n, cap;
	size_t insns;		/* instructions swept */
	size_t skipped;		/* bytes capstone could not decode */
};

/*
 * Find the sequences in code[0, len), mapped at address addr, whose FDE
 * body is fde.  Appends to out (sorted by address); -1 on allocation or
 * disassembler failure.
 */
int luw_vmseq_find(const uint8_t *code, size_t len, uint64_t addr,
		   const struct luw_vmseq_fde *fde, struct luw_vmseqs *out);
void luw_vmseq_free(struct luw_vmseqs *s);

#endif
