/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * luaunwind: walk the Lua stack of a LuaJIT VM from outside.
 *
 * The same code runs in the kernel module's sampling handler (hardirq/NMI:
 * the read callback is the sample's read cache, luaunwind_ucache.h, over a
 * nofault copy from user memory) and in userspace
 * (the callback is process_vm_readv).  Hence: static inline, no libc, no
 * allocation, every user read through the callback and checked, every loop
 * bounded, and the descriptor (luaunwind_layout.h) trusted for nothing but
 * offsets -- garbage memory ends the walk with a reason, never a fault.
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
 *          for GC64 builds, in a trace (traces keep DISPATCH in r14 there);
 *          else glref of the L saved in the VM cframe at vm_sp; else
 *          g_hint.  Accepted only if G->mainthref->glref == G.
 *   vmstate  G->vmstate: >= 0 is a trace number.
 *   L      interpreter: the L saved in the cframe at rsp (rsp == cframe
 *          there); C code: the one at vm_sp; traces: G->tmpbuf.L, which
 *          the trace entry (BC_JLOOP) sets; G->cur_L as the fallback.
 *          Accepted only if it is a thread whose glref is G.
 *   base   interpreter: the BASE register (L->base is stale there);
 *          traces: G->jit_base; otherwise L->base.  Must lie in L's stack.
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
#ifndef LUAUNWIND_LJWALK_H
#define LUAUNWIND_LJWALK_H

#ifdef __KERNEL__
#include <linux/stddef.h>
#else
#include <stddef.h>
#endif
#include <linux/types.h>
#include "luaunwind_layout.h"

/* Reads len bytes at user address addr; 0 on success, nonzero on fault. */
typedef int (*luw_lj_read_fn)(void *ctx, __u64 addr, void *dst, __u32 len);

struct luw_lj_regs {
	__u64 ip;
	__u64 r[LUW_X86_NREGS];	/* DWARF order; r[LUW_X86_RSP] is sp */
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
	__u8 kind;
	__u8 ffid;
	__u8 link;		/* how it was called: LUW_LJ_FRAME_* */
	__u8 flags;
	__u32 trace;		/* trace number (TRACE) */
	__u64 func;		/* GCfunc (TRACE: GCtrace) */
	__u64 proto;		/* GCproto (LUA, TRACE) */
	/* LUA/TRACE: bytecode address, 0 unknown; C: the lua_CFunction */
	__u64 pc;
};

/* segment flags */
#define LUW_LJS_RESUMED	0x01	/* entered through lj_vm_resume */
#define LUW_LJS_TRACE	0x02	/* the sample is in a trace on it */

struct luw_lj_seg {
	__u16 first;		/* index of its innermost frame */
	__u16 count;
	__u32 flags;
	__u64 cframe;		/* sp of the entry's C frame, 0 unknown */
	__u64 L;		/* lua_State whose stack it is */
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
	__u64 vm_start, interp_end, vm_end;
	__u64 vm_sp;
	__u64 g_hint;
	__u32 max_reads;	/* bound on callback calls, 0 = 4096 */
	/*
	 * Optional (NULL: none): told before the walk of a Lua stack reads
	 * its frames, all within [addr, addr + len), so that the includer
	 * can copy them in one go (luaunwind_ucache.h).  A hint: the walk
	 * still reads every slot through read() and checks it.
	 */
	void (*prefetch)(void *ctx, __u64 addr, __u64 len);
};

struct luw_lj_walk_out {
	struct luw_lj_frame *frames;	/* caller's array */
	__u32 max_frames;
	__u32 nframes;
	struct luw_lj_seg *segs;	/* caller's array */
	__u32 max_segs;
	__u32 nsegs;
	__u64 G;
	__u64 L;
	__s32 vmstate_raw;
	__u8 vmstate;			/* enum luw_vmstate */
	__u8 status;			/* enum luw_lj_status */
	__u16 coros;			/* coroutine hops followed */
};

