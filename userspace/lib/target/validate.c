/*
 * validate: a layout proven against the live process -- every state it
 * finds read through it, read again when the process moved under the
 * read -- and the fields only the process can give measured.  See
 * validate.h.
 */
#include "target/validate.h"
#include "target/ffscan.h"
#include "target/layout.h"
#include "target/obj.h"
#include "target/states.h"
#include "kmod/ljwalk.h"
#include "proc/mem.h"
#include "util/fail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		luw_fail(why, whylen, __VA_ARGS__);				\
		return -1;						\
	}								\
} while (0)

/*
 * The first traces of J->trace[] (bounded): each one is a GCtrace that
 * carries its own number.  The trace being recorded is jit_State's cur,
 * zeroed but for its number, so a gct of 0 passes too; a layout whose
 * J->trace, gct_trace or tr_traceno is wrong fails on the first compiled
 * trace.  No trace yet: nothing to check.
 */
#define TRACES_CHECKED 16
static int check_traces(pid_t pid, const struct luw_lj_layout *ly,
			uint64_t arr, uint32_t sz, char *why, size_t whylen)
{
	struct luw_obj ob;
	uint32_t k, seen = 0, rs;

	luw_obj_init(&ob, pid, ly);
	rs = ob.ref;

	for (k = 1; k < sz && k < 1024 && seen < TRACES_CHECKED; k++) {
		uint64_t tr = 0;
		uint16_t no = 0;
		uint8_t gct = 0xff;

		if (luw_obj_ref(&ob, arr + (uint64_t)k * rs, &tr) || !tr)
			continue;
		seen++;
		CHECK(!luw_mem_read(pid, tr + ly->gc_gct, &gct, 1) &&
		      (gct == ly->gct_trace || gct == 0),
		      "J->trace[%u] = 0x%llx has gct %u (j_trace/gct_trace)", k,
		      (unsigned long long)tr, gct);
		if (ly->tr_traceno == LUW_LJ_NOFIELD)
			continue;
		CHECK(!luw_mem_read(pid, tr + ly->tr_traceno, &no, 2) && no == k,
		      "J->trace[%u] = 0x%llx has traceno %u (tr_traceno)", k,
		      (unsigned long long)tr, no);
	}
	return 0;
}

/*
 * Protos and strings: walk the Lua stack the VM would report now (cur_L
 * from L->base) and check the Lua frames found: proto type, chunk name a
 * NUL-terminated string of its length.  No Lua frame, nothing to check.
 */
static int check_protos(const struct luw_layout_target *t,
			const struct luw_lj_layout *ly, uint64_t g, char *why,
			size_t whylen)
{
	struct luw_lj_walk_out o;
	struct luw_lj_frame fr[64];
	struct luw_lj_seg sg[8];
	struct luw_obj ob;
	pid_t pid = t->pid;
	uint32_t i, checked = 0;

	luw_obj_init(&ob, pid, ly);
	memset(&o, 0, sizeof(o));
	o.frames = fr;
	o.max_frames = 64;
	o.segs = sg;
	o.max_segs = 8;
	luw_layout_walk(t, ly, NULL, g, &o);
	for (i = 0; i < o.nframes && checked < 4; i++) {
		uint64_t pt = fr[i].proto, name = 0;
		uint32_t len = 0, sizebc = 0;
		uint8_t gct = 0, z = 1;
		char buf[256];

		if (fr[i].kind != LUW_LJF_LUA)
			continue;
		checked++;
		CHECK(!luw_mem_read(pid, pt + ly->gc_gct, &gct, 1) && gct == ly->gct_proto,
		      "function 0x%llx: proto 0x%llx has gct %u (fn_pc/pt_size)",
		      (unsigned long long)fr[i].func, (unsigned long long)pt, gct);
		CHECK(!luw_mem_read(pid, pt + ly->pt_sizebc, &sizebc, 4) && sizebc > 0 &&
		      sizebc < (1u << 26),
		      "proto 0x%llx: sizebc %u (pt_sizebc)",
		      (unsigned long long)pt, sizebc);
		CHECK(!luw_obj_ref(&ob, pt + ly->pt_chunkname, &name) && name &&
		      !luw_mem_read(pid, name + ly->gc_gct, &gct, 1) && gct == ly->gct_str,
		      "proto 0x%llx: chunk name is no string (pt_chunkname)",
		      (unsigned long long)pt);
		CHECK(!luw_mem_read(pid, name + ly->str_len, &len, 4) && len > 0 &&
		      len < (1u << 20) &&
		      !luw_mem_read(pid, name + ly->str_size + len, &z, 1) && z == 0,
		      "chunk name 0x%llx: length %u is not its NUL (str_len/str_size)",
		      (unsigned long long)name, len);
		if (len > sizeof(buf))
			len = sizeof(buf);
		CHECK(!luw_mem_read(pid, name + ly->str_size, buf, len) &&
		      !memchr(buf, 0, len),
		      "chunk name 0x%llx holds a NUL (str_len/str_size)",
		      (unsigned long long)name);
	}
	return 0;
}

