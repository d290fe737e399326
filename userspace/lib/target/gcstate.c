/*
 * gcstate: a universe's heap state, proven live.  See target/gcstate.h.
 */
#include "target/gcstate.h"

#include <string.h>

#include "util/fail.h"

#define CHAINS_LOOKED 64	/* string chains checked */
#define ROOT_LOOKED 32		/* gc.root objects checked */
#define STRMASK_MAX (1u << 28)

/* 1 when gct is that of an object kept on gc.root (not a string). */
static int listed(unsigned int gct)
{
	return gct >= LUW_OBJ_UPVAL && gct <= LUW_OBJ_UDATA;
}

static int gct_of(const struct luw_obj *o, uint64_t obj, uint8_t *gct)
{
	return luw_obj_read(o, obj + o->ly->gc_gct, gct, 1);
}

static int check_root(const struct luw_obj *o, struct luw_gcstate *s,
		      char *why, size_t n)
{
	const struct luw_obj_offs *f = &o->off;
	uint64_t p;
	uint8_t gct;
	int i;

	if (luw_obj_ref(o, s->g + f->g_root, &s->root) || !s->root)
		return luw_fail(why, n, "gc.root at G+0x%x is empty", f->g_root);
	for (p = s->root, i = 0; p && i < ROOT_LOOKED; i++) {
		if (gct_of(o, p, &gct) || !listed(gct))
			return luw_fail(why, n, "object %d of gc.root (G+0x%x) at "
					"0x%llx is no list object", i, f->g_root,
					(unsigned long long)p);
		if (luw_obj_ref(o, p, &p))
			return luw_fail(why, n, "gc.root: unreadable link");
	}
	if (luw_obj_ref(o, s->g + f->g_mmudata, &s->mmudata) ||
	    (s->mmudata && (gct_of(o, s->mmudata, &gct) || !listed(gct))))
		return luw_fail(why, n, "gc.mmudata at G+0x%x is no object",
				f->g_mmudata);
	if (luw_obj_read(o, s->g + f->g_total, &s->total, f->gcsize) ||
	    !s->total)
		return luw_fail(why, n, "gc.total at G+0x%x is 0", f->g_total);
	return 0;
}

static int check_strings(const struct luw_obj *o, struct luw_gcstate *s,
			 char *why, size_t n)
{
	const struct luw_obj_offs *f = &o->off;
	uint32_t looked = 0;
	uint64_t head;

	if (luw_obj_read(o, s->g + f->g_strtab, &s->strtab, 8) ||
	    luw_obj_read(o, s->g + f->g_strmask, &s->strmask, 4) ||
	    luw_obj_read(o, s->g + f->g_strnum, &s->strnum, 4) || !s->strtab ||
	    s->strmask >= STRMASK_MAX || (s->strmask & (s->strmask + 1)))
		return luw_fail(why, n, "no string table at G+0x%x (mask 0x%x)",
				f->g_strtab, s->strmask);
	for (uint32_t i = 0; i <= s->strmask && looked < CHAINS_LOOKED; i++) {
		if (luw_obj_ref(o, s->strtab + (uint64_t)i * o->ref, &head))
			return luw_fail(why, n, "string table unreadable");
		head &= ~(uint64_t)1;	/* 2.1's mark of a rehashed chain */
		if (!head)
			continue;
		looked++;
		if (!luw_obj_is(o, head, LUW_OBJ_STR))
			return luw_fail(why, n, "string table chain %u starts "
					"with no string", i);
	}
	if (!looked && s->strnum)
		return luw_fail(why, n, "string table empty with %u strings",
				s->strnum);
	return 0;
}

