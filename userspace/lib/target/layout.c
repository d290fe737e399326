/*
 * layout: find LuaJIT in a live process, pick and validate its layout.
 * See target/layout.h for the approach.
 */
#include "target/ffscan.h"
#include "target/layout.h"
#include "elf/debugfile.h"
#include "elf/dwstruct.h"
#include "elf/ehframe.h"
#include "elf/symbols.h"
#include "util/fail.h"
#include "kmod/ljwalk.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "target/obj.h"
#include "luajit/known.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/user.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

void luw_layout_regs_from(const struct user_regs_struct *u, struct luw_lj_regs *r)
{
	memset(r, 0, sizeof(*r));
	r->ip = u->rip;
	r->r[LUW_X86_RAX] = u->rax;
	r->r[LUW_X86_RDX] = u->rdx;
	r->r[LUW_X86_RCX] = u->rcx;
	r->r[LUW_X86_RBX] = u->rbx;
	r->r[LUW_X86_RSI] = u->rsi;
	r->r[LUW_X86_RDI] = u->rdi;
	r->r[LUW_X86_RBP] = u->rbp;
	r->r[LUW_X86_RSP] = u->rsp;
	r->r[LUW_X86_R8] = u->r8;
	r->r[LUW_X86_R9] = u->r9;
	r->r[LUW_X86_R10] = u->r10;
	r->r[LUW_X86_R11] = u->r11;
	r->r[LUW_X86_R12] = u->r12;
	r->r[LUW_X86_R13] = u->r13;
	r->r[LUW_X86_R14] = u->r14;
	r->r[LUW_X86_R15] = u->r15;
}

void luw_layout_walk(const struct luw_layout_target *t, const struct luw_lj_layout *ly,
		     const struct user_regs_struct *u, uint64_t g_hint,
		     struct luw_lj_walk_out *o)
{
	struct luw_lj_walk_in in;
	pid_t pid = t->pid;

	memset(&in, 0, sizeof(in));
	in.ly = ly;
	in.read = luw_mem_read_cb;
	in.ctx = &pid;
	if (u)
		luw_layout_regs_from(u, &in.regs);
	in.vm_start = t->vm_start;
	in.interp_end = t->interp_end;
	in.vm_end = t->vm_end;
	in.g_hint = g_hint;
	luw_lj_walk(&in, o);
}

/* Is ip inside the machine code of the trace the walk reported? */
static int ip_in_trace(const struct luw_layout_target *t,
		       const struct luw_lj_frame *f, uint64_t ip)
{
	const struct luw_lj_layout *ly = &t->layout;
	uint64_t mcode = 0;
	uint32_t sz = 0;

	if (f->kind != LUW_LJF_TRACE || !f->func)
		return 0;
	if (luw_mem_read(t->pid, f->func + ly->tr_mcode, &mcode, 8) ||
	    luw_mem_read(t->pid, f->func + ly->tr_szmcode, &sz, 4))
		return 0;
	return ip >= mcode && ip < mcode + sz;
}

int luw_layout_caught(const struct luw_layout_target *t, uint64_t ip,
		      const struct luw_lj_walk_out *o, int any)
{
	if (ip >= t->vm_start && ip < t->interp_end)
		return o->vmstate != LUW_VMST_TRACE;
	if (o->vmstate == LUW_VMST_TRACE && o->nframes)
		return ip_in_trace(t, &o->frames[0], ip);
	return any && o->status == LUW_LJW_OK && o->nframes > 0;
}

/* ---- which objects may hold the VM ----------------------------------- */

static const char *classify(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	if (!strncmp(b, "libluajit", 9))
		return "libluajit";
	if (!strncmp(b, "luajit", 6))
		return "luajit";
	if (!strncmp(b, "tarantool", 9))
		return "tarantool";
	if (!strncmp(b, "nginx", 5))
		return "nginx";
	if (!strncmp(b, "openresty", 9))
		return "openresty";
	return NULL;
}

/* ---- ELF: build-id, bias, VM FDE ---------------------------------------- */

struct elfobj {
	int fd;
	Elf *elf;
};

/*
 * The object behind a mapping.  Its path may name another file by now (a
 * package upgrade replaced it) or none (" (deleted)"): luw_maps_file finds
 * the file the process runs.  0, or -1 with the reason in err.
 */
static int elf_open_map(pid_t pid, const struct luw_map *m, struct elfobj *o,
			char *err, size_t n)
{
	char p[4200];

	if (luw_maps_file(pid, m, p, sizeof(p)))
		return luw_fail(err, n, "%s", strerror(ENOENT));
	o->elf = luw_elf_open(p, &o->fd, err, n);
	return o->elf ? 0 : -1;
}

static void elf_close(struct elfobj *o)
{
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	o->elf = NULL;
	o->fd = -1;
}

/* The build-id in hex, "" when none fits. */
static void build_id(Elf *elf, char *out, size_t n)
{
	uint8_t id[LUW_BUILD_ID_MAX];
	size_t len = luw_debugfile_build_id(elf, id, sizeof(id));

	out[0] = 0;
	if (2 * len < n)
		luw_debugfile_build_id_hex(id, len, out);
}

/* Load bias from the executable mapping: the PT_LOAD it maps. */
static int elf_bias(Elf *elf, const struct luw_map *m, uint64_t *bias)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if ((ph.p_offset & ~0xfffull) == m->offset && (ph.p_flags & PF_X)) {
			*bias = m->start - (ph.p_vaddr & ~0xfffull);
			return 0;
		}
	}
	return -1;
}

/*
 * CFA rule at `pc` if it is REG + N with REG = reg: N, else -1;
 * rstart, rend: the range of the row.
 */
static long cfa_reg_off(Dwarf_CFI *cfi, uint64_t pc, unsigned int reg,
			uint64_t *rstart, uint64_t *rend)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t nops;
	Dwarf_Addr s, e;
	long r = -1;

	if (dwarf_cfi_addrframe(cfi, pc, &fr))
		return -1;
	if (dwarf_frame_info(fr, &s, &e, NULL) >= 0 &&
	    dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1 &&
	    ops[0].atom == DW_OP_bregx && ops[0].number == reg) {
		r = (long)(int64_t)ops[0].number2;
		*rstart = s;
		*rend = e;
	}
	free(fr);
	return r;
}

/*
 * The interpreter's FDE: the largest whose first row puts the CFA at
 * rsp + a frame (the VM's fixed C frame), from the FDEs of .eh_frame.
 */
