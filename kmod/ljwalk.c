// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The Lua stack walk of ljwalk.h (the design is described there), and the
 * structural check of a layout descriptor.
 */
#include "ljwalk.h"

/*
 * What the walk learned of a function object, kept for the rest of the
 * walk: a recursion, or a loop calling the same few functions, finds it
 * here instead of asking for the object's fields again.  The fields read
 * (type, ffid, pc, f; a proto's type and size) do not change while the
 * object lives, so only the number of requests changes, not what the
 * walk sees.
 * Direct-mapped: a stack whose functions are all different (closures made
 * per level) gains nothing and loses nothing.
 */
#define LJ_FN_MEMO	8	/* a power of two */

#define LJ_FN_PCREF	0x01	/* pcref read */
#define LJ_FN_PROTO	0x02	/* proto checked: 0 when not one */
#define LJ_FN_SIZEBC	0x04	/* the proto's sizebc read */
#define LJ_FN_CFUNC	0x08	/* cfunc read */

struct lj_fn {
	u64 fn;			/* a GCfunc (type byte checked); 0 empty */
	u64 pcref;		/* fn_pc */
	u64 proto;		/* Lua: its GCproto, type byte checked */
	u64 cfunc;		/* C: fn_f */
	u32 sizebc;
	u8 ffid;
	u8 flags;		/* LJ_FN_* */
};

/* Longest span of an object's fields read with one request. */
#define LJ_BLOCK_MAX	64

struct lj_st {
	const struct luw_lj_walk_in *in;
	const struct luw_lj_layout *ly;
	struct luw_lj_walk_out *out;
	u32 reads;
	u32 max_reads;
	int gc64;
	/*
	 * The fields of a GCfunc the walk reads, [fn_lo, fn_hi) from the
	 * object (gct, ffid, pc, f), and of a GCproto, [pt_lo, pt_hi) (gct,
	 * sizebc): one request each when the span is short.  Both lie within
	 * the object, whatever its kind.
	 */
	u32 fn_lo, fn_hi, pt_lo, pt_hi;
	/* the last call instruction read (a recursion repeats it) */
	u64 ins_at;
	u32 ins;
	struct lj_fn fns[LJ_FN_MEMO];
	/* the stack of stk_l as lj_get_stack() last read it (0: none) */
	u64 stk_l;
	u64 stk_lo, stk_hi;
};

/*
 * Every read of the walk goes through these: inline, as they were when the
 * walk was a header, so a read costs the reader's call (walkenv.h) and
 * nothing more.  The budget is the reader's in the module: luw_walk_read()
 * counts every request of the sample against the one budget of all its
 * walks and refuses past it (-E2BIG), so a count here would repeat its
 * count and its test on every read.  In userspace the walk counts its
 * callback's calls itself (in->max_reads).
 */
static LUW_INLINE int lj_rd(struct lj_st *st, u64 addr, void *dst, u32 len)
{
	int rc;

#ifndef __KERNEL__
	if (st->reads >= st->max_reads) {
		if (st->out->status == LUW_LJW_OK)
			st->out->status = LUW_LJW_BUDGET;
		return -EFAULT;
	}
	st->reads++;
#endif
	/* Nothing LuaJIT owns lives in the first page or the kernel half. */
	if (addr < 4096 || addr >= ((u64)1 << 47) ||
	    addr + len > ((u64)1 << 47))
		return -EFAULT;
	rc = LUW_WALK_READ(st->in->read, st->in->ctx, addr, dst, len);
	if (!rc)
		return 0;
	if (rc == -E2BIG && st->out->status == LUW_LJW_OK)
		st->out->status = LUW_LJW_BUDGET;
	return -EFAULT;
}

static LUW_INLINE int lj_u8(struct lj_st *st, u64 a, u8 *v)
{
	return lj_rd(st, a, v, 1);
}

static LUW_INLINE int lj_u32(struct lj_st *st, u64 a, u32 *v)
{
	return lj_rd(st, a, v, 4);
}

static LUW_INLINE int lj_u64(struct lj_st *st, u64 a, u64 *v)
{
	return lj_rd(st, a, v, 8);
}

/* GCRef / MRef: 8 bytes in GC64 builds, 4 otherwise. */
static LUW_INLINE int lj_ref(struct lj_st *st, u64 a, u64 *v)
{
	u32 v32;

	if (st->gc64)
		return lj_u64(st, a, v);
	if (lj_u32(st, a, &v32))
		return -EFAULT;
	*v = v32;
	return 0;
}

