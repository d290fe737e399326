/*
 * recover_vm: what the interpreter's own code says, read by linear sweeps
 * of its FDE (see target/recover.h): its fixed registers by votes of the
 * dispatch, BASE and KBASE sites (luw_recover_vm_regs), and what it keeps
 * relative to DISPATCH -- global_State.vmstate and what each state means,
 * J->trace, jit_base and tmpbuf.L, the arguments of its calls into C
 * (luw_recover_vm_dispatch).
 */
#ifndef LUW_TARGET_RECOVER_VM_H
#define LUW_TARGET_RECOVER_VM_H

#include <stddef.h>
#include <stdint.h>

#include "target/recover.h"
#include "x86/decode.h"

/* [code, code + len) at link-time addr: the interpreter's code. */
void luw_recover_vm_regs(csh h, const uint8_t *code, size_t len,
			 uint64_t addr, struct luw_recover_result *r);
/* The same, with DISPATCH in dreg and BASE in breg (DWARF numbers). */
void luw_recover_vm_dispatch(csh h, const uint8_t *code, size_t len,
			     uint64_t addr, unsigned int dreg,
			     unsigned int breg, struct luw_recover_result *r);

#endif
