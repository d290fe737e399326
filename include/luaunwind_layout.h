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

/*
 * The descriptor's fields, in order, each declared once here: the struct
 * below, the DWARF reader, the printers, the known-builds generator
 * (scripts/ljlayout-gen.c) and the tests all expand this list.  A row is
 * the field's type, its name, and where a LuaJIT source tree defines it:
 *
 *   M(type, name, ctype, member)   offsetof(ctype, member): a struct
 *                                  member, read from DWARF by the same names
 *   V(type, name, value)           anything else: value is its expression
 *                                  in a LuaJIT tree (lj_obj.h, lj_frame.h,
 *                                  lj_jit.h, lj_dispatch.h), or ours
 *
 * OFS(t, f) is offsetof; G is &GG->g, the anchor of the gg_* fields
 * (gg_g2l is negative).  Members of jit_State and GCtrace exist only with
 * the JIT (LUW_LJ_NOFIELD without).  vmst_map and pad follow the list.
 *
 *   reg_*          the interpreter's fixed registers (vm_x64.dasc): BASE
 *                  (the live Lua base), PC (next instruction), DISPATCH
 *                  (&GG->dispatch[0]), KBASE (constants of the proto)
 *   cframe_*       the C frame each VM entry (lj_vm_call, _pcall,
 *                  _cpcall, _resume, _ffi_callback) pushes; rsp points at
 *                  it while interpreting.  cframe_size includes the return
 *                  address, so the entry's caller continues at rsp +
 *                  cframe_size (the CFA of the VM's FDE).  cframe_size_jit
 *                  (0 when unknown) with tr_spadjust describes a trace's
 *                  frame (CFA = rsp + CFRAME_SIZE_JIT + spadjust) for a
 *                  tool that unwinds trace code; the module does not (it
 *                  reaches the C frame under a trace through L->cframe)
 *                  and reads neither.  cframe_ofs_l: the saved lua_State *
 *                  (cframe_l_size bytes), _pc the saved PC, _prev the
 *                  previous cframe; the saved rbp is at CFA - cframe_rbp_cfa
 *   g_vmstate      int32; g_jit_base: TValue *; g_tmpbuf_l: low 3 bits are
 *                  flags; g_strempty: the GCstr itself, embedded in G
 *   j_trace        GCRef *: jit_State's array of traces
 *   l_status       uint8; l_cframe: low bits CFRAME_RESUME/UNWIND_FF;
 *                  l_stacksize: slots, stack_extra included
 *   gc_gct         uint8 ~itype, at the same offset in every GC object
 *   fn_ffid        0 Lua, 1 C, >1 fast function; fn_pc: a Lua function's
 *                  first instruction; fn_f: a C function's lua_CFunction
 *   pt_size        sizeof(GCproto): the bytecode follows it; pt_lineinfo:
 *                  u8/u16/u32 line deltas as numline needs
 *   str_size       sizeof(GCstr): the characters follow it
 *   tr_startpt     the GCproto a trace starts in; tr_startpc its BCIns;
 *                  tr_traceno TraceNo1; tr_spadjust is never read
 *   stack_extra    LJ_STACK_EXTRA, slots
 *   gct_*          GC types as stored in gct (~LJ_T*)
 *   n_vmst         raw VM states: vmst_map[~vmstate] for vmstate < 0
 */