/* Bounds independent of the caller's arrays. */
#define LUW_LJ_MAX_CORO_HOPS	16
#define LUW_LJ_MAX_STEPS	4096
/* Activations without a frame of their own one walk accepts. */
#define LUW_LJ_MAX_FRAMELESS	2

struct luw_lj__st {
	const struct luw_lj_walk_in *in;
	const struct luw_lj_layout *ly;
	struct luw_lj_walk_out *out;
	__u32 reads;
	__u32 max_reads;
	int gc64;
};

static inline int luw_lj__rd(struct luw_lj__st *st, __u64 addr, void *dst,
			     __u32 len)
{
	if (st->reads >= st->max_reads) {
		if (st->out->status == LUW_LJW_OK)
			st->out->status = LUW_LJW_BUDGET;
		return -1;
	}
	st->reads++;
	/* Nothing LuaJIT owns lives in the first page or the kernel half. */
	if (addr < 4096 || addr >= ((__u64)1 << 47) ||
	    addr + len > ((__u64)1 << 47))
		return -1;
	return st->in->read(st->in->ctx, addr, dst, len) ? -1 : 0;
}

static inline int luw_lj__u8(struct luw_lj__st *st, __u64 a, __u8 *v)
{
	return luw_lj__rd(st, a, v, 1);
}

static inline int luw_lj__u32(struct luw_lj__st *st, __u64 a, __u32 *v)
{
	return luw_lj__rd(st, a, v, 4);
}

static inline int luw_lj__u64(struct luw_lj__st *st, __u64 a, __u64 *v)
{
	return luw_lj__rd(st, a, v, 8);
}

/* GCRef / MRef: 8 bytes in GC64 builds, 4 otherwise. */
static inline int luw_lj__ref(struct luw_lj__st *st, __u64 a, __u64 *v)
{
	__u32 v32;

	if (st->gc64)
		return luw_lj__u64(st, a, v);
	if (luw_lj__u32(st, a, &v32))
		return -1;
	*v = v32;
	return 0;
}

static inline int luw_lj__field_ok(__u16 ofs)
{
	return ofs != LUW_LJ_NOFIELD;
}

/*
 * G lives in GG_State right after the main thread's lua_State: what the
 * walk reads of both is one span, [G + gg_g2l, G + the last G field),
 * worth one copy (a hint; a garbage G costs that copy).
 */
static inline void luw_lj__hint_g(struct luw_lj__st *st, __u64 g)
{
	const struct luw_lj_layout *ly = st->ly;
	__u16 f[5];
	__u32 hi = 0, i;

	if (!st->in->prefetch || ly->gg_g2l >= 0 || ly->gg_g2l < -4096)
		return;
	f[0] = ly->g_vmstate;
	f[1] = ly->g_cur_l;
	f[2] = ly->g_jit_base;
	f[3] = ly->g_mainthref;
	f[4] = ly->g_tmpbuf_l;
	for (i = 0; i < 5; i++)
		if (f[i] != LUW_LJ_NOFIELD && f[i] + 8u > hi)
			hi = f[i] + 8u;
	/* Only where the walk itself would read (luw_lj__rd()). */
	if (hi && g + (__s64)ly->gg_g2l >= 4096 && g + hi <= ((__u64)1 << 47))
		st->in->prefetch(st->in->ctx, g + (__s64)ly->gg_g2l,
				 (__u64)-(__s64)ly->gg_g2l + hi);
}

/* G is real if its main thread points back at it. */
static inline int luw_lj__check_g(struct luw_lj__st *st, __u64 g)
{
	__u64 mainl, glref;

	if (!g || (g & 7))
		return 0;
	luw_lj__hint_g(st, g);
	if (luw_lj__ref(st, g + st->ly->g_mainthref, &mainl))
		return 0;
	if (!mainl || luw_lj__ref(st, mainl + st->ly->l_glref, &glref))
		return 0;
	return glref == g;
}

