/*
 * decode: x86-64 machine code as capstone decodes it, and what every
 * reader of it here asks -- of an instruction: which of the sixteen
 * general registers an operand names (any width: one number for the
 * register and its sub-registers), a memory operand's base, whether its
 * first operand is written, where a branch goes; of a file's code: the
 * bytes at an address, one instruction there, a linear sweep over bytes
 * that mix code and data, the functions a stretch of code names.
 * Knows nothing of LuaJIT: target/recover*.c read LuaJIT's functions
 * with it, x86/flow.c follows their paths.
 */
#ifndef LUW_X86_DECODE_H
#define LUW_X86_DECODE_H

#include <capstone/capstone.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/ehframe.h"

/* The code of one ELF file, as the readers here take it. */
struct luw_decode_file {
	csh h;				/* luw_decode_open's */
	Elf *elf;
	const struct luw_fdes *fdes;	/* its functions' extents */
};

/* The registers a call clobbers (SysV), as luw_decode_reg numbers them. */
#define LUW_DECODE_NCLOBBERED 9
extern const int luw_decode_clobbered[LUW_DECODE_NCLOBBERED];

/* Capstone for x86-64 with operand details into *h: 0, or -1. */
int luw_decode_open(csh *h);
/* A register of any width -> its 64-bit register's DWARF number, or -1. */
int luw_decode_reg(x86_reg r);
/* Operand i of x when it is a register: luw_decode_reg of it, else -1. */
int luw_decode_reg_op(const cs_x86 *x, int i);
/* A memory operand [reg + disp] without index: the register, else -1. */
int luw_decode_mem_base(const cs_x86_op *o, int32_t *disp);
/* A mov of any kind (mov, movzx, movsxd, movabs): it leaves the flags. */
int luw_decode_is_mov(const cs_insn *in);
/* Does the instruction write register r (its first operand)? */
int luw_decode_writes_op0(const cs_insn *in);
/* The address a direct call or jmp goes to; else 0. */
uint64_t luw_decode_branch_target(const cs_insn *in);
/*
 * An address put into a register: `lea R, [rip + x]` (PIC) or `mov R,
 * imm`: the address, R in *reg; else 0.
 */
uint64_t luw_decode_address(const cs_insn *in, int *reg);

/*
 * The code at link-time address addr: the bytes of the executable section
 * holding it up to its end, at most n of them, their count in *len; NULL
 * when no section holds it.
 */
const uint8_t *luw_decode_code(Elf *elf, uint64_t addr, uint64_t n,
			       size_t *len);
/*
 * The instruction at *addr into in, *addr moved past it: 1, else 0.  Its
 * section is looked up each time, as a branch may lead anywhere.
 */
int luw_decode_at(const struct luw_decode_file *f, uint64_t *addr,
		  cs_insn *in);
/*
 * The next instruction of a linear sweep of [*code, *code + *len) at
 * link-time *addr, all three moved past it: 1; 0 when the byte there
 * starts no instruction (alignment, data), stepped over; -1 at the end.
 */
int luw_decode_sweep(csh h, const uint8_t **code, size_t *len,
		     uint64_t *addr, cs_insn *in);
/*
 * The distinct addresses the instructions of [a, a + n) put into register
 * want_reg (luw_decode_address) or, with want_reg -1, the function starts
 * (FDE starts) they put into any register; up to max of them into out.
 */
int luw_decode_addresses(const struct luw_decode_file *f, uint64_t a,
			 uint64_t n, int want_reg, uint64_t *out, int max);
/* The functions [a, a + n) calls or jumps to directly (FDE starts). */
int luw_decode_callees(const struct luw_decode_file *f, uint64_t a,
		       uint64_t n, uint64_t *out, int max);

#endif
