/*
 * Fast-function names read from the target's own library tables: the
 * main thread's globals, package.loaded (the registry's _LOADED) and each
 * library in it; every value that is a fast function (ffid > 1) names its
 * ffid "lib.key" ("key" for the base library).  Ids no table reaches
 * (ipairs_aux, io's file methods, the FFI's metamethods) are then named
 * from the list when the ids around them leave no doubt
 * (luw_ffnames_fill_gaps).
 *
 * Offsets used beyond the layout descriptor are those of LuaJIT 2.1's
 * object model, which depends on the reference size R (8 with GC64, 4
 * without) and nothing else: lua_State.env is the reference before
 * cframe; GCtab has array at 2R, node at 5R, asize at 6R, hmask at 6R+4;
 * a Node is 24 bytes (value, key); a TValue's type is the top 17 bits
 * (GC64) or the upper word (32-bit refs).  Every object read is checked
 * to have the type expected (gct), so a wrong guess names nothing.
 */
#include "target/ffscan.h"
#include "target/layout.h"
#include "proc/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LJ_TNIL		0u	/* ~LJ_TNIL, as tv_decode gives it */
#define LJ_TSTR		4u	/* ~LJ_TSTR, as stored in gct */
#define LJ_TFUNC	8u
#define LJ_TTAB		11u
#define NODE_SIZE	24
#define MAX_NODES	4096

struct scan {
	pid_t pid;
	const struct luw_lj_layout *ly;
	unsigned int r;		/* reference size */
	struct luw_ffnames *ff;
};

static int rd(const struct scan *s, uint64_t a, void *d, uint32_t n)
{
	return luw_mem_read(s->pid, a, d, n);
}

static int rd_ref(const struct scan *s, uint64_t a, uint64_t *v)
{
	return luw_mem_ref(s->pid, a, s->r, v);
}

static int gct_is(const struct scan *s, uint64_t o, unsigned int t)
{
	uint8_t g = 0;

	return o && !rd(s, o + s->ly->gc_gct, &g, 1) && g == t;
}

/* A TValue's bytes: its type (~itype) and GC object. */
static void tv_decode(const struct scan *s, const unsigned char *p,
		      unsigned int *t, uint64_t *o)
{
	if (s->r == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		*t = (unsigned int)~(uint32_t)(int32_t)((int64_t)v >> 47);
		*o = v & LUW_LJ_GCVMASK;
	} else {
		uint32_t v[2];

		memcpy(v, p, 8);
		*t = ~v[1];
		*o = v[0];
	}
}

static int str_of(const struct scan *s, uint64_t o, char *buf, size_t n)
{
	uint32_t len = 0;

	if (!gct_is(s, o, LJ_TSTR) || rd(s, o + s->ly->str_len, &len, 4) ||
	    len == 0 || len >= n || rd(s, o + s->ly->str_size, buf, len))
		return -1;
	buf[len] = 0;
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
	uint64_t node = 0;
	uint32_t hmask = 0, i;
	unsigned char *buf;

	if (!gct_is(s, t, LJ_TTAB) || rd_ref(s, t + 5 * s->r, &node) ||
	    rd(s, t + 6 * s->r + 4, &hmask, 4) || !node ||
	    hmask >= MAX_NODES || (hmask & (hmask + 1)))
		return -1;
	buf = malloc((size_t)(hmask + 1) * NODE_SIZE);
	if (!buf || rd(s, node, buf, (hmask + 1) * NODE_SIZE)) {
		free(buf);
		return -1;
	}
	for (i = 0; i <= hmask; i++) {
		const unsigned char *n = buf + (size_t)i * NODE_SIZE;
		uint64_t ko, vo;
		unsigned int kt, vt;
		char key[128];

		/*
		 * A key whose value is nil is dead: the GC no longer marks
		 * it (a global set to nil), its string may be freed and
		 * its memory reused.
		 */
		tv_decode(s, n, &vt, &vo);
		tv_decode(s, n + 8, &kt, &ko);
		if (vt == LJ_TNIL || kt != LJ_TSTR || !gct_is(s, ko, LJ_TSTR))
			continue;
		if (keys)
			(*keys)++;
		if (str_of(s, ko, key, sizeof(key)))
			continue;
		fn(s, key, vt, vo, arg);
	}
	free(buf);
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
	if (vt == LJ_TTAB && !strcmp(key, f->key))
		f->tab = vo;
}

static void name_fn(const struct scan *s, const char *name, uint64_t fn)
{
	uint8_t ffid = 0;
	const char *old;

	if (!gct_is(s, fn, LJ_TFUNC) ||
	    rd(s, fn + s->ly->fn_ffid, &ffid, 1) || ffid < 2)
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

	if (vt != LJ_TFUNC)
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
	if (vt == LJ_TTAB)
		tab_each(s, vo, lib_entry, &l);
	else if (vt == LJ_TFUNC)	/* require("table.new") and the like */
		name_fn(s, key, vo);
}

int luw_ffscan_names(struct luw_layout_target *t, char *why, size_t n)
{
	struct scan s = { t->pid, &t->layout, 0, &t->ff };
	uint64_t mainl, env = 0;
	struct find pkg = { "package", 0 }, loaded = { "loaded", 0 };
	struct lib base = { "" };
	char src[64];

	if (!t->nstates) {
		snprintf(why, n, "no global_State");
		return -1;
	}
	s.r = (t->layout.flags & LUW_LJ_F_GC64) ? 8 : 4;
	mainl = t->states[0] + (int64_t)t->layout.gg_g2l;
	if (rd_ref(&s, mainl + t->layout.l_cframe - s.r, &env) ||
	    !gct_is(&s, env, LJ_TTAB)) {
		snprintf(why, n, "main thread's env (before L->cframe) is no table");
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
	struct scan s = { pid, ly, 0, &dummy };
	unsigned char gb[MM_SCAN];
	uint32_t got = MM_SCAN, at, k;

	s.r = (ly->flags & LUW_LJ_F_GC64) ? 8 : 4;
	/* GG_State goes on past G (jit_State, the dispatch table). */
	while (got >= 256 && rd(&s, g, gb, got))
		got /= 2;
	if (got < 256) {
		snprintf(why, n, "G 0x%llx unreadable",
			 (unsigned long long)g);
		return -1;
	}
	for (at = 0; at + MM_N * s.r <= got; at += s.r) {
		for (k = 0; k < MM_N; k++) {
			uint64_t o = 0;

			memcpy(&o, gb + at + k * s.r, s.r);
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
