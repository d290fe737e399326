/*
 * Fast-function names read from the target's own library tables: the
 * main thread's globals, package.loaded (the registry's _LOADED) and each
 * library in it; every value that is a fast function (ffid > 1) names its
 * ffid "lib.key" ("key" for the base library).  Ids no table reaches
 * (ipairs_aux, io's file methods, the FFI's metamethods) are then named
 * from the list when the ids around them leave no doubt
 * (luw_ffnames_fill_gaps).
 *
 * Tables are read through target/obj.h, as the names held by globals
 * are (target/global.c).  Every object read is checked to have the type
 * expected (gct), so a wrong guess names nothing.
 */
#include "target/ffscan.h"
#include "target/layout.h"
#include "target/obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES	4096

struct scan {
	struct luw_obj o;
	struct luw_ffnames *ff;
};

/* String s as a C string in buf: 0, or -1 (empty, too long, a NUL in it). */
static int str_of(const struct scan *s, uint64_t o, char *buf, size_t n)
{
	uint32_t len = 0;

	if (luw_obj_str(&s->o, o, buf, n, &len) || len == 0 || len >= n)
		return -1;
	return strlen(buf) == len ? 0 : -1;
}

typedef void (*entry_fn)(const struct scan *s, const char *key,
			 unsigned int vt, uint64_t vo, void *arg);

/*
 * Every string-keyed entry of the hash part of table `t`, from one copy
 * of its node array: the program may add or remove keys (and rehash the
 * table) while we read, and two passes over the live array could see two
 * different tables.  With `keys`, also counts the keys that are strings
 * (by their gct), read from the same copy, whether or not they read as
 * names.
 */
static int tab_walk(const struct scan *s, uint64_t t, entry_fn fn, void *arg,
		    unsigned int *keys)
{
	uint8_t *nodes;
	uint32_t count;

	if (luw_obj_tab_nodes(&s->o, t, MAX_NODES, &nodes, &count))
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		struct luw_obj_tv k, v;
		char key[128];

		/*
		 * A key whose value is nil is dead: the GC no longer marks
		 * it (a global set to nil), its string may be freed and
		 * its memory reused.
		 */
		luw_obj_node(&s->o, nodes, i, &k, &v);
		if (v.t == LUW_OBJ_NIL || k.t != LUW_OBJ_STR ||
		    !luw_obj_is(&s->o, k.gc, LUW_OBJ_STR))
			continue;
		if (keys)
			(*keys)++;
		if (str_of(s, k.gc, key, sizeof(key)))
			continue;
		fn(s, key, v.t, v.gc, arg);
	}
	free(nodes);
	return 0;
}

static int tab_each(const struct scan *s, uint64_t t, entry_fn fn, void *arg)
{
	return tab_walk(s, t, fn, arg, NULL);
}

struct find {
	const char *key;
	uint64_t tab;
};

static void find_tab(const struct scan *s, const char *key, unsigned int vt,
		     uint64_t vo, void *arg)
{
	struct find *f = arg;

	(void)s;
	if (vt == LUW_OBJ_TAB && !strcmp(key, f->key))
		f->tab = vo;
}

static void name_fn(const struct scan *s, const char *name, uint64_t fn)
{
	uint8_t ffid = 0;
	const char *old;

	if (luw_obj_ffid(&s->o, fn, &ffid) || ffid < 2)
		return;
	old = luw_ffnames_get(s->ff, ffid);
	/* Aliases (table.unpack = unpack): the list's spelling wins. */
	if (old && (luw_ffnames_listed(old) || !luw_ffnames_listed(name)))
		return;
	luw_ffnames_set(s->ff, ffid, name);
}

struct lib {
	const char *lib;	/* "" for the base library */
};

static void lib_entry(const struct scan *s, const char *key, unsigned int vt,
		      uint64_t vo, void *arg)
{
	const struct lib *l = arg;
	char name[160];

	if (vt != LUW_OBJ_FUNC)
		return;
	snprintf(name, sizeof(name), "%s%s%s", l->lib, l->lib[0] ? "." : "",
		 key);
	name_fn(s, name, vo);
}

