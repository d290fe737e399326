/*
 * target/recover.c (layout fields from a stripped LuaJIT's machine code) against
 * what DWARF says of the same build, with no process: every cell of the
 * build matrix (${LUW_CACHE:-/var/cache/luaunwind}/ljmatrix/CELL:
 * luajit.stripped read by recover.c, luajit's DWARF the reference), and
 * tarantool (its own DWARF).  Debian's luajit, libluajit-5.1.so.2 and
 * OpenResty's libluajit (build/luajit2) have no DWARF here: their
 * reference is the layout the known-build table holds for their build-id.
 *
 * The VM's registers are in no DWARF: their reference is the .define of
 * vm_x64.dasc / vm_x86.dasc (x64, not Windows), the same in every 2.1;
 * the rbp rule's is the DWARF build's FDE at its lj_vm_asm_begin symbol.
 *
 * J->sizetrace and J->trace are compared G-relative (GG_State.J - g + the
 * member); a build without jit_State must give neither, nor GCtrace's.
 *
 * Each field recover.c gives must equal the reference, and every field
 * must be given in every build.  One line per build says what was
 * compared.  A cell's static host, which exports nothing, is read too
 * (check_static()).
 */
#include <dirent.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "elf/dwstruct.h"
#include "elf/symbols.h"
#include "luajit/known.h"
#include "target/layout.h"
#include "target/recover.h"

enum { F_GLREF, F_MAINTHREF, F_CUR_L, F_STACK, F_STATUS, F_CFRAME, F_TOP,
       F_BASE, F_MAXSTACK, F_FFID, F_PC, F_F, F_PTSIZE, F_SIZEBC, F_CHUNK,
       F_FIRSTLINE, F_NUMLINE, F_LINEINFO, F_OFS_L, F_OFS_PREV, F_OFS_PC,
       F_L_SIZE, F_RBASE, F_RPC, F_RDISP, F_RKBASE, F_RBP_CFA,
       F_JSIZETRACE_G, F_JTRACE_G, F_MCODE, F_SZMCODE, F_STACKSIZE, F_GCT,
       F_GCT_STR, F_GCT_THREAD, F_GCT_FUNC, F_STARTPT, F_STARTPC, F_TRACENO,
       F_VMST_C, F_VMST_INTERP, F_VMST_EXIT, F__N };

static const struct {
	const char *name, *dw_struct, *dw_member;
} fields[F__N] = {
	{ "l_glref", "lua_State", "glref" },
	{ "g_mainthref", "global_State", "mainthref" },
	{ "g_cur_l", "global_State", "cur_L" },
	{ "l_stack", "lua_State", "stack" },
	{ "l_status", "lua_State", "status" },
	{ "l_cframe", "lua_State", "cframe" },
	{ "l_top", "lua_State", "top" },
	{ "l_base", "lua_State", "base" },
	{ "l_maxstack", "lua_State", "maxstack" },
	{ "fn_ffid", "GCfuncC", "ffid" },
	{ "fn_pc", "GCfuncC", "pc" },
	{ "fn_f", "GCfuncC", "f" },
	{ "pt_size", "GCproto", NULL },		/* the struct's size */
	{ "pt_sizebc", "GCproto", "sizebc" },
	{ "pt_chunkname", "GCproto", "chunkname" },
	{ "pt_firstline", "GCproto", "firstline" },
	{ "pt_numline", "GCproto", "numline" },
	{ "pt_lineinfo", "GCproto", "lineinfo" },
	/* No DWARF: lj_frame.h's CFRAME_OFS_* (see frame_consts) */
	{ "cframe_ofs_l", NULL, NULL },
	{ "cframe_ofs_prev", NULL, NULL },
	{ "cframe_ofs_pc", NULL, NULL },
	{ "cframe_l_size", NULL, NULL },
	/* No DWARF: the VM's .define of BASE, PC, DISPATCH, KBASE */
	{ "reg_base", NULL, NULL },
	{ "reg_pc", NULL, NULL },
	{ "reg_dispatch", NULL, NULL },
	{ "reg_kbase", NULL, NULL },
	/* The DWARF build's own FDE for the interpreter (libdw) */
	{ "cframe_rbp_cfa", NULL, NULL },
	/* G-relative: GG_State.J - GG_State.g + the member (jit_state_g) */
	{ "G+j_sizetrace", NULL, NULL },
	{ "G+j_trace", NULL, NULL },
	{ "tr_mcode", "GCtrace", "mcode" },
	{ "tr_szmcode", "GCtrace", "szmcode" },
	{ "l_stacksize", "lua_State", "stacksize" },
	{ "gc_gct", "GChead", "gct" },
	/* No DWARF: lj_obj.h's ~LJ_TSTR, ~LJ_TTHREAD, ~LJ_TFUNC (macros) */
	{ "gct_str", NULL, NULL },
	{ "gct_thread", NULL, NULL },
	{ "gct_func", NULL, NULL },
	{ "tr_startpt", "GCtrace", "startpt" },
	{ "tr_startpc", "GCtrace", "startpc" },
	{ "tr_traceno", "GCtrace", "traceno" },
	/* The LJ_VMST_* enumerators (vmst_ref): C or CFUNC, INTERP, EXIT */
	{ "vmst_c", NULL, NULL },
	{ "vmst_interp", NULL, NULL },
	{ "vmst_exit", NULL, NULL },
};

