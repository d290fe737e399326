/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * luaunwind: the LuaJIT layout descriptor.
 *
 * LuaJIT keeps everything a profiler needs (VM state, current thread, Lua
 * frames, prototypes, traces) in private structs whose offsets change with
 * the build: GC64 or 32-bit references, OpenResty's and Tarantool's forks
 * add fields.  Userspace works the layout of one target binary out (DWARF
 * via libdw when the binary has it, otherwise a table of layouts computed
 * from the exact sources and keyed by build-id), validates it against the
 * live process and hands it to the walker (kmod/ljwalk.h) -- in the
 * kernel through the attach ioctl, in userspace directly.  The walker trusts
 * nothing in it beyond bounds: a wrong descriptor gives truncated walks,
 * never a crash, but userspace must refuse one that does not validate.
 *
 * Wire format: the struct below, native endian, exactly `size` bytes.
 *
 *   layout   := size:u32 version:u32 flags:u32 ...fields...
 *   size     := sizeof(struct luw_lj_layout) of the writer; a reader refuses
 *               a size it does not know (no silent truncation or padding)
 *   version  := LUW_LJ_LAYOUT_VERSION
 *   flags    := LUW_LJ_F_* bits; unknown bits are refused
 *
 * Every "ofs" field is a byte offset inside the struct named by its prefix:
 *   gg_*  relative to global_State inside GG_State (G is the anchor)
 *   g_*   global_State           j_*   jit_State
 *   l_*   lua_State              fn_*  GCfunc (GCfuncC/GCfuncL)
 *   pt_*  GCproto                str_* GCstr
 *   tr_*  GCtrace                gc_*  GCHeader (common to every GC object)
 * A field of 0xffff means "not present in this build".
 *
 * The register fields use the DWARF numbering of x86-64 (rax 0, rdx 1,
 * rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8..r15 8..15), the same as
 * the host unwinder's tables.
 */
#ifndef LUAUNWIND_LAYOUT_H
#define LUAUNWIND_LAYOUT_H

#include <linux/types.h>

#define LUW_LJ_LAYOUT_VERSION	1

/* flags */
#define LUW_LJ_F_GC64		0x1u	/* 64-bit refs, two-slot frames */
#define LUW_LJ_F_JIT		0x2u	/* built with the JIT (traces) */
#define LUW_LJ_F_ALL		(LUW_LJ_F_GC64 | LUW_LJ_F_JIT)

#define LUW_LJ_NOFIELD		0xffffu

/* x86-64 DWARF register numbers. */
enum luw_x86_reg {
	LUW_X86_RAX, LUW_X86_RDX, LUW_X86_RCX, LUW_X86_RBX,
	LUW_X86_RSI, LUW_X86_RDI, LUW_X86_RBP, LUW_X86_RSP,
	LUW_X86_R8, LUW_X86_R9, LUW_X86_R10, LUW_X86_R11,
	LUW_X86_R12, LUW_X86_R13, LUW_X86_R14, LUW_X86_R15,
	LUW_X86_NREGS
};

/*
 * Canonical VM states, the set of Tarantool's sysprof.  A target's raw
 * state (~vmstate for negative values) is mapped through vmst_map; stock
 * LuaJIT has no LFUNC/FFUNC/CFUNC, the walker refines INTERP to LFUNC or
 * FFUNC from the innermost frame and maps "C" to CFUNC.
 */
enum luw_vmstate {
	LUW_VMST_INTERP, LUW_VMST_LFUNC, LUW_VMST_FFUNC, LUW_VMST_CFUNC,
	LUW_VMST_GC, LUW_VMST_EXIT, LUW_VMST_RECORD, LUW_VMST_OPT,
	LUW_VMST_ASM, LUW_VMST_TRACE, LUW_VMST_UNKNOWN,
	LUW_VMST__MAX
};

#define LUW_LJ_MAX_RAW_VMST	16

struct luw_lj_layout {
	__u32 size;		/* sizeof(struct luw_lj_layout) */
	__u32 version;		/* LUW_LJ_LAYOUT_VERSION */
	__u32 flags;		/* LUW_LJ_F_* */

	/* Interpreter's fixed registers (vm_x64.dasc / vm_x86.dasc). */
	__u8 reg_base;		/* BASE: live Lua base while interpreting */
	__u8 reg_pc;		/* PC: next bytecode instruction */
	__u8 reg_dispatch;	/* DISPATCH: &GG->dispatch[0] */
	__u8 reg_kbase;		/* KBASE: constants of the running proto */

