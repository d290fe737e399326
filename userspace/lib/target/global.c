/*
 * global: names by the globals and loaded modules that hold a function.
 * See target/global.h.
 */
#include "target/global.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/dwstruct.h"
#include "elf/symbols.h"
#include "target/layout.h"
#include "proc/mem.h"
#include "util/fail.h"

/* gct values (~LJ_T*) of LuaJIT 2.x; the descriptor carries all but tab. */
#define GCT_STR 4
#define GCT_PROTO 7
#define GCT_FUNC 8
#define GCT_TAB 11

#define MAX_HASH (1U << 18)	/* nodes read from one table */
#define MAX_MODULES 512		/* package.loaded entries looked into */
#define MAX_KEY 128		/* longest key taken as a name */

/* 1 when the DWARF of path gave every offset, 0 when it has none. */
static int from_dwarf(const char *path, struct luw_global_offs *o)
{
	Dwarf_Die l, t, nd;
	Dwarf_Attribute a;
	Dwarf_Word sz;
	Dwarf *dw;
	Elf *elf;
	long env, node, hmask, key;
	int fd, ok = 0;

	elf = luw_elf_open(path, &fd, NULL, 0);
	if (!elf)
		return 0;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw && !luw_dwstruct_struct(dw, "lua_State", &l) && !luw_dwstruct_struct(dw, "GCtab", &t) &&
	    !luw_dwstruct_struct(dw, "Node", &nd) &&
	    dwarf_attr(&nd, DW_AT_byte_size, &a) && dwarf_formudata(&a, &sz) == 0) {
		if (luw_dwstruct_member(&l, "env", &env, NULL))
			env = -1;
		if (luw_dwstruct_member(&t, "node", &node, NULL))
			node = -1;
		if (luw_dwstruct_member(&t, "hmask", &hmask, NULL))
			hmask = -1;
		if (luw_dwstruct_member(&nd, "key", &key, NULL))
			key = -1;
		if (env > 0 && env < 0x1000 && node > 0 && node < 0x100 &&
		    hmask > 0 && hmask < 0x100 && key >= 8 && sz >= 16 &&
		    sz <= 64 && (long)sz >= key + 8) {
			o->l_env = (uint16_t)env;
			o->t_node = (uint16_t)node;
			o->t_hmask = (uint16_t)hmask;
			o->node_key = (uint16_t)key;
			o->node_size = (uint16_t)sz;
			o->dwarf = 1;
			ok = 1;
		}
	}
	if (dw)
		dwarf_end(dw);
	elf_end(elf);
	close(fd);
	return ok;
}

int luw_global_offsets(const char *path, const struct luw_lj_layout *ly,
		struct luw_global_offs *o, char *why, size_t whylen)
{
	unsigned int ref = ly->flags & LUW_LJ_F_GC64 ? 8 : 4;

	memset(o, 0, sizeof(*o));
	/* The type numbers and the closure check hold for both sources. */
	if (ly->gct_str != GCT_STR || ly->gct_func != GCT_FUNC ||
	    ly->gct_proto != GCT_PROTO)
		return luw_fail(why, whylen, "GC type numbers are not LuaJIT 2.x's");
	if (path && from_dwarf(path, o))
		return 0;
	if (ly->fn_pc != 4 * ref)
		return luw_fail(why, whylen, "GCfunc.pc is not where the lj_obj.h "
			    "header model puts it");
	if (ly->l_cframe < ref)
		return luw_fail(why, whylen, "no room for lua_State.env before cframe");
	o->l_env = (uint16_t)(ly->l_cframe - ref);
	o->t_node = (uint16_t)(5 * ref);
	o->t_hmask = (uint16_t)(6 * ref + 4);
	o->node_size = 24;
	o->node_key = 8;
	return 0;
}

struct rd {
	pid_t pid;
	const struct luw_lj_layout *ly;
	const struct luw_global_offs *o;
	unsigned int ref;
};

static int rd(const struct rd *r, uint64_t a, void *d, uint32_t n)
{
	return a ? luw_mem_read(r->pid, a, d, n) : -1;
}

static int rd_ref(const struct rd *r, uint64_t a, uint64_t *v)
{
	return a ? luw_mem_ref(r->pid, a, r->ref, v) : -1;
}