static inline int luw_lj__check_l(struct luw_lj__st *st, __u64 l, __u64 g)
{
	__u8 gct;
	__u64 glref;

	if (!l || (l & 7))
		return 0;
	if (luw_lj__u8(st, l + st->ly->gc_gct, &gct) ||
	    gct != st->ly->gct_thread)
		return 0;
	if (luw_lj__ref(st, l + st->ly->l_glref, &glref))
		return 0;
	return glref == g;
}

/* The saved L in a VM cframe (4 bytes in non-GC64 builds). */
static inline __u64 luw_lj__cframe_l(struct luw_lj__st *st, __u64 cframe)
{
	__u64 l = 0;
	__u32 l32;

	if (st->ly->cframe_l_size == 8) {
		if (luw_lj__u64(st, cframe + st->ly->cframe_ofs_l, &l))
			return 0;
	} else {
		if (luw_lj__u32(st, cframe + st->ly->cframe_ofs_l, &l32))
			return 0;
		l = l32;
	}
	return l;
}

struct luw_lj__stack {
	__u64 lo;	/* L->stack */
	__u64 hi;	/* one past the last slot */
};

static inline int luw_lj__get_stack(struct luw_lj__st *st, __u64 l,
				    struct luw_lj__stack *s)
{
	__u32 size;

	if (luw_lj__ref(st, l + st->ly->l_stack, &s->lo) ||
	    luw_lj__u32(st, l + st->ly->l_stacksize, &size))
		return -1;
	if (!s->lo || size == 0 || size > (1u << 24))
		return -1;
	s->hi = s->lo + (__u64)size * 8;
	return 0;
}

static inline int luw_lj__in_stack(const struct luw_lj__stack *s, __u64 p)
{
	return p > s->lo && p <= s->hi && !(p & 7);
}

/*
 * The proto of a Lua function object; 0 if it is not one.  The proto's
 * own type byte is checked: a wrong fn_pc or pt_size must end the walk,
 * not fill it with addresses that are no protos.
 */
static inline __u64 luw_lj__func_proto(struct luw_lj__st *st, __u64 fn)
{
	__u64 pc;
	__u8 gct;

	if (luw_lj__ref(st, fn + st->ly->fn_pc, &pc) || pc < st->ly->pt_size)
		return 0;
	pc -= st->ly->pt_size;
	if (luw_lj__u8(st, pc + st->ly->gc_gct, &gct) ||
	    gct != st->ly->gct_proto)
		return 0;
	return pc;
}

/* Is pc inside (or just past) the proto's bytecode? */
static inline int luw_lj__pc_in_proto(struct luw_lj__st *st, __u64 pt,
				      __u64 pc)
{
	__u32 sizebc;
	__u64 bc = pt + st->ly->pt_size;

	if (!pt || pc < bc || (pc & 3))
		return 0;
	if (luw_lj__u32(st, pt + st->ly->pt_sizebc, &sizebc))
		return 0;
	return pc <= bc + (__u64)sizebc * 4;
}

static inline struct luw_lj_frame *luw_lj__push(struct luw_lj__st *st)
{
	struct luw_lj_walk_out *o = st->out;
	struct luw_lj_frame *f;

	if (o->nframes >= o->max_frames) {
		o->status = LUW_LJW_FULL;
		return NULL;
	}
	f = &o->frames[o->nframes++];
	f->kind = 0;
	f->ffid = 0;
	f->link = 0;
	f->flags = 0;
	f->trace = 0;
	f->func = 0;
	f->proto = 0;
	f->pc = 0;
	return f;
}