	/*
	 * The C frame each VM entry (lj_vm_call, _pcall, _cpcall, _resume,
	 * _ffi_callback) pushes; rsp points at it while interpreting.
	 * cframe_size includes the return address, so the entry's caller
	 * continues at rsp + cframe_size (that is the CFA of the VM's FDE).
	 */
	__u16 cframe_size;	/* CFRAME_SIZE */
	/*
	 * CFRAME_SIZE_JIT, 0 when unknown.  With tr_spadjust it describes a
	 * trace's frame (CFA = rsp + CFRAME_SIZE_JIT + spadjust) for a tool
	 * that unwinds trace code; the module does not (it reaches the C
	 * frame under a trace through L->cframe) and reads neither.
	 */
	__u16 cframe_size_jit;
	__u16 cframe_ofs_l;	/* CFRAME_OFS_L: saved lua_State * */
	__u16 cframe_ofs_prev;	/* CFRAME_OFS_PREV: previous cframe */
	__u16 cframe_ofs_pc;	/* CFRAME_OFS_PC: saved PC */
	__u8 cframe_l_size;	/* bytes of the saved L: 8 (GC64) or 4 */
	__u8 cframe_rbp_cfa;	/* saved rbp at CFA - this (FDE rule) */

	/* GG_State, relative to &GG->g (G). */
	__s32 gg_g2disp;	/* &GG->dispatch - G */
	__s32 gg_g2j;		/* &GG->J - G, 0 without JIT */
	__s32 gg_g2l;		/* &GG->L (main thread) - G, negative */
	__u32 gg_ndisp;		/* entries of GG->dispatch (GG_LEN_DISP) */

	/* global_State */
	__u16 g_vmstate;	/* int32 */
	__u16 g_cur_l;		/* GCRef cur_L */
	__u16 g_jit_base;	/* MRef jit_base, TValue * */
	__u16 g_mainthref;	/* GCRef mainthref */
	__u16 g_tmpbuf_l;	/* MRef tmpbuf.L, low 3 bits are flags */
	__u16 g_strempty;	/* GCstr strempty (embedded) */

	/* jit_State, relative to J */
	__u16 j_trace;		/* GCRef *trace */
	__u16 j_sizetrace;	/* MSize sizetrace */

	/* lua_State */
	__u16 l_glref;
	__u16 l_status;		/* uint8 */
	__u16 l_base;
	__u16 l_top;
	__u16 l_maxstack;
	__u16 l_stack;
	__u16 l_cframe;		/* void *, low bits CFRAME_RESUME/UNWIND_FF */
	__u16 l_stacksize;	/* MSize, slots incl. stack_extra */

	/* GCHeader, GCfunc, GCproto, GCstr, GCtrace */
	__u16 gc_gct;		/* uint8 ~itype */
	__u16 fn_ffid;		/* uint8: 0 Lua, 1 C, >1 fast function */
	__u16 fn_pc;		/* MRef: Lua function's first bytecode */
	__u16 fn_f;		/* lua_CFunction of a C function */
	__u16 pt_size;		/* sizeof(GCproto): bytecode follows it */
	__u16 pt_sizebc;
	__u16 pt_chunkname;	/* GCRef to GCstr */
	__u16 pt_firstline;
	__u16 pt_numline;
	__u16 pt_lineinfo;	/* MRef: u8/u16/u32 deltas by numline */
	__u16 str_len;		/* MSize */
	__u16 str_size;		/* sizeof(GCstr): characters follow it */
	__u16 tr_startpt;	/* GCRef to GCproto */
	__u16 tr_startpc;	/* MRef to BCIns */
	__u16 tr_spadjust;	/* uint16: stack adjustment of the trace (unread) */
	__u16 tr_mcode;		/* MCode * */
	__u16 tr_szmcode;	/* MSize */
	__u16 tr_traceno;	/* TraceNo1 (uint16) */
	__u16 stack_extra;	/* LJ_STACK_EXTRA, slots */

	/* GC types as stored in gct (~LJ_T*) */
	__u8 gct_str;
	__u8 gct_thread;
	__u8 gct_proto;
	__u8 gct_func;
	__u8 gct_trace;

	/* Raw VM states: vmst_map[~vmstate] for vmstate < 0. */
	__u8 n_vmst;
	__u8 vmst_map[LUW_LJ_MAX_RAW_VMST];
	__u8 pad[2];
};

/* Frame-link encoding shared by all x86-64 builds (lj_frame.h). */
#define LUW_LJ_FRAME_LUA	0
#define LUW_LJ_FRAME_C		1
#define LUW_LJ_FRAME_CONT	2
#define LUW_LJ_FRAME_VARG	3
#define LUW_LJ_FRAME_LUAP	4
#define LUW_LJ_FRAME_CP		5
#define LUW_LJ_FRAME_PCALL	6
#define LUW_LJ_FRAME_PCALLH	7
#define LUW_LJ_FRAME_TYPE	3
#define LUW_LJ_FRAME_TYPEP	7
#define LUW_LJ_CONT_FFI_CALLBACK 1
#define LUW_LJ_CFRAME_RAWMASK	(~(__u64)3)
#define LUW_LJ_CFRAME_RESUME	1
#define LUW_LJ_GCVMASK		(((__u64)1 << 47) - 1)
#define LUW_LJ_FF_LUA		0
#define LUW_LJ_FF_C		1

#endif /* LUAUNWIND_LAYOUT_H */
