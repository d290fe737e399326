/*
 * objoffs: the offsets beyond the descriptor.  See target/objoffs.h.
 */
#include "target/objoffs.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf/dwstruct.h"
#include "elf/elf.h"
#include "util/fail.h"

#define NONE LUW_LJ_NOFIELD

/* The name part from the lj_obj.h model: 0, or -1. */
static int tables_model(struct luw_obj_offs *o, const struct luw_lj_layout *ly,
			unsigned int r, char *why, size_t n)
{
	if (ly->fn_pc != 4 * r)
		return luw_fail(why, n, "GCfunc.pc is not where the lj_obj.h "
				"header model puts it");
	if (ly->l_cframe < 2 * r)
		return luw_fail(why, n, "no room for lua_State.env before cframe");
	o->l_env = (uint16_t)(ly->l_cframe - r);
	o->t_meta = (uint16_t)(4 * r);
	o->t_node = (uint16_t)(5 * r);
	o->t_hmask = (uint16_t)(6 * r + 4);
	o->node_size = 24;
	o->node_key = 8;
	return 0;
}

/* The heap part's object fields from the model. */
static void heap_model(struct luw_obj_offs *o, const struct luw_lj_layout *ly,
		       unsigned int r)
{
	o->t_array = (uint16_t)(2 * r);
	o->t_asize = (uint16_t)(6 * r);
	o->t_colo = (uint16_t)(r + 3);
	o->t_size = r == 8 ? 64 : 32;
	o->fn_nupv = (uint16_t)(ly->fn_ffid + 1);
	o->fn_env = (uint16_t)(2 * r);
	o->fn_uvptr = (uint16_t)(ly->fn_pc + r);
	o->fn_cupv = (uint16_t)(ly->fn_f + 8);
	o->uv_closed = (uint16_t)(r + 2);
	o->uv_tv = (uint16_t)(2 * r);
	o->uv_v = (uint16_t)(4 * r);
	o->uv_size = (uint16_t)(6 * r);
	o->ud_env = (uint16_t)(2 * r);
	o->ud_len = (uint16_t)(3 * r);
	o->ud_meta = (uint16_t)(4 * r);
	o->ud_size = (uint16_t)(6 * r);
	o->cd_ctypeid = (uint16_t)(r + 2);
	o->cd_size = (uint16_t)(2 * r);
	o->ct_size = r == 8 ? 24 : 16;
	o->l_openupval = (uint16_t)(ly->l_cframe - 2 * r);
	/* GG_State starts with the main lua_State, global_State right after
	 * it: the descriptor's own distance is sizeof(lua_State), forks'
	 * extra fields (OpenResty's exdata) included. */
	o->l_size = (uint16_t)(ly->gg_g2l < 0 && -ly->gg_g2l > (int)ly->l_stacksize ?
			       (unsigned int)-ly->gg_g2l :
			       (ly->l_stacksize + 4 + 7) & ~7u);
	o->gcsize = (uint8_t)r;
}

/*
 * global_State from the model (see objoffs.h): 0, or -1 when the
 * descriptor's fields fit neither arrangement.
 */
static int g_model(struct luw_obj_offs *o, const struct luw_lj_layout *ly,
		   unsigned int r, char *why, size_t n)
{
	unsigned int gcs = r, gc, state = 4 * gcs + 16 + 6 * r;

	if (ly->g_strempty < ly->g_vmstate && ly->g_vmstate < ly->g_mainthref) {
		/* 2020 on: gc right after allocf and allocd; str after
		 * strempty and four bytes of flags; registrytv after tmpbuf,
		 * tmptv, tmptv2 and nilnode; a PRNG state maybe before gcroot. */
		gc = 16;
		o->g_strtab = (uint16_t)((ly->g_strempty + ly->str_size + 4 + 7) & ~7u);
		o->g_registry = (uint16_t)(((ly->g_tmpbuf_l + r + 7) & ~7u) + 40);
		o->g_gcroot[0] = (uint16_t)(((ly->g_jit_base + 2 * r + 7) & ~7u) + 32);
		o->g_gcroot[1] = (uint16_t)(ly->g_jit_base + 2 * r);
		o->str_new = 1;
	} else if (ly->g_vmstate < ly->g_strempty && ly->g_vmstate > state) {
		/* Before: the string table first, gc ends where vmstate is. */
		gc = ly->g_vmstate - state;
		o->g_strtab = 0;
		o->g_registry = (uint16_t)((ly->g_mainthref + r + 7) & ~7u);
		o->g_gcroot[0] = (uint16_t)(ly->g_jit_base + 2 * r);
		o->g_gcroot[1] = NONE;
		o->str_new = 0;
	} else {
		return luw_fail(why, n, "global_State fits neither arrangement "
				"(vmstate 0x%x, strempty 0x%x, mainthref 0x%x)",
				ly->g_vmstate, ly->g_strempty, ly->g_mainthref);
	}
	o->g_strmask = (uint16_t)(o->g_strtab + 8);
	o->g_strnum = (uint16_t)(o->g_strtab + 12);
	o->g_total = (uint16_t)gc;
	o->g_allocf = (uint16_t)(gc - 16);
	o->g_root = (uint16_t)(gc + 2 * gcs + 8);
	o->g_mmudata = (uint16_t)(o->g_root + 5 * r);
	o->g_ctype = (uint16_t)(ly->g_jit_base + r);
	return 0;
}