/*
 * The C frame's offsets are assembler constants (lj_frame.h, x64): no
 * DWARF names them.  Every LuaJIT 2.1 here has the same ones for its
 * reference size, and the DWARF path of target/layout.c uses them so.
 */
static void frame_consts(int gc64, int v[F__N])
{
	v[F_OFS_L] = gc64 ? 16 : 24;
	v[F_OFS_PREV] = 32;
	v[F_OFS_PC] = gc64 ? 24 : 28;
	v[F_L_SIZE] = gc64 ? 8 : 4;
	/*
	 * vm_x64.dasc (GC64) and vm_x86.dasc's x64 mode (not Windows) both
	 * define BASE edx/rdx, PC ebx/rbx, DISPATCH r14, KBASE r15.
	 */
	v[F_RBASE] = 1;
	v[F_RPC] = 3;
	v[F_RDISP] = 14;
	v[F_RKBASE] = 15;
	/* lj_obj.h: LJ_TSTR (~4u), LJ_TTHREAD (~6u), LJ_TFUNC (~8u) */
	v[F_GCT_STR] = 4;
	v[F_GCT_THREAD] = 6;
	v[F_GCT_FUNC] = 8;
}

/*
 * The rbp rule of the interpreter's FDE in the file at path, found by its
 * symbol lj_vm_asm_begin when the file has one (the DWARF build), read
 * with libdw: rbp at CFA - k gives k; -1 when not so.
 */
static int fde_rbp_ref(Elf *elf, uint64_t at)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int k = -1;

	if (!cfi)
		return -1;
	if (!dwarf_cfi_addrframe(cfi, at, &fr) &&
	    !dwarf_frame_register(fr, 6, mem, &ops, &nops) && nops == 2 &&
	    ops[1].atom == DW_OP_plus_uconst)
		k = (int)-(int64_t)ops[1].number;
	free(fr);
	dwarf_cfi_end(cfi);
	return k;
}

static void rec_fields(const struct luw_recover_result *r, int v[F__N])
{
	v[F_GLREF] = r->l_glref;
	v[F_MAINTHREF] = r->g_mainthref;
	v[F_CUR_L] = r->g_cur_l;
	v[F_STACK] = r->l_stack;
	v[F_STATUS] = r->l_status;
	v[F_CFRAME] = r->l_cframe;
	v[F_TOP] = r->l_top;
	v[F_BASE] = r->l_base;
	v[F_MAXSTACK] = r->l_maxstack;
	v[F_FFID] = r->fn_ffid;
	v[F_PC] = r->fn_pc;
	v[F_F] = r->fn_f;
	v[F_PTSIZE] = r->pt_size;
	v[F_SIZEBC] = r->pt_sizebc;
	v[F_CHUNK] = r->pt_chunkname;
	v[F_FIRSTLINE] = r->pt_firstline;
	v[F_NUMLINE] = r->pt_numline;
	v[F_LINEINFO] = r->pt_lineinfo;
	v[F_OFS_L] = r->cframe_ofs_l;
	v[F_OFS_PREV] = r->cframe_ofs_prev;
	v[F_OFS_PC] = r->cframe_ofs_pc;
	v[F_L_SIZE] = r->cframe_l_size;
	v[F_RBASE] = r->reg_base;
	v[F_RPC] = r->reg_pc;
	v[F_RDISP] = r->reg_dispatch;
	v[F_RKBASE] = r->reg_kbase;
	v[F_RBP_CFA] = r->cframe_rbp_cfa;
	v[F_JSIZETRACE_G] = r->jsizetrace_g;
	v[F_JTRACE_G] = r->jtrace_g;
	v[F_MCODE] = r->tr_mcode;
	v[F_SZMCODE] = r->tr_szmcode;
	v[F_STACKSIZE] = r->l_stacksize;
	v[F_GCT] = r->gc_gct;
	v[F_GCT_STR] = r->gct_str;
	v[F_GCT_THREAD] = r->gct_thread;
	v[F_GCT_FUNC] = r->gct_func;
	v[F_STARTPT] = r->tr_startpt;
	v[F_STARTPC] = r->tr_startpc;
	v[F_TRACENO] = r->tr_traceno;
	v[F_VMST_C] = r->vmst_c;
	v[F_VMST_INTERP] = r->vmst_interp;
	v[F_VMST_EXIT] = r->vmst_exit;
}