static int gct_is(const struct rd *r, uint64_t obj, uint8_t want)
{
	uint8_t g;

	return obj && !rd(r, obj + r->ly->gc_gct, &g, 1) && g == want;
}

/* The GC object of tagged value tv if its type is ~gct, else 0. */
static uint64_t tv_gc(const struct rd *r, const uint8_t *tv, uint8_t gct)
{
	uint64_t v;

	memcpy(&v, tv, 8);
	if (r->ref == 8)
		return (int64_t)v >> 47 == ~(int64_t)gct ? v & LUW_LJ_GCVMASK : 0;
	return (uint32_t)(v >> 32) == (uint32_t)~(uint32_t)gct ?
		(uint32_t)v : 0;
}

/* The characters of string s if it reads as a Lua identifier. */
static int ident(const struct rd *r, uint64_t s, char *out)
{
	uint32_t len;

	if (!gct_is(r, s, GCT_STR) || rd(r, s + r->ly->str_len, &len, 4) ||
	    len == 0 || len >= MAX_KEY || rd(r, s + r->ly->str_size, out, len))
		return 0;
	out[len] = 0;
	for (uint32_t i = 0; i < len; i++) {
		char c = out[i];

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (i && c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

/* The proto of Lua closure f, 0 when f is no Lua function. */
static uint64_t lua_proto(const struct rd *r, uint64_t f)
{
	uint8_t ffid;
	uint64_t pc;

	if (!gct_is(r, f, GCT_FUNC) || rd(r, f + r->ly->fn_ffid, &ffid, 1) ||
	    ffid != LUW_LJ_FF_LUA || rd_ref(r, f + r->ly->fn_pc, &pc) ||
	    pc < r->ly->pt_size)
		return 0;
	pc -= r->ly->pt_size;
	return gct_is(r, pc, GCT_PROTO) ? pc : 0;
}

/* The hash part of table t: *nodes (malloc'd), *count. */
static int hash_of(const struct rd *r, uint64_t t, uint8_t **nodes,
		   uint32_t *count)
{
	uint64_t node;
	uint32_t hmask;

	if (!gct_is(r, t, GCT_TAB) || rd_ref(r, t + r->o->t_node, &node) ||
	    rd(r, t + r->o->t_hmask, &hmask, 4) || hmask >= MAX_HASH ||
	    (hmask & (hmask + 1)))
		return -1;
	*count = hmask + 1;
	*nodes = malloc((size_t)*count * r->o->node_size);
	if (!*nodes)
		return -1;
	if (rd(r, node, *nodes, *count * r->o->node_size)) {
		free(*nodes);
		return -1;
	}
	return 0;
}

struct found {
	const uint64_t *pt;
	size_t n;
	char **names;
	unsigned char *ambiguous;
};

static void note(struct found *fd, uint64_t pt, const char *prefix,
		 const char *key)
{
	char name[2 * MAX_KEY + 2];

	snprintf(name, sizeof(name), "%s%s%s", prefix ? prefix : "",
		 prefix ? "." : "", key);
	for (size_t i = 0; i < fd->n; i++) {
		if (fd->pt[i] != pt || fd->ambiguous[i])
			continue;
		if (!fd->names[i]) {
			fd->names[i] = strdup(name);
		} else if (strcmp(fd->names[i], name)) {
			free(fd->names[i]);
			fd->names[i] = NULL;
			fd->ambiguous[i] = 1;
		}
	}
}

/* Lua closures under identifier keys of table t, noted as prefix.key. */
static void scan_table(const struct rd *r, uint64_t t, const char *prefix,
		       struct found *fd)
{
	uint8_t *nodes;
	uint32_t count;
	char key[MAX_KEY];

	if (hash_of(r, t, &nodes, &count))
		return;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *nd = nodes + (size_t)i * r->o->node_size;
		uint64_t f = tv_gc(r, nd, GCT_FUNC), pt;

		if (!f || !ident(r, tv_gc(r, nd + r->o->node_key, GCT_STR), key))
			continue;
		pt = lua_proto(r, f);
		if (pt)
			note(fd, pt, prefix, key);
	}
	free(nodes);
}

/* The table under identifier key `want` of table t, 0 if none. */
static uint64_t field_tab(const struct rd *r, uint64_t t, const char *want)
{
	uint8_t *nodes;
	uint32_t count;
	uint64_t v = 0;
	char key[MAX_KEY];

	if (hash_of(r, t, &nodes, &count))
		return 0;
	for (uint32_t i = 0; i < count && !v; i++) {
		const uint8_t *nd = nodes + (size_t)i * r->o->node_size;
		uint64_t tab = tv_gc(r, nd, GCT_TAB);

		if (tab && ident(r, tv_gc(r, nd + r->o->node_key, GCT_STR), key) &&
		    !strcmp(key, want))
			v = tab;
	}
	free(nodes);
	return v;
}

/* The tables under identifier keys of table t, each scanned as key.*. */
static void scan_fields(const struct rd *r, uint64_t t, uint64_t skip1,
			uint64_t skip2, struct found *fd)
{
	uint8_t *nodes;
	uint32_t count, seen = 0;
	char key[MAX_KEY];

	if (!t || hash_of(r, t, &nodes, &count))
		return;
	for (uint32_t i = 0; i < count && seen < MAX_MODULES; i++) {
		const uint8_t *nd = nodes + (size_t)i * r->o->node_size;
		uint64_t m = tv_gc(r, nd, GCT_TAB);

		/* _G is the globals table itself, scanned on its own. */
		if (!m || m == skip1 || m == skip2 ||
		    !ident(r, tv_gc(r, nd + r->o->node_key, GCT_STR), key))
			continue;
		seen++;
		scan_table(r, m, key, fd);
	}
	free(nodes);
}

/*
 * The table a sandboxed globals table reads through: its metatable's
 * __index, when that is a table (kresd runs its Lua in
 * setmetatable({ ... }, { __index = _G })).  GCtab's metatable reference
 * precedes node (lj_obj.h).  0 when none.
 */
static uint64_t sandbox_of(const struct rd *r, uint64_t env)
{
	uint64_t mt = 0, idx;

	if (rd_ref(r, env + r->o->t_node - r->ref, &mt) ||
	    !gct_is(r, mt, GCT_TAB))
		return 0;
	idx = field_tab(r, mt, "__index");
	return idx != env ? idx : 0;
}

static void scan_universe(const struct rd *r, uint64_t g, struct found *fd)
{
	uint64_t l = g + (uint64_t)(int64_t)r->ly->gg_g2l, env, inner, loaded;

	if (!gct_is(r, l, r->ly->gct_thread) || rd_ref(r, l + r->o->l_env, &env) ||
	    !gct_is(r, env, GCT_TAB))
		return;
	inner = sandbox_of(r, env);
	scan_table(r, env, NULL, fd);
	if (inner)
		scan_table(r, inner, NULL, fd);
	/* Modules: the tables package.loaded holds, and the tables globals
	 * hold (a module stored in a global: kresd's modules.load; the same
	 * module under its own name in both gives the same names). */
	loaded = field_tab(r, field_tab(r, env, "package"), "loaded");
	if (!loaded && inner)
		loaded = field_tab(r, field_tab(r, inner, "package"), "loaded");
	scan_fields(r, loaded, env, inner, fd);
	scan_fields(r, env, env, inner, fd);
	if (inner)
		scan_fields(r, inner, env, inner, fd);
}

int luw_global_names(pid_t pid, const struct luw_lj_layout *ly,
	      const struct luw_global_offs *o, const uint64_t *states, int nstates,
	      const uint64_t *pt, size_t n, char **names)
{
	struct rd r = { pid, ly, o, ly->flags & LUW_LJ_F_GC64 ? 8 : 4 };
	struct found fd = { pt, n, names, calloc(n ? n : 1, 1) };
	int named = 0;

	for (size_t i = 0; i < n; i++)
		names[i] = NULL;
	if (!fd.ambiguous)
		return 0;
	for (int s = 0; s < nstates; s++)
		scan_universe(&r, states[s], &fd);
	for (size_t i = 0; i < n; i++)
		named += names[i] != NULL;
	free(fd.ambiguous);
	return named;
}