/* A field of the model as DWARF would name it, to compare the two. */
struct dwf {
	const char *st, *mem;	/* mem NULL: sizeof(st) */
	size_t at;		/* offsetof(struct luw_obj_offs, ...) */
};

#define F(st, mem, f) { st, mem, offsetof(struct luw_obj_offs, f) }
static const struct dwf heap_fields[] = {
	F("GCtab", "array", t_array), F("GCtab", "asize", t_asize),
	F("GCtab", "colo", t_colo), F("GCtab", NULL, t_size),
	F("GCfuncL", "nupvalues", fn_nupv), F("GCfuncL", "env", fn_env),
	F("GCfuncL", "uvptr", fn_uvptr), F("GCfuncC", "upvalue", fn_cupv),
	F("GCupval", "closed", uv_closed), F("GCupval", "v", uv_v),
	F("GCupval", NULL, uv_size),
	F("GCudata", "env", ud_env), F("GCudata", "len", ud_len),
	F("GCudata", "metatable", ud_meta), F("GCudata", NULL, ud_size),
	F("GCcdata", "ctypeid", cd_ctypeid), F("GCcdata", NULL, cd_size),
	F("CType", NULL, ct_size),
	F("lua_State", "openupval", l_openupval), F("lua_State", NULL, l_size),
};
#undef F

/* Offset (or size) of a struct's member by DWARF: >= 0, or -1. */
static long dw_off(Dwarf *dw, const char *st, const char *mem)
{
	Dwarf_Die d;
	Dwarf_Attribute a;
	Dwarf_Word sz;
	long off;

	if (luw_dwstruct_struct(dw, st, &d))
		return -1;
	if (!mem)
		return dwarf_attr(&d, DW_AT_byte_size, &a) &&
		       dwarf_formudata(&a, &sz) == 0 ? (long)sz : -1;
	return luw_dwstruct_member(&d, mem, &off, NULL) ? -1 : off;
}

/* Offset of member a.b (b of the struct member a is), or -1. */
static long dw_off2(Dwarf *dw, const char *st, const char *a, const char *b)
{
	Dwarf_Die d, t;
	long o1, o2;

	if (luw_dwstruct_struct(dw, st, &d) ||
	    luw_dwstruct_member(&d, a, &o1, &t) ||
	    luw_dwstruct_member(&t, b, &o2, NULL))
		return -1;
	return o1 + o2;
}

/* The name part from DWARF: 1 when it gave every offset, else 0. */
static int tables_dwarf(struct luw_obj_offs *o, Dwarf *dw)
{
	long env = dw_off(dw, "lua_State", "env"),
	     meta = dw_off(dw, "GCtab", "metatable"),
	     node = dw_off(dw, "GCtab", "node"),
	     hmask = dw_off(dw, "GCtab", "hmask"),
	     key = dw_off(dw, "Node", "key"), sz = dw_off(dw, "Node", NULL);

	if (!(env > 0 && env < 0x1000 && meta > 0 && meta < 0x100 &&
	      node > 0 && node < 0x100 && hmask > 0 && hmask < 0x100 &&
	      key >= 8 && sz >= 16 && sz <= 64 && sz >= key + 8))
		return 0;
	o->l_env = (uint16_t)env;
	o->t_meta = (uint16_t)meta;
	o->t_node = (uint16_t)node;
	o->t_hmask = (uint16_t)hmask;
	o->node_key = (uint16_t)key;
	o->node_size = (uint16_t)sz;
	return 1;
}

/* Compares the heap model with DWARF: 0, or -1 naming the first field
 * that differs. */
