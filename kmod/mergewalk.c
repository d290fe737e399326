// SPDX-License-Identifier: GPL-2.0
/*
 * The body of a sample of a target whose LuaJIT layout is known: host
 * frames and Lua frames, merged as include/luaunwind.h ("How the module
 * builds them") describes.
 *
 * The host cursor (hostwalk.c) goes up from the interrupted frame.  The
 * first frame that runs VM code -- the interpreter, or the machine code of
 * the running trace -- triggers the one Lua walk of the sample
 * (ljwalk.c, every read through luw_walk_read(), against the
 * sample's one budget).
 * Each VM frame met from then on takes the next Lua segment and the cursor
 * jumps to the caller of that segment's VM entry, read from the entry's C
 * frame: interpreter and trace code are never unwound, so a trace (no
 * unwind info, no frame pointer) does not end the host stack.
 *
 * Runs in the perf handler: per-CPU scratch (the handler's busy flag keeps
 * it to one user per CPU), no locks, no allocation, bounded everywhere.
 */
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "luw.h"
#include "hwstep.h"
#include "ljwalk.h"

struct luw_lua_scratch {
	/*
	 * The Lua walk's inputs, kept here and not on the handler's stack,
	 * which the kernel zeroes at every entry (INIT_STACK_ALL_ZERO):
	 * at the interrupted frame the sample's registers, filled once a
	 * sample; at a caller frame ip, sp and r14 alone (luw_lua_walk()),
	 * whose other registers are never written and stay zero from the
	 * allocation.
	 */
	struct luw_lj_walk_in at_sample;
	struct luw_lj_walk_in at_caller;
	struct luw_lj_frame lf[LUW_MAX_LUA_FRAMES];
	struct luw_lj_seg segs[LUW_MAX_SPLICES];
	/* lua_first holds the segment index until the frames are written */
	struct luw_splice sp[LUW_MAX_SPLICES];
};

static struct luw_lua_scratch __percpu *luw_lws;

int luw_mergewalk_init(void)
{
	luw_lws = alloc_percpu(struct luw_lua_scratch);
	if (!luw_lws)
		return -ENOMEM;
	if (luw_hostwalk_init()) {
		free_percpu(luw_lws);
		luw_lws = NULL;
		return -ENOMEM;
	}
	return 0;
}

void luw_mergewalk_exit(void)
{
	luw_hostwalk_exit();
	free_percpu(luw_lws);
	luw_lws = NULL;
}

/*
 * The fallback G (when the sampled thread's registers and VM frame name
 * none) is attach's hint, given only when userspace found exactly one
 * global_State.  A process may make more later (a state per thread):
 * t->g_seen becomes LUW_G_MANY once walks have validated two different
 * ones, and from then on there is no fallback -- another thread's G
 * would give this sample that thread's Lua stack.  A trace's frame above
 * C code it called (a GC step) still names its own G there when the host
 * walk recovered r14 through that code's CFI (GC64: DISPATCH).
 */
#define LUW_G_MANY		1ULL

/* One sample's Lua state. */
struct luw_lw {
	struct luw_proc *t;
	struct luw_lua_scratch *ws;
	struct luw_lj_walk_out out;
	struct luw_lj_regs *regs;	/* of the interrupted frame */
	bool walked;			/* out holds this sample's walk */
	/* pc lies in a trace's machine code the walk could not place */
	bool in_mcode;
	struct luw_cost *cost;		/* the sample's, shared with the host */
};

static __always_inline int luw_lj_read(struct luw_lw *lw, u64 addr,
					void *dst, u32 len)
{
	return luw_walk_read(lw->cost, addr, dst, len);
}

static void luw_lj_regs_from(struct luw_lj_regs *r, const struct pt_regs *p)
{
	r->ip = p->ip;
	r->r[LUW_X86_RAX] = p->ax;
	r->r[LUW_X86_RDX] = p->dx;
	r->r[LUW_X86_RCX] = p->cx;
	r->r[LUW_X86_RBX] = p->bx;
	r->r[LUW_X86_RSI] = p->si;
	r->r[LUW_X86_RDI] = p->di;
	r->r[LUW_X86_RBP] = p->bp;
	r->r[LUW_X86_RSP] = p->sp;
	r->r[LUW_X86_R8] = p->r8;
	r->r[LUW_X86_R9] = p->r9;
	r->r[LUW_X86_R10] = p->r10;
	r->r[LUW_X86_R11] = p->r11;
	r->r[LUW_X86_R12] = p->r12;
	r->r[LUW_X86_R13] = p->r13;
	r->r[LUW_X86_R14] = p->r14;
	r->r[LUW_X86_R15] = p->r15;
}