static inline struct luw_lj_seg *luw_lj__seg_open(struct luw_lj__st *st,
						  __u64 l, __u64 cframe)
{
	struct luw_lj_walk_out *o = st->out;
	struct luw_lj_seg *s;

	if (o->nsegs >= o->max_segs) {
		o->status = LUW_LJW_FULL;
		return NULL;
	}
	s = &o->segs[o->nsegs++];
	s->first = (__u16)o->nframes;
	s->count = 0;
	s->flags = (cframe & LUW_LJ_CFRAME_RESUME) ? LUW_LJS_RESUMED : 0;
	s->cframe = cframe & LUW_LJ_CFRAME_RAWMASK;
	s->L = l;
	return s;
}

/*
 * A VM activation can be linked into L->cframe while it owns no Lua frame:
 * lj_vm_call/pcall between linking their C frame and the callee's frame
 * link being written, vm_return between popping the last frame and
 * unlinking the C frame, and lj_vm_cpcall running C without a frame (the
 * parser under lua_load).  The frames then close each activation one C
 * frame too early, so the caller's C function looks like the new
 * activation's, and the chain outlives the stack: `left` is the C frame
 * still linked when the walk of L reached its bottom (0 when it ended
 * with the stack, as it must).  Each C frame left over is an innermost
 * activation without frames: give it an empty segment at the front and
 * move the frames of every segment of this walk (from s0) one C frame
 * down the chain.  LuaJIT marks only the cpcall case itself (negative
 * nres); the prologue and epilogue windows have no mark, the chain's
 * length is the one witness.  Returns the C frame now closed last.
 */
static inline __u64 luw_lj__frameless(struct luw_lj__st *st, unsigned int s0,
				      __u64 left, __u64 last_cf)
{
	const struct luw_lj_layout *ly = st->ly;
	struct luw_lj_walk_out *o = st->out;
	unsigned int i, k;

	for (k = 0; left && k < LUW_LJ_MAX_FRAMELESS; k++) {
		__u64 prev = 0;

		if (o->nsegs >= o->max_segs || s0 >= o->nsegs) {
			o->status = LUW_LJW_FULL;
			return 0;
		}
		for (i = o->nsegs; i > s0; i--)
			o->segs[i] = o->segs[i - 1];
		o->nsegs++;
		for (i = s0 + 1; i < o->nsegs; i++) {
			struct luw_lj_seg *s = &o->segs[i];
			__u64 cf = left;

			if (i + 1 < o->nsegs)
				cf = o->segs[i + 1].cframe |
				     ((o->segs[i + 1].flags & LUW_LJS_RESUMED) ?
				      LUW_LJ_CFRAME_RESUME : 0);
			s->cframe = cf & LUW_LJ_CFRAME_RAWMASK;
			s->flags = (s->flags & ~(__u32)LUW_LJS_RESUMED) |
				   ((cf & LUW_LJ_CFRAME_RESUME) ?
				    LUW_LJS_RESUMED : 0);
		}
		o->segs[s0].count = 0;
		o->segs[s0].first = o->segs[s0 + 1].first;
		o->segs[s0].flags &= ~(__u32)LUW_LJS_TRACE;
		last_cf = left;
		if (luw_lj__u64(st, (left & LUW_LJ_CFRAME_RAWMASK) +
				ly->cframe_ofs_prev, &prev))
			prev = 0;
		left = prev;
	}
	if (left) {
		/* More than a transition explains: trust no splice. */
		o->status = LUW_LJW_BADFRAME;
		return 0;
	}
	return last_cf;
}

/* Reads the frame link and function of the frame whose base is `base`. */
static inline int luw_lj__frame_at(struct luw_lj__st *st, __u64 base,
				   __s64 *ftsz, __u64 *fn)
{
	__u64 v;

	if (st->gc64) {
		if (luw_lj__u64(st, base - 8, &v))
			return -1;
		*ftsz = (__s64)v;
		if (luw_lj__u64(st, base - 16, &v))
			return -1;
		*fn = v & LUW_LJ_GCVMASK;
	} else {
		if (luw_lj__u64(st, base - 8, &v))
			return -1;
		*fn = v & 0xffffffffu;
		*ftsz = (__s64)(__s32)(__u32)(v >> 32);
	}
	return 0;
}