int luw_layout_vm_fde(Elf *elf, uint64_t *start, uint64_t *iend,
		   uint64_t *end, uint32_t *cfa, char *err, size_t n)
{
	struct luw_fdes f;
	Dwarf_CFI *cfi;
	uint64_t best = 0, best_s = 0, best_e = 0, best_cfa = 0;

	if (luw_ehframe_fdes(elf, &f))
		return luw_fail(err, n, "out of memory");
	if (!f.n) {
		luw_ehframe_free(&f);
		return luw_fail(err, n, "no .eh_frame");
	}
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi) {
		luw_ehframe_free(&f);
		return luw_fail(err, n, "no CFI: %s", dwarf_errmsg(-1));
	}
	for (size_t i = 0; i < f.n; i++) {
		uint64_t s = f.v[i].start, rs, re;
		long off;

		/* The interpreter is tens of KiB; skip small ones. */
		if (f.v[i].end - s < 8192)
			continue;
		off = cfa_reg_off(cfi, s, 7, &rs, &re);
		if (off <= 8 || rs != s)
			continue;
		if (re - rs > best) {
			best = re - rs;
			best_s = rs;
			best_e = re;
			best_cfa = (uint64_t)off;
		}
	}
	luw_ehframe_free(&f);
	if (!best) {
		dwarf_cfi_end(cfi);
		return luw_fail(err, n, "no LuaJIT interpreter FDE in .eh_frame");
	}
	*start = best_s;
	*iend = best_e;
	*end = best_e;
	*cfa = (uint32_t)best_cfa;
	{
		/*
		 * lj_vm_ffi_call's FDE follows directly; all its rules are at
		 * its first address: CFA = rbp + 16.
		 */
		uint64_t rs, re;

		if (cfa_reg_off(cfi, best_e, 6, &rs, &re) == 16 && rs == best_e)
			*end = re;
	}
	dwarf_cfi_end(cfi);
	return 0;
}

/* ---- DWARF layout -------------------------------------------------------- */

enum { T_GG, T_G, T_L, T_J, T_PT, T_FNC, T_FNL, T_STR, T_TR, T__N };
static const char *const tnames[T__N] = {
	"GG_State", "global_State", "lua_State", "jit_State", "GCproto",
	"GCfuncC", "GCfuncL", "GCstr", "GCtrace",
};

/* jit_State and GCtrace exist only with the JIT (not -DLUAJIT_DISABLE_JIT). */
#define T_OPTIONAL ((1u << T_J) | (1u << T_TR))

struct dw {
	Dwarf_Die t[T__N];
	int have[T__N];
	Dwarf_Die vmst;
	int have_vmst;
	Dwarf_Die ff;		/* enum FastFunc: FF_LUA_, FF_C_, FF_assert... */
	int have_ff;
};

/* Dotted path of members; -1 if any part is missing. */
static long path_off(Dwarf_Die *s, const char *path, Dwarf_Die *last)
{
	char buf[64], *part, *save = NULL;
	Dwarf_Die cur = *s, t;
	long total = 0, off;

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part;
	     part = strtok_r(NULL, ".", &save)) {
		if (luw_dwstruct_member(&cur, part, &off, &t))
			return -1;
		total += off;
		cur = t;
	}
	if (last)
		*last = cur;
	return total;
}