/*
 * Walk the Lua stack.  At the interrupted frame the sample's registers
 * are exact; at a caller frame only ip and sp are known -- and r14 when
 * the host walk recovered it through the CFI of the frames in between
 * (r14 != 0) -- so every other register reads as 0 and the walker takes G
 * from r14 (GC64: DISPATCH, which traces keep there), the cframe at vm_sp
 * or the hint instead.
 */
static void luw_lua_walk(struct luw_lw *lw, bool sample_frame, u64 ip, u64 sp,
			 u64 r14, u64 vm_sp, u32 mcode_trace)
{
	const struct luw_proc *t = lw->t;
	struct luw_lj_walk_in *in;
	u64 g;

	if (sample_frame) {
		in = &lw->ws->at_sample;
	} else {
		in = &lw->ws->at_caller;
		in->regs.ip = ip;
		in->regs.r[LUW_X86_RSP] = sp;
		/*
		 * Non-GC64 traces do not keep DISPATCH in a register: there
		 * r14 says nothing about G.
		 */
		in->regs.r[LUW_X86_R14] = (t->ly.flags & LUW_LJ_F_GC64) &&
					  t->ly.reg_dispatch == LUW_X86_R14 ?
					  r14 : 0;
	}
	in->ly = &t->ly;
	/* The sample's cost is the walkers' context (walkenv.h). */
	in->read = luw_walk_read;
	in->ctx = lw->cost;
	in->vm_start = t->vm_start;
	in->interp_end = t->interp_end;
	in->vm_end = t->vm_end;
	in->vm_sp = vm_sp;
	in->mcode_trace = mcode_trace;
	g = READ_ONCE(t->g_seen);
	in->g_hint = g == LUW_G_MANY ? 0 : t->g_hint;
	lw->out.frames = lw->ws->lf;
	lw->out.max_frames = t->max_lua;
	lw->out.segs = lw->ws->segs;
	lw->out.max_segs = LUW_MAX_SPLICES;
	luw_lj_walk(in, &lw->out);
}

/* Traces looked at when pc is not in the one G->vmstate names. */
#define LUW_TRACE_SCAN		128

/*
 * G->vmstate is set when a trace is entered from the interpreter; a trace
 * that links or jumps to another leaves it alone.  So pc may be in any
 * trace: look through J->trace[] (bounded).  Returns the number of the
 * trace whose machine code holds pc, 0 if none.
 */
static u32 luw_lua_in_any_trace(struct luw_lw *lw, u64 pc)
{
	const struct luw_lj_layout *ly = &lw->t->ly;
	u64 j = lw->out.G + (s64)ly->gg_g2j, arr = 0;
	unsigned int gc64 = !!(ly->flags & LUW_LJ_F_GC64), i;
	u32 size = 0;

	if (ly->j_trace == LUW_LJ_NOFIELD || ly->j_sizetrace == LUW_LJ_NOFIELD ||
	    luw_lj_read(lw, j + ly->j_trace, &arr, sizeof(arr)) ||
	    luw_lj_read(lw, j + ly->j_sizetrace, &size, sizeof(size)))
		return 0;
	for (i = 1; i < size && i <= LUW_TRACE_SCAN; i++) {
		u64 t = 0, mcode = 0;
		u32 sz = 0;

		if (luw_lj_read(lw, arr + (u64)i * (gc64 ? 8 : 4), &t,
				gc64 ? 8 : 4))
			return 0;
		if (!t)
			continue;
		if (luw_lj_read(lw, t + ly->tr_mcode, &mcode, sizeof(mcode)) ||
		    luw_lj_read(lw, t + ly->tr_szmcode, &sz, sizeof(sz)))
			continue;
		if (pc >= mcode && pc < mcode + sz)
			return i;
	}
	return 0;
}

/*
 * Is pc in JIT-compiled code?  Walks the Lua stack as if it were; the walk
 * is this sample's only when the answer is yes: G->vmstate names a trace
 * and pc lies in that trace's machine code -- or, at the interrupted frame
 * of a GC64 build, DISPATCH is live in its register (only the interpreter
 * and traces keep it there) while pc is in no uploaded mapping; or pc is
 * in the machine code of another trace.  r14: at a caller frame, this
 * frame's r14 as the host walk recovered it, 0 if unknown.
 */