static void loaded_entry(const struct scan *s, const char *key,
			 unsigned int vt, uint64_t vo, void *arg)
{
	struct lib l = { strcmp(key, "_G") ? key : "" };

	(void)arg;
	if (vt == LUW_OBJ_TAB)
		tab_each(s, vo, lib_entry, &l);
	else if (vt == LUW_OBJ_FUNC)	/* require("table.new") and the like */
		name_fn(s, key, vo);
}

int luw_ffscan_names(struct luw_layout_target *t, char *why, size_t n)
{
	struct scan s = { .ff = &t->ff };
	uint64_t mainl, env;
	struct find pkg = { "package", 0 }, loaded = { "loaded", 0 };
	struct lib base = { "" };
	char src[64];

	if (!t->nstates) {
		snprintf(why, n, "no global_State");
		return -1;
	}
	if (luw_layout_obj(t, &s.o, why, n))
		return -1;
	mainl = luw_obj_mainthread(&s.o, t->states[0]);
	env = mainl ? luw_obj_env(&s.o, mainl) : 0;
	if (!env) {
		snprintf(why, n, "main thread's env is no table");
		return -1;
	}
	luw_ffnames_init(&t->ff, NULL);
	if (!tab_each(&s, env, find_tab, &pkg) && pkg.tab)
		tab_each(&s, pkg.tab, find_tab, &loaded);
	if (loaded.tab)
		tab_each(&s, loaded.tab, loaded_entry, NULL);
	else
		tab_each(&s, env, lib_entry, &base);
	if (!t->ff.count) {
		snprintf(why, n, "no fast function in the library tables");
		return -1;
	}
	{
		unsigned int from_tables = t->ff.count, gaps;

		gaps = luw_ffnames_fill_gaps(&t->ff);
		snprintf(src, sizeof(src), "library tables (%u) and list (%u)",
			 from_tables, gaps);
	}
	snprintf(t->ff.src, sizeof(t->ff.src), "%s", src);
	return 0;
}

/*
 * The metamethod names: lj_meta_init interns them when a state is created
 * and anchors them for good in G->gcroot[GCROOT_MMNAME + mm], in the
 * order of lj_obj.h's MMDEF, whose first six are the same in LuaJIT 2.0,
 * 2.1 and their forks.  Every universe has them, whatever its program did
 * with its globals (ts_lua empties the main thread's), and they are known
 * by content and length: six in a row, each read through str_len and
 * str_size, prove both.
 */
static const char *const mm_names[] = {
	"__index", "__newindex", "__gc", "__mode", "__eq", "__len",
};
#define MM_N		(sizeof(mm_names) / sizeof(mm_names[0]))
/* G's bytes looked through for gcroot: global_State is ~0x100-0x300. */
#define MM_SCAN		1024

static int is_mm(const struct scan *s, uint64_t o, unsigned int k)
{
	char buf[16];

	return !(o & 7) && !str_of(s, o, buf, sizeof(buf)) &&
	       !strcmp(buf, mm_names[k]);
}

int luw_ffscan_check_strings(pid_t pid, const struct luw_lj_layout *ly, uint64_t g,
		      char *why, size_t n)
{
	struct luw_ffnames dummy;
	struct scan s = { .ff = &dummy };
	unsigned char gb[MM_SCAN];
	uint32_t got = MM_SCAN, at, k, r;

	luw_obj_init(&s.o, pid, ly);
	r = s.o.ref;
	/* GG_State goes on past G (jit_State, the dispatch table). */
	while (got >= 256 && luw_obj_read(&s.o, g, gb, got))
		got /= 2;
	if (got < 256) {
		snprintf(why, n, "G 0x%llx unreadable",
			 (unsigned long long)g);
		return -1;
	}
	for (at = 0; at + MM_N * r <= got; at += r) {
		for (k = 0; k < MM_N; k++) {
			uint64_t o = 0;

			memcpy(&o, gb + at + k * r, r);
			if (!is_mm(&s, o, k))
				break;
		}
		if (k == MM_N)
			return 0;
	}
	snprintf(why, n, "G 0x%llx: no metamethod names (__index, __newindex, "
		 "__gc, __mode, __eq, __len in a row) in its first %u bytes "
		 "read as strings (str_len/str_size/gc_gct)",
		 (unsigned long long)g, got);
	return -1;
}