/* The raw index map (the table's vmst_map) gives to state s, or NONE. */
static int vmst_index(const struct luw_lj_layout *ly, int s)
{
	int k;

	for (k = 0; k < ly->n_vmst; k++)
		if (ly->vmst_map[k] == s)
			return k;
	return LUW_LJR_NONE;
}

static void table_fields(const struct luw_lj_layout *ly, int v[F__N])
{
	v[F_GLREF] = ly->l_glref;
	v[F_MAINTHREF] = ly->g_mainthref;
	v[F_CUR_L] = ly->g_cur_l;
	v[F_STACK] = ly->l_stack;
	v[F_STATUS] = ly->l_status;
	v[F_CFRAME] = ly->l_cframe;
	v[F_TOP] = ly->l_top;
	v[F_BASE] = ly->l_base;
	v[F_MAXSTACK] = ly->l_maxstack;
	v[F_FFID] = ly->fn_ffid;
	v[F_PC] = ly->fn_pc;
	v[F_F] = ly->fn_f;
	v[F_PTSIZE] = ly->pt_size;
	v[F_SIZEBC] = ly->pt_sizebc;
	v[F_CHUNK] = ly->pt_chunkname;
	v[F_FIRSTLINE] = ly->pt_firstline;
	v[F_NUMLINE] = ly->pt_numline;
	v[F_LINEINFO] = ly->pt_lineinfo;
	v[F_OFS_L] = ly->cframe_ofs_l;
	v[F_OFS_PREV] = ly->cframe_ofs_prev;
	v[F_OFS_PC] = ly->cframe_ofs_pc;
	v[F_L_SIZE] = ly->cframe_l_size;
	v[F_RBASE] = ly->reg_base;
	v[F_RPC] = ly->reg_pc;
	v[F_RDISP] = ly->reg_dispatch;
	v[F_RKBASE] = ly->reg_kbase;
	v[F_RBP_CFA] = ly->cframe_rbp_cfa;
	v[F_JSIZETRACE_G] = ly->gg_g2j + ly->j_sizetrace;
	v[F_JTRACE_G] = ly->gg_g2j + ly->j_trace;
	v[F_MCODE] = ly->tr_mcode;
	v[F_SZMCODE] = ly->tr_szmcode;
	v[F_STACKSIZE] = ly->l_stacksize;
	v[F_GCT] = ly->gc_gct;
	v[F_GCT_STR] = ly->gct_str;
	v[F_GCT_THREAD] = ly->gct_thread;
	v[F_GCT_FUNC] = ly->gct_func;
	v[F_STARTPT] = ly->tr_startpt;
	v[F_STARTPC] = ly->tr_startpc;
	v[F_TRACENO] = ly->tr_traceno;
	v[F_VMST_C] = vmst_index(ly, LUW_VMST_CFUNC);
	v[F_VMST_INTERP] = vmst_index(ly, LUW_VMST_INTERP);
	/* No exit handler in a build without the JIT */
	v[F_VMST_EXIT] = (ly->flags & LUW_LJ_F_JIT) ?
			 vmst_index(ly, LUW_VMST_EXIT) : LUW_LJR_NONE;
}

/*
 * The LJ_VMST_* enumerators of the DWARF in dw: C (Tarantool: CFUNC),
 * INTERP, and EXIT when the build has the JIT (jit_State): the exit
 * handler is assembled only then.  -1 when DWARF has no such enum.
 */
