/*
 * fromcode: a layout from what a stripped build's machine code says
 * (target/recover.h) -- a family's layout with every recovered field put
 * in, GG_State anchored in the live process, and the few fields only the
 * process shows (GCstr's shape, G->strempty, G->tmpbuf.L) measured there.
 * See fromcode.h.
 */
#include "target/fromcode.h"
#include "target/ffscan.h"
#include "target/layout.h"
#include "target/obj.h"
#include "target/states.h"
#include "proc/mem.h"
#include "util/fail.h"

#include <stdio.h>
#include <string.h>

/* Adds `what` to the list of fields taken, when there is one. */
static void use(char *used, size_t un, const char *what)
{
	size_t l;

	if (!used || !un)
		return;
	l = strlen(used);
	snprintf(used + l, un - l, "%s%s", l ? " " : "", what);
}

/*
 * A trace's frame, CFRAME_SIZE_JIT and GCtrace.spadjust: only a tool that
 * unwinds trace code needs them (lj_gdbjit's CFA = rsp + CFRAME_SIZE_JIT
 * + spadjust); the walk reaches the C frame under a trace through
 * L->cframe.  No exported function shows them and no live check can:
 * unknown rather than a family's, where no build-id vouches for them.
 */
void luw_fromcode_unproven(struct luw_lj_layout *ly)
{
	ly->cframe_size_jit = 0;
	ly->tr_spadjust = LUW_LJ_NOFIELD;
}

/*
 * The type tags (~LJ_T*, macros in no DWARF) where the machine code shows
 * them: what lua_pushlstring, lua_newthread and lua_pushcclosure store
 * with what they push.  They are one enum whose order the VM's range
 * checks rely on (thread, proto, func, trace: ~6 to ~9 in every 2.x):
 * with thread and func recovered two apart, proto and trace lie between
 * and after them.  The live checks read protos' and traces' gct.
 */
void luw_fromcode_tags(const struct luw_recover_result *r,
			   struct luw_lj_layout *ly, char *used, size_t un)
{
	if (r->gct_str != LUW_LJR_NONE) {
		ly->gct_str = (__u8)r->gct_str;
		use(used, un, "gct_str");
	}
	if (r->gct_thread != LUW_LJR_NONE) {
		ly->gct_thread = (__u8)r->gct_thread;
		use(used, un, "gct_thread");
	}
	if (r->gct_func != LUW_LJR_NONE) {
		ly->gct_func = (__u8)r->gct_func;
		use(used, un, "gct_func");
	}
	if (r->gct_thread != LUW_LJR_NONE && r->gct_func == r->gct_thread + 2) {
		ly->gct_proto = (__u8)(r->gct_thread + 1);
		ly->gct_trace = (__u8)(r->gct_func + 1);
		use(used, un, "gct_proto gct_trace");
	}
}

/*
 * The VM's constants, which no DWARF holds, from this binary's code: the
 * C frame's offsets (assembler constants; all four or none), the fixed
 * registers (all four or none), the FDE's rbp rule and the type tags.
 */
void luw_fromcode_vm_constants(const struct luw_recover_result *r,
			       struct luw_lj_layout *ly)
{
	if (r->cframe_ofs_l != LUW_LJR_NONE && r->cframe_ofs_prev != LUW_LJR_NONE &&
	    r->cframe_ofs_pc != LUW_LJR_NONE && r->cframe_l_size != LUW_LJR_NONE) {
		ly->cframe_ofs_l = (__u16)r->cframe_ofs_l;
		ly->cframe_ofs_prev = (__u16)r->cframe_ofs_prev;
		ly->cframe_ofs_pc = (__u16)r->cframe_ofs_pc;
		ly->cframe_l_size = (__u8)r->cframe_l_size;
	}
	if (r->reg_base != LUW_LJR_NONE && r->reg_pc != LUW_LJR_NONE &&
	    r->reg_dispatch != LUW_LJR_NONE && r->reg_kbase != LUW_LJR_NONE) {
		ly->reg_base = (__u8)r->reg_base;
		ly->reg_pc = (__u8)r->reg_pc;
		ly->reg_dispatch = (__u8)r->reg_dispatch;
		ly->reg_kbase = (__u8)r->reg_kbase;
	}
	if (r->cframe_rbp_cfa != LUW_LJR_NONE)
		ly->cframe_rbp_cfa = (__u8)r->cframe_rbp_cfa;
	luw_fromcode_tags(r, ly, NULL, 0);
}

/*
 * Whether the family map `ly` agrees with where the VM's code stores its
 * states: 0, or -1 with the state it misplaces.
 */