/*
 * Walks one lua_State from `base` down to the bottom of its stack.  Opens
 * a segment per VM activation, starting with `cframe` (L->cframe).
 * Returns the cframe value (with flags) of the last activation closed, or
 * 0 when the walk stopped early.
 */
static inline __u64 luw_lj__walk_l(struct luw_lj__st *st, __u64 l, __u64 base,
				   __u64 pc, int pc_exact, __u64 cframe,
				   struct luw_lj_frame *first_extra)
{
	const struct luw_lj_layout *ly = st->ly;
	struct luw_lj_walk_out *o = st->out;
	struct luw_lj__stack stk;
	struct luw_lj_seg *seg;
	__u64 bottom, last_cf = 0;
	unsigned int steps, s0;
	int fr2 = st->gc64;

	if (luw_lj__get_stack(st, l, &stk)) {
		o->status = LUW_LJW_FAULT;
		return 0;
	}
	if (!luw_lj__in_stack(&stk, base)) {
		o->status = LUW_LJW_BADBASE;
		return 0;
	}
	/* Every frame link and function slot below base, in one copy. */
	if (st->in->prefetch && stk.lo >= 4096 && base <= ((__u64)1 << 47))
		st->in->prefetch(st->in->ctx, stk.lo, base - stk.lo);
	s0 = o->nsegs;
	seg = luw_lj__seg_open(st, l, cframe);
	if (!seg)
		return 0;
	if (first_extra) {
		/* The trace pseudo-frame belongs to this activation. */
		seg->first = (__u16)(first_extra - o->frames);
		seg->flags |= LUW_LJS_TRACE;
	}
	/* The lowest frame's base: slot 0 is the thread, FR2 adds a nil. */
	bottom = stk.lo + 8 * (1 + fr2);
	for (steps = 0; steps < LUW_LJ_MAX_STEPS; steps++) {
		struct luw_lj_frame *f;
		__s64 ftsz;
		__u64 fn, nbase, npc = 0;
		__u8 ffid, gct;
		int type, typep, boundary = 0;

		if (base <= bottom)
			break;
		if (luw_lj__frame_at(st, base, &ftsz, &fn) ||
		    luw_lj__u8(st, fn + ly->gc_gct, &gct) ||
		    luw_lj__u8(st, fn + ly->fn_ffid, &ffid)) {
			o->status = LUW_LJW_FAULT;
			goto stop;
		}
		if (gct != ly->gct_func) {
			o->status = LUW_LJW_BADFRAME;
			goto stop;
		}
		type = (int)(ftsz & LUW_LJ_FRAME_TYPE);
		typep = (int)(ftsz & LUW_LJ_FRAME_TYPEP);
		if (type == LUW_LJ_FRAME_LUA) {
			__u32 ins;

			npc = fr2 ? (__u64)ftsz : (__u64)(__u32)ftsz;
			if (luw_lj__u32(st, npc - 4, &ins)) {
				o->status = LUW_LJW_FAULT;
				goto stop;
			}
			nbase = base - 8 * (1 + fr2 + ((ins >> 8) & 0xff));
		} else {
			__u64 delta = (__u64)ftsz & ~(__u64)LUW_LJ_FRAME_TYPEP;

			if (ftsz < 0 || delta == 0) {
				o->status = LUW_LJW_BADFRAME;
				goto stop;
			}
			nbase = base - delta;
			if (typep == LUW_LJ_FRAME_VARG) {
				/*
				 * A vararg function's second frame: the real
				 * one, with the caller's link, is below.
				 */
				if (nbase >= base || nbase < bottom) {
					o->status = LUW_LJW_BADFRAME;
					goto stop;
				}
				base = nbase;
				continue;
			}
		}
		f = luw_lj__push(st);
		if (!f)
			goto stop;
		f->func = fn;
		f->ffid = ffid;
		f->link = (__u8)(type == LUW_LJ_FRAME_LUA ? LUW_LJ_FRAME_LUA : typep);
		if (ffid == LUW_LJ_FF_LUA) {
			f->kind = LUW_LJF_LUA;
			f->proto = luw_lj__func_proto(st, fn);
			if (!f->proto) {
				o->nframes--;
				o->status = LUW_LJW_BADFRAME;
				goto stop;
			}
			if (pc && luw_lj__pc_in_proto(st, f->proto, pc)) {
				f->pc = pc;
				if (pc_exact)
					f->flags |= LUW_LJF_PC_EXACT;
				else if (first_extra && o->nframes == 2)
					f->flags |= LUW_LJF_PC_TRACE;
			}
		} else if (ffid == LUW_LJ_FF_C) {
			__u64 cf = 0;

			f->kind = LUW_LJF_C;
			if (luw_lj__field_ok(ly->fn_f) &&
			    !luw_lj__u64(st, fn + ly->fn_f, &cf))
				f->pc = cf;
		} else {
			f->kind = LUW_LJF_FF;
		}
		pc = 0;
		pc_exact = 1;
		if (type == LUW_LJ_FRAME_LUA) {
			pc = npc;
		} else if (typep == LUW_LJ_FRAME_CONT) {
			/* Metamethod or tail-call continuation. */
			__u64 cpc = 0, contv = 0;

			if (fr2) {
				luw_lj__u64(st, base - 24, &cpc);
				luw_lj__u64(st, base - 32, &contv);
			} else {
				__u64 v = 0;

				luw_lj__u64(st, base - 16, &v);
				cpc = v >> 32;
				contv = v & 0xffffffffu;
			}
			if (contv == LUW_LJ_CONT_FFI_CALLBACK)
				boundary = 1;
			else
				pc = cpc;
		} else if (typep == LUW_LJ_FRAME_C || typep == LUW_LJ_FRAME_CP) {
			boundary = 1;
		}
		if (nbase >= base || nbase < bottom - 8 * (1 + fr2)) {
			o->status = LUW_LJW_BADFRAME;
			goto stop;
		}
		base = nbase;
		if (boundary) {
			__u64 prev = 0;

			seg->count = (__u16)(o->nframes - seg->first);
			last_cf = cframe;
			if (cframe && luw_lj__u64(st, (cframe & LUW_LJ_CFRAME_RAWMASK) +
						  ly->cframe_ofs_prev, &prev))
				prev = 0;
			cframe = prev;
			if (base <= bottom)
				return luw_lj__frameless(st, s0, cframe,
							 last_cf);
			seg = luw_lj__seg_open(st, l, cframe);
			if (!seg)
				return 0;
		}
	}
	seg->count = (__u16)(o->nframes - seg->first);
	if (steps >= LUW_LJ_MAX_STEPS) {
		o->status = LUW_LJW_BADFRAME;
		return 0;
	}
	if (seg->count == 0 && o->nsegs > 1 && seg->first == o->nframes) {
		/* Nothing below the last boundary: drop the empty segment. */
		o->nsegs--;
		return last_cf;
	}
	return cframe;
stop:
	seg->count = (__u16)(o->nframes - seg->first);
	return 0;
}