int luw_validate_state(const struct luw_layout_target *t, const struct luw_lj_layout *ly,
		 uint64_t g, char *why, size_t whylen)
{
	pid_t pid = t->pid;
	int gc64 = !!(ly->flags & LUW_LJ_F_GC64);
	uint64_t mainl = 0, glref = 0, stack = 0, maxstack = 0, base = 0, top = 0;
	uint64_t slot0 = 0, disp[4096 / 8], curl = 0, jb = 0, tl = 0, cframe = 0;
	uint64_t saved = 0, again = 0;
	uint32_t stacksize = 0, len = 1, i, ndisp;
	int32_t vms = 0;
	int tries;
	uint8_t gct = 0;
	struct luw_obj ob;

	luw_obj_init(&ob, pid, ly);
	CHECK(!luw_lj_layout_check(ly), "descriptor fails its own sanity check");
	CHECK(ly->cframe_size == t->fde_cfa,
	      "cframe_size %u but the interpreter FDE's CFA is rsp+%u",
	      ly->cframe_size, t->fde_cfa);
	/* The dispatch table: every entry points into the VM. */
	ndisp = ly->gg_ndisp;
	CHECK(ndisp < sizeof(disp) / 8, "gg_ndisp %u too large", ndisp);
	CHECK(!luw_mem_read(pid, g + ly->gg_g2disp, disp, (ndisp + 1) * 8),
	      "G 0x%llx: dispatch table unreadable", (unsigned long long)g);
	/* After the table come bytecodes (GG->bcff), not code pointers. */
	CHECK(disp[ndisp] < t->vm_start || disp[ndisp] >= t->vm_end,
	      "dispatch[%u] is still in the VM: the table is longer (gg_ndisp)",
	      ndisp);
	for (i = 0; i < ndisp; i++)
		CHECK(disp[i] >= t->vm_start && disp[i] < t->vm_end,
		      "dispatch[%u] = 0x%llx is outside the VM (gg_g2disp/gg_ndisp)",
		      i, (unsigned long long)disp[i]);
	/* Main thread: embedded in GG_State, points back at G. */
	CHECK(!luw_obj_ref(&ob, g + ly->g_mainthref, &mainl),
	      "G->mainthref unreadable");
	CHECK(mainl == g + (int64_t)ly->gg_g2l,
	      "G->mainthref = 0x%llx, not GG->L at 0x%llx (g_mainthref/gg_g2l)",
	      (unsigned long long)mainl,
	      (unsigned long long)(g + (int64_t)ly->gg_g2l));
	CHECK(!luw_mem_read(pid, mainl + ly->gc_gct, &gct, 1) && gct == ly->gct_thread,
	      "main thread's gct = %u, not a thread (gc_gct)", gct);
	CHECK(!luw_obj_ref(&ob, mainl + ly->l_glref, &glref) && glref == g,
	      "main thread's glref = 0x%llx, not G (l_glref)",
	      (unsigned long long)glref);
	/* Its stack: maxstack = stack + stacksize - extra, slot 0 = L. */
	CHECK(!luw_obj_ref(&ob, mainl + ly->l_stack, &stack) && stack,
	      "L->stack unreadable (l_stack)");
	CHECK(!luw_mem_read(pid, mainl + ly->l_stacksize, &stacksize, 4) &&
	      stacksize > ly->stack_extra && stacksize < (1u << 24),
	      "L->stacksize = %u implausible (l_stacksize)", stacksize);
	CHECK(!luw_obj_ref(&ob, mainl + ly->l_maxstack, &maxstack) &&
	      maxstack == stack + 8ull * (stacksize - ly->stack_extra - 1),
	      "L->maxstack = 0x%llx, expected stack + 8*(stacksize - %u - 1) = 0x%llx "
	      "(l_maxstack/l_stack/l_stacksize/stack_extra)",
	      (unsigned long long)maxstack, ly->stack_extra,
	      (unsigned long long)(stack + 8ull * (stacksize - ly->stack_extra - 1)));
	CHECK(!luw_mem_read(pid, stack, &slot0, 8) &&
	      (gc64 ? (slot0 & LUW_LJ_GCVMASK) : (slot0 & 0xffffffffu)) == mainl,
	      "L->stack[0] is not the thread itself");
	/*
	 * base and top are stale while the VM runs (the live base is in a
	 * register): each must lie in the stack, nothing more.  A wrong
	 * l_base/l_top is caught per sample by the walk (bad base).
	 */
	CHECK(!luw_mem_read(pid, mainl + ly->l_base, &base, 8) &&
	      !luw_mem_read(pid, mainl + ly->l_top, &top, 8) && base > stack &&
	      base <= stack + 8ull * stacksize && top >= stack &&
	      top <= stack + 8ull * stacksize,
	      "L->base/top (0x%llx/0x%llx) outside the stack (l_base/l_top)",
	      (unsigned long long)base, (unsigned long long)top);
	/*
	 * The main thread inside the VM (L->cframe set, low bits
	 * CFRAME_RESUME/UNWIND_FF cleared): its newest VM entry's C frame
	 * saved L there.  Read while it runs: a nested entry can return
	 * between the two reads and its stack be reused (by a
	 * coroutine.resume's frame, which holds the coroutine), so L->cframe
	 * is read again after the frame, and the pair again while it moved
	 * (up to 8 times).  A wrong cframe_ofs_l/l_cframe fails on every
	 * read, a moving one at most on the reads the retries of
	 * luw_validate_all() allow.
	 */
	for (tries = 0; tries < 8; tries++) {
		CHECK(!luw_mem_read(pid, mainl + ly->l_cframe, &cframe, 8),
		      "L->cframe unreadable (l_cframe)");
		if (!(cframe & ~3ull))
			break;
		saved = 0;
		CHECK(!luw_mem_read(pid, (cframe & ~3ull) + ly->cframe_ofs_l,
				    &saved, ly->cframe_l_size),
		      "main thread's C frame 0x%llx unreadable (l_cframe)",
		      (unsigned long long)(cframe & ~3ull));
		CHECK(!luw_mem_read(pid, mainl + ly->l_cframe, &again, 8),
		      "L->cframe unreadable (l_cframe)");
		if (again == cframe)
			break;
	}
	CHECK(!(cframe & ~3ull) || saved == mainl,
	      "main thread's C frame 0x%llx holds L = 0x%llx, not the "
	      "thread (l_cframe/cframe_ofs_l/cframe_l_size)",
	      (unsigned long long)(cframe & ~3ull),
	      (unsigned long long)saved);
	if (check_protos(t, ly, g, why, whylen))
		return -1;
	/* A stack may hold no Lua frame to check: strings are always there. */
	if (luw_ffscan_check_strings(pid, ly, g, why, whylen))
		return -1;
	/* The empty string lives in G. */
	CHECK(!luw_mem_read(pid, g + ly->g_strempty + ly->gc_gct, &gct, 1) &&
	      gct == ly->gct_str,
	      "G->strempty's gct = %u, not a string (g_strempty)", gct);
	CHECK(!luw_mem_read(pid, g + ly->g_strempty + ly->str_len, &len, 4) && len == 0,
	      "G->strempty.len = %u, not 0 (str_len)", len);
	CHECK(!luw_mem_read(pid, g + ly->g_vmstate, &vms, 4) &&
	      (vms >= 0 ? vms < 65536 : (uint32_t)~vms < ly->n_vmst),
	      "G->vmstate = %d implausible (g_vmstate)", vms);
	CHECK(!luw_obj_ref(&ob, g + ly->g_cur_l, &curl),
	      "G->cur_L unreadable");
	if (curl) {
		CHECK(!luw_mem_read(pid, curl + ly->gc_gct, &gct, 1) &&
		      gct == ly->gct_thread &&
		      !luw_obj_ref(&ob, curl + ly->l_glref, &glref) && glref == g,
		      "G->cur_L = 0x%llx is not a thread of G (g_cur_l)",
		      (unsigned long long)curl);
	}
	if (ly->g_tmpbuf_l != LUW_LJ_NOFIELD &&
	    !luw_obj_ref(&ob, g + ly->g_tmpbuf_l, &tl) && (tl & ~7ull)) {
		tl &= ~7ull;
		CHECK(!luw_mem_read(pid, tl + ly->gc_gct, &gct, 1) && gct == ly->gct_thread,
		      "G->tmpbuf.L = 0x%llx is not a thread (g_tmpbuf_l)",
		      (unsigned long long)tl);
	}
	CHECK(!luw_obj_ref(&ob, g + ly->g_jit_base, &jb), "G->jit_base unreadable");
	if (ly->flags & LUW_LJ_F_JIT) {
		uint64_t j = g + (int64_t)ly->gg_g2j, arr = 0;
		uint32_t sz = 0;

		CHECK(!luw_mem_read(pid, j + ly->j_trace, &arr, 8) &&
		      !luw_mem_read(pid, j + ly->j_sizetrace, &sz, 4) &&
		      ((arr && sz > 0 && sz <= 65536) || (!arr && !sz)),
		      "J->trace/sizetrace = 0x%llx/%u implausible (gg_g2j/j_trace)",
		      (unsigned long long)arr, sz);
		if (check_traces(pid, ly, arr, sz, why, whylen))
			return -1;
	}
	return 0;
}