int luw_fromcode_vmst_agrees(const struct luw_recover_result *r,
		       const struct luw_lj_layout *ly, char *why, size_t n)
{
	const struct { int k; __u8 want; const char *name; } role[] = {
		{ r->vmst_interp, LUW_VMST_INTERP, "the interpreter's" },
		{ r->vmst_c, LUW_VMST_CFUNC, "C code's" },
		{ r->vmst_exit, LUW_VMST_EXIT, "the exit handler's" },
	};
	size_t i;

	for (i = 0; i < sizeof(role) / sizeof(role[0]); i++)
		if (role[i].k != LUW_LJR_NONE &&
		    (role[i].k >= ly->n_vmst ||
		     ly->vmst_map[role[i].k] != role[i].want))
			return luw_fail(why, n, "machine code: %s VM state is "
				    "~%d, not so in the family's map (vmst_map)",
				    role[i].name, role[i].k);
	return 0;
}

/*
 * The VM-state map from the states the interpreter's code stores and
 * where (target/recover.h: vmst_interp, vmst_c, vmst_exit).  The states C code
 * sets follow the C state in the same order in every 2.1 enum (stock: C,
 * GC, EXIT, RECORD, OPT, ASM; Tarantool's: CFUNC, GC, EXIT, RECORD, OPT,
 * ASM), and the ones before it are the interpreter's (INTERP; Tarantool's
 * LFUNC and FFUNC, which the walk tells apart from the innermost frame as
 * it does for INTERP).  Where the code shows EXIT it must sit at C + 2.
 * Anything else: every raw state unknown -- a sample then carries no
 * state, which is missing, not wrong.
 */
static void vmst_from_code(const struct luw_recover_result *r,
			   struct luw_lj_layout *ly, char *used, size_t un)
{
	static const __u8 after_c[] = {
		LUW_VMST_CFUNC, LUW_VMST_GC, LUW_VMST_EXIT, LUW_VMST_RECORD,
		LUW_VMST_OPT, LUW_VMST_ASM,
	};
	int c = r->vmst_c, k, n = c + (int)sizeof(after_c);

	if (c == LUW_LJR_NONE || r->vmst_interp == LUW_LJR_NONE ||
	    r->vmst_interp >= c || n > LUW_LJ_MAX_RAW_VMST ||
	    (r->vmst_exit != LUW_LJR_NONE && r->vmst_exit != c + 2)) {
		for (k = 0; k < ly->n_vmst; k++)
			ly->vmst_map[k] = LUW_VMST_UNKNOWN;
		use(used, un, "vmst_map(unknown)");
		return;
	}
	memset(ly->vmst_map, 0, sizeof(ly->vmst_map));
	for (k = 0; k < c; k++)
		ly->vmst_map[k] = LUW_VMST_INTERP;
	memcpy(ly->vmst_map + c, after_c, sizeof(after_c));
	ly->n_vmst = (__u8)n;
	use(used, un, "vmst_map");
}

/*
 * GG_State in the live process, from two recovered fields: the main
 * thread L opens GG_State, L->glref is G, G->mainthref is L, and the
 * dispatch table follows.  For each dispatch run D, the L in the 16 KiB
 * before it with that round trip gives gg_g2l and gg_g2disp.
 */
static int anchor_gg(struct luw_layout_target *t, struct luw_lj_layout *ly,
		     char *why, size_t n)
{
	struct luw_lj_layout scan = *ly;
	const struct luw_recover_result *r = &t->rec;
	uint64_t d, l, g = 0, back = 0;
	int i, found = 0;
	struct luw_obj ob;

	luw_obj_init(&ob, t->pid, ly);
	scan.gg_g2disp = 0;
	scan.gg_ndisp = 0;
	t->states_anchor = 0;
	t->layout = scan;
	if (luw_states_find(t, why, n))
		return -1;
	for (i = 0; i < t->nstates && !found; i++) {
		d = t->states[i];
		for (l = d - 8; l > d - 16384 && !found; l -= 8) {
			if (luw_obj_ref(&ob, l + (uint64_t)r->l_glref, &g) ||
			    g <= l || g >= d ||
			    luw_obj_ref(&ob, g + (uint64_t)r->g_mainthref, &back) ||
			    back != l)
				continue;
			ly->gg_g2l = (__s32)(int64_t)(l - g);
			ly->gg_g2disp = (__s32)(d - g);
			t->states_anchor = g;
			found = 1;
		}
	}
	t->nstates = 0;
	if (!found)
		return luw_fail(why, n, "no main thread L before a dispatch table "
			    "with L->glref->mainthref == L (l_glref %d, "
			    "g_mainthref %d from lua_close)", r->l_glref,
			    r->g_mainthref);
	return 0;
}