static void dw_scan_cu(Dwarf_Die *cu, struct dw *w)
{
	Dwarf_Die c;

	if (dwarf_child(cu, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		const char *nm = dwarf_diename(&c);
		int i;

		if (tag == DW_TAG_structure_type && nm && dwarf_haschildren(&c)) {
			for (i = 0; i < T__N; i++)
				if (!w->have[i] && !strcmp(nm, tnames[i])) {
					w->t[i] = c;
					w->have[i] = 1;
				}
		} else if (tag == DW_TAG_enumeration_type &&
			   (!w->have_vmst || !w->have_ff)) {
			Dwarf_Die e;

			if (dwarf_child(&c, &e) == 0) {
				const char *en = dwarf_diename(&e);

				if (en && !strcmp(en, "LJ_VMST_INTERP") &&
				    !w->have_vmst) {
					w->vmst = c;
					w->have_vmst = 1;
				}
				if (en && !strcmp(en, "FF_LUA_") && !w->have_ff) {
					w->ff = c;
					w->have_ff = 1;
				}
			}
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

/* Everything there is to find (optional parts too): stop scanning. */
static int dw_all(const struct dw *w)
{
	int i;

	for (i = 0; i < T__N; i++)
		if (!w->have[i])
			return 0;
	return w->have_vmst && w->have_ff;
}

/* What the layout cannot do without, named; NULL when all found. */
static const char *dw_missing(const struct dw *w)
{
	int i;

	for (i = 0; i < T__N; i++)
		if (!w->have[i] && !(T_OPTIONAL & (1u << i)))
			return tnames[i];
	return w->have_vmst ? NULL : "LJ_VMST_* enum";
}

/*
 * A trace's frame, CFRAME_SIZE_JIT and GCtrace.spadjust: only a tool that
 * unwinds trace code needs them (lj_gdbjit's CFA = rsp + CFRAME_SIZE_JIT
 * + spadjust); the walk reaches the C frame under a trace through
 * L->cframe.  No exported function shows them and no live check can:
 * unknown rather than a family's, where no build-id vouches for them.
 */
static void unproven_trace_frame(struct luw_lj_layout *ly)
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
static void tags_from_code(const struct luw_recover_result *r,
			   struct luw_lj_layout *ly, char *used, size_t un)
{
	char u[64] = "";

	if (r->gct_str != LUW_LJR_NONE) {
		ly->gct_str = (__u8)r->gct_str;
		strcat(u, " gct_str");
	}
	if (r->gct_thread != LUW_LJR_NONE) {
		ly->gct_thread = (__u8)r->gct_thread;
		strcat(u, " gct_thread");
	}
	if (r->gct_func != LUW_LJR_NONE) {
		ly->gct_func = (__u8)r->gct_func;
		strcat(u, " gct_func");
	}
	if (r->gct_thread != LUW_LJR_NONE && r->gct_func == r->gct_thread + 2) {
		ly->gct_proto = (__u8)(r->gct_thread + 1);
		ly->gct_trace = (__u8)(r->gct_func + 1);
		strcat(u, " gct_proto gct_trace");
	}
	if (used)
		strncat(used, u, un - strlen(used) - 1);
}

/*
 * Whether the family map `ly` agrees with where the VM's code stores its
 * states: 0, or -1 with the state it misplaces.
 */
static int vmst_agrees(const struct luw_recover_result *r,
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
		strncat(used, " vmst_map(unknown)", un - strlen(used) - 1);
		return;
	}
	memset(ly->vmst_map, 0, sizeof(ly->vmst_map));
	for (k = 0; k < c; k++)
		ly->vmst_map[k] = LUW_VMST_INTERP;
	memcpy(ly->vmst_map + c, after_c, sizeof(after_c));
	ly->n_vmst = (__u8)n;
	strncat(used, " vmst_map", un - strlen(used) - 1);
}

/* Fast-function names from the FF_* enumerators: each one's id. */
static void dw_ffnames(Dwarf_Die *en, struct luw_ffnames *ff, const char *src)
{
	Dwarf_Die e;

	luw_ffnames_init(ff, src);
	if (dwarf_child(en, &e) != 0)
		return;
	do {
		const char *nm = dwarf_diename(&e);
		Dwarf_Attribute a;
		Dwarf_Word v;
		char name[64];

		if (!nm || !dwarf_attr(&e, DW_AT_const_value, &a) ||
		    dwarf_formudata(&a, &v) || v < 2 || v >= LUW_FF_MAX ||
		    !strcmp(nm, "FF__MAX") ||
		    luw_ffnames_from_enum(nm, name, sizeof(name)))
			continue;
		luw_ffnames_set(ff, (unsigned int)v, name);
	} while (dwarf_siblingof(&e, &e) == 0);
}

static long dw_size(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(d, DW_AT_byte_size, &a) || dwarf_formudata(&a, &w))
		return -1;
	return (long)w;
}

static int map_vmst(const char *name)
{
	static const struct { const char *n; int v; } m[] = {
		{ "INTERP", LUW_VMST_INTERP }, { "LFUNC", LUW_VMST_LFUNC },
		{ "FFUNC", LUW_VMST_FFUNC }, { "CFUNC", LUW_VMST_CFUNC },
		{ "C", LUW_VMST_CFUNC }, { "GC", LUW_VMST_GC },
		{ "EXIT", LUW_VMST_EXIT }, { "RECORD", LUW_VMST_RECORD },
		{ "OPT", LUW_VMST_OPT }, { "ASM", LUW_VMST_ASM },
	};
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(name, m[i].n))
			return m[i].v;
	return LUW_VMST_UNKNOWN;
}

/*
 * Member `path` of struct `ctype` into *dst.  A struct only the JIT has
 * (T_OPTIONAL) gives LUW_LJ_NOFIELD when the build has none.
 */
static int dw_member(struct dw *w, const struct luw_lj_layout *ly,
		     const char *ctype, const char *path, __u16 *dst,
		     char *err, size_t n)
{
	long o;
	int t;

	for (t = 0; t < T__N && strcmp(tnames[t], ctype); t++)
		;
	if (t == T__N)
		return luw_fail(err, n, "DWARF: %s is not read", ctype);
	if ((T_OPTIONAL & (1u << t)) && !(ly->flags & LUW_LJ_F_JIT)) {
		*dst = LUW_LJ_NOFIELD;
		return 0;
	}
	o = path_off(&w->t[t], path, NULL);
	if (o < 0 || o >= 0xffff)
		return luw_fail(err, n, "DWARF: no %s.%s", ctype, path);
	*dst = (__u16)o;
	return 0;
}

static int layout_from_dwarf(Elf *elf, uint32_t fde_cfa,
			     struct luw_lj_layout *ly, struct luw_ffnames *ff,
			     char *err, size_t n)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_Off off = 0, next;
	size_t hsz;
	struct dw w;
	Dwarf_Die t;
	long g, x, refsz;
	int ret = -1, gc64;

	if (!dw)
		return luw_fail(err, n, "no DWARF");
	memset(&w, 0, sizeof(w));
	while (!dw_all(&w) &&
	       dwarf_nextcu(dw, off, &next, &hsz, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsz, &cu))
			dw_scan_cu(&cu, &w);
		off = next;
	}
	if (dw_missing(&w)) {
		luw_fail(err, n, "DWARF has no %s", dw_missing(&w));
		goto out;
	}
	if ((w.have[T_J] != 0) != (w.have[T_TR] != 0)) {
		luw_fail(err, n, "DWARF has %s but no %s",
		     tnames[w.have[T_J] ? T_J : T_TR],
		     tnames[w.have[T_J] ? T_TR : T_J]);
		goto out;
	}
	memset(ly, 0, sizeof(*ly));
	ly->size = sizeof(*ly);
	ly->version = LUW_LJ_LAYOUT_VERSION;
	if (luw_dwstruct_member(&w.t[T_G], "mainthref", &x, &t) || (refsz = dw_size(&t)) < 0) {
		luw_fail(err, n, "DWARF: no global_State.mainthref");
		goto out;
	}
	gc64 = refsz == 8;
	ly->flags = (gc64 ? LUW_LJ_F_GC64 : 0) | LUW_LJ_F_JIT;
	/*
	 * Register use and the C frame are fixed per x86-64 VM flavour (the
	 * frame's offsets are replaced by what the VM entry's code says when
	 * recover.c reads them: try_object).
	 */
	ly->reg_base = LUW_X86_RDX;
	ly->reg_pc = LUW_X86_RBX;
	ly->reg_dispatch = LUW_X86_R14;
	ly->reg_kbase = LUW_X86_R15;
	ly->cframe_size = (__u16)fde_cfa;
	/* A macro, in no DWARF and no FDE, and no walk reads it. */
	ly->cframe_size_jit = 0;
	ly->cframe_ofs_l = gc64 ? 16 : 24;
	ly->cframe_ofs_prev = 32;
	ly->cframe_ofs_pc = gc64 ? 24 : 28;
	ly->cframe_l_size = gc64 ? 8 : 4;
	ly->cframe_rbp_cfa = 16;
	g = path_off(&w.t[T_GG], "g", NULL);
	x = path_off(&w.t[T_GG], "dispatch", &t);
	if (g < 0 || x < 0) {
		luw_fail(err, n, "DWARF: no GG_State.g/dispatch");
		goto out;
	}
	ly->gg_g2disp = (__s32)(x - g);
	{
		Dwarf_Die sub;
		Dwarf_Attribute a;
		Dwarf_Word ub;

		if (dwarf_tag(&t) != DW_TAG_array_type || dwarf_child(&t, &sub) ||
		    !(dwarf_attr(&sub, DW_AT_upper_bound, &a) ||
		      dwarf_attr(&sub, DW_AT_count, &a)) ||
		    dwarf_formudata(&a, &ub)) {
			luw_fail(err, n, "DWARF: GG_State.dispatch is no array");
			goto out;
		}
		ly->gg_ndisp = (__u32)(dwarf_hasattr(&sub, DW_AT_upper_bound) ?
				       ub + 1 : ub);
	}
	x = path_off(&w.t[T_GG], "J", NULL);
	if ((x < 0) != !w.have[T_J]) {
		luw_fail(err, n, "DWARF: GG_State.J and jit_State disagree");
		goto out;
	}
	if (x < 0) {
		/* -DLUAJIT_DISABLE_JIT: no traces to find. */
		ly->flags &= ~LUW_LJ_F_JIT;
		ly->gg_g2j = 0;
	} else {
		ly->gg_g2j = (__s32)(x - g);
	}
	x = path_off(&w.t[T_GG], "L", NULL);
	if (x < 0) {
		luw_fail(err, n, "DWARF: no GG_State.L");
		goto out;
	}
	ly->gg_g2l = (__s32)(x - g);
	/* Every member row of the field list, by the same names. */