static bool luw_lua_trace_probe(struct luw_lw *lw, bool sample_frame, u64 pc,
				u64 sp, u64 r14)
{
	const struct luw_lj_layout *ly = &lw->t->ly;
	const struct luw_lj_frame *f = &lw->ws->lf[0];
	u64 mcode = 0;
	u32 size = 0, tno;
	bool in_mcode;

	if (ly->tr_mcode == LUW_LJ_NOFIELD || ly->tr_szmcode == LUW_LJ_NOFIELD)
		return false;
	luw_lua_walk(lw, sample_frame, sample_frame ? lw->regs->ip : pc, sp, r14,
		     0, 0);
	tno = 0;
	if (lw->out.vmstate == LUW_VMST_GC && !sample_frame && lw->out.G)
		tno = luw_lua_in_any_trace(lw, pc);
	if (tno) {
		/*
		 * pc is the return address of a GC step the trace called
		 * (lj_gc_step_jit): the walk again, told which trace.  It
		 * takes the trace only where G->jit_base and L->base agree.
		 * G came from r14 recovered through the GC's frames, or from
		 * the hint while the process has one global_State.
		 */
		luw_lua_walk(lw, false, pc, sp, r14, 0, tno);
		if (lw->out.nframes && f->kind == LUW_LJF_TRACE && f->func) {
			lw->walked = true;
			return true;
		}
		lw->in_mcode = true;
		return false;
	}
	if (lw->out.vmstate != LUW_VMST_TRACE || !lw->out.nframes ||
	    f->kind != LUW_LJF_TRACE || !f->func) {
		/*
		 * Trace code that G does not say is running (an exit stub, a
		 * trace entered by a link): no unwind rule and no frame
		 * pointer hold there, so the host walk must end at it.
		 */
		lw->in_mcode = lw->out.G && luw_lua_in_any_trace(lw, pc);
		return false;
	}
	in_mcode = !luw_lj_read(lw, f->func + ly->tr_mcode, &mcode,
				sizeof(mcode)) &&
		   !luw_lj_read(lw, f->func + ly->tr_szmcode, &size,
				sizeof(size)) &&
		   pc >= mcode && pc < mcode + size;
	if (!in_mcode && !(sample_frame && (ly->flags & LUW_LJ_F_GC64) &&
			   lw->out.G == lw->regs->r[ly->reg_dispatch] -
					(s64)ly->gg_g2disp) &&
	    !luw_lua_in_any_trace(lw, pc))
		return false;
	lw->walked = true;
	return true;
}

/* Does the VM C frame at sp hold a lua_State (as the interpreter's does)? */
static bool luw_lua_cframe_at(struct luw_lw *lw, u64 sp)
{
	const struct luw_lj_layout *ly = &lw->t->ly;
	u64 a = sp + ly->cframe_ofs_l, l;
	u32 l32;
	u8 gct;

	/* Sizes known here: l stays in a register (uread.h). */
	if (ly->cframe_l_size == 8) {
		if (luw_lj_read(lw, a, &l, 8))
			return false;
	} else {
		if (luw_lj_read(lw, a, &l32, 4))
			return false;
		l = l32;
	}
	if (!l || luw_lj_read(lw, l + ly->gc_gct, &gct, 1))
		return false;
	return gct == ly->gct_thread;
}

/*
 * The interpreter calls a few subroutines of its own (lj_vm_mod,
 * lj_vm_floor...) with a plain call: inside them rsp is 8 below the C
 * frame, and the FDE that covers them (CFA = rsp + cframe_size) is off by
 * those 8 bytes.  Such a sample becomes two frames: the subroutine, then
 * the interpreter at its return address with the frame's real sp.
 */
static bool luw_lua_vm_subroutine(struct luw_lw *lw, struct luw_hw *w)
{
	const struct luw_proc *t = lw->t;
	u64 sp = w->r.sp, ra;

	if (luw_lua_cframe_at(lw, sp) || !luw_hw_read(w, sp, &ra) ||
	    ra < t->vm_start || ra >= t->interp_end ||
	    !luw_lua_cframe_at(lw, sp + 8) ||
	    !luw_hw_restart(w, ra, sp + 8, w->r.bp))
		return false;
	lw->regs->ip = ra;
	lw->regs->r[LUW_X86_RSP] = sp + 8;
	return true;
}