/*
 * The marks G->strempty can carry: LJ_GC_WHITE0/WHITE1, LJ_GC_BLACK and
 * LJ_GC_FIXED (lj_gc.h); never a finalizer or weak bit, never SFIXED.
 */
#define STREMPTY_MARKS (0x01u | 0x02u | 0x04u | 0x20u)

/* G's fields the interpreter addresses from DISPATCH, now G-relative. */
static void g_from_disps(const struct luw_recover_result *r,
			 struct luw_lj_layout *ly, char *used, size_t un)
{
	const struct { int have; int32_t disp; __u16 *f; const char *name; } d[] = {
		{ r->have_vmstate, r->vmstate_disp, &ly->g_vmstate, "g_vmstate" },
		{ r->have_jitbase, r->jitbase_disp, &ly->g_jit_base, "g_jit_base" },
		{ r->have_tmpbufl, r->tmpbufl_disp, &ly->g_tmpbuf_l, "g_tmpbuf_l" },
	};

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		int32_t o = d[i].disp + ly->gg_g2disp;

		if (d[i].have && o > 0 && o < 0xffff) {
			*d[i].f = (__u16)o;
			use(used, un, d[i].name);
		}
	}
}

/*
 * GG_DISP2J from the interpreter's calls (the lea of DISPATCH's offset
 * that lies inside GG_State past global_State's known fields: jit_State;
 * none in a build without the JIT), then J->trace and the GCtrace fields.
 * J's offset from DISPATCH, 0 without the JIT.
 */
static int32_t jit_from_disps(const struct luw_recover_result *r,
			      struct luw_lj_layout *ly, char *used, size_t un)
{
	int32_t j = 0, gmax;
	int i;

	gmax = ly->g_cur_l > ly->g_mainthref ? ly->g_cur_l : ly->g_mainthref;
	for (i = 0; i < r->ndisp; i++) {
		int32_t g_ofs = r->disp[i] + ly->gg_g2disp;

		if (g_ofs > gmax && r->disp[i] < 0 && (!j || r->disp[i] > j))
			j = r->disp[i];
	}
	if (j) {
		ly->gg_g2j = j + ly->gg_g2disp;
		ly->flags |= LUW_LJ_F_JIT;
		use(used, un, "gg_g2j");
		int32_t vt = r->have_jtrace ? r->jtrace_disp - j : -1;
		int32_t ut = r->jtrace_g != LUW_LJR_NONE ?
			     r->jtrace_g - ly->gg_g2j : -1;
		int32_t us = r->jsizetrace_g != LUW_LJR_NONE ?
			     r->jsizetrace_g - ly->gg_g2j : -1;

		/*
		 * J->trace from BC_JLOOP (DISPATCH-relative) and from
		 * jit.util's jit_checktrace (G-relative), whose bound on the
		 * index is J->sizetrace; where both say, they must agree.
		 */
		if (ut > 0 && ut < 0xfff0 && us > 0 && us < 0xfff0 &&
		    (vt < 0 || vt == ut)) {
			ly->j_trace = (__u16)ut;
			ly->j_sizetrace = (__u16)us;
			use(used, un, "j_trace j_sizetrace");
		} else if (vt > 0 && vt < 0xfff0) {
			/*
			 * No jit.util to read (LUAJIT_DISABLE_JITUTIL) or it
			 * disagrees: sizetrace follows trace and freetrace (a
			 * TraceNo) in every 2.1 jit_State, which the live
			 * check of the pair has to bear out.
			 */
			ly->j_trace = (__u16)vt;
			ly->j_sizetrace = (__u16)(ly->j_trace + 12);
			use(used, un, "j_trace j_sizetrace(j_trace+12)");
		}
		if (r->tr_mcode != LUW_LJR_NONE && r->tr_szmcode != LUW_LJR_NONE) {
			ly->tr_mcode = (__u16)r->tr_mcode;
			ly->tr_szmcode = (__u16)r->tr_szmcode;
			use(used, un, "tr_mcode tr_szmcode");
		}
		if (r->tr_startpt != LUW_LJR_NONE && r->tr_traceno != LUW_LJR_NONE) {
			ly->tr_startpt = (__u16)r->tr_startpt;
			ly->tr_traceno = (__u16)r->tr_traceno;
			use(used, un, "tr_startpt tr_traceno");
		}
		if (r->tr_startpc != LUW_LJR_NONE) {
			ly->tr_startpc = (__u16)r->tr_startpc;
			use(used, un, "tr_startpc");
		}
	} else {
		ly->flags &= ~LUW_LJ_F_JIT;
		ly->gg_g2j = 0;
		ly->j_trace = ly->j_sizetrace = LUW_LJ_NOFIELD;
		ly->tr_startpt = ly->tr_startpc = LUW_LJ_NOFIELD;
		ly->tr_spadjust = ly->tr_mcode = LUW_LJ_NOFIELD;
		ly->tr_szmcode = ly->tr_traceno = LUW_LJ_NOFIELD;
		use(used, un, "no-JIT");
	}
	return j;
}