static int lj_field_ok(u16 ofs)
{
	return ofs != LUW_LJ_NOFIELD;
}

/* G is real if its main thread points back at it. */
static int lj_check_g(struct lj_st *st, u64 g)
{
	u64 mainl, glref;

	if (!g || (g & 7))
		return 0;
	if (lj_ref(st, g + st->ly->g_mainthref, &mainl))
		return 0;
	if (!mainl || lj_ref(st, mainl + st->ly->l_glref, &glref))
		return 0;
	return glref == g;
}

static int lj_check_l(struct lj_st *st, u64 l, u64 g)
{
	u8 gct;
	u64 glref;

	if (!l || (l & 7))
		return 0;
	if (lj_u8(st, l + st->ly->gc_gct, &gct) ||
	    gct != st->ly->gct_thread)
		return 0;
	if (lj_ref(st, l + st->ly->l_glref, &glref))
		return 0;
	return glref == g;
}

/* The saved L in a VM cframe (4 bytes in non-GC64 builds). */
static u64 lj_cframe_l(struct lj_st *st, u64 cframe)
{
	u64 l = 0;
	u32 l32;

	if (st->ly->cframe_l_size == 8) {
		if (lj_u64(st, cframe + st->ly->cframe_ofs_l, &l))
			return 0;
	} else {
		if (lj_u32(st, cframe + st->ly->cframe_ofs_l, &l32))
			return 0;
		l = l32;
	}
	return l;
}

struct lj_stack {
	u64 lo;	/* L->stack */
	u64 hi;	/* one past the last slot */
};

/*
 * L's stack, read once per walk: the walk asks for it at the start, for
 * the interpreter's base and for the frames, and only this thread moves
 * the stack of the state it runs.
 */
static int lj_get_stack(struct lj_st *st, u64 l, struct lj_stack *s)
{
	u32 size;

	if (l && st->stk_l == l) {
		s->lo = st->stk_lo;
		s->hi = st->stk_hi;
		return 0;
	}
	if (lj_ref(st, l + st->ly->l_stack, &s->lo) ||
	    lj_u32(st, l + st->ly->l_stacksize, &size))
		return -EFAULT;
	if (!s->lo || size == 0 || size > (1u << 24))
		return -EINVAL;
	s->hi = s->lo + (u64)size * 8;
	st->stk_l = l;
	st->stk_lo = s->lo;
	st->stk_hi = s->hi;
	return 0;
}

static int lj_in_stack(const struct lj_stack *s, u64 p)
{
	return p > s->lo && p <= s->hi && !(p & 7);
}

/* A GCRef or MRef inside a block read by lj_block(). */
static u64 lj_ref_at(const struct lj_st *st, const u8 *p)
{
	u64 v64;
	u32 v32;

	if (st->gc64) {
		__builtin_memcpy(&v64, p, 8);
		return v64;
	}
	__builtin_memcpy(&v32, p, 4);
	return v32;
}

/* [obj + lo, obj + hi) in one request, when the span is short. */
static int lj_block(struct lj_st *st, u64 obj, u32 lo, u32 hi, u8 *buf)
{
	if (!hi || hi - lo > LJ_BLOCK_MAX)
		return -EINVAL;
	return lj_rd(st, obj + lo, buf, hi - lo);
}

static void lj_span_add(u32 *lo, u32 *hi, u32 ofs, u32 len)
{
	if (ofs < *lo)
		*lo = ofs;
	if (ofs + len > *hi)
		*hi = ofs + len;
}

/*
 * A span as whole words of the object: GC objects are 8-aligned, so the
 * words that hold the span are the object's own, and the reader loads
 * whole words only, with no tail of 4, 2 and 1 bytes.
 */
static void lj_span_words(u32 *lo, u32 *hi)
{
	*lo &= ~7u;
	*hi = (*hi + 7) & ~7u;
}