/* gcroot[]: the candidate whose first entry is "__index". */
static int check_gcroot(const struct luw_obj *o, struct luw_gcstate *s,
			char *why, size_t n)
{
	const struct luw_obj_offs *f = &o->off;
	uint64_t base = 0, v;
	unsigned int i, k;
	uint32_t len;
	char buf[16];

	for (k = 0; k < 2 && !base; k++) {
		if (f->g_gcroot[k] == LUW_LJ_NOFIELD ||
		    luw_obj_ref(o, s->g + f->g_gcroot[k], &v) ||
		    luw_obj_str(o, v, buf, sizeof(buf), &len) ||
		    strcmp(buf, "__index"))
			continue;
		base = s->g + f->g_gcroot[k];
	}
	if (!base)
		return luw_fail(why, n, "gcroot[0] is not \"__index\" at G+0x%x%s",
				f->g_gcroot[0], f->g_gcroot[1] != LUW_LJ_NOFIELD ?
				" nor at the other candidate" : "");
	for (i = 0; i < LUW_GCSTATE_MAXROOT; i++) {
		if (luw_obj_ref(o, base + (uint64_t)i * o->ref, &v))
			return luw_fail(why, n, "gcroot[%u] unreadable", i);
		if (s->nmmname == i && luw_obj_str(o, v, buf, sizeof(buf), &len) == 0 &&
		    !strncmp(buf, "__", 2))
			s->nmmname = i + 1;
		s->gcroot[i] = v;
	}
	s->ngcroot = s->nmmname + LUW_GCSTATE_NBASEMT + 2;
	return 0;
}

/* CTState: tab; top, sizetab (32 bits each); L, g, finalizer, miscmap:
 * native pointers, as its C struct has them in every build. */
static int check_ctype(const struct luw_obj *o, struct luw_gcstate *s,
		       char *why, size_t n)
{
	uint64_t cts = 0, w[6];

	if (luw_obj_ref(o, s->g + o->off.g_ctype, &cts))
		return luw_fail(why, n, "ctype_state unreadable");
	if (!cts)
		return 0;
	if (luw_obj_read(o, cts, w, sizeof(w)) || w[3] != s->g)
		return luw_fail(why, n, "ctype_state at G+0x%x is no CTState of "
				"this global_State", o->off.g_ctype);
	s->ctype = cts;
	s->ct_tab = w[0];
	s->ct_top = (uint32_t)w[1];
	s->ct_finalizer = luw_obj_is(o, w[4], LUW_OBJ_TAB) ? w[4] : 0;
	s->ct_miscmap = luw_obj_is(o, w[5], LUW_OBJ_TAB) ? w[5] : 0;
	return 0;
}

int luw_gcstate_read(const struct luw_obj *o, uint64_t g, struct luw_gcstate *s,
		     char *why, size_t n)
{
	uint8_t tv[8];
	struct luw_obj_tv v;

	memset(s, 0, sizeof(*s));
	s->g = g;
	if (!o->off.heap_src)
		return luw_fail(why, n, "%s", o->off.why_heap);
	s->mainthread = luw_obj_mainthread(o, g);
	s->globals = s->mainthread ? luw_obj_env(o, s->mainthread) : 0;
	if (!s->mainthread)
		return luw_fail(why, n, "no main thread");
	if (check_root(o, s, why, n) || check_strings(o, s, why, n) ||
	    check_gcroot(o, s, why, n) || check_ctype(o, s, why, n))
		return -1;
	if (luw_obj_read(o, g + o->off.g_registry, tv, 8) ||
	    !(s->registry = luw_obj_tv_gc(o, tv, LUW_OBJ_TAB)))
		return luw_fail(why, n, "registrytv at G+0x%x holds no table",
				o->off.g_registry);
	if (luw_obj_tab_getstr(o, s->registry, "_LOADED", &v) == 1 &&
	    v.t == LUW_OBJ_TAB)
		s->loaded = v.gc;
	return 0;
}

const char *luw_gcstate_basemt_name(const struct luw_gcstate *s, unsigned int i)
{
	static const char *const names[LUW_GCSTATE_NBASEMT] = {
		"nil", "false", "true", "lightuserdata", "string", "upvalue",
		"thread", "proto", "function", "trace", "cdata", "table",
		"userdata", "number",
	};

	if (i < s->nmmname || i >= s->nmmname + LUW_GCSTATE_NBASEMT)
		return NULL;
	return names[i - s->nmmname];
}