/* Move the cursor to the caller of the VM entry whose C frame is cframe. */
static bool luw_lua_restart(struct luw_lw *lw, struct luw_hw *w, u64 cframe)
{
	const struct luw_lj_layout *ly = &lw->t->ly;
	u64 top = cframe + ly->cframe_size, ra, bp;

	if (!cframe || !luw_hw_read(w, top - 8, &ra) ||
	    !luw_hw_read(w, top - ly->cframe_rbp_cfa, &bp))
		return false;
	return luw_hw_restart(w, ra, top, bp);
}

static void luw_lua_frame_out(const struct luw_lj_layout *ly,
			      const struct luw_lj_frame *f,
			      struct luw_lua_frame *o)
{
	u64 bc = f->proto + ly->pt_size;

	memset(o, 0, sizeof(*o));
	switch (f->kind) {
	case LUW_LJF_LUA:
	case LUW_LJF_TRACE:
		o->kind = f->kind == LUW_LJF_LUA ? LUW_LF_LUA : LUW_LF_TRACE;
		o->addr = f->proto;
		if (f->kind == LUW_LJF_LUA)
			o->func = f->func;
		if (f->proto && f->pc >= bc && f->pc - bc < (4ULL << 30))
			o->pc = (u32)((f->pc - bc) / 4);
		if (f->flags & LUW_LJF_PC_TRACE)
			o->flags |= LUW_LFF_PC_AT;
		o->trace = f->trace;
		break;
	case LUW_LJF_C:
		o->kind = LUW_LF_C;
		o->addr = f->func;
		break;
	default:
		o->kind = LUW_LF_FFUNC;
		o->addr = f->func;
		o->ffid = f->ffid;
		break;
	}
	switch (f->link) {
	case LUW_LJ_FRAME_PCALL:
	case LUW_LJ_FRAME_PCALLH:
	case LUW_LJ_FRAME_CP:
		o->flags |= LUW_LFF_PCALL;
		break;
	case LUW_LJ_FRAME_CONT:
		o->flags |= LUW_LFF_CONT;
		break;
	}
}

/*
 * Write the Lua frames of the splices in order; a segment's innermost C
 * function is left out when host frames (its own code) precede it.
 */
static u32 luw_lua_emit(struct luw_lw *lw, struct luw_lua_frame *out,
			struct luw_splice *sp, unsigned int nsp)
{
	const struct luw_lj_layout *ly = &lw->t->ly;
	struct luw_lua_scratch *ws = lw->ws;
	unsigned int i, k, nlua = 0;

	for (i = 0; i < nsp; i++) {
		struct luw_splice *s = &ws->sp[i];
		unsigned int seg = s->lua_first, last = seg + s->lua_count;
		unsigned int first_out = nlua;

		for (; seg < last; seg++) {
			const struct luw_lj_seg *g = &ws->segs[seg];
			unsigned int from = g->first, to = g->first + g->count;

			if (to > lw->out.nframes)
				to = lw->out.nframes;
			if (from < to && seg == s->lua_first && s->host_first &&
			    ws->lf[from].kind == LUW_LJF_C)
				from++;
			for (k = from; k < to; k++)
				luw_lua_frame_out(ly, &ws->lf[k], &out[nlua++]);
			if ((g->flags & LUW_LJS_RESUMED) && nlua > first_out)
				out[nlua - 1].flags |= LUW_LFF_COROUTINE;
		}
		sp[i].host_first = s->host_first;
		sp[i].host_count = s->host_count;
		sp[i].lua_first = first_out;
		sp[i].lua_count = nlua - first_out;
	}
	return nlua;
}

/* Remember the G a walk validated; a second one ends the fallback. */
static void luw_lua_g_seen(struct luw_proc *t, u64 g)
{
	u64 old = READ_ONCE(t->g_seen);

	while (old != g && old != LUW_G_MANY) {
		u64 was = cmpxchg(&t->g_seen, old, old ? LUW_G_MANY : g);

		if (was == old)
			break;
		old = was;
	}
}

static bool luw_lua_failed(const struct luw_lj_walk_out *o)
{
	return o->status != LUW_LJW_OK;
}

/*
 * Fill s (header fields but size, pid, tid, cpu, time) and the body after
 * it; returns the record size.
 */