/* The blocks lj_fn_get() and lj_fn_proto() read; hi 0: field by field. */
static void lj_spans(struct lj_st *st)
{
	const struct luw_lj_layout *ly = st->ly;
	u32 ref = st->gc64 ? 8 : 4;

	st->fn_lo = ~0u;
	st->fn_hi = 0;
	lj_span_add(&st->fn_lo, &st->fn_hi, ly->gc_gct, 1);
	lj_span_add(&st->fn_lo, &st->fn_hi, ly->fn_ffid, 1);
	lj_span_add(&st->fn_lo, &st->fn_hi, ly->fn_pc, ref);
	if (lj_field_ok(ly->fn_f))
		lj_span_add(&st->fn_lo, &st->fn_hi, ly->fn_f, 8);
	lj_span_words(&st->fn_lo, &st->fn_hi);
	if (st->fn_hi - st->fn_lo > LJ_BLOCK_MAX)
		st->fn_hi = 0;
	st->pt_lo = ~0u;
	st->pt_hi = 0;
	lj_span_add(&st->pt_lo, &st->pt_hi, ly->gc_gct, 1);
	lj_span_add(&st->pt_lo, &st->pt_hi, ly->pt_sizebc, 4);
	lj_span_words(&st->pt_lo, &st->pt_hi);
	if (st->pt_hi - st->pt_lo > LJ_BLOCK_MAX)
		st->pt_hi = 0;
}

/* Read the function object at fn into the memo entry e; as lj_fn_get(). */
static LUW_NOINLINE int lj_fn_read(struct lj_st *st, u64 fn, struct lj_fn *e)
{
	const struct luw_lj_layout *ly = st->ly;
	u8 b[LJ_BLOCK_MAX] LUW_NOINIT, gct, ffid;
	u8 flags = 0;
	u64 pcref = 0, cfunc = 0;

	if (!lj_block(st, fn, st->fn_lo, st->fn_hi, b)) {
		gct = b[ly->gc_gct - st->fn_lo];
		ffid = b[ly->fn_ffid - st->fn_lo];
		pcref = lj_ref_at(st, b + ly->fn_pc - st->fn_lo);
		flags = LJ_FN_PCREF;
		if (lj_field_ok(ly->fn_f)) {
			__builtin_memcpy(&cfunc, b + ly->fn_f - st->fn_lo, 8);
			flags |= LJ_FN_CFUNC;
		}
	} else if (lj_u8(st, fn + ly->gc_gct, &gct) ||
		   lj_u8(st, fn + ly->fn_ffid, &ffid)) {
		return -EFAULT;
	}
	if (gct != ly->gct_func)
		return -EINVAL;
	e->fn = fn;
	e->pcref = pcref;
	e->proto = 0;
	e->cfunc = cfunc;
	e->sizebc = 0;
	e->ffid = ffid;
	e->flags = flags;
	return 0;
}

/*
 * The function object at fn, its type byte checked, from the memo or read
 * now: 0, -EFAULT (a read failed) or -EINVAL (not a function).  The memo's
 * hit apart, inline: the read's block is set to zero on entry wherever
 * the kernel initialises automatic variables, and a recursion hits.
 */
static inline int lj_fn_get(struct lj_st *st, u64 fn, struct lj_fn **out)
{
	struct lj_fn *e = &st->fns[((fn >> 3) ^ (fn >> 7)) & (LJ_FN_MEMO - 1)];
	int rc;

	if (!fn || e->fn != fn) {
		rc = lj_fn_read(st, fn, e);
		if (rc)
			return rc;
	}
	*out = e;
	return 0;
}

/* A C function's lua_CFunction; 0 unknown. */
static u64 lj_fn_cfunc(struct lj_st *st, struct lj_fn *e)
{
	if (!(e->flags & LJ_FN_CFUNC) && lj_field_ok(st->ly->fn_f) &&
	    !lj_u64(st, e->fn + st->ly->fn_f, &e->cfunc))
		e->flags |= LJ_FN_CFUNC;
	return e->flags & LJ_FN_CFUNC ? e->cfunc : 0;
}

/* fn_pc: -EFAULT when it cannot be read. */
static int lj_fn_pcref(struct lj_st *st, struct lj_fn *e, u64 *pcref)
{
	if (!(e->flags & LJ_FN_PCREF)) {
		if (lj_ref(st, e->fn + st->ly->fn_pc, &e->pcref))
			return -EFAULT;
		e->flags |= LJ_FN_PCREF;
	}
	*pcref = e->pcref;
	return 0;
}

/*
 * The proto of a Lua function object, read into its memo entry; 0 if it
 * is not one.  The proto's own type byte is checked: a wrong fn_pc or
 * pt_size must end the walk, not fill it with addresses that are no
 * protos.  A failed read is not remembered: the next frame of the
 * function asks again.
 */