/*
 * Reading a running target.  Layout checks read the process with
 * process_vm_readv while it runs, and some of what they read moves: the
 * stack walk of check_protos can catch a frame being built, measure()
 * can read L->stack and L->maxstack either side of a stack reallocation,
 * the process-measured fields (recover.c's anchor, str_size, g_tmpbuf_l,
 * g_strempty) scan G and the heap while the program writes them.  The
 * target is not stopped for it: detection scans up to 2 GiB of memory per
 * candidate, far too long to hold a server's threads (a sampler stops a
 * thread for one stack, not for this), and the one intermittent refusal
 * seen was a GC state (G->strempty gray in the first GC cycle), which a
 * stopped target shows just the same.  Instead:
 *  - a state that fails validation is read again, 3 ms later, up to 3
 *    failures; a pass after a failure counts only when the read after it
 *    passes too (two consecutive reads agree), so a wrong offset that a
 *    moving value satisfies once is still refused;
 *  - luw_layout_attach runs every candidate again, derived afresh from the
 *    process, when all of them failed (LJL_ROUNDS rounds), with the same
 *    rule: a candidate that passes only in a later round must pass a
 *    second validation of every state; the refusal says so, and for each
 *    candidate the check it failed (a later round's too, when another).
 * A wrong offset fails its check on every read, so no number of reads
 * turns it into a pass; what a retry buys is a right layout read at a
 * moment the checks cannot see as consistent.
 */