static int heap_dwarf(struct luw_obj_offs *o, Dwarf *dw, char *why, size_t n)
{
	long v, strtab;

	for (size_t i = 0; i < sizeof(heap_fields) / sizeof(heap_fields[0]); i++) {
		const struct dwf *f = &heap_fields[i];
		uint16_t m;

		memcpy(&m, (const char *)o + f->at, sizeof(m));
		v = dw_off(dw, f->st, f->mem);
		if (v < 0 && !strcmp(f->st, "CType"))
			continue;	/* a build without the FFI */
		if (v != m)
			return luw_fail(why, n, "%s%s%s is at %ld by DWARF, %u by "
					"the lj_obj.h model", f->mem ? f->st : "sizeof ",
					f->mem ? "." : f->st, f->mem ? f->mem : "", v, m);
	}
	/* global_State: DWARF's word is taken, the live checks follow. */
	strtab = dw_off2(dw, "global_State", "str", "tab");
	o->str_new = strtab >= 0;
	if (strtab < 0)
		strtab = dw_off(dw, "global_State", "strhash");
	v = dw_off2(dw, "global_State", "gc", "total");
	if (strtab < 0 || v < 0 ||
	    dw_off(dw, "global_State", "registrytv") < 0 ||
	    dw_off(dw, "global_State", "gcroot") < 0 ||
	    dw_off(dw, "global_State", "ctype_state") < 0 ||
	    dw_off(dw, "global_State", "allocf") < 0 ||
	    dw_off2(dw, "global_State", "gc", "root") < 0 ||
	    dw_off2(dw, "global_State", "gc", "mmudata") < 0)
		return luw_fail(why, n, "global_State in DWARF lacks a string "
				"table, gc.total, gc.root, gc.mmudata, registrytv, "
				"gcroot, ctype_state or allocf");
	o->g_total = (uint16_t)v;
	o->g_allocf = (uint16_t)dw_off(dw, "global_State", "allocf");
	o->g_root = (uint16_t)dw_off2(dw, "global_State", "gc", "root");
	o->g_mmudata = (uint16_t)dw_off2(dw, "global_State", "gc", "mmudata");
	o->g_strtab = (uint16_t)strtab;
	o->g_strmask = (uint16_t)(o->str_new ?
		dw_off2(dw, "global_State", "str", "mask") :
		dw_off(dw, "global_State", "strmask"));
	o->g_strnum = (uint16_t)(o->str_new ?
		dw_off2(dw, "global_State", "str", "num") :
		dw_off(dw, "global_State", "strnum"));
	o->g_registry = (uint16_t)dw_off(dw, "global_State", "registrytv");
	o->g_ctype = (uint16_t)dw_off(dw, "global_State", "ctype_state");
	o->g_gcroot[0] = (uint16_t)dw_off(dw, "global_State", "gcroot");
	o->g_gcroot[1] = NONE;
	v = dw_off(dw, "GCState", "total");
	v = dw_off(dw, "GCState", "threshold") - v;
	if (v != 4 && v != 8)
		return luw_fail(why, n, "GCState.total is %ld bytes by DWARF", v);
	o->gcsize = (uint8_t)v;
	return 0;
}

int luw_objoffs_find(struct luw_obj_offs *o, const struct luw_lj_layout *ly,
		     const char *path, char *why, size_t whylen)
{
	unsigned int r = ly->flags & LUW_LJ_F_GC64 ? 8 : 4;
	Dwarf *dw = NULL;
	Elf *elf = NULL;
	int fd = -1, rc = 0;

	memset(o, 0, sizeof(*o));
	/* The type numbers and the closure check hold for both sources. */
	if (ly->gct_str != LUW_OBJ_STR || ly->gct_func != LUW_OBJ_FUNC ||
	    ly->gct_proto != LUW_OBJ_PROTO)
		return luw_fail(why, whylen, "GC type numbers are not LuaJIT 2.x's");
	if (path && (elf = luw_elf_open(path, &fd, NULL, 0)))
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw && tables_dwarf(o, dw))
		o->src = LUW_OBJ_DWARF;
	else if (tables_model(o, ly, r, why, whylen))
		rc = -1;
	else
		o->src = LUW_OBJ_MODEL;
	if (!rc) {
		heap_model(o, ly, r);
		if (dw && dw_off(dw, "GCtab", NULL) > 0) {
			if (!heap_dwarf(o, dw, o->why_heap, sizeof(o->why_heap)))
				o->heap_src = LUW_OBJ_DWARF;
		} else if (!g_model(o, ly, r, o->why_heap, sizeof(o->why_heap))) {
			o->heap_src = LUW_OBJ_MODEL;
		}
	}
	if (dw)
		dwarf_end(dw);
	if (elf) {
		elf_end(elf);
		close(fd);
	}
	return rc;
}
