/*
 * global: names by the globals and loaded modules that hold a function.
 * See target/global.h.
 */
#include "target/global.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luajit/luaname.h"
#include "target/obj.h"

#define MAX_HASH (1U << 18)	/* nodes read from one table */
#define MAX_MODULES 512		/* package.loaded entries looked into */
#define MAX_KEY 128		/* longest key taken as a name */

/* The characters of string s if it reads as a Lua identifier. */
static int ident(const struct luw_obj *o, uint64_t s, char *out)
{
	uint32_t len;

	if (luw_obj_str(o, s, out, MAX_KEY, &len) || len >= MAX_KEY)
		return 0;
	return luw_luaname_ident(out, len);
}

/* The identifier key of node i of nodes into key, else 0. */
static int node_ident(const struct luw_obj *o, const uint8_t *nodes, uint32_t i,
		      struct luw_obj_tv *val, char *key)
{
	struct luw_obj_tv k;

	luw_obj_node(o, nodes, i, &k, val);
	return k.t == LUW_OBJ_STR && ident(o, k.gc, key);
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
static void scan_table(const struct luw_obj *o, uint64_t t, const char *prefix,
		       struct found *fd)
{
	uint8_t *nodes;
	uint32_t count;
	char key[MAX_KEY];

	if (luw_obj_tab_nodes(o, t, MAX_HASH, &nodes, &count))
		return;
	for (uint32_t i = 0; i < count; i++) {
		struct luw_obj_tv v;
		uint64_t pt;

		if (!node_ident(o, nodes, i, &v, key) || v.t != LUW_OBJ_FUNC)
			continue;
		pt = luw_obj_lua_proto(o, v.gc);
		if (pt)
			note(fd, pt, prefix, key);
	}
	free(nodes);
}

/* The table under identifier key `want` of table t, 0 if none. */
static uint64_t field_tab(const struct luw_obj *o, uint64_t t, const char *want)
{
	uint8_t *nodes;
	uint32_t count;
	uint64_t tab = 0;
	char key[MAX_KEY];

	if (luw_obj_tab_nodes(o, t, MAX_HASH, &nodes, &count))
		return 0;
	for (uint32_t i = 0; i < count && !tab; i++) {
		struct luw_obj_tv v;

		if (node_ident(o, nodes, i, &v, key) && v.t == LUW_OBJ_TAB &&
		    v.gc && !strcmp(key, want))
			tab = v.gc;
	}
	free(nodes);
	return tab;
}

/* The tables under identifier keys of table t, each scanned as key.*. */
static void scan_fields(const struct luw_obj *o, uint64_t t, uint64_t skip1,
			uint64_t skip2, struct found *fd)
{
	uint8_t *nodes;
	uint32_t count, seen = 0;
	char key[MAX_KEY];

	if (!t || luw_obj_tab_nodes(o, t, MAX_HASH, &nodes, &count))
		return;
	for (uint32_t i = 0; i < count && seen < MAX_MODULES; i++) {
		struct luw_obj_tv v;

		/* _G is the globals table itself, scanned on its own. */
		if (!node_ident(o, nodes, i, &v, key) || v.t != LUW_OBJ_TAB ||
		    !v.gc || v.gc == skip1 || v.gc == skip2)
			continue;
		seen++;
		scan_table(o, v.gc, key, fd);
	}
	free(nodes);
}

/*
 * The table a sandboxed globals table reads through: its metatable's
 * __index, when that is a table (kresd runs its Lua in
 * setmetatable({ ... }, { __index = _G })).  0 when none.
 */
static uint64_t sandbox_of(const struct luw_obj *o, uint64_t env)
{
	uint64_t mt = luw_obj_tab_meta(o, env), idx;

	if (!mt)
		return 0;
	idx = field_tab(o, mt, "__index");
	return idx != env ? idx : 0;
}

static void scan_universe(const struct luw_obj *o, uint64_t g, struct found *fd)
{
	uint64_t l = luw_obj_mainthread(o, g), env, inner, loaded;

	env = l ? luw_obj_env(o, l) : 0;
	if (!env)
		return;
	inner = sandbox_of(o, env);
	scan_table(o, env, NULL, fd);
	if (inner)
		scan_table(o, inner, NULL, fd);
	/* Modules: the tables package.loaded holds, and the tables globals
	 * hold (a module stored in a global: kresd's modules.load; the same
	 * module under its own name in both gives the same names). */
	loaded = field_tab(o, field_tab(o, env, "package"), "loaded");
	if (!loaded && inner)
		loaded = field_tab(o, field_tab(o, inner, "package"), "loaded");
	scan_fields(o, loaded, env, inner, fd);
	scan_fields(o, env, env, inner, fd);
	if (inner)
		scan_fields(o, inner, env, inner, fd);
}

int luw_global_names(const struct luw_obj *o, const uint64_t *states,
		     int nstates, const uint64_t *pt, size_t n, char **names)
{
	struct found fd = { pt, n, names, calloc(n ? n : 1, 1) };
	int named = 0;

	for (size_t i = 0; i < n; i++)
		names[i] = NULL;
	if (!fd.ambiguous)
		return 0;
	for (int s = 0; s < nstates; s++)
		scan_universe(o, states[s], &fd);
	for (size_t i = 0; i < n; i++)
		named += names[i] != NULL;
	free(fd.ambiguous);
	return named;
}
