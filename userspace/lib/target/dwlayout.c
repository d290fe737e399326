/*
 * dwlayout: a LuaJIT build's layout descriptor from its DWARF -- the
 * member rows of include/luaunwind_layout.h's field list by their names,
 * GG_State's parts, the LJ_VMST_* and FF_* enumerators.  See dwlayout.h.
 */
#include "target/dwlayout.h"
#include "target/layout.h"
#include "elf/debugfile.h"
#include "elf/dwstruct.h"
#include "elf/elf.h"
#include "kmod/ljwalk.h"
#include "luajit/ffnames.h"
#include "util/fail.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	 * since): luw_validate_use measures it on the live main thread.
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

/*
 * DWARF in the object or in its separate debug file (debugfile.h), as the
 * process sees the files.
 */
int luw_dwlayout_any(const struct luw_layout_target *t, Elf *elf,
		     const char *objpath, struct luw_lj_layout *ly,
		     struct luw_ffnames *ff, char *src, size_t sn,
		     char *err, size_t n)
{
	GElf_Shdr sh;
	char root[64];
	Elf *delf;
	int fd, r;

	if (luw_elf_section(elf, ".debug_info", &sh)) {
		snprintf(src, sn, "%s", objpath);
		return layout_from_dwarf(elf, t->fde_cfa, ly, ff, err, n);
	}
	snprintf(root, sizeof(root), "/proc/%d/root", (int)t->pid);
	if (luw_debugfile_open(elf, objpath, t->pid ? root : NULL, src, sn,
			       &fd, &delf))
		return luw_fail(err, n, "no DWARF (none in the object, no debug "
			    "file by build-id or .gnu_debuglink)");
	r = layout_from_dwarf(delf, t->fde_cfa, ly, ff, err, n);
	elf_end(delf);
	close(fd);
	return r;
}