#define LUW_LJ_LAYOUT_FIELDS(M, V)					\
	V(__u32, size, sizeof(struct luw_lj_layout))			\
	V(__u32, version, LUW_LJ_LAYOUT_VERSION)			\
	V(__u32, flags, (LJ_GC64 ? LUW_LJ_F_GC64 : 0) |			\
			(LJ_HASJIT ? LUW_LJ_F_JIT : 0))			\
	V(__u8, reg_base, LUW_X86_RDX)					\
	V(__u8, reg_pc, LUW_X86_RBX)					\
	V(__u8, reg_dispatch, LUW_X86_R14)				\
	V(__u8, reg_kbase, LUW_X86_R15)					\
	V(__u16, cframe_size, CFRAME_SIZE)				\
	V(__u16, cframe_size_jit, CFRAME_SIZE_JIT)			\
	V(__u16, cframe_ofs_l, CFRAME_OFS_L)				\
	V(__u16, cframe_ofs_prev, CFRAME_OFS_PREV)			\
	V(__u16, cframe_ofs_pc, CFRAME_OFS_PC)				\
	V(__u8, cframe_l_size, LJ_GC64 ? 8 : 4)				\
	V(__u8, cframe_rbp_cfa, 16)					\
	V(__s32, gg_g2disp, OFS(GG_State, dispatch) - OFS(GG_State, g))	\
	V(__s32, gg_g2j, OFS(GG_State, J) - OFS(GG_State, g))		\
	V(__s32, gg_g2l, OFS(GG_State, L) - OFS(GG_State, g))		\
	V(__u32, gg_ndisp, GG_LEN_DISP)					\
	M(__u16, g_vmstate, global_State, vmstate)			\
	M(__u16, g_cur_l, global_State, cur_L)				\
	M(__u16, g_jit_base, global_State, jit_base)			\
	M(__u16, g_mainthref, global_State, mainthref)			\
	M(__u16, g_tmpbuf_l, global_State, tmpbuf.L)			\
	M(__u16, g_strempty, global_State, strempty)			\
	M(__u16, j_trace, jit_State, trace)				\
	M(__u16, j_sizetrace, jit_State, sizetrace)			\
	M(__u16, l_glref, lua_State, glref)				\
	M(__u16, l_status, lua_State, status)				\
	M(__u16, l_base, lua_State, base)				\
	M(__u16, l_top, lua_State, top)					\
	M(__u16, l_maxstack, lua_State, maxstack)			\
	M(__u16, l_stack, lua_State, stack)				\
	M(__u16, l_cframe, lua_State, cframe)				\
	M(__u16, l_stacksize, lua_State, stacksize)			\
	M(__u16, gc_gct, GCfuncC, gct)					\
	M(__u16, fn_ffid, GCfuncC, ffid)				\
	M(__u16, fn_pc, GCfuncL, pc)					\
	M(__u16, fn_f, GCfuncC, f)					\
	V(__u16, pt_size, sizeof(GCproto))				\
	M(__u16, pt_sizebc, GCproto, sizebc)				\
	M(__u16, pt_chunkname, GCproto, chunkname)			\
	M(__u16, pt_firstline, GCproto, firstline)			\
	M(__u16, pt_numline, GCproto, numline)				\
	M(__u16, pt_lineinfo, GCproto, lineinfo)			\
	M(__u16, str_len, GCstr, len)					\
	V(__u16, str_size, sizeof(GCstr))				\
	M(__u16, tr_startpt, GCtrace, startpt)				\
	M(__u16, tr_startpc, GCtrace, startpc)				\
	M(__u16, tr_spadjust, GCtrace, spadjust)			\
	M(__u16, tr_mcode, GCtrace, mcode)				\
	M(__u16, tr_szmcode, GCtrace, szmcode)				\
	M(__u16, tr_traceno, GCtrace, traceno)				\
	V(__u16, stack_extra, LJ_STACK_EXTRA)				\
	V(__u8, gct_str, ~LJ_TSTR & 0xff)				\
	V(__u8, gct_thread, ~LJ_TTHREAD & 0xff)				\
	V(__u8, gct_proto, ~LJ_TPROTO & 0xff)				\
	V(__u8, gct_func, ~LJ_TFUNC & 0xff)				\
	V(__u8, gct_trace, ~LJ_TTRACE & 0xff)				\
	V(__u8, n_vmst, LJ_VMST__MAX)

#define LUW_LJ_DECL_M(type, name, ctype, member)	type name;
#define LUW_LJ_DECL_V(type, name, value)		type name;

struct luw_lj_layout {
	LUW_LJ_LAYOUT_FIELDS(LUW_LJ_DECL_M, LUW_LJ_DECL_V)
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