static int vmst_ref(Dwarf *dw, int v[F__N])
{
	Dwarf_Off off = 0, next;
	size_t hsz;
	Dwarf_Die j;
	int found = 0, exit_v = LUW_LJR_NONE;

	v[F_VMST_C] = v[F_VMST_INTERP] = LUW_LJR_NONE;
	while (!found && !dwarf_nextcu(dw, off, &next, &hsz, NULL, NULL, NULL)) {
		Dwarf_Die cu, c, e;

		if (dwarf_offdie(dw, off + hsz, &cu) && !dwarf_child(&cu, &c)) {
			do {
				const char *en;

				if (dwarf_tag(&c) != DW_TAG_enumeration_type ||
				    dwarf_child(&c, &e) ||
				    !(en = dwarf_diename(&e)) ||
				    strcmp(en, "LJ_VMST_INTERP"))
					continue;
				found = 1;
				do {
					Dwarf_Attribute a;
					Dwarf_Word w;

					en = dwarf_diename(&e);
					if (!en || !dwarf_attr(&e, DW_AT_const_value, &a) ||
					    dwarf_formudata(&a, &w))
						continue;
					if (!strcmp(en, "LJ_VMST_C") ||
					    !strcmp(en, "LJ_VMST_CFUNC"))
						v[F_VMST_C] = (int)w;
					else if (!strcmp(en, "LJ_VMST_INTERP"))
						v[F_VMST_INTERP] = (int)w;
					else if (!strcmp(en, "LJ_VMST_EXIT"))
						exit_v = (int)w;
				} while (dwarf_siblingof(&e, &e) == 0);
				break;
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		off = next;
	}
	v[F_VMST_EXIT] = luw_dwstruct_struct(dw, "jit_State", &j) ? LUW_LJR_NONE : exit_v;
	return found ? 0 : -1;
}

/* J->sizetrace and J->trace relative to G, NONE without jit_State. */
static void jit_state_g(Dwarf *dw, const char *path, int v[F__N])
{
	Dwarf_Die gg, j;
	long g, jo, st, tr;

	v[F_JSIZETRACE_G] = v[F_JTRACE_G] = LUW_LJR_NONE;
	if (luw_dwstruct_struct(dw, "jit_State", &j))
		return;
	if (luw_dwstruct_struct(dw, "GG_State", &gg) ||
	    luw_dwstruct_member(&gg, "g", &g, NULL) || luw_dwstruct_member(&gg, "J", &jo, NULL) ||
	    luw_dwstruct_member(&j, "sizetrace", &st, NULL) ||
	    luw_dwstruct_member(&j, "trace", &tr, NULL)) {
		CHECK(0, "%s: DWARF has jit_State but no GG_State.J/g or its "
		      "sizetrace/trace", path);
		return;
	}
	v[F_JSIZETRACE_G] = (int)(jo - g + st);
	v[F_JTRACE_G] = (int)(jo - g + tr);
}

/* The reference from DWARF in the file at path: 0, or -1. */
static int dwarf_fields(const char *path, int v[F__N])
{
	char err[256];
	int fd, i, rc = 0;
	Elf *elf = luw_elf_open(path, &fd, err, sizeof(err));
	Dwarf *dw;

	if (!elf) {
		CHECK(0, "%s: %s", path, err);
		return -1;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		CHECK(0, "%s: no DWARF", path);
		elf_end(elf);
		close(fd);
		return -1;
	}
	for (i = 0; i < F__N; i++) {
		Dwarf_Die s;
		long off;

		if (!fields[i].dw_struct)
			continue;
		Dwarf_Word sz;

		if (!luw_dwstruct_struct(dw, fields[i].dw_struct, &s) &&
		    !fields[i].dw_member) {
			if (dwarf_aggregate_size(&s, &sz)) {
				CHECK(0, "%s: DWARF gives no size of %s", path,
				      fields[i].dw_struct);
				rc = -1;
				continue;
			}
			v[i] = (int)sz;
			continue;
		}
		/* -DLUAJIT_DISABLE_JIT: no GCtrace, nothing to recover */
		if (!strcmp(fields[i].dw_struct, "GCtrace") &&
		    luw_dwstruct_struct(dw, "jit_State", &s)) {
			v[i] = LUW_LJR_NONE;
			continue;
		}
		if (luw_dwstruct_struct(dw, fields[i].dw_struct, &s) ||
		    luw_dwstruct_member(&s, fields[i].dw_member, &off, NULL)) {
			CHECK(0, "%s: DWARF has no %s.%s", path, fields[i].dw_struct,
			      fields[i].dw_member);
			rc = -1;
			continue;
		}
		v[i] = (int)off;
	}
	{
		Dwarf_Die s;
		Dwarf_Word sz = 0;

		if (luw_dwstruct_struct(dw, "GCRef", &s) || dwarf_aggregate_size(&s, &sz)) {
			CHECK(0, "%s: DWARF gives no size of GCRef", path);
			rc = -1;
		}
		frame_consts(sz == 8, v);
	}
	jit_state_g(dw, path, v);
	if (vmst_ref(dw, v)) {
		CHECK(0, "%s: DWARF has no LJ_VMST_* enum", path);
		rc = -1;
	}
	{
		uint64_t at;

		if (luw_elf_symbol(elf, SHT_SYMTAB, "lj_vm_asm_begin", 0, &at) ||
		    (v[F_RBP_CFA] = fde_rbp_ref(elf, at)) < 0) {
			CHECK(0, "%s: no lj_vm_asm_begin or no rbp rule at it", path);
			rc = -1;
		}
	}
	dwarf_end(dw);
	elf_end(elf);
	close(fd);
	return rc;
}

/* Build-id of the ELF (hex), "" when none. */
static void build_id_of(Elf *elf, char *out, size_t n)
{
	Elf_Scn *scn = NULL;

	out[0] = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, no, dof;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &no, &dof)) > 0) {
			const uint8_t *p = (const uint8_t *)d->d_buf + dof;
			size_t k;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + no, "GNU", 4))
				continue;
			for (k = 0; k < nh.n_descsz && 2 * k + 2 < n; k++)
				snprintf(out + 2 * k, 3, "%02x", p[k]);
			return;
		}
	}
}