u32 luw_merged_walk(struct luw_proc *t, struct pt_regs *regs,
		    struct luw_sample *s, struct luw_cost *cost)
{
	struct luw_lua_scratch *ws = this_cpu_ptr(luw_lws);
	struct luw_lw lw = { .t = t, .ws = ws, .cost = cost };
	unsigned int n = 0, nsp = 0, seg = 0, max = t->max_host;
	bool complete = false, probed = false, probed_here = false, sub = false;
	bool frameless = false;
	struct luw_lua_frame *lout;
	struct luw_splice *sout;
	u64 *pcs = (u64 *)(s + 1);
	struct luw_hw w;
	u8 rflags = s->flags;
	bool own = false;
	unsigned int i, k;
	u32 nlua;
	int rc;

	lw.regs = &ws->at_sample.regs;
	luw_lj_regs_from(lw.regs, regs);
	rcu_read_lock();
	luw_hw_init(&w, t, regs, cost);
	/* r14 matters to the trace probe alone (below). */
	w.want_r14 = t->ly.flags & LUW_LJ_F_JIT;
	pcs[n++] = w.r.ip;
	for (;;) {
		u64 pc = w.r.ip;
		bool vm = pc >= t->vm_start && pc < t->interp_end;
		bool trace = false;

		/*
		 * A VM entry's prologue or an exit's epilogue: the table
		 * has its exact row, and its frame is a C frame on the
		 * way in or out of the VM, no activation with Lua frames
		 * of its own.  Stepping it leads to the C caller
		 * (lua_pcall...); an enclosing activation's Lua frames are
		 * spliced where its own VM frame comes up.
		 */
		if (vm && n == 1 && luw_hw_in_vmseq(&w)) {
			vm = false;
			own = true;
		}

		if (!vm && !lw.walked && !probed &&
		    (t->ly.flags & LUW_LJ_F_JIT) &&
		    (pc < t->vm_start || pc >= t->vm_end) &&
		    !luw_hw_has_table(&w)) {
			u64 r14 = 0;

			probed = true;
			probed_here = n == 1;
			if (n > 1 && !luw_hw_r14(&w, &r14))
				r14 = 0;
			trace = luw_lua_trace_probe(&lw, n == 1, pc, w.r.sp,
						    r14);
			vm = trace;
			if (!trace && lw.in_mcode)
				break;
		}
		if (vm && !trace && n == 1 && max > 1 &&
		    luw_lua_vm_subroutine(&lw, &w)) {
			pcs[n++] = w.r.ip;
			sub = true;
			own = true;
		}
		/*
		 * The interpreter's unwind rule (CFA = rsp + cframe_size) holds
		 * only where its C frame is set up.  Entry prologues and exit
		 * epilogues the table marks were taken above; in any other
		 * spot where rsp holds no frame with a lua_State, stepping
		 * would read garbage as the return address, so the host walk
		 * ends here.
		 */
		if (vm && !trace && n == 1 && !sub &&
		    !luw_lua_cframe_at(&lw, w.r.sp))
			frameless = true;
		if (vm && !lw.walked) {
			lw.walked = true;
			if (n == 1 || sub)
				luw_lua_walk(&lw, true, 0, 0, 0, 0, 0);
			else
				luw_lua_walk(&lw, false, 0, w.r.sp, 0, w.r.sp,
					     0);
		}
		if (vm && seg < lw.out.nsegs) {
			const struct luw_lj_seg *g = &ws->segs[seg];
			/*
			 * A trace runs below its activation's C frame, and so
			 * do the VM subroutines it calls (lj_vm_floor, the
			 * exit handler...): vmstate names a trace there, or
			 * EXIT, or GC when the exit handler's lj_trace_exit
			 * runs a GC step (the Lua stack is whole by then: the
			 * GC marks it).
			 */
			bool below = trace ||
				     (seg == 0 &&
				      (lw.out.vmstate == LUW_VMST_TRACE ||
				       lw.out.vmstate == LUW_VMST_EXIT ||
				       lw.out.vmstate == LUW_VMST_GC));

			/*
			 * So does ->vm_exit_handler, with the exit state
			 * pushed, when what it called entered the VM again
			 * (lj_trace_exit's cpcall of trace_exit_cp: that
			 * activation is segment 0, the trace's the next).
			 * Its frame is no interpreter C frame, which is what
			 * tells it from an activation's own.
			 */
			if (!below && n > 1 && g->cframe > w.r.sp &&
			    !luw_lua_cframe_at(&lw, w.r.sp))
				below = true;

			/*
			 * The activation's C frame is where the interpreter
			 * keeps rsp.  Anything else means the walk and the
			 * host stack disagree.
			 */
			if (!g->cframe || (below ? g->cframe < w.r.sp :
					   g->cframe != w.r.sp)) {
				rflags |= LUW_RF_LUA_TRUNC;
				lw.out.nsegs = seg;
			} else {
				ws->sp[nsp].host_first = n - 1;
				ws->sp[nsp].host_count = 1;
				ws->sp[nsp].lua_first = seg;
				ws->sp[nsp].lua_count = 1;
				nsp++;
				seg++;
				if (!luw_lua_restart(&lw, &w, g->cframe))
					break;
				if (n >= max)
					break;
				pcs[n++] = w.r.ip;
				continue;
			}
		}
		/*
		 * A VM frame no segment took is stepped by the VM's FDE,
		 * which holds only where rsp is an interpreter C frame, as
		 * for the interrupted frame above.  A caller frame elsewhere
		 * in the VM is not one: ->vm_exit_handler calls
		 * lj_trace_exit with the exit state pushed below the trace's
		 * frame, and the FDE's return address there is whatever the
		 * exit state holds.
		 */
		if (vm && !trace && n > 1 && !luw_lua_cframe_at(&lw, w.r.sp))
			frameless = true;
		if (trace || frameless || n >= max)
			break;
		if (lw.walked || probed)
			w.want_r14 = false;
		rc = luw_hw_step(&w);
		if (rc == LUW_HW_END)
			complete = true;
		if (rc != LUW_HW_NEXT)
			break;
		pcs[n++] = w.r.ip;
	}
	rcu_read_unlock();
	luw_hw_finish(&w, complete, &rflags);