/*
 * No BC_JLOOP to show G->jit_base either; without the JIT nothing
 * reads it, but the descriptor needs one: it follows cur_L in every
 * 2.1 global_State.
 */
static void jit_base_after_cur_l(const struct luw_recover_result *r,
				 struct luw_lj_layout *ly, char *used, size_t un)
{
	if (!r->have_jitbase && r->g_cur_l != LUW_LJR_NONE) {
		ly->g_jit_base = (__u16)(r->g_cur_l + r->ref_size);
		use(used, un, "g_jit_base(after cur_L)");
	}
}

/*
 * No BC_JLOOP (no JIT) to show G->tmpbuf.L: the interpreter's calls
 * take &G->tmpbuf (the argument inside global_State that is not G
 * itself); its L follows three pointers of 4 (2017) or 8 bytes.  The
 * one holding a thread of G is it; none: the field stays unknown.
 */
static void tmpbuf_from_process(const struct luw_layout_target *t,
				struct luw_lj_layout *ly, int32_t j,
				char *used, size_t un)
{
	const struct luw_recover_result *r = &t->rec;
	uint32_t gend = (uint32_t)(j ? j + ly->gg_g2disp : ly->gg_g2disp);
	struct luw_obj ob;
	int i, nfit = 0;
	__u16 fit = 0;

	luw_obj_init(&ob, t->pid, ly);
	if (r->have_tmpbufl || !t->states_anchor)
		return;
	for (i = 0; i < r->ndisp; i++) {
		int32_t tb = r->disp[i] + ly->gg_g2disp;
		int k;

		if (tb <= 0 || (uint32_t)tb >= gend || r->disp[i] == j)
			continue;
		for (k = 4; k <= 8; k += 4) {
			uint64_t l = 0, gl = 0;
			uint32_t o = (uint32_t)tb + 3u * (uint32_t)k;

			if (luw_obj_ref(&ob, t->states_anchor + o, &l) ||
			    !luw_obj_is(&ob, l & ~7ull, ly->gct_thread) ||
			    luw_obj_ref(&ob, (l & ~7ull) + ly->l_glref, &gl) ||
			    gl != t->states_anchor)
				continue;
			nfit++;
			fit = (__u16)o;
		}
	}
	ly->g_tmpbuf_l = nfit == 1 ? fit : LUW_LJ_NOFIELD;
	use(used, un, nfit == 1 ? "g_tmpbuf_l(process)" :
	    "no-g_tmpbuf_l");
}

/*
 * GCstr's size and its len's place from the process: the metamethod
 * names in G read right with exactly one of the shapes GCstr has had.
 * len is its last member (16/12 before the string ids, 20/16 and
 * 24/20 after), except in GC64 builds before them (beta3 built
 * with LUAJIT_ENABLE_GC64, tarantool 2.x's GC64), where 4 bytes of
 * padding follow it (24/16).
 */
static void str_shape_from_process(const struct luw_layout_target *t,
				   struct luw_lj_layout *ly, char *used,
				   size_t un)
{
	static const __u16 shapes[][2] = {
		{ 16, 12 }, { 20, 16 }, { 24, 20 }, { 24, 16 },
	};
	struct luw_lj_layout c = *ly;
	char w[160];
	size_t k;
	int nfit = 0;
	size_t fit = 0;

	for (k = 0; t->states_anchor && k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		c.str_size = shapes[k][0];
		c.str_len = shapes[k][1];
		if (!luw_ffscan_check_strings(t->pid, &c, t->states_anchor, w,
				       sizeof(w))) {
			nfit++;
			fit = k;
		}
	}
	if (nfit == 1) {
		ly->str_size = shapes[fit][0];
		ly->str_len = shapes[fit][1];
		use(used, un, "str_size/str_len(process)");
	}
}