/*
 * recover.c on `stripped`; the reference from DWARF in `dwarf`, or (NULL)
 * from the known-build table by build-id.
 */
static void check_build(const char *stripped, const char *dwarf)
{
	struct luw_recover_result r;
	int want[F__N], got[F__N], fd, i, n = 0;
	char err[256], why[256], bid[128], line[1024];
	size_t used = 0;
	uint64_t vs, vi, ve;
	uint32_t cfa;
	Elf *elf = luw_elf_open(stripped, &fd, err, sizeof(err));

	if (!elf) {
		CHECK(0, "%s: %s", stripped, err);
		return;
	}
	build_id_of(elf, bid, sizeof(bid));
	if (dwarf) {
		if (dwarf_fields(dwarf, want))
			goto out;
	} else {
		const struct luw_known *k;
		size_t nk, j;

		k = luw_known_layouts(&nk);
		for (j = 0; j < nk; j++)
			if (k[j].build_id && !strcmp(k[j].build_id, bid))
				break;
		if (j == nk) {
			CHECK(0, "%s: build-id %s not in the known-build table "
			      "and no DWARF to compare with", stripped, bid);
			goto out;
		}
		table_fields(k[j].layout, want);
	}
	if (luw_layout_vm_fde(elf, &vs, &vi, &ve, &cfa, why, sizeof(why))) {
		CHECK(0, "%s: %s", stripped, why);
		goto out;
	}
	/* Fallback registers that no build uses: a wrong one shows. */
	if (luw_recover(elf, vs, vi, 0, 0, &r, why, sizeof(why))) {
		CHECK(0, "%s: recover.c: %s", stripped, why);
		goto out;
	}
	rec_fields(&r, got);
	line[0] = 0;
	for (i = 0; i < F__N; i++) {
		if (want[i] == LUW_LJR_NONE) {
			/* Not in this build (no JIT): nothing may be found. */
			CHECK(got[i] == LUW_LJR_NONE, "%s: %s from machine code %d, "
			      "but the build has none", stripped, fields[i].name,
			      got[i]);
			n += got[i] == LUW_LJR_NONE;
			continue;
		}
		if (got[i] == LUW_LJR_NONE) {
			CHECK(0, "%s: %s not recovered (%s: %d)",
			      stripped, fields[i].name, dwarf ? "DWARF" : "table",
			      want[i]);
			continue;
		}
		CHECK(got[i] == want[i], "%s: %s from machine code %d, %s %d",
		      stripped, fields[i].name, got[i],
		      dwarf ? "DWARF" : "table", want[i]);
		n += got[i] == want[i];
		if (used < sizeof(line))
			used += (size_t)snprintf(line + used, sizeof(line) - used,
						 " %s=%d", fields[i].name, got[i]);
	}
	printf("%s: %d of %d fields recovered (sites: %u dispatches, %u "
	       "L->base, %u pt->k), equal to %s:%s\n", stripped, n, F__N,
	       r.nvote_disp, r.nvote_base, r.nvote_kbase,
	       dwarf ? "DWARF" : "the known-build table", line);
out:
	elf_end(elf);
	close(fd);
}