int luw_validate_all(struct luw_layout_target *t, const struct luw_lj_layout *ly,
			char *why, size_t n)
{
	int i;

	if (!t->nstates)
		return luw_fail(why, n, "no global_State found in memory (dispatch table "
			    "of %u entries into the VM)", ly->gg_ndisp);
	for (i = 0; i < t->nstates; i++) {
		int fails = 0, passes = 0;

		while (passes < (fails ? 2 : 1) && fails < 3) {
			if (!luw_validate_state(t, ly, t->states[i], why, n)) {
				passes++;
				continue;
			}
			fails++;
			passes = 0;
			usleep(3000);
		}
		if (fails == 3) {
			char *c = strdup(why);

			/* Name the state: a process may have several. */
			if (t->nstates > 1)
				snprintf(why, n, "global_State 0x%llx (%d of %d): %s",
					 (unsigned long long)t->states[i], i + 1,
					 t->nstates, c ? c : "");
			free(c);
			return -1;
		}
	}
	return 0;
}

/* lua_State's stack, maxstack and stacksize from a copy of its head. */
static void head_triple(const struct luw_lj_layout *ly, const uint8_t *h,
			uint64_t *stack, uint64_t *maxstack, uint32_t *stacksize)
{
	uint32_t s32;

	if (ly->flags & LUW_LJ_F_GC64) {
		memcpy(stack, h + ly->l_stack, 8);
		memcpy(maxstack, h + ly->l_maxstack, 8);
	} else {
		memcpy(&s32, h + ly->l_stack, 4);
		*stack = s32;
		memcpy(&s32, h + ly->l_maxstack, 4);
		*maxstack = s32;
	}
	memcpy(stacksize, h + ly->l_stacksize, 4);
}