static inline int luw_lj__in_interp(const struct luw_lj_walk_in *in, __u64 ip)
{
	return ip >= in->vm_start && ip < in->interp_end;
}

/* Pseudo-frame for a running trace: its number, start proto and pc. */
static inline struct luw_lj_frame *luw_lj__trace_frame(struct luw_lj__st *st,
						       __u64 g, __u32 traceno)
{
	const struct luw_lj_layout *ly = st->ly;
	struct luw_lj_frame *f = luw_lj__push(st);
	__u64 j = g + (__s64)ly->gg_g2j, arr = 0, t = 0;
	__u32 size = 0;
	__u8 gct = 0;

	if (!f)
		return NULL;
	f->kind = LUW_LJF_TRACE;
	f->trace = traceno;
	if (luw_lj__u64(st, j + ly->j_trace, &arr) ||
	    luw_lj__u32(st, j + ly->j_sizetrace, &size) || traceno >= size ||
	    luw_lj__ref(st, arr + (__u64)traceno * (st->gc64 ? 8 : 4), &t) ||
	    !t || luw_lj__u8(st, t + ly->gc_gct, &gct) || gct != ly->gct_trace)
		return f;
	f->func = t;
	if (luw_lj__ref(st, t + ly->tr_startpt, &f->proto))
		f->proto = 0;
	if (luw_lj__ref(st, t + ly->tr_startpc, &f->pc))
		f->pc = 0;
	return f;
}

