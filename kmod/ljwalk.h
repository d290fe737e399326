/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * luaunwind: walk the Lua stack of a LuaJIT VM from outside.
 *
 * The same code (ljwalk.c) runs in the kernel module's sampling handler
 * (hardirq/NMI: the read is the sample's, uread.h, a load that fails
 * instead of faulting) and in userspace (the callback is
 * process_vm_readv).  Hence: no libc, no allocation, every user read
 * through the callback and checked, every loop bounded, and the descriptor
 * (include/luaunwind_layout.h) trusted for nothing but offsets -- garbage
 * memory ends the walk with a reason, never a fault.
 *
 * Inputs (struct luw_lj_walk_in)
 *   regs      ip, sp and the general registers at the sample.
 *   vm_start, interp_end, vm_end
 *             the VM's code: [vm_start, interp_end) is the interpreter, one
 *             FDE with CFA = rsp + cframe_size; [interp_end, vm_end) is
 *             lj_vm_ffi_call, an ordinary rbp frame.
 *   vm_sp     when ip is outside the VM (a C function called by it), the
 *             stack pointer the host unwinder found at the innermost frame
 *             whose pc is in the interpreter, i.e. the VM's cframe; 0 if
 *             unknown.
 *   g_hint    a global_State already validated for this process, 0 if none.
 *
 * Finding G, L and the live base (design section 3):
 *   G      DISPATCH register - gg_g2disp when ip is in the interpreter or,
 *          for GC64 builds, in a trace (traces keep DISPATCH in r14 there;
 *          at a trace's frame above C code, the r14 the host walk
 *          recovered through that code's CFI);
 *          else glref of the L saved in the VM cframe at vm_sp; else
 *          g_hint.  Accepted only if G->mainthref->glref == G.
 *   vmstate  G->vmstate: >= 0 is a trace number.  GC with mcode_trace
 *          given and G->jit_base set: GC steps called from that trace.
 *   L      interpreter: the L saved in the cframe at rsp (rsp == cframe
 *          there); C code: the one at vm_sp; traces: G->tmpbuf.L, which
 *          the trace entry (BC_JLOOP) sets; G->cur_L as the fallback.
 *          Accepted only if it is a thread whose glref is G.
 *   base   interpreter: the BASE register (L->base is stale there);
 *          traces: G->jit_base (GC from a trace: also L->base, which
 *          lj_gc_step_jit sets from it; both must agree); otherwise
 *          L->base.  Must lie in L's stack.
 *   pc     innermost Lua frame: the PC register in the interpreter when it
 *          points into that frame's bytecode; unknown otherwise.  Every
 *          outer frame's pc is its callee's frame link (the return pc).
 *
 * Output (struct luw_lj_walk_out): frames innermost first, and segments.
 * A segment is the run of Lua frames of one VM activation (one entry
 * through lj_vm_call/pcall/cpcall/resume or an FFI callback); its cframe is
 * the stack pointer of that entry's C frame.  The merge rule for the host
 * unwinder: host frames whose pc is in VM code or in a trace belong to the
 * activation they run on and are replaced by its segment; the segment ends
 * at the entry frame, and the host stack continues with the entry's caller:
 *   pc = *(cframe + cframe_size - 8), sp = cframe + cframe_size,
 *   rbp = *(cframe + cframe_size - cframe_rbp_cfa).
 * So the host unwinder never has to unwind through interpreter or trace
 * code: from a sample in VM code it restarts at segs[0].cframe.
 * Coroutines: the bottom activation of a coroutine was entered by
 * lj_vm_resume (LUW_LJS_RESUMED); when coroutine.resume called it from the
 * VM, the resumer's cframe sits right above it (cframe + cframe_size, the
 * return address is in VM code, and its saved L's cframe points there),
 * and the walk continues with the resumer's frames in the next segment.
 * Resumed from C (lua_resume), the host unwinder carries on instead.
 */
#ifndef LUW_LJWALK_H
#define LUW_LJWALK_H

#include "walkenv.h"
#include <luaunwind_layout.h>

/*
 * Reads len bytes at user address addr; 0 on success, -E2BIG when a
 * budget of the reader's refuses the read (the walk ends with
 * LUW_LJW_BUDGET), any other nonzero value on a fault.
 */
typedef int (*luw_lj_read_fn)(void *ctx, u64 addr, void *dst, u32 len);

struct luw_lj_regs {
	u64 ip;
	u64 r[LUW_X86_NREGS];	/* DWARF order; r[LUW_X86_RSP] is sp */
};

/* frame kinds */
#define LUW_LJF_LUA	1	/* Lua function: proto, pc */
#define LUW_LJF_C	2	/* lua_CFunction: func, pc = C entry point */
#define LUW_LJF_FF	3	/* fast function: func, ffid */
#define LUW_LJF_TRACE	4	/* running trace: trace no, proto/pc = start */

/* frame flags */
#define LUW_LJF_PC_EXACT  0x01	/* pc is the frame's own position */
#define LUW_LJF_PC_TRACE  0x02	/* pc is a trace's start instruction */

struct luw_lj_frame {
	u8 kind;
	u8 ffid;
	u8 link;		/* how it was called: LUW_LJ_FRAME_* */
	u8 flags;
	u32 trace;		/* trace number (TRACE) */
	u64 func;		/* GCfunc (TRACE: GCtrace) */
	u64 proto;		/* GCproto (LUA, TRACE) */
	/* LUA/TRACE: bytecode address, 0 unknown; C: the lua_CFunction */
	u64 pc;
};

/* segment flags */
#define LUW_LJS_RESUMED	0x01	/* entered through lj_vm_resume */
#define LUW_LJS_TRACE	0x02	/* the sample is in a trace on it */

struct luw_lj_seg {
	u16 first;		/* index of its innermost frame */
	u16 count;
	u32 flags;
	u64 cframe;		/* sp of the entry's C frame, 0 unknown */
	u64 L;		/* lua_State whose stack it is */
};

/* walk status */
enum luw_lj_status {
	LUW_LJW_OK,		/* walked to the bottom of every stack */
	LUW_LJW_FULL,		/* out of frame/segment room (truncated) */
	LUW_LJW_NOG,		/* no valid global_State */
	LUW_LJW_NOL,		/* no valid lua_State */
	LUW_LJW_BADBASE,	/* live base outside L's stack */
	LUW_LJW_FAULT,		/* a read faulted mid-walk (truncated) */
	LUW_LJW_BADFRAME,	/* an implausible frame (truncated) */
	LUW_LJW_BUDGET,		/* read budget exhausted (truncated) */
	LUW_LJW__MAX
};

struct luw_lj_walk_in {
	const struct luw_lj_layout *ly;
	luw_lj_read_fn read;
	void *ctx;
	struct luw_lj_regs regs;
	u64 vm_start, interp_end, vm_end;
	u64 vm_sp;
	u64 g_hint;
	/*
	 * The trace whose machine code holds ip when ip is a return
	 * address there (a C helper called from the trace: the host
	 * unwinder's caller frame), 0 if none.  Used when G->vmstate says
	 * GC: lj_gc_step_jit, called from a trace, runs the GC steps with
	 * L = G->cur_L and L->base = G->jit_base.
	 */
	u32 mcode_trace;
	/*
	 * Bound on callback calls, 0 = 4096; userspace only: in the module
	 * the reader is the budget (luw_walk_read(), the sample's).
	 */
	u32 max_reads;
};

struct luw_lj_walk_out {
	struct luw_lj_frame *frames;	/* caller's array */
	u32 max_frames;
	u32 nframes;
	struct luw_lj_seg *segs;	/* caller's array */
	u32 max_segs;
	u32 nsegs;
	u64 G;
	u64 L;
	s32 vmstate_raw;
	u8 vmstate;			/* enum luw_vmstate */
	u8 status;			/* enum luw_lj_status */
	u16 coros;			/* coroutine hops followed */
};

/* Bounds independent of the caller's arrays. */
#define LUW_LJ_MAX_CORO_HOPS	16
#define LUW_LJ_MAX_STEPS	4096
/* Activations without a frame of their own one walk accepts. */
#define LUW_LJ_MAX_FRAMELESS	2

/*
 * Walk the Lua stack.  Fills out->frames/segs (innermost first) and the
 * summary fields; returns out->status.  Frames already written stay valid
 * whatever the status.
 */
int luw_lj_walk(const struct luw_lj_walk_in *in, struct luw_lj_walk_out *out);

/*
 * Structural check of a descriptor as received (sizes, flags, offsets that
 * cannot be right in any build).  Whether it matches the target is a
 * different question, answered by validation against the live process.
 * Returns 0 when acceptable, -EINVAL otherwise.
 */
int luw_lj_layout_check(const struct luw_lj_layout *ly);

#endif /* LUW_LJWALK_H */
