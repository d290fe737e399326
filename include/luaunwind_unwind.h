/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * luaunwind compact unwind tables (x86-64): the format.
 *
 * Userspace turns the .eh_frame of every mapped ELF file into one table
 * (userspace/lib/unwind/cfi.c, with libdw) and hands it to whoever
 * unwinds: the kernel module (uploaded per mapping) or
 * luaunwind-hostunwind (ptrace).
 * The table answers, for any code byte of the file, how to get from a
 * frame's registers (ip, sp, bp) to its caller's.  rsp and rbp are
 * tracked in every entry: on x86-64 every CFA rule gcc, clang and LuaJIT's
 * DynASM VM emit in practice is "rsp + N" or "rbp + N" -- or, in a
 * function gcc realigns through a DRAP register (lea r10,[rsp+8]; and
 * rsp,-A; push [r10-8]; push rbp; mov rbp,rsp; ...; push r10), the DRAP
 * value that function saved: "*(rbp + N)" -- the return address always
 * sits at CFA - 8 and rbp is the only callee-saved register a CFA rule
 * ever uses.  r14 has rows of its own (r14-row below): LuaJIT keeps
 * its DISPATCH pointer there in the interpreter and, in GC64 builds, in
 * JIT traces, so a walker that recovers r14 through the C frames a trace
 * called (the GC: lj_gc_step_jit) learns which global_State the trace
 * runs in.  Most code leaves r14 alone, so its rules change far less often
 * than the CFA's: a separate run-length list costs a fraction of a column.
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
 * table          := header entry* r14-row*
 * header         := magic version hdr-size entry-size flags nentries
 *                   text-lo text-hi build-id-len pad build-id
 *                   r14-size nr14
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
 * r14-size       := <U32: sizeof(struct luw_uw_r14)>
 * nr14           := <U32: number of r14-rows after the entries, >= 0>
 *
 * entry          := start cfa-off aux ra-off rule
 * start          := <U32: first file offset covered; an entry covers
 *                    [start, next entry's start); starts strictly increase>
 * cfa-off        := <S32: the offset N of the CFA rule>
 * aux            := <S16: RBP_CFA: caller's rbp is saved at CFA + aux;
 *                    RBP_RBP: caller's rbp is saved at rbp + aux;
 *                    CFA_PLT: the threshold T below; otherwise 0>
 * ra-off         := <S8: the return address is saved at CFA + ra-off>
 * rule           := <U8: cfa-rule | rbp-rule << 4 | syscall << 6 |
 *                    vmseq << 7; bit 3 is zero>
 *
 * cfa-rule       := NONE   no CFI covers these bytes: try frame pointers
 *                 | RSP    CFA = rsp + N
 *                 | RBP    CFA = rbp + N
 *                 | DEREF_RBP
 *                          CFA = the 8 bytes at rbp + N (DWARF: breg6 N;
 *                          deref), a realigned frame's saved DRAP
 *                 | DEREF_RSP
 *                          CFA = the 8 bytes at rsp + N (breg7 N; deref)
 *                 | PLT    CFA = rsp + N + ((pc & 15) >= T ? 8 : 0), the
 *                          rule every .plt section's CFI expresses with a
 *                          DWARF expression (pushq then jmp per 16 bytes)
 *                 | END    the return address is undefined: this is the
 *                          outermost frame (_start, a thread's clone)
 *                 | UNSUP  CFI exists but is not expressible here (any
 *                          other DWARF expression, a CFA in another
 *                          register such as a realigning prologue's r10, a
 *                          signal trampoline): stop, or try frame pointers
 *                          -- whose sp is then a guess (kmod/uwtable.h)
 * rbp-rule       := SAME   the caller's rbp is this frame's rbp
 *                 | CFA    the caller's rbp is saved at CFA + aux
 *                 | UNDEF  the caller's rbp cannot be recovered
 *                 | RBP    the caller's rbp is saved at rbp + aux, this
 *                          frame's rbp (DWARF: DW_CFA_expression r6:
 *                          breg6 aux): a realigned frame, whose padding
 *                          puts that slot at no fixed offset from the CFA.
 *                          The builder gives it only beside a CFA rule
 *                          from rbp (RBP, DEREF_RBP): gcc keeps the
 *                          DWARF rule at the ret, where rbp is already
 *                          the caller's
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
 *                          machine code (userspace/lib/luajit/vmseq.c).
 *                          The frame is the VM entry's own, not the
 *                          interpreter's C frame: a walker steps it like
 *                          any C frame and does not look for Lua frames
 *                          in it.
 * syscall        := 0
 *                 | 1      these bytes follow a `syscall` instruction that
 *                          ends an FDE, in a function that has not moved
 *                          rsp since its entry (the FDE's last row is
 *                          CFA = rsp + 8): glibc's clone and clone3 end
 *                          their CFI there, because the child returns on
 *                          another stack.  The rule (that entry rule) is
 *                          true only for the thread that made the call,
 *                          inside it or back from it -- the parent,
 *                          whose rsp is the caller's --, which a walker
 *                          knows from the registers the kernel saved at
 *                          the syscall's entry: a call number in orig_ax
 *                          and not the clone child's 0 in ax
 *                          (kmod/uwtable.h, LUW_UW_R_SYSCALL); for any
 *                          other thread at that pc the bytes are NONE
 *
 * The last entry is always a NONE entry at text-hi, so every lookup past
 * the described text falls into NONE.
 *
 * DEREF_RBP, DEREF_RSP and RBP_RBP came after version 3 was released and
 * did not change it: they are values no version-3 checker accepted
 * (kmod/uwtable.c refuses any rule value above the MAX it knows), so a
 * module that predates them refuses a table using them as a whole rather
 * than misreading it, and a table without them means what it always did.
 * A version bump would only make the newer module refuse older tables.
 *
 * r14-row        := r14-start r14-off r14-rule pad
 * r14-start      := <U32: first file offset covered; a row covers
 *                    [r14-start, next row's r14-start) or, for the last
 *                    one, up to text-hi; starts strictly increase and the
 *                    first is text-lo>
 * r14-off        := <S16: CFA: the caller's r14 is saved at CFA + r14-off;
 *                    otherwise 0>
 * r14-rule       := <U8: SAME | CFA | UNDEF, as rbp-rule>
 * pad            := <U8: zero>
 *
 * An r14 row means something only where the entry covering the same byte
 * has a CFA rule (RSP, RBP, PLT, DEREF_RBP, DEREF_RSP): a frame stepped
 * by frame pointers (NONE, UNSUP) or a vmseq row leaves r14 unknown, so
 * the builder merges a row across such bytes and across gaps rather than
 * splitting it.  nr14 == 0: r14 is unknown everywhere.
 *
 * How the table is used per frame -- the lookup, the step and their
 * sanity checks -- is kmod/uwtable.h's to say: the module and userspace
 * compile that one implementation.
 */
#ifndef _LUAUNWIND_UNWIND_H
#define _LUAUNWIND_UNWIND_H

#include <linux/types.h>

#define LUW_UW_MAGIC		0x5755554cU	/* "LUUW" little-endian */
#define LUW_UW_VERSION		3
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
#define LUW_UW_CFA_DEREF_RBP	6
#define LUW_UW_CFA_DEREF_RSP	7
#define LUW_UW_CFA_MAX		LUW_UW_CFA_DEREF_RSP

/* rbp rules (high nibble of entry.rule). */
#define LUW_UW_RBP_SAME		0
#define LUW_UW_RBP_CFA		1
#define LUW_UW_RBP_UNDEF	2
#define LUW_UW_RBP_RBP		3
#define LUW_UW_RBP_MAX		LUW_UW_RBP_RBP

/* rule bit 7: a LuaJIT VM entry/exit sequence row (vmseq above). */
#define LUW_UW_VMSEQ		0x80
/* rule bit 6: true only for the caller of the system call before it. */
#define LUW_UW_SYSCALL		0x40
/* Bits of rule no version defines: a table using them is refused. */
#define LUW_UW_RULE_RSVD	0x08

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
	__u32 r14_size;
	__u32 nr14;
};

/* r14 rules (luw_uw_r14.rule): the values of the rbp rules. */
#define LUW_UW_R14_SAME		0
#define LUW_UW_R14_CFA		1
#define LUW_UW_R14_UNDEF	2
#define LUW_UW_R14_MAX		LUW_UW_R14_UNDEF

struct luw_uw_entry {
	__u32 start;
	__s32 cfa_off;
	__s16 aux;
	__s8 ra_off;
	__u8 rule;
};

struct luw_uw_r14 {
	__u32 start;
	__s16 off;
	__u8 rule;
	__u8 pad;
};

#endif /* _LUAUNWIND_UNWIND_H */