/*
 * G->strempty, from the process: the one empty string embedded in
 * global_State before jit_State (gct ~LJ_TSTR, no next object, length
 * 0, its stremptyz byte 0).  Two candidates: decide nothing.
 */
static void strempty_from_process(const struct luw_layout_target *t,
				  struct luw_lj_layout *ly, int32_t j,
				  char *used, size_t un)
{
	uint64_t g = t->states_anchor;
	uint32_t end = (uint32_t)(j ? j + ly->gg_g2disp : ly->gg_g2disp);
	uint32_t o, hit = 0, nhit = 0;

	for (o = 0; g && o + ly->str_size + 1 < end && o < 0xfff0; o += 4) {
		uint8_t b[64];
		uint32_t k, rest = 0;

		/*
		 * All zero but its mark and its type: no next object,
		 * no hash or id, length 0, NUL.  The mark is any the
		 * GC gives it, 0 included: lua_newstate makes it
		 * LJ_GC_WHITE0; gc_mark turns it gray (white bits
		 * cleared, and a string stays gray) once a table key
		 * or slot holding "" is traversed -- FFI's miscmap
		 * has one -- so it reads 0 until the first cycle's
		 * atomic phase sets it to currentwhite, which carries
		 * LJ_GC_FIXED from then on (0x21/0x22, gray 0x20).
		 * A process still in its first GC cycle (one that
		 * allocates little, or a guest under load) showed 0
		 * here, and the scan found no hit.
		 */
		if (ly->str_size + 1u > sizeof(b) ||
		    luw_mem_read(t->pid, g + o, b, ly->str_size + 1u) ||
		    b[ly->gc_gct] != ly->gct_str ||
		    (b[ly->gc_gct - 1] & ~STREMPTY_MARKS))
			continue;
		for (k = 0; k <= ly->str_size; k++)
			if (k != ly->gc_gct && k != ly->gc_gct - 1u)
				rest |= b[k];
		if (rest)
			continue;
		hit = o;
		nhit++;
	}
	if (nhit == 1) {
		ly->g_strempty = (__u16)hit;
		use(used, un, "g_strempty(process)");
	}
}

/*
 * A family layout with every field the machine code gave replaced, GG_State
 * anchored in the process, GG_DISP2J from the interpreter's calls (the
 * lea of DISPATCH's offset that lies inside GG_State past global_State's
 * known fields: jit_State; none in a build without the JIT).
 */
int luw_fromcode_layout(struct luw_layout_target *t, const struct luw_lj_layout *fam,
			struct luw_lj_layout *ly, char *used, size_t un,
			char *why, size_t n)
{
	const struct luw_recover_result *r = &t->rec;
	struct luw_obj ob;
	int32_t j;

	if (t->why_rec[0])
		return luw_fail(why, n, "machine code: %s", t->why_rec);
	luw_obj_init(&ob, t->pid, fam);
	if (r->ref_size != (int)ob.ref ||
	    r->l_glref == LUW_LJR_NONE || r->g_mainthref == LUW_LJR_NONE)
		return luw_fail(why, n, "machine code: lua_close gave no G(L)/"
			    "mainthread(g) of this reference size");
	*ly = *fam;
	ly->stack_extra = 0;
	ly->gg_ndisp = 0;
	ly->l_glref = (__u16)r->l_glref;
	ly->g_mainthref = (__u16)r->g_mainthref;
	snprintf(used, un, "l_glref g_mainthref");
	/* The D rows of the list, each as recovered. */
#define TAKE(f)								\
	if (r->f != LUW_LJR_NONE) {					\
		ly->f = r->f;						\
		use(used, un, #f);					\
	}
#define SKIP(...)
	LUW_RECOVER_FIELDS(SKIP, TAKE, SKIP)
#undef TAKE
#undef SKIP
	luw_fromcode_tags(r, ly, used, un);
	vmst_from_code(r, ly, used, un);
	/* What the VM entries push: the interpreter's FDE says. */
	ly->cframe_size = (__u16)t->fde_cfa;
	use(used, un, "cframe_size(FDE)");
	luw_fromcode_unproven(ly);
	if (anchor_gg(t, ly, why, n))
		return -1;
	use(used, un, "gg_g2l gg_g2disp");
	g_from_disps(r, ly, used, un);
	j = jit_from_disps(r, ly, used, un);
	jit_base_after_cur_l(r, ly, used, un);
	tmpbuf_from_process(t, ly, j, used, un);
	str_shape_from_process(t, ly, used, un);
	strempty_from_process(t, ly, j, used, un);
	return 0;
}