/*
 * Walk the Lua stack.  Fills out->frames/segs (innermost first) and the
 * summary fields; returns out->status.  Frames already written stay valid
 * whatever the status.
 */
static inline int luw_lj_walk(const struct luw_lj_walk_in *in,
			      struct luw_lj_walk_out *out)
{
	struct luw_lj__st st;
	const struct luw_lj_layout *ly = in->ly;
	__u64 g = 0, l = 0, base = 0, pc = 0, cframe = 0, cf, sp;
	struct luw_lj_frame *trace_f = NULL;
	__s32 vms = 0;
	int interp, pc_exact = 0;
	unsigned int hops;

	out->nframes = 0;
	out->nsegs = 0;
	out->G = 0;
	out->L = 0;
	out->vmstate_raw = 0;
	out->vmstate = LUW_VMST_UNKNOWN;
	out->status = LUW_LJW_OK;
	out->coros = 0;
	st.in = in;
	st.ly = ly;
	st.out = out;
	st.reads = 0;
	st.max_reads = in->max_reads ? in->max_reads : 4096;
	st.gc64 = !!(ly->flags & LUW_LJ_F_GC64);
	sp = in->regs.r[LUW_X86_RSP];
	interp = luw_lj__in_interp(in, in->regs.ip);

	/* G */
	if (interp || st.gc64) {
		g = in->regs.r[ly->reg_dispatch] - (__s64)ly->gg_g2disp;
		if (!luw_lj__check_g(&st, g))
			g = 0;
	}
	if (!g && in->vm_sp) {
		l = luw_lj__cframe_l(&st, in->vm_sp);
		if (l && !luw_lj__ref(&st, l + ly->l_glref, &g) &&
		    !luw_lj__check_g(&st, g))
			g = 0;
	}
	if (!g && in->g_hint && luw_lj__check_g(&st, in->g_hint))
		g = in->g_hint;
	if (!g) {
		out->status = LUW_LJW_NOG;
		return out->status;
	}
	out->G = g;
	if (luw_lj__rd(&st, g + ly->g_vmstate, &vms, 4)) {
		out->status = LUW_LJW_FAULT;
		return out->status;
	}
	out->vmstate_raw = vms;
	if (vms >= 0)
		out->vmstate = LUW_VMST_TRACE;
	else if ((__u32)~vms < ly->n_vmst)
		out->vmstate = ly->vmst_map[~vms];