	/*
	 * No VM frame on a host stack that ended early: the thread may still
	 * be in Lua; the walk from G->cur_L goes below the host frames.
	 */
	if (!lw.walked && !complete) {
		if (!probed_here)
			luw_lua_walk(&lw, true, 0, 0, 0, 0, 0);
		lw.walked = lw.out.status != LUW_LJW_NOG &&
			    lw.out.status != LUW_LJW_NOL;
	}
	if (lw.walked && seg < lw.out.nsegs && nsp < LUW_MAX_SPLICES) {
		ws->sp[nsp].host_first = n;
		ws->sp[nsp].host_count = 0;
		ws->sp[nsp].lua_first = seg;
		ws->sp[nsp].lua_count = lw.out.nsegs - seg;
		nsp++;
	}

	/*
	 * An interpreter frame no Lua segment replaced means Lua frames were
	 * lost: say so.  The innermost frame may be the VM's own and hold
	 * none (an entry or exit sequence, a VM subroutine).  The splices
	 * were made in host-frame order, each replacing at most one frame,
	 * so one pass over both finds a frame's: a splice out of that order
	 * could only be missed, which flags the sample, never clears it.
	 */
	for (i = own, k = 0; i < n; i++) {
		if (pcs[i] < t->vm_start || pcs[i] >= t->interp_end)
			continue;
		while (k < nsp && ws->sp[k].host_first < i)
			k++;
		if (k == nsp || ws->sp[k].host_first != i ||
		    !ws->sp[k].host_count)
			rflags |= LUW_RF_LUA_TRUNC;
	}

	lout = (struct luw_lua_frame *)(pcs + n);
	nlua = lw.walked ? luw_lua_emit(&lw, lout, ws->sp, nsp) : 0;
	sout = (struct luw_splice *)(lout + nlua);
	if (nlua || lw.walked)
		memcpy(sout, ws->sp, nsp * sizeof(*sout));
	else
		nsp = 0;

	if (probed || lw.walked) {
		s->vmstate = lw.out.vmstate;
		if (lw.out.vmstate == LUW_VMST_TRACE)
			s->trace = (u32)lw.out.vmstate_raw;
		if (lw.walked && luw_lua_failed(&lw.out))
			rflags |= LUW_RF_LUA_TRUNC;
		if (lw.out.status == LUW_LJW_OK && lw.out.G)
			luw_lua_g_seen(t, lw.out.G);
	}
	s->flags = rflags;
	s->nhost = n;
	s->nlua = nlua;
	s->nsplice = nsp;
	return sizeof(*s) + n * sizeof(u64) + nlua * sizeof(*lout) +
	       nsp * sizeof(*sout);
}