/*
 * What the live process says about constants no header gives us, for a
 * descriptor that leaves them open (0): LJ_STACK_EXTRA from the main
 * thread (maxstack is stack + stacksize - extra - 1 slots; 7 in 2022's
 * GC64 builds, 8 in today's v2.1, 5 with 32-bit refs) and the dispatch
 * table's length (bytecodes were added in 2023: the table is the run of VM
 * code pointers).  Measured on the first state; luw_validate_state then checks
 * every state against them.  A descriptor that states them is checked as
 * it is.
 */
static void measure(struct luw_layout_target *t, struct luw_lj_layout *ly)
{
	uint64_t g = t->states[0], mainl, stack = 0, maxstack = 0, v = 0;
	uint32_t stacksize = 0, k, span;
	uint8_t a[128], b[128];
	int agree = 0;

	mainl = g + (int64_t)ly->gg_g2l;
	/*
	 * stack, maxstack and stacksize from one copy of lua_State's head,
	 * taken again until two copies give the same three: read one by
	 * one, a stack reallocated between the reads (a program recursing
	 * deeply) gave a torn triple and a wrong LJ_STACK_EXTRA, and the
	 * candidate failed its maxstack check (seen in test_ljattach's
	 * churn).  Only the three are compared: base and top, between them
	 * in the head, change with every call, and a busy target on a loaded
	 * machine gave no two equal copies in five (t_vmentry's tarantool
	 * refused with stack_extra 0).
	 */
	span = ly->l_stack > ly->l_maxstack ? ly->l_stack : ly->l_maxstack;
	span = (ly->l_stacksize > span ? ly->l_stacksize : span) + 8;
	for (k = 0; !ly->stack_extra && span <= sizeof(a) && k < 5 && !agree; k++) {
		uint64_t st2, mx2;
		uint32_t sz2;

		if (luw_mem_read(t->pid, mainl, k ? b : a, span))
			break;
		if (!k) {
			head_triple(ly, a, &stack, &maxstack, &stacksize);
			continue;
		}
		head_triple(ly, b, &st2, &mx2, &sz2);
		agree = st2 == stack && mx2 == maxstack && sz2 == stacksize;
		stack = st2;
		maxstack = mx2;
		stacksize = sz2;
	}
	if (agree && maxstack > stack && !((maxstack - stack) % 8) &&
	    (maxstack - stack) / 8 + 1 < stacksize) {
		uint64_t extra = stacksize - 1 - (maxstack - stack) / 8;

		if (extra >= 1 && extra <= 32)
			ly->stack_extra = (__u16)extra;
	}
	if (ly->gg_ndisp)
		return;
	for (k = 0; k < 4096 / 8 - 1; k++) {
		if (luw_mem_read(t->pid, g + ly->gg_g2disp + 8ull * k, &v, 8) ||
		    v < t->vm_start || v >= t->vm_end)
			break;
	}
	ly->gg_ndisp = k;
}

int luw_validate_use(struct luw_layout_target *t, const struct luw_lj_layout *ly,
		   const char *name, char *err, size_t n)
{
	char why[512];

	t->layout = *ly;
	t->offs_state = 0;	/* worked out again for this layout */
	if (luw_states_find(t, err, n))
		return -1;
	if (t->nstates)
		measure(t, &t->layout);
	if (!luw_validate_all(t, &t->layout, why, sizeof(why)))
		return 0;
	return luw_fail(err, n,
		    "%s (build-id %s): layout \"%s\" does not match the live "
		    "process: %s; refusing it", t->path,
		    t->build_id[0] ? t->build_id : "none", name, why);
}