static LUW_NOINLINE u64 lj_proto_read(struct lj_st *st, struct lj_fn *e)
{
	const struct luw_lj_layout *ly = st->ly;
	u8 b[LJ_BLOCK_MAX] LUW_NOINIT, gct;
	u64 pt;

	if (lj_fn_pcref(st, e, &pt) || pt < ly->pt_size)
		return 0;
	pt -= ly->pt_size;
	if (!lj_block(st, pt, st->pt_lo, st->pt_hi, b)) {
		gct = b[ly->gc_gct - st->pt_lo];
		__builtin_memcpy(&e->sizebc, b + ly->pt_sizebc - st->pt_lo, 4);
		e->flags |= LJ_FN_SIZEBC;
	} else if (lj_u8(st, pt + ly->gc_gct, &gct)) {
		return 0;
	}
	e->proto = gct == ly->gct_proto ? pt : 0;
	e->flags |= LJ_FN_PROTO;
	return e->proto;
}

/* The memo's answer inline, as lj_fn_get()'s. */
static inline u64 lj_fn_proto(struct lj_st *st, struct lj_fn *e)
{
	return e->flags & LJ_FN_PROTO ? e->proto : lj_proto_read(st, e);
}

/* Is pc inside (or just past) the bytecode of a Lua function's proto? */
static LUW_INLINE int lj_pc_in_fn(struct lj_st *st, struct lj_fn *e, u64 pc)
{
	u64 pt = lj_fn_proto(st, e), bc = pt + st->ly->pt_size;

	if (!pt || pc < bc || (pc & 3))
		return 0;
	if (!(e->flags & LJ_FN_SIZEBC)) {
		if (lj_u32(st, pt + st->ly->pt_sizebc, &e->sizebc))
			return 0;
		e->flags |= LJ_FN_SIZEBC;
	}
	return pc <= bc + (u64)e->sizebc * 4;
}

/* The call instruction before a Lua return pc. */
static LUW_INLINE int lj_call_ins(struct lj_st *st, u64 pc, u32 *ins)
{
	/* ins_at 0: nothing read yet (a link of 0 is read, and faults). */
	if (pc && st->ins_at == pc) {
		*ins = st->ins;
		return 0;
	}
	if (lj_u32(st, pc - 4, ins))
		return -EFAULT;
	st->ins_at = pc;
	st->ins = *ins;
	return 0;
}

static LUW_INLINE struct luw_lj_frame *lj_push(struct lj_st *st)
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

static struct luw_lj_seg *lj_seg_open(struct lj_st *st, u64 l, u64 cframe)
{
	struct luw_lj_walk_out *o = st->out;
	struct luw_lj_seg *s;

