/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * luaunwind compact unwind tables (x86-64): the format.
 *
 * Userspace turns the .eh_frame of every mapped ELF file into one table
 * (userspace/lib/process/cfi.c, with libdw) and hands it to whoever unwinds: the
 * kernel module (uploaded per mapping) or luaunwind-hostunwind (ptrace).
 * The table answers, for any code byte of the file, how to get from a
 * frame's registers (ip, sp, bp) to its caller's.  Only rsp and rbp are
 * tracked: on x86-64 every CFA rule gcc, clang and LuaJIT's DynASM VM emit
 * in practice is "rsp + N" or "rbp + N", the return address always sits at
 * CFA - 8 and rbp is the only callee-saved register a CFA rule ever uses.
 *
 * PCs are keyed by FILE OFFSET, not by virtual address, so one table serves
 * every process that maps the file, whatever its load address:
 *
 *   rel = pc - vma_start + vma_file_offset   (kmod/uwtable.h: luw_uw_rel())
 *
 * where vma_file_offset is vm_pgoff << PAGE_SHIFT in the kernel, or the
 * third column of /proc/PID/maps.
 *
 * Format (all fields little-endian, as laid out by the structs below):
 *
 * table          := header entry*
 * header         := magic version hdr-size entry-size flags nentries
 *                   text-lo text-hi build-id-len pad build-id
 * magic          := <U32: 0x5755554c, "LUUW" in memory>
 * version        := <U16: LUW_UW_VERSION>
 * hdr-size       := <U16: sizeof(struct luw_uw_hdr)>
 * entry-size     := <U16: sizeof(struct luw_uw_entry)>
 * flags          := <U16: LUW_UW_F_* bits; unknown bits are refused>
 * nentries       := <U32: number of entries that follow, >= 1>
 * text-lo        := <U32: lowest file offset any entry describes>
 * text-hi        := <U32: end of the last described range (the start of
 *                    the terminating NONE entry)>
 * build-id-len   := <U8: 0..20, bytes used in build-id>
 * pad            := <U8 x 3: zero>
 * build-id       := <U8 x 20: GNU build-id of the file, zero padded>
 *
 * entry          := start cfa-off aux ra-off rule
 * start          := <U32: first file offset covered; an entry covers
 *                    [start, next entry's start); starts strictly increase>
 * cfa-off        := <S32: the offset N of the CFA rule>
 * aux            := <S16: RBP_CFA: caller's rbp is saved at CFA + aux;
 *                    CFA_PLT: the threshold T below; otherwise 0>
 * ra-off         := <S8: the return address is saved at CFA + ra-off>
 * rule           := <U8: cfa-rule | rbp-rule << 4 | vmseq << 7; bits 3
 *                    and 6 are zero>
 *
 * cfa-rule       := NONE   no CFI covers these bytes: try frame pointers
 *                 | RSP    CFA = rsp + N
 *                 | RBP    CFA = rbp + N
 *                 | PLT    CFA = rsp + N + ((pc & 15) >= T ? 8 : 0), the
 *                          rule every .plt section's CFI expresses with a
 *                          DWARF expression (pushq then jmp per 16 bytes)
 *                 | END    the return address is undefined: this is the
 *                          outermost frame (_start, a thread's clone)
 *                 | UNSUP  CFI exists but is not expressible here (a
 *                          DWARF expression, a CFA in another register, a
 *                          signal trampoline): stop, or try frame pointers
 * rbp-rule       := SAME   the caller's rbp is this frame's rbp
 *                 | CFA    the caller's rbp is saved at CFA + aux
 *                 | UNDEF  the caller's rbp cannot be recovered
 * vmseq          := 0
 *                 | 1      these bytes are a LuaJIT VM entry's prologue
 *                          (lj_vm_call/pcall/cpcall/resume, the FFI
 *                          callback: the callee-saved pushes and the
 *                          sub that reserves the C frame) or an exit's
 *                          epilogue (the add, the pops, the ret or tail
 *                          jmp).  The VM's FDE says CFA = rsp +
 *                          CFRAME_SIZE for all of its code, true only
 *                          once the C frame is set up; these rows are
 *                          exact per instruction, worked out from the
 *                          machine code (userspace/lib/process/vmseq.c).
 *                          The frame is the VM entry's own, not the
 *                          interpreter's C frame: a walker steps it like
 *                          any C frame and does not look for Lua frames
 *                          in it.
 *
 * The last entry is always a NONE entry at text-hi, so every lookup past
 * the described text falls into NONE.
 *
 * How the table is used per frame -- the lookup, the step and their
 * sanity checks -- is kmod/uwtable.h's to say: the module and userspace
 * compile that one implementation.
 */
#ifndef _LUAUNWIND_UNWIND_H
#define _LUAUNWIND_UNWIND_H

#include <linux/types.h>

#define LUW_UW_MAGIC		0x5755554cU	/* "LUUW" little-endian */
#define LUW_UW_VERSION		2
#define LUW_UW_BUILD_ID_MAX	20

/* Header flags. */
#define LUW_UW_F_BUILD_ID	0x0001	/* build-id[] is valid */
#define LUW_UW_F_ALL		LUW_UW_F_BUILD_ID

/* CFA rules (low nibble of entry.rule). */
#define LUW_UW_CFA_NONE		0
#define LUW_UW_CFA_RSP		1
#define LUW_UW_CFA_RBP		2
#define LUW_UW_CFA_PLT		3
#define LUW_UW_CFA_END		4
#define LUW_UW_CFA_UNSUP	5
#define LUW_UW_CFA_MAX		LUW_UW_CFA_UNSUP

/* rbp rules (high nibble of entry.rule). */
#define LUW_UW_RBP_SAME		0
#define LUW_UW_RBP_CFA		1
#define LUW_UW_RBP_UNDEF	2
#define LUW_UW_RBP_MAX		LUW_UW_RBP_UNDEF

/* rule bit 7: a LuaJIT VM entry/exit sequence row (vmseq above). */
#define LUW_UW_VMSEQ		0x80
/* Bits of rule no version defines: a table using them is refused. */
#define LUW_UW_RULE_RSVD	0x48

#define LUW_UW_RULE(cfa, rbp)	((__u8)((cfa) | ((rbp) << 4)))
#define LUW_UW_CFA_OF(rule)	((rule) & 0x0f)
#define LUW_UW_RBP_OF(rule)	(((rule) >> 4) & 0x03)

struct luw_uw_hdr {
	__u32 magic;
	__u16 version;
	__u16 hdr_size;
	__u16 entry_size;
	__u16 flags;
	__u32 nentries;
	__u32 text_lo;
	__u32 text_hi;
	__u8 build_id_len;
	__u8 pad[3];
	__u8 build_id[LUW_UW_BUILD_ID_MAX];
};

struct luw_uw_entry {
	__u32 start;
	__s32 cfa_off;
	__s16 aux;
	__s8 ra_off;
	__u8 rule;
};

#endif /* _LUAUNWIND_UNWIND_H */