	/* L and the live base */
	l = 0;
	if (vms >= 0) {
		__u64 jb = 0;

		if (luw_lj__field_ok(ly->g_tmpbuf_l) &&
		    !luw_lj__ref(&st, g + ly->g_tmpbuf_l, &l))
			l &= ~(__u64)7;
		if (!luw_lj__check_l(&st, l, g))
			l = 0;
		if (!luw_lj__ref(&st, g + ly->g_jit_base, &jb))
			base = jb;
	} else if (interp) {
		l = luw_lj__cframe_l(&st, sp);
		if (!luw_lj__check_l(&st, l, g))
			l = 0;
		base = in->regs.r[ly->reg_base];
		pc = in->regs.r[ly->reg_pc];
		if (!st.gc64)
			pc &= 0xffffffffu;
		pc_exact = 1;
	} else if (in->vm_sp) {
		l = luw_lj__cframe_l(&st, in->vm_sp);
		if (!luw_lj__check_l(&st, l, g))
			l = 0;
	}
	if (!l) {
		if (luw_lj__ref(&st, g + ly->g_cur_l, &l) ||
		    !luw_lj__check_l(&st, l, g)) {
			out->status = LUW_LJW_NOL;
			return out->status;
		}
	}
	out->L = l;
	if (luw_lj__u64(&st, l + ly->l_cframe, &cframe))
		cframe = 0;
	{
		struct luw_lj__stack stk;

		if (luw_lj__get_stack(&st, l, &stk)) {
			out->status = LUW_LJW_FAULT;
			return out->status;
		}
		if (!luw_lj__in_stack(&stk, base) &&
		    luw_lj__u64(&st, l + ly->l_base, &base)) {
			out->status = LUW_LJW_FAULT;
			return out->status;
		}
		if (!luw_lj__in_stack(&stk, base)) {
			out->status = LUW_LJW_BADBASE;
			return out->status;
		}
	}
	if (vms >= 0) {
		trace_f = luw_lj__trace_frame(&st, g, (__u32)vms);
		if (!trace_f)
			return out->status;
		/* The trace started in the frame at jit_base, at startpc. */
		pc = trace_f->pc;
		pc_exact = 0;
	}

	cf = luw_lj__walk_l(&st, l, base, pc, pc_exact, cframe, trace_f);
	if (interp && out->nframes == 0 && vms < 0 &&
	    (out->status == LUW_LJW_FAULT || out->status == LUW_LJW_BADFRAME)) {
		__u64 lbase;

		/*
		 * Some VM paths use BASE's register for a C argument (rdx is
		 * CARG3); the last base the VM stored is the next best thing.
		 */
		if (!luw_lj__u64(&st, l + ly->l_base, &lbase) && lbase != base) {
			out->status = LUW_LJW_OK;
			out->nsegs = 0;
			cf = luw_lj__walk_l(&st, l, lbase, 0, 0, cframe, NULL);
		}
	}
	if (out->vmstate == LUW_VMST_INTERP && out->nframes) {
		/* Stock LuaJIT: tell Lua code from fast functions. */
		__u8 k = out->frames[0].kind;

		out->vmstate = k == LUW_LJF_FF ? LUW_VMST_FFUNC :
			       k == LUW_LJF_LUA ? LUW_VMST_LFUNC :
			       LUW_VMST_INTERP;
	}

	/* Follow coroutine.resume into the resumer's stack. */
	for (hops = 0; hops < LUW_LJ_MAX_CORO_HOPS; hops++) {
		__u64 raw, ret, outer, ocf, obase;

		if (out->status != LUW_LJW_OK || !(cf & LUW_LJ_CFRAME_RESUME))
			break;
		raw = cf & LUW_LJ_CFRAME_RAWMASK;
		if (luw_lj__u64(&st, raw + ly->cframe_size - 8, &ret) ||
		    ret < in->vm_start || ret >= in->interp_end)
			break;	/* resumed from C: the host unwinder goes on */
		outer = luw_lj__cframe_l(&st, raw + ly->cframe_size);
		if (!luw_lj__check_l(&st, outer, g) ||
		    luw_lj__u64(&st, outer + ly->l_cframe, &ocf) ||
		    (ocf & LUW_LJ_CFRAME_RAWMASK) != raw + ly->cframe_size ||
		    luw_lj__u64(&st, outer + ly->l_base, &obase))
			break;
		out->coros++;
		cf = luw_lj__walk_l(&st, outer, obase, 0, 0, ocf, NULL);
	}
	return out->status;
}

#endif /* LUAUNWIND_LJWALK_H */