#define DW_MEMBER(type, name, ctype, member)				\
	if (dw_member(&w, ly, #ctype, #member, &ly->name, err, n))	\
		goto out;
#define DW_VALUE(type, name, value)
	LUW_LJ_LAYOUT_FIELDS(DW_MEMBER, DW_VALUE)
#undef DW_MEMBER
#undef DW_VALUE
	ly->pt_size = (__u16)dw_size(&w.t[T_PT]);
	ly->str_size = (__u16)dw_size(&w.t[T_STR]);
	/*
	 * LJ_STACK_EXTRA is a macro (5 + 2*LJ_FR2 in 2022, 5 + 3*LJ_FR2
	 * since): luw_layout_use_layout measures it on the live main thread.
	 */
	ly->stack_extra = 0;
	/* ~LJ_T* are macros, not in DWARF; stable across every 2.x. */
	ly->gct_str = 4;
	ly->gct_thread = 6;
	ly->gct_proto = 7;
	ly->gct_func = 8;
	ly->gct_trace = 9;
	{
		Dwarf_Die e;
		int k = 0;

		if (dwarf_child(&w.vmst, &e) == 0) {
			do {
				const char *en = dwarf_diename(&e);

				if (!en || strncmp(en, "LJ_VMST_", 8) ||
				    !strcmp(en, "LJ_VMST__MAX"))
					continue;
				if (k >= LUW_LJ_MAX_RAW_VMST)
					break;
				ly->vmst_map[k++] = (__u8)map_vmst(en + 8);
			} while (dwarf_siblingof(&e, &e) == 0);
		}
		ly->n_vmst = (__u8)k;
	}
	if (luw_lj_layout_check(ly)) {
		luw_fail(err, n, "DWARF gave an implausible layout");
		goto out;
	}
	if (w.have_ff && ff)
		dw_ffnames(&w.ff, ff, "DWARF FF_* enumerators");
	ret = 0;
out:
	dwarf_end(dw);
	return ret;
}

/* The separate debug file, as the process sees the files (debugfile.h). */
static int open_debug_file(const struct luw_layout_target *t, Elf *elf,
			   const char *objpath, struct elfobj *dbg, char *where,
			   size_t wn)
{
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root", (int)t->pid);
	return luw_debugfile_open(elf, objpath, t->pid ? root : NULL, where, wn,
			      &dbg->fd, &dbg->elf);
}

/* DWARF in the object or in its separate debug file. */
static int layout_dwarf_any(struct luw_layout_target *t, Elf *elf,
			    const char *objpath, struct luw_lj_layout *ly,
			    struct luw_ffnames *ff, char *src, size_t sn,
			    char *err, size_t n)
{
	GElf_Shdr sh;
	struct elfobj dbg = { -1, NULL };
	int r;

	if (luw_elf_section(elf, ".debug_info", &sh)) {
		snprintf(src, sn, "%s", objpath);
		return layout_from_dwarf(elf, t->fde_cfa, ly, ff, err, n);
	}
	if (open_debug_file(t, elf, objpath, &dbg, src, sn))
		return luw_fail(err, n, "no DWARF (none in the object, no debug "
			    "file by build-id or .gnu_debuglink)");
	r = layout_from_dwarf(dbg.elf, t->fde_cfa, ly, ff, err, n);
	elf_close(&dbg);
	return r;
}

/* ---- luw_layout_open ------------------------------------------------------------ */

static int try_object(struct luw_layout_target *t, const struct luw_map *m,
		      const char *kind, char *err, size_t n)
{
	struct elfobj o = { -1, NULL };
	struct luw_lj_layout dly;
	struct luw_ffnames *dff;
	char why[256], src[4400], mpath[4200];
	const struct luw_known *known;
	uint64_t sym;
	size_t i, nknown;

	/* Messages and t->path: the object as /proc/PID/maps names it. */
	snprintf(mpath, sizeof(mpath), "%s%s", m->path,
		 m->deleted ? " (deleted)" : "");
	if (elf_open_map(t->pid, m, &o, why, sizeof(why)))
		return luw_fail(err, n, "%s: cannot open: %s", mpath, why);
	if (elf_bias(o.elf, m, &t->bias)) {
		elf_close(&o);
		return luw_fail(err, n, "%s: mapping matches no PT_LOAD", mpath);
	}
	if (luw_layout_vm_fde(o.elf, &t->vm_start, &t->interp_end, &t->vm_end,
			&t->fde_cfa, why, sizeof(why))) {
		elf_close(&o);
		return luw_fail(err, n, "%s: %s", mpath, why);
	}
	/* With a symbol table: check the FDE against lj_vm_asm_begin. */
	if (!luw_elf_symbol(o.elf, SHT_SYMTAB, "lj_vm_asm_begin", 0, &sym) &&
	    sym != t->vm_start) {
		elf_close(&o);
		return luw_fail(err, n, "%s: FDE at 0x%llx, lj_vm_asm_begin at 0x%llx",
			    mpath, (unsigned long long)t->vm_start,
			    (unsigned long long)sym);
	}
	/* For a stripped build: what its machine code says (target/recover.h). */
	t->why_rec[0] = 0;
	if (luw_recover(o.elf, t->vm_start, t->interp_end, LUW_X86_R14,
			LUW_X86_RDX, &t->rec, t->why_rec, sizeof(t->why_rec)) &&
	    !t->why_rec[0])
		snprintf(t->why_rec, sizeof(t->why_rec), "not analysed");
	t->vm_start += t->bias;
	t->interp_end += t->bias;
	t->vm_end += t->bias;
	snprintf(t->path, sizeof(t->path), "%.4095s", mpath);
	build_id(o.elf, t->build_id, sizeof(t->build_id));
	t->kind = kind ? kind : "embedded";
	t->src = LUW_LJL_SRC_NONE;
	luw_ffnames_init(&t->ff, NULL);
	known = luw_known_layouts(&nknown);
	for (i = 0; i < nknown; i++) {
		if (known[i].build_id && !strcmp(known[i].build_id, t->build_id)) {
			t->layout = *known[i].layout;
			t->src = LUW_LJL_SRC_KNOWN;
			luw_ffnames_family(&t->ff, known[i].ffam, known[i].name);
			snprintf(t->layout_name, sizeof(t->layout_name), "%s",
				 known[i].name);
			break;
		}
	}
	/* DWARF wins over the table: it describes this very build. */
	why[0] = 0;
	dff = malloc(sizeof(*dff));
	if (!dff) {
		elf_close(&o);
		return luw_fail(err, n, "out of memory");
	}
	luw_ffnames_init(dff, NULL);
	if (!layout_dwarf_any(t, o.elf, m->path, &dly, dff, src, sizeof(src), why,
			      sizeof(why))) {
		/*
		 * The C frame's offsets are the VM's assembler constants, in
		 * no DWARF: from this binary's VM entry when the machine code
		 * gives all four (target/recover.h), else x64's (layout_from_dwarf).
		 */
		if (!t->why_rec[0] && t->rec.cframe_ofs_l != LUW_LJR_NONE &&
		    t->rec.cframe_ofs_prev != LUW_LJR_NONE &&
		    t->rec.cframe_ofs_pc != LUW_LJR_NONE &&
		    t->rec.cframe_l_size != LUW_LJR_NONE) {
			dly.cframe_ofs_l = (__u16)t->rec.cframe_ofs_l;
			dly.cframe_ofs_prev = (__u16)t->rec.cframe_ofs_prev;
			dly.cframe_ofs_pc = (__u16)t->rec.cframe_ofs_pc;
			dly.cframe_l_size = (__u8)t->rec.cframe_l_size;
		}
		/*
		 * The VM's registers and the FDE's rbp rule are in no DWARF
		 * either: this binary's own when its code shows them.
		 */
		if (!t->why_rec[0] && t->rec.reg_base != LUW_LJR_NONE &&
		    t->rec.reg_pc != LUW_LJR_NONE &&
		    t->rec.reg_dispatch != LUW_LJR_NONE &&
		    t->rec.reg_kbase != LUW_LJR_NONE) {
			dly.reg_base = (__u8)t->rec.reg_base;
			dly.reg_pc = (__u8)t->rec.reg_pc;
			dly.reg_dispatch = (__u8)t->rec.reg_dispatch;
			dly.reg_kbase = (__u8)t->rec.reg_kbase;
		}
		if (!t->why_rec[0] && t->rec.cframe_rbp_cfa != LUW_LJR_NONE)
			dly.cframe_rbp_cfa = (__u8)t->rec.cframe_rbp_cfa;
		if (!t->why_rec[0])
			tags_from_code(&t->rec, &dly, NULL, 0);
		t->layout = dly;
		t->src = LUW_LJL_SRC_DWARF;
		snprintf(t->layout_name, sizeof(t->layout_name), "DWARF of %.80s",
			 src);
		if (dff->count)
			t->ff = *dff;
		t->why_dwarf[0] = 0;
	} else {
		snprintf(t->why_dwarf, sizeof(t->why_dwarf), "%s", why);
		if (t->src == LUW_LJL_SRC_NONE)
			snprintf(t->layout_name, sizeof(t->layout_name),
				 "unknown build (%.60s)", why);
	}
	free(dff);
	elf_close(&o);
	return 0;
}

int luw_layout_open(pid_t pid, struct luw_layout_target *t, char *err, size_t n)
{
	char first_err[512] = "";
	struct luw_maps maps;
	int pass;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return luw_fail(err, n, "libelf too old");
	if (luw_maps_read(pid, &maps))
		return luw_fail(err, n, "pid %d: %s", (int)pid, strerror(errno));
	/* Pass 0: objects named like LuaJIT hosts; pass 1: any executable. */
	for (pass = 0; pass < 2; pass++) {
		char seen[64][256];
		int nseen = 0;

		for (size_t mi = 0; mi < maps.n; mi++) {
			const struct luw_map *m = &maps.v[mi];
			const char *kind;
			int k, dup = 0;

			if (!(m->prot & LUW_MAP_X) || m->path[0] != '/')
				continue;
			kind = classify(m->path);
			if ((pass == 0) != (kind != NULL))
				continue;
			for (k = 0; k < nseen; k++)
				dup |= !strncmp(seen[k], m->path, 255);
			if (dup)
				continue;
			if (nseen < 64)
				snprintf(seen[nseen++], 256, "%.255s", m->path);
			if (pass == 1 && (strstr(m->path, "/libc.so") ||
					  strstr(m->path, "/ld-linux") ||
					  strstr(m->path, "/libm.so")))
				continue;
			/* Only a named candidate's failure is worth reporting. */
			if (!try_object(t, m, kind,
					pass || first_err[0] ? NULL : first_err,
					sizeof(first_err))) {
				luw_maps_free(&maps);
				return 0;
			}
		}
	}
	luw_maps_free(&maps);
	if (first_err[0])
		return luw_fail(err, n, "pid %d: no LuaJIT VM found (%s)", (int)pid,
			    first_err);
	return luw_fail(err, n,
		    "pid %d is not a LuaJIT process: no luajit*, libluajit-5.1.so*, "
		    "tarantool, nginx or openresty mapping and no mapped object "
		    "with LuaJIT's interpreter FDE", (int)pid);
}

/* ---- finding global_State ------------------------------------------------ */

int luw_layout_find_states(struct luw_layout_target *t, char *err, size_t n)
{
	struct luw_maps maps;
	const struct luw_lj_layout *ly = &t->layout;
	enum { CHUNK = 1 << 20 };
	uint64_t *buf;
	uint64_t scanned = 0, limit = 2ull << 30;
	uint32_t need = ly->gg_ndisp ? ly->gg_ndisp : 64;

	t->nstates = 0;
	if (ly->size != sizeof(*ly))
		return luw_fail(err, n, "no layout");
	buf = malloc(CHUNK);
	if (!buf)
		return luw_fail(err, n, "out of memory");
	if (luw_maps_read(t->pid, &maps)) {
		free(buf);
		return luw_fail(err, n, "pid %d: %s", (int)t->pid, strerror(errno));
	}
	for (size_t mi = 0; mi < maps.n && scanned < limit; mi++) {
		const struct luw_map *m = &maps.v[mi];
		uint64_t a, run = 0, run_start = 0;

		/* GG_State comes from the Lua allocator: anonymous or heap. */
		if ((m->prot & (LUW_MAP_R | LUW_MAP_W)) != (LUW_MAP_R | LUW_MAP_W))
			continue;
		if (m->path[0] && strcmp(m->path, "[heap]"))
			continue;
		for (a = m->start; a < m->end && scanned < limit; a += CHUNK) {
			uint64_t len = m->end - a < CHUNK ? m->end - a : CHUNK, i;

			/*
			 * A chunk that does not read whole (the heap shrank
			 * since the maps were read) is read page by page:
			 * skipping all of it lost GG_State now and then in
			 * test_ljattach's churn.  An unreadable page ends a run.
			 */
			uint8_t ok[CHUNK / 4096];

			memset(ok, 1, sizeof(ok));
			if (luw_mem_read(t->pid, a, buf, (uint32_t)len)) {
				uint64_t pg;

				for (pg = 0; pg < (len + 4095) / 4096; pg++)
					ok[pg] = !luw_mem_read(t->pid, a + pg * 4096,
						     (uint8_t *)buf + pg * 4096,
						     (uint32_t)(len - pg * 4096 < 4096 ?
								len - pg * 4096 : 4096));
			}
			scanned += len;
			for (i = 0; i < len / 8; i++) {
				uint64_t v = buf[i];

				if (!ok[i / 512]) {
					run = 0;
					continue;
				}
				if (v >= t->vm_start && v < t->vm_end) {
					if (!run++)
						run_start = a + 8 * i;
					/* Validation tells a real G from a lookalike. */
					if (run == need && t->nstates < LUW_LJL_MAX_STATES)
						t->states[t->nstates++] =
							run_start - ly->gg_g2disp;
				} else {
					run = 0;
				}
			}
		}
	}
	luw_maps_free(&maps);
	free(buf);
	return 0;
}

/* ---- validation ---------------------------------------------------------- */

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

int luw_layout_validate(const struct luw_layout_target *t, const struct luw_lj_layout *ly,
		 uint64_t g, char *why, size_t whylen)
{
	pid_t pid = t->pid;
	int gc64 = !!(ly->flags & LUW_LJ_F_GC64);
	uint64_t mainl = 0, glref = 0, stack = 0, maxstack = 0, base = 0, top = 0;
	uint64_t slot0 = 0, disp[4096 / 8], curl = 0, jb = 0, tl = 0, cframe = 0;
	uint32_t stacksize = 0, len = 1, i, ndisp;
	int32_t vms = 0;
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
	 * saved L there.  Read while it runs: a nested entry returning
	 * between the two reads fails this once, a wrong
	 * cframe_ofs_l/l_cframe every time.
	 */
	CHECK(!luw_mem_read(pid, mainl + ly->l_cframe, &cframe, 8),
	      "L->cframe unreadable (l_cframe)");
	if (cframe & ~3ull) {
		uint64_t saved = 0;

		CHECK(!luw_mem_read(pid, (cframe & ~3ull) + ly->cframe_ofs_l, &saved,
			  ly->cframe_l_size) && saved == mainl,
		      "main thread's C frame 0x%llx holds L = 0x%llx, not the "
		      "thread (l_cframe/cframe_ofs_l/cframe_l_size)",
		      (unsigned long long)(cframe & ~3ull),
		      (unsigned long long)saved);
	}
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

/* ---- attach --------------------------------------------------------------- */

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
static int validate_all(struct luw_layout_target *t, const struct luw_lj_layout *ly,
			char *why, size_t n)
{
	int i;

	if (!t->nstates)
		return luw_fail(why, n, "no global_State found in memory (dispatch table "
			    "of %u entries into the VM)", ly->gg_ndisp);
	for (i = 0; i < t->nstates; i++) {
		int fails = 0, passes = 0;

		while (passes < (fails ? 2 : 1) && fails < 3) {
			if (!luw_layout_validate(t, ly, t->states[i], why, n)) {
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
 * code pointers).  Measured on the first state; luw_layout_validate then checks
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

int luw_layout_use_layout(struct luw_layout_target *t, const struct luw_lj_layout *ly,
		   const char *name, char *err, size_t n)
{
	char why[512];

	t->layout = *ly;
	if (luw_layout_find_states(t, err, n))
		return -1;
	if (t->nstates)
		measure(t, &t->layout);
	if (!validate_all(t, &t->layout, why, sizeof(why)))
		return 0;
	return luw_fail(err, n,
		    "%s (build-id %s): layout \"%s\" does not match the live "
		    "process: %s; refusing it", t->path,
		    t->build_id[0] ? t->build_id : "none", name, why);
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
	if (luw_layout_find_states(t, why, n))
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

/*
 * A family layout with every field the machine code gave replaced, GG_State
 * anchored in the process, GG_DISP2J from the interpreter's calls (the
 * lea of DISPATCH's offset that lies inside GG_State past global_State's
 * known fields: jit_State; none in a build without the JIT).
 */
static int layout_from_code(struct luw_layout_target *t, const struct luw_lj_layout *fam,
			    struct luw_lj_layout *ly, char *used, size_t un,
			    char *why, size_t n)
{
	const struct luw_recover_result *r = &t->rec;
	struct luw_obj ob;
	int32_t j = 0, gmax;
	int i;

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
#define TAKE(f) do { if (r->f != LUW_LJR_NONE) { ly->f = (__u16)r->f; \
	strncat(used, " " #f, un - strlen(used) - 1); } } while (0)
	TAKE(g_cur_l);
	TAKE(l_stack);
	TAKE(l_status);
	TAKE(l_cframe);
	TAKE(l_top);
	TAKE(l_base);
	TAKE(l_maxstack);
	TAKE(fn_ffid);
	TAKE(fn_pc);
	TAKE(fn_f);
	TAKE(pt_size);
	TAKE(pt_sizebc);
	TAKE(pt_chunkname);
	TAKE(pt_firstline);
	TAKE(pt_numline);
	TAKE(pt_lineinfo);
	TAKE(cframe_ofs_l);
	TAKE(cframe_ofs_prev);
	TAKE(cframe_ofs_pc);
	TAKE(l_stacksize);
	TAKE(gc_gct);
#undef TAKE
#define TAKE8(f) do { if (r->f != LUW_LJR_NONE) { ly->f = (__u8)r->f; \
	strncat(used, " " #f, un - strlen(used) - 1); } } while (0)
	TAKE8(cframe_l_size);
	TAKE8(cframe_rbp_cfa);
	TAKE8(reg_base);
	TAKE8(reg_pc);
	TAKE8(reg_dispatch);
	TAKE8(reg_kbase);
#undef TAKE8
	tags_from_code(r, ly, used, un);
	vmst_from_code(r, ly, used, un);
	/* What the VM entries push: the interpreter's FDE says. */
	ly->cframe_size = (__u16)t->fde_cfa;
	strncat(used, " cframe_size(FDE)", un - strlen(used) - 1);
	unproven_trace_frame(ly);
	if (anchor_gg(t, ly, why, n))
		return -1;
	strncat(used, " gg_g2l gg_g2disp", un - strlen(used) - 1);
	if (r->have_vmstate && r->vmstate_disp + ly->gg_g2disp > 0 &&
	    r->vmstate_disp + ly->gg_g2disp < 0xffff) {
		ly->g_vmstate = (__u16)(r->vmstate_disp + ly->gg_g2disp);
		strncat(used, " g_vmstate", un - strlen(used) - 1);
	}
	if (r->have_jitbase && r->jitbase_disp + ly->gg_g2disp > 0 &&
	    r->jitbase_disp + ly->gg_g2disp < 0xffff) {
		ly->g_jit_base = (__u16)(r->jitbase_disp + ly->gg_g2disp);
		strncat(used, " g_jit_base", un - strlen(used) - 1);
	}
	if (r->have_tmpbufl && r->tmpbufl_disp + ly->gg_g2disp > 0 &&
	    r->tmpbufl_disp + ly->gg_g2disp < 0xffff) {
		ly->g_tmpbuf_l = (__u16)(r->tmpbufl_disp + ly->gg_g2disp);
		strncat(used, " g_tmpbuf_l", un - strlen(used) - 1);
	}
	gmax = ly->g_cur_l > ly->g_mainthref ? ly->g_cur_l : ly->g_mainthref;
	for (i = 0; i < r->ndisp; i++) {
		int32_t g_ofs = r->disp[i] + ly->gg_g2disp;

		if (g_ofs > gmax && r->disp[i] < 0 && (!j || r->disp[i] > j))
			j = r->disp[i];
	}
	if (j) {
		ly->gg_g2j = j + ly->gg_g2disp;
		ly->flags |= LUW_LJ_F_JIT;
		strncat(used, " gg_g2j", un - strlen(used) - 1);
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
			strncat(used, " j_trace j_sizetrace", un - strlen(used) - 1);
		} else if (vt > 0 && vt < 0xfff0) {
			/*
			 * No jit.util to read (LUAJIT_DISABLE_JITUTIL) or it
			 * disagrees: sizetrace follows trace and freetrace (a
			 * TraceNo) in every 2.1 jit_State, which the live
			 * check of the pair has to bear out.
			 */
			ly->j_trace = (__u16)vt;
			ly->j_sizetrace = (__u16)(ly->j_trace + 12);
			strncat(used, " j_trace j_sizetrace(j_trace+12)",
				un - strlen(used) - 1);
		}
		if (r->tr_mcode != LUW_LJR_NONE && r->tr_szmcode != LUW_LJR_NONE) {
			ly->tr_mcode = (__u16)r->tr_mcode;
			ly->tr_szmcode = (__u16)r->tr_szmcode;
			strncat(used, " tr_mcode tr_szmcode", un - strlen(used) - 1);
		}
		if (r->tr_startpt != LUW_LJR_NONE && r->tr_traceno != LUW_LJR_NONE) {
			ly->tr_startpt = (__u16)r->tr_startpt;
			ly->tr_traceno = (__u16)r->tr_traceno;
			strncat(used, " tr_startpt tr_traceno", un - strlen(used) - 1);
		}
		if (r->tr_startpc != LUW_LJR_NONE) {
			ly->tr_startpc = (__u16)r->tr_startpc;
			strncat(used, " tr_startpc", un - strlen(used) - 1);
		}
	} else {
		ly->flags &= ~LUW_LJ_F_JIT;
		ly->gg_g2j = 0;
		ly->j_trace = ly->j_sizetrace = LUW_LJ_NOFIELD;
		ly->tr_startpt = ly->tr_startpc = LUW_LJ_NOFIELD;
		ly->tr_spadjust = ly->tr_mcode = LUW_LJ_NOFIELD;
		ly->tr_szmcode = ly->tr_traceno = LUW_LJ_NOFIELD;
		strncat(used, " no-JIT", un - strlen(used) - 1);
	}
	/*
	 * No BC_JLOOP to show G->jit_base either; without the JIT nothing
	 * reads it, but the descriptor needs one: it follows cur_L in every
	 * 2.1 global_State.
	 */
	if (!r->have_jitbase && r->g_cur_l != LUW_LJR_NONE) {
		ly->g_jit_base = (__u16)(r->g_cur_l + r->ref_size);
		strncat(used, " g_jit_base(after cur_L)", un - strlen(used) - 1);
	}
	/*
	 * No BC_JLOOP (no JIT) to show G->tmpbuf.L: the interpreter's calls
	 * take &G->tmpbuf (the argument inside global_State that is not G
	 * itself); its L follows three pointers of 4 (2017) or 8 bytes.  The
	 * one holding a thread of G is it; none: the field stays unknown.
	 */
	if (!r->have_tmpbufl && t->states_anchor) {
		uint32_t gend = (uint32_t)(j ? j + ly->gg_g2disp : ly->gg_g2disp);
		int nfit = 0;
		__u16 fit = 0;

		for (i = 0; i < r->ndisp; i++) {
			int32_t tb = r->disp[i] + ly->gg_g2disp;
			int k;

			if (tb <= 0 || (uint32_t)tb >= gend || r->disp[i] == j)
				continue;
			for (k = 4; k <= 8; k += 4) {
				uint64_t l = 0, gl = 0;
				uint8_t gct = 0;
				uint32_t o = (uint32_t)tb + 3u * (uint32_t)k;

				if (luw_obj_ref(&ob, t->states_anchor + o, &l) ||
				    !(l & ~7ull) ||
				    luw_mem_read(t->pid, (l & ~7ull) + ly->gc_gct, &gct, 1) ||
				    gct != ly->gct_thread ||
				    luw_obj_ref(&ob, (l & ~7ull) + ly->l_glref, &gl) ||
				    gl != t->states_anchor)
					continue;
				nfit++;
				fit = (__u16)o;
			}
		}
		ly->g_tmpbuf_l = nfit == 1 ? fit : LUW_LJ_NOFIELD;
		strncat(used, nfit == 1 ? " g_tmpbuf_l(process)" :
			" no-g_tmpbuf_l", un - strlen(used) - 1);
	}
	/*
	 * GCstr's size and its len's place from the process: the metamethod
	 * names in G read right with exactly one of the shapes GCstr has had.
	 * len is its last member (16/12 before the string ids, 20/16 and
	 * 24/20 after), except in GC64 builds before them (beta3 built
	 * with LUAJIT_ENABLE_GC64, tarantool 2.x's GC64), where 4 bytes of
	 * padding follow it (24/16).
	 */
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
			strncat(used, " str_size/str_len(process)",
				un - strlen(used) - 1);
		}
	}
	/*
	 * G->strempty, from the process: the one empty string embedded in
	 * global_State before jit_State (gct ~LJ_TSTR, no next object, length
	 * 0, its stremptyz byte 0).  Two candidates: decide nothing.
	 */
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
			strncat(used, " g_strempty(process)", un - strlen(used) - 1);
		}
	}
	return 0;
}

/*
 * Without DWARF's FF_* or a build checked by its build-id, the names come
 * from the target's tables; failing that, fast functions stay unnamed
 * ("ff:#N"), which is incomplete but never wrong.
 */
static void names_from_tables(struct luw_layout_target *t)
{
	char why[128];

	if (t->ff.count)
		return;
	if (luw_ffscan_names(t, why, sizeof(why)))
		snprintf(t->ff.src, sizeof(t->ff.src), "none: %.50s", why);
}

/* Rounds of checks before a refusal (see "Reading a running target"). */
#define LJL_ROUNDS 3

/*
 * A candidate that validated in a round after the first: every state is
 * validated once more with the layout just installed.
 */
static int confirm(struct luw_layout_target *t, int round, char *why, size_t n)
{
	if (!round)
		return 0;
	if (!validate_all(t, &t->layout, why, n))
		return 0;
	memset(&t->layout, 0, sizeof(t->layout));
	t->nstates = 0;
	return -1;
}

/* The check in a use_layout message, without the path and build-id. */
static void cand_why(char *dst, size_t dn, const char *why)
{
	const char *c = strstr(why, "the live process: ");
	size_t l;

	c = c ? c + 18 : why;
	l = strlen(c);
	if (l > 13 && !strcmp(c + l - 13, "; refusing it"))
		l -= 13;
	snprintf(dst, dn, "%.*s", (int)l, c);
}

/*
 * Round `round` of the candidates that need no DWARF and no build-id:
 * each family layout as is, then each with what the machine code and the
 * process give.  0 when one validated (installed in t); else -1, and for
 * each candidate k whys[k] holds its failed check, names[k] its name and
 * iscode[k] whether the machine code's fields were in it.
 */
#define LJL_MAX_CAND 16
static int try_families(struct luw_layout_target *t, int round,
			char whys[][400], const char *names[], int iscode[],
			int *ncand)
{
	char why[512], fields[720], name[800];
	size_t nknown, i;
	const struct luw_known *known = luw_known_layouts(&nknown);
	int k = 0, code;

	for (code = 0; code < 2; code++) {
		for (i = 0; i < nknown; i++) {
			struct luw_lj_layout ly;
			int bad;

			if (known[i].build_id || k >= LJL_MAX_CAND)
				continue;
			names[k] = known[i].name;
			iscode[k] = code;
			if (!code) {
				/* A family's constants may have moved on. */
				ly = *known[i].layout;
				ly.stack_extra = 0;
				ly.gg_ndisp = 0;
				unproven_trace_frame(&ly);
				snprintf(name, sizeof(name), "%s", known[i].name);
				bad = !t->why_rec[0] &&
				      vmst_agrees(&t->rec, &ly, why, sizeof(why));
				if (!bad)
					bad = luw_layout_use_layout(t, &ly, name, why,
								 sizeof(why));
			} else {
				bad = layout_from_code(t, known[i].layout, &ly,
						       fields, sizeof(fields),
						       why, sizeof(why));
				if (!bad) {
					snprintf(name, sizeof(name),
						 "%.60s with %.710s from machine code",
						 known[i].name, fields);
					/*
					 * The short name in the refusal: the
					 * field list would fill why before
					 * the check that failed.
					 */
					bad = luw_layout_use_layout(t, &ly,
								 known[i].name,
								 why, sizeof(why));
				}
			}
			if (!bad)
				bad = confirm(t, round, why, sizeof(why));
			if (!bad) {
				t->src = code ? LUW_LJL_SRC_CODE : LUW_LJL_SRC_GUESS;
				snprintf(t->layout_name, sizeof(t->layout_name),
					 code ? "%.790s" :
					 "%.200s (validated, build-id not in the table)",
					 name);
				t->rounds = round + 1;
				if (round)
					snprintf(t->why_round1,
						 sizeof(t->why_round1), "%s",
						 whys[k]);
				return 0;
			}
			cand_why(whys[k], sizeof(whys[k]), why);
			k++;
		}
	}
	*ncand = k;
	return -1;
}

int luw_layout_attach(pid_t pid, struct luw_layout_target *t, char *err, size_t n)
{
	static const char how[] =
		"checked in %d rounds while the target ran, each state read "
		"up to 3 times";
	char all[4096], whys[LJL_MAX_CAND][400], first[LJL_MAX_CAND][400];
	const char *names[LJL_MAX_CAND];
	int iscode[LJL_MAX_CAND];
	size_t used;
	int round, k, ncand = 0;

	if (luw_layout_open(pid, t, err, n))
		return -1;
	t->rounds = 0;
	t->why_round1[0] = 0;
	if (t->src != LUW_LJL_SRC_NONE) {
		struct luw_lj_layout ly = t->layout;
		char why[512];

		for (round = 0; round < LJL_ROUNDS; round++) {
			if (round)
				usleep(10000u * (unsigned int)round);
			if (!luw_layout_use_layout(t, &ly, t->layout_name, why,
						sizeof(why)) &&
			    !confirm(t, round, why, sizeof(why))) {
				t->rounds = round + 1;
				if (round)
					cand_why(t->why_round1,
						 sizeof(t->why_round1), err);
				names_from_tables(t);
				return 0;
			}
			if (!round)
				snprintf(err, n, "%s", why);
		}
		used = strlen(err);
		if (used < n) {
			snprintf(err + used, n - used, " (");
			used = strlen(err);
			snprintf(err + used, n - used, how, LJL_ROUNDS);
			used = strlen(err);
			snprintf(err + used, n - used, ")");
		}
		return -1;
	}
	/*
	 * Unknown build: a family layout must validate on every state.  On
	 * failure, say what failed for each candidate: DWARF, then each one,
	 * and what a later round saw when it was another check.
	 */
	for (round = 0; round < LJL_ROUNDS; round++) {
		if (round)
			usleep(10000u * (unsigned int)round);
		if (!try_families(t, round, whys, names, iscode, &ncand)) {
			names_from_tables(t);
			return 0;
		}
		if (!round)
			memcpy(first, whys, sizeof(first));
	}
	used = (size_t)snprintf(all, sizeof(all), "every candidate ");
	used += (size_t)snprintf(all + used, sizeof(all) - used, how, LJL_ROUNDS);
	used += (size_t)snprintf(all + used, sizeof(all) - used, ": DWARF: %s",
				 t->why_dwarf[0] ? t->why_dwarf : "none");
	for (k = 0; k < ncand && used < sizeof(all); k++) {
		int same = !strcmp(first[k], whys[k]);

		used += (size_t)snprintf(all + used, sizeof(all) - used,
					 "; %s\"%s\": %s%s%s%s",
					 iscode[k] ? "code + " : "",
					 names[k], first[k],
					 same ? "" : " (a later round: ",
					 same ? "" : whys[k], same ? "" : ")");
	}
	memset(&t->layout, 0, sizeof(t->layout));
	t->nstates = 0;
	return luw_fail(err, n,
		    "%s (build-id %s): LuaJIT layout not recognised, %s",
		    t->path, t->build_id[0] ? t->build_id : "none", all);
}