	if (o->nsegs >= o->max_segs) {
		o->status = LUW_LJW_FULL;
		return NULL;
	}
	s = &o->segs[o->nsegs++];
	s->first = (u16)o->nframes;
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
static u64 lj_frameless(struct lj_st *st, unsigned int s0, u64 left,
			u64 last_cf)
{
	const struct luw_lj_layout *ly = st->ly;
	struct luw_lj_walk_out *o = st->out;
	unsigned int i, k;

	for (k = 0; left && k < LUW_LJ_MAX_FRAMELESS; k++) {
		u64 prev = 0;

		if (o->nsegs >= o->max_segs || s0 >= o->nsegs) {
			o->status = LUW_LJW_FULL;
			return 0;
		}
		for (i = o->nsegs; i > s0; i--)
			o->segs[i] = o->segs[i - 1];
		o->nsegs++;
		for (i = s0 + 1; i < o->nsegs; i++) {
			struct luw_lj_seg *s = &o->segs[i];
			u64 cf = left;

			if (i + 1 < o->nsegs)
				cf = o->segs[i + 1].cframe |
				     ((o->segs[i + 1].flags & LUW_LJS_RESUMED) ?
				      LUW_LJ_CFRAME_RESUME : 0);
			s->cframe = cf & LUW_LJ_CFRAME_RAWMASK;
			s->flags = (s->flags & ~(u32)LUW_LJS_RESUMED) |
				   ((cf & LUW_LJ_CFRAME_RESUME) ?
				    LUW_LJS_RESUMED : 0);
		}
		o->segs[s0].count = 0;
		o->segs[s0].first = o->segs[s0 + 1].first;
		o->segs[s0].flags &= ~(u32)LUW_LJS_TRACE;
		last_cf = left;
		if (lj_u64(st, (left & LUW_LJ_CFRAME_RAWMASK) +
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
static LUW_INLINE int lj_frame_at(struct lj_st *st, u64 base, s64 *ftsz, u64 *fn)
{
	u64 v;

	if (st->gc64) {
		u64 two[2];

		/* The function slot, then the link: one request. */
		if (lj_rd(st, base - 16, two, 16))
			return -EFAULT;
		*ftsz = (s64)two[1];
		*fn = two[0] & LUW_LJ_GCVMASK;
	} else {
		if (lj_u64(st, base - 8, &v))
			return -EFAULT;
		*fn = v & 0xffffffffu;
		*ftsz = (s64)(s32)(u32)(v >> 32);
	}
	return 0;
}

/*
 * Walks one lua_State from `base` down to the bottom of its stack.  Opens
 * a segment per VM activation, starting with `cframe` (L->cframe).
 * Returns the cframe value (with flags) of the last activation closed, or
 * 0 when the walk stopped early.
 */
static u64 lj_walk_l(struct lj_st *st, u64 l, u64 base, u64 pc, int pc_exact,
		     u64 cframe, struct luw_lj_frame *first_extra)
{
	const struct luw_lj_layout *ly = st->ly;
	struct luw_lj_walk_out *o = st->out;
	struct lj_stack stk;
	struct luw_lj_seg *seg;
	u64 bottom, last_cf = 0;
	unsigned int steps, s0;
	int fr2 = st->gc64;

	if (lj_get_stack(st, l, &stk)) {
		o->status = LUW_LJW_FAULT;
		return 0;
	}
	if (!lj_in_stack(&stk, base)) {
		o->status = LUW_LJW_BADBASE;
		return 0;
	}
	s0 = o->nsegs;
	seg = lj_seg_open(st, l, cframe);
	if (!seg)
		return 0;
	if (first_extra) {
		/* The trace pseudo-frame belongs to this activation. */
		seg->first = (u16)(first_extra - o->frames);
		seg->flags |= LUW_LJS_TRACE;
	}
	/* The lowest frame's base: slot 0 is the thread, FR2 adds a nil. */
	bottom = stk.lo + 8 * (1 + fr2);
	for (steps = 0; steps < LUW_LJ_MAX_STEPS; steps++) {
		struct luw_lj_frame *f;
		struct lj_fn *fe;
		s64 ftsz;
		u64 fn, nbase, npc = 0;
		u8 ffid;
		int type, typep, boundary = 0, rc;

		if (base <= bottom)
			break;
		rc = lj_frame_at(st, base, &ftsz, &fn);
		if (!rc)
			rc = lj_fn_get(st, fn, &fe);
		if (rc) {
			o->status = rc == -EINVAL ? LUW_LJW_BADFRAME :
						    LUW_LJW_FAULT;
			goto stop;
		}
		ffid = fe->ffid;
		type = (int)(ftsz & LUW_LJ_FRAME_TYPE);
		typep = (int)(ftsz & LUW_LJ_FRAME_TYPEP);
		if (type == LUW_LJ_FRAME_LUA) {
			u32 ins;

			npc = fr2 ? (u64)ftsz : (u64)(u32)ftsz;
			if (lj_call_ins(st, npc, &ins)) {
				o->status = LUW_LJW_FAULT;
				goto stop;
			}
			nbase = base - 8 * (1 + fr2 + ((ins >> 8) & 0xff));
		} else {
			u64 delta = (u64)ftsz & ~(u64)LUW_LJ_FRAME_TYPEP;

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
		f = lj_push(st);
		if (!f)
			goto stop;
		f->func = fn;
		f->ffid = ffid;
		f->link = (u8)(type == LUW_LJ_FRAME_LUA ? LUW_LJ_FRAME_LUA : typep);
		if (ffid == LUW_LJ_FF_LUA) {
			f->kind = LUW_LJF_LUA;
			f->proto = lj_fn_proto(st, fe);
			if (!f->proto) {
				o->nframes--;
				o->status = LUW_LJW_BADFRAME;
				goto stop;
			}
			if (pc && lj_pc_in_fn(st, fe, pc)) {
				f->pc = pc;
				if (pc_exact)
					f->flags |= LUW_LJF_PC_EXACT;
				else if (first_extra && o->nframes == 2)
					f->flags |= LUW_LJF_PC_TRACE;
			}
		} else if (ffid == LUW_LJ_FF_C) {
			f->kind = LUW_LJF_C;
			f->pc = lj_fn_cfunc(st, fe);
		} else {
			f->kind = LUW_LJF_FF;
		}
		pc = 0;
		pc_exact = 1;
		if (type == LUW_LJ_FRAME_LUA) {
			pc = npc;
		} else if (typep == LUW_LJ_FRAME_CONT) {
			/* Metamethod or tail-call continuation. */
			u64 cpc = 0, contv = 0;

			if (fr2) {
				lj_u64(st, base - 24, &cpc);
				lj_u64(st, base - 32, &contv);
			} else {
				u64 v = 0;

				lj_u64(st, base - 16, &v);
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
			u64 prev = 0;

			seg->count = (u16)(o->nframes - seg->first);
			last_cf = cframe;
			if (cframe && lj_u64(st, (cframe & LUW_LJ_CFRAME_RAWMASK) +
						  ly->cframe_ofs_prev, &prev))
				prev = 0;
			cframe = prev;
			if (base <= bottom)
				return lj_frameless(st, s0, cframe,
							 last_cf);
			seg = lj_seg_open(st, l, cframe);
			if (!seg)
				return 0;
		}
	}
	seg->count = (u16)(o->nframes - seg->first);
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
	seg->count = (u16)(o->nframes - seg->first);
	return 0;
}

/*
 * Where the walk of an interpreter sample starts.  BASE and PC are exact
 * registers, but not always of one frame: a return (BC_RET*, a fast
 * function's ->fff_res*, a C function's ->vm_returnc) loads PC from the
 * frame link first and then copies the results down over the returning
 * frame's function slot and link, BASE moving to the caller's frame only
 * at the end.  In that window the frame at BASE no longer holds what
 * called it, and PC is the caller's return pc.
 *
 * So the frame at BASE is taken when PC agrees with it: a Lua function
 * whose bytecode holds PC, or a fast/C function either running (PC is its
 * own pc, + 4 once the call's dispatch is done) or returning with its
 * link still in place (PC == link).  Otherwise PC is tried as a return pc: the
 * call instruction before it gives the caller's base (as for any Lua frame
 * link, frame_prevl), and that frame must be a Lua function whose bytecode
 * holds PC.  If neither holds, BASE as before (the caller's fallbacks
 * apply).  Returns the base to walk from.
 */
static u64 lj_interp_base(struct lj_st *st, u64 l, u64 base, u64 pc)
{
	int fr2 = st->gc64;
	struct lj_stack stk;
	struct lj_fn *fe;
	u64 fn, link, own, cb;
	s64 ftsz;
	u32 ins;

	if (lj_get_stack(st, l, &stk))
		return base;
	if (!lj_frame_at(st, base, &ftsz, &fn) && !lj_fn_get(st, fn, &fe)) {
		link = fr2 ? (u64)ftsz : (u64)(u32)ftsz;
		if (fe->ffid == LUW_LJ_FF_LUA) {
			if (lj_pc_in_fn(st, fe, pc))
				return base;
		} else if (pc == link ||
			   (!lj_fn_pcref(st, fe, &own) &&
			    (pc == own || pc == own + 4))) {
			return base;
		}
	}
	/* A Lua return pc: after the call instruction, 4-aligned. */
	if (!pc || (pc & 3) || lj_call_ins(st, pc, &ins))
		return base;
	cb = base - 8 * (1 + fr2 + ((ins >> 8) & 0xff));
	if (cb >= base || !lj_in_stack(&stk, cb) ||
	    cb <= stk.lo + 8 * (1 + fr2))
		return base;
	if (lj_frame_at(st, cb, &ftsz, &fn) || lj_fn_get(st, fn, &fe) ||
	    fe->ffid != LUW_LJ_FF_LUA || !lj_pc_in_fn(st, fe, pc))
		return base;
	return cb;
}

static int lj_in_interp(const struct luw_lj_walk_in *in, u64 ip)
{
	return ip >= in->vm_start && ip < in->interp_end;
}

/* Pseudo-frame for a running trace: its number, start proto and pc. */
static struct luw_lj_frame *lj_trace_frame(struct lj_st *st, u64 g,
					   u32 traceno)
{
	const struct luw_lj_layout *ly = st->ly;
	struct luw_lj_frame *f = lj_push(st);
	u64 j = g + (s64)ly->gg_g2j, arr = 0, t = 0;
	u32 size = 0;
	u8 gct = 0;

	if (!f)
		return NULL;
	f->kind = LUW_LJF_TRACE;
	f->trace = traceno;
	if (lj_u64(st, j + ly->j_trace, &arr) ||
	    lj_u32(st, j + ly->j_sizetrace, &size) || traceno >= size ||
	    lj_ref(st, arr + (u64)traceno * (st->gc64 ? 8 : 4), &t) ||
	    !t || lj_u8(st, t + ly->gc_gct, &gct) || gct != ly->gct_trace)
		return f;
	f->func = t;
	if (lj_ref(st, t + ly->tr_startpt, &f->proto))
		f->proto = 0;
	if (lj_ref(st, t + ly->tr_startpc, &f->pc))
		f->pc = 0;
	return f;
}

int luw_lj_walk(const struct luw_lj_walk_in *in, struct luw_lj_walk_out *out)
{
	struct lj_st st LUW_NOINIT;
	const struct luw_lj_layout *ly = in->ly;
	u64 g = 0, l = 0, base = 0, pc = 0, cframe = 0, cf, sp;
	struct luw_lj_frame *trace_f = NULL;
	s32 vms = 0;
	int interp, pc_exact = 0, reg_base = 0, on_trace = 0;
	u32 traceno = 0;
	unsigned int hops, i;

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
	lj_spans(&st);
	st.ins_at = 0;
	st.ins = 0;
	st.stk_l = 0;
	for (i = 0; i < LJ_FN_MEMO; i++)
		st.fns[i].fn = 0;
	sp = in->regs.r[LUW_X86_RSP];
	interp = lj_in_interp(in, in->regs.ip);

	/* G */
	if (interp || st.gc64) {
		g = in->regs.r[ly->reg_dispatch] - (s64)ly->gg_g2disp;
		if (!lj_check_g(&st, g))
			g = 0;
	}
	if (!g && in->vm_sp) {
		l = lj_cframe_l(&st, in->vm_sp);
		if (l && !lj_ref(&st, l + ly->l_glref, &g) &&
		    !lj_check_g(&st, g))
			g = 0;
	}
	if (!g && in->g_hint && lj_check_g(&st, in->g_hint))
		g = in->g_hint;
	if (!g) {
		out->status = LUW_LJW_NOG;
		return out->status;
	}
	out->G = g;
	if (lj_rd(&st, g + ly->g_vmstate, &vms, 4)) {
		out->status = LUW_LJW_FAULT;
		return out->status;
	}
	out->vmstate_raw = vms;
	if (vms >= 0)
		out->vmstate = LUW_VMST_TRACE;
	else if ((u32)~vms < ly->n_vmst)
		out->vmstate = ly->vmst_map[~vms];

	/* L and the live base */
	l = 0;
	if (vms >= 0) {
		u64 jb = 0;

		if (lj_field_ok(ly->g_tmpbuf_l) &&
		    !lj_ref(&st, g + ly->g_tmpbuf_l, &l))
			l &= ~(u64)7;
		if (!lj_check_l(&st, l, g))
			l = 0;
		if (!lj_ref(&st, g + ly->g_jit_base, &jb))
			base = jb;
		traceno = (u32)vms;
		on_trace = 1;
	} else if (in->mcode_trace && out->vmstate == LUW_VMST_GC && !interp) {
		u64 jb = 0, lb = 0;

		/*
		 * lj_gc_step_jit: the trace's frames start at jit_base, which
		 * it also stored in L->base.  Without both, the GC may be
		 * running for the interpreter: L->base as for any C code.
		 */
		if (!lj_ref(&st, g + ly->g_jit_base, &jb) && jb &&
		    !lj_ref(&st, g + ly->g_cur_l, &l) &&
		    lj_check_l(&st, l, g) &&
		    !lj_u64(&st, l + ly->l_base, &lb) && lb == jb) {
			base = jb;
			traceno = in->mcode_trace;
			on_trace = 1;
		} else {
			l = 0;
		}
	} else if (interp) {
		l = lj_cframe_l(&st, sp);
		if (!lj_check_l(&st, l, g))
			l = 0;
		base = in->regs.r[ly->reg_base];
		reg_base = 1;
		pc = in->regs.r[ly->reg_pc];
		if (!st.gc64)
			pc &= 0xffffffffu;
		pc_exact = 1;
	} else if (in->vm_sp) {
		l = lj_cframe_l(&st, in->vm_sp);
		if (!lj_check_l(&st, l, g))
			l = 0;
	}
	if (!l) {
		if (lj_ref(&st, g + ly->g_cur_l, &l) ||
		    !lj_check_l(&st, l, g)) {
			out->status = LUW_LJW_NOL;
			return out->status;
		}
	}
	out->L = l;
	if (lj_u64(&st, l + ly->l_cframe, &cframe))
		cframe = 0;
	{
		struct lj_stack stk;

		if (lj_get_stack(&st, l, &stk)) {
			out->status = LUW_LJW_FAULT;
			return out->status;
		}
		if (!lj_in_stack(&stk, base)) {
			/* The register holds no base: BASE's PC does not go. */
			reg_base = 0;
			if (lj_u64(&st, l + ly->l_base, &base)) {
				out->status = LUW_LJW_FAULT;
				return out->status;
			}
		}
		if (!lj_in_stack(&stk, base)) {
			out->status = LUW_LJW_BADBASE;
			return out->status;
		}
	}
	if (reg_base)
		base = lj_interp_base(&st, l, base, pc);
	if (on_trace) {
		trace_f = lj_trace_frame(&st, g, traceno);
		if (!trace_f)
			return out->status;
		/* The trace started in the frame at jit_base, at startpc. */
		pc = trace_f->pc;
		pc_exact = 0;
	}

	cf = lj_walk_l(&st, l, base, pc, pc_exact, cframe, trace_f);
	if (interp && out->nframes == 0 && vms < 0 &&
	    (out->status == LUW_LJW_FAULT || out->status == LUW_LJW_BADFRAME)) {
		u64 lbase;

		/*
		 * Some VM paths use BASE's register for a C argument (rdx is
		 * CARG3); the last base the VM stored is the next best thing.
		 */
		if (!lj_u64(&st, l + ly->l_base, &lbase) && lbase != base) {
			out->status = LUW_LJW_OK;
			out->nsegs = 0;
			cf = lj_walk_l(&st, l, lbase, 0, 0, cframe, NULL);
		}
	}
	if (out->vmstate == LUW_VMST_INTERP && out->nframes) {
		/* Stock LuaJIT: tell Lua code from fast functions. */
		u8 k = out->frames[0].kind;

		out->vmstate = k == LUW_LJF_FF ? LUW_VMST_FFUNC :
			       k == LUW_LJF_LUA ? LUW_VMST_LFUNC :
			       LUW_VMST_INTERP;
	}

	/* Follow coroutine.resume into the resumer's stack. */
	for (hops = 0; hops < LUW_LJ_MAX_CORO_HOPS; hops++) {
		u64 raw, ret, outer, ocf, obase;

		if (out->status != LUW_LJW_OK || !(cf & LUW_LJ_CFRAME_RESUME))
			break;
		raw = cf & LUW_LJ_CFRAME_RAWMASK;
		if (lj_u64(&st, raw + ly->cframe_size - 8, &ret) ||
		    ret < in->vm_start || ret >= in->interp_end)
			break;	/* resumed from C: the host unwinder goes on */
		outer = lj_cframe_l(&st, raw + ly->cframe_size);
		if (!lj_check_l(&st, outer, g) ||
		    lj_u64(&st, outer + ly->l_cframe, &ocf) ||
		    (ocf & LUW_LJ_CFRAME_RAWMASK) != raw + ly->cframe_size ||
		    lj_u64(&st, outer + ly->l_base, &obase))
			break;
		out->coros++;
		cf = lj_walk_l(&st, outer, obase, 0, 0, ocf, NULL);
	}
	return out->status;
}

int luw_lj_layout_check(const struct luw_lj_layout *ly)
{
	unsigned int i;

	if (ly->size != sizeof(*ly) || ly->version != LUW_LJ_LAYOUT_VERSION)
		return -EINVAL;
	if (ly->flags & ~LUW_LJ_F_ALL)
		return -EINVAL;
	if (ly->reg_base >= LUW_X86_NREGS || ly->reg_pc >= LUW_X86_NREGS ||
	    ly->reg_dispatch >= LUW_X86_NREGS ||
	    ly->reg_kbase >= LUW_X86_NREGS)
		return -EINVAL;
	if (ly->cframe_l_size != 4 && ly->cframe_l_size != 8)
		return -EINVAL;
	if (ly->cframe_size < 16 || ly->cframe_size > 512 ||
	    ly->cframe_ofs_l + ly->cframe_l_size > ly->cframe_size ||
	    ly->cframe_ofs_prev + 8 > ly->cframe_size ||
	    ly->cframe_rbp_cfa > ly->cframe_size)
		return -EINVAL;
	if (ly->gg_g2disp <= 0 || ly->gg_ndisp == 0 || ly->gg_ndisp > 4096)
		return -EINVAL;
	if (ly->n_vmst == 0 || ly->n_vmst > LUW_LJ_MAX_RAW_VMST)
		return -EINVAL;
	for (i = 0; i < ly->n_vmst; i++)
		if (ly->vmst_map[i] >= LUW_VMST__MAX)
			return -EINVAL;
	if (ly->pt_size == 0 || ly->pt_size == LUW_LJ_NOFIELD ||
	    ly->str_size == 0 || ly->str_size == LUW_LJ_NOFIELD)
		return -EINVAL;
	return 0;
}