/*
 * A cell's static host (host.static: libluajit.a in a stripped program
 * that exports nothing): recover.c must find lua_close and lua_gettop by
 * their code, their eight fields equal to DWARF's; every other field it
 * gives must equal DWARF's too (it may give fewer: the other API
 * functions it reads are not found without .dynsym).
 */
static void check_static(const char *host, const char *dwarf)
{
	struct luw_recover_result r;
	int want[F__N], got[F__N], fd, i, n = 0;
	char err[256], why[256];
	uint64_t vs, vi, ve;
	uint32_t cfa;
	Elf *elf = luw_elf_open(host, &fd, err, sizeof(err));

	if (!elf) {
		CHECK(0, "%s: %s", host, err);
		return;
	}
	if (dwarf_fields(dwarf, want))
		goto out;
	if (luw_layout_vm_fde(elf, &vs, &vi, &ve, &cfa, why, sizeof(why))) {
		CHECK(0, "%s: %s", host, why);
		goto out;
	}
	if (luw_recover(elf, vs, vi, 0, 0, &r, why, sizeof(why))) {
		CHECK(0, "%s: recover.c: %s", host, why);
		goto out;
	}
	CHECK(r.by_shape && r.at_close && r.at_gettop,
	      "%s: lua_close and lua_gettop not found by their code", host);
	rec_fields(&r, got);
	for (i = 0; i < F__N; i++) {
		if (i <= F_BASE)
			CHECK(got[i] == want[i], "%s: %s from lua_close/lua_gettop "
			      "found by their code %d, DWARF %d", host,
			      fields[i].name, got[i], want[i]);
		else
			CHECK(got[i] == LUW_LJR_NONE || got[i] == want[i],
			      "%s: %s from machine code %d, DWARF %d", host,
			      fields[i].name, got[i], want[i]);
		n += got[i] != LUW_LJR_NONE && got[i] == want[i];
	}
	printf("%s: lua_close at 0x%" PRIx64 " and lua_gettop at 0x%" PRIx64
	       " by their code; %d of %d fields recovered, equal to DWARF\n",
	       host, r.at_close, r.at_gettop, n, F__N);
out:
	elf_end(elf);
	close(fd);
}

int main(int argc, char **argv)
{
	const char *cache = getenv("LUW_CACHE");
	char dir[PATH_MAX], p[PATH_MAX + 300], q[PATH_MAX + 300], cmd[3 * PATH_MAX];
	struct dirent **cells;
	int n, ncells = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: test_recover FIXTURES [CELL...]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	elf_version(EV_CURRENT);
	snprintf(dir, sizeof(dir), "%s/ljmatrix", cache ? cache : "/var/cache/luaunwind");
	if (argc > 2) {
		for (int i = 2; i < argc; i++) {
			snprintf(p, sizeof(p), "%s/%s/luajit.stripped", dir, argv[i]);
			snprintf(q, sizeof(q), "%s/%s/luajit", dir, argv[i]);
			check_build(p, q);
			snprintf(p, sizeof(p), "%s/%s/host.static", dir, argv[i]);
			if (!access(p, R_OK))
				check_static(p, q);
		}
		return luw_test_status("test_recover");
	}
	n = scandir(dir, &cells, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s/luajit.stripped", dir, cells[i]->d_name);
		snprintf(q, sizeof(q), "%s/%s/luajit", dir, cells[i]->d_name);
		if (!access(p, R_OK) && !access(q, R_OK)) {
			ncells++;
			check_build(p, q);
			snprintf(p, sizeof(p), "%s/%s/host.static", dir,
				 cells[i]->d_name);
			if (!access(p, R_OK))
				check_static(p, q);
		}
		free(cells[i]);
	}
	if (n >= 0)
		free(cells);
	CHECK(ncells > 0, "no built cell in %s: test_ljmatrix builds them", dir);
	check_build("/usr/bin/luajit", NULL);
	check_build("/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2", NULL);
	snprintf(cmd, sizeof(cmd), "%s/../../scripts/luajit2-fetch.sh %s/../../build/luajit2",
		 argv[1], argv[1]);
	CHECK(system(cmd) == 0, "cannot unpack luajit2: %s", cmd);
	snprintf(p, sizeof(p),
		 "%s/../../build/luajit2/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2",
		 argv[1]);
	check_build(p, NULL);
	check_build("/usr/bin/tarantool", "/usr/bin/tarantool");
	return luw_test_status("test_recover");
}
