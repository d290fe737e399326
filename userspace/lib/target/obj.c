/*
 * obj: LuaJIT's objects in a live process.  See target/obj.h.
 */
#include "target/obj.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/mem.h"
#include "proc/memcache.h"
#include "util/fail.h"

void luw_obj_init(struct luw_obj *o, pid_t pid, const struct luw_lj_layout *ly)
{
	memset(o, 0, sizeof(*o));
	o->pid = pid;
	o->ly = ly;
	o->ref = ly->flags & LUW_LJ_F_GC64 ? 8 : 4;
}

void luw_obj_use(struct luw_obj *o, const struct luw_obj_offs *off)
{
	o->off = *off;
}

int luw_obj_read(const struct luw_obj *o, uint64_t a, void *d, uint32_t n)
{
	if (!a)
		return -1;
	return o->mc ? luw_memcache_read(o->mc, a, d, n) :
		       luw_mem_read(o->pid, a, d, n);
}

int luw_obj_ref(const struct luw_obj *o, uint64_t a, uint64_t *v)
{
	*v = 0;
	/* Little-endian: the reference's bytes are the low bytes of *v. */
	return luw_obj_read(o, a, v, o->ref);
}

int luw_obj_is(const struct luw_obj *o, uint64_t obj, unsigned int gct)
{
	uint8_t g = 0;

	return obj && !luw_obj_read(o, obj + o->ly->gc_gct, &g, 1) && g == gct;
}

void luw_obj_tv(const struct luw_obj *o, const void *tv, struct luw_obj_tv *v)
{
	if (o->ref == 8) {
		uint64_t w;

		/* GC64: the type is the top 17 bits, the object the rest. */
		memcpy(&w, tv, 8);
		v->t = (unsigned int)~(uint32_t)(int32_t)((int64_t)w >> 47);
		v->gc = w & LUW_LJ_GCVMASK;
	} else {
		uint32_t w[2];

		/* 32-bit references: the object, then the type word. */
		memcpy(w, tv, 8);
		v->t = ~w[1];
		v->gc = w[0];
	}
}

uint64_t luw_obj_tv_gc(const struct luw_obj *o, const void *tv,
		       unsigned int gct)
{
	struct luw_obj_tv v;

	luw_obj_tv(o, tv, &v);
	return v.t == gct ? v.gc : 0;
}

int luw_obj_str(const struct luw_obj *o, uint64_t s, char *buf, size_t n,
		uint32_t *len)
{
	uint32_t l = 0, take;

	if (!n || !luw_obj_is(o, s, o->ly->gct_str) ||
	    luw_obj_read(o, s + o->ly->str_len, &l, 4))
		return -1;
	take = l < n ? l : (uint32_t)n - 1;
	if (take && luw_obj_read(o, s + o->ly->str_size, buf, take))
		return -1;
	buf[take] = 0;
	*len = l;
	return 0;
}

int luw_obj_tab_nodes(const struct luw_obj *o, uint64_t t, uint32_t max,
		      uint8_t **nodes, uint32_t *count)
{
	uint64_t node = 0;
	uint32_t hmask = 0;

	if (!o->off.src || !luw_obj_is(o, t, LUW_OBJ_TAB) ||
	    luw_obj_ref(o, t + o->off.t_node, &node) ||
	    luw_obj_read(o, t + o->off.t_hmask, &hmask, 4) || !node ||
	    hmask >= max || (hmask & (hmask + 1)))
		return -1;
	*count = hmask + 1;
	*nodes = malloc((size_t)*count * o->off.node_size);
	if (!*nodes)
		return -1;
	if (luw_obj_read(o, node, *nodes, *count * o->off.node_size)) {
		free(*nodes);
		*nodes = NULL;
		return -1;
	}
	return 0;
}

void luw_obj_node(const struct luw_obj *o, const uint8_t *nodes, uint32_t i,
		  struct luw_obj_tv *key, struct luw_obj_tv *val)
{
	const uint8_t *nd = nodes + (size_t)i * o->off.node_size;

	luw_obj_tv(o, nd, val);
	luw_obj_tv(o, nd + o->off.node_key, key);
}

#define GETSTR_MAX (1u << 20)	/* nodes of a table searched for a key */

int luw_obj_tab_getstr(const struct luw_obj *o, uint64_t t, const char *key,
		       struct luw_obj_tv *val)
{
	size_t klen = strlen(key);
	uint8_t *nodes;
	uint32_t count, len;
	char buf[64];
	int found = 0;

	if (klen >= sizeof(buf) ||
	    luw_obj_tab_nodes(o, t, GETSTR_MAX, &nodes, &count))
		return -1;
	for (uint32_t i = 0; i < count && !found; i++) {
		struct luw_obj_tv k, v;

		luw_obj_node(o, nodes, i, &k, &v);
		if (k.t == LUW_OBJ_STR && v.t != LUW_OBJ_NIL &&
		    !luw_obj_str(o, k.gc, buf, sizeof(buf), &len) &&
		    len == klen && !memcmp(buf, key, klen)) {
			*val = v;
			found = 1;
		}
	}
	free(nodes);
	return found;
}

uint64_t luw_obj_tab_meta(const struct luw_obj *o, uint64_t t)
{
	uint64_t mt = 0;

	if (!o->off.src || !luw_obj_is(o, t, LUW_OBJ_TAB) ||
	    luw_obj_ref(o, t + o->off.t_meta, &mt) || !luw_obj_is(o, mt, LUW_OBJ_TAB))
		return 0;
	return mt;
}

uint64_t luw_obj_mainthread(const struct luw_obj *o, uint64_t g)
{
	uint64_t l = g + (uint64_t)(int64_t)o->ly->gg_g2l;

	return luw_obj_is(o, l, o->ly->gct_thread) ? l : 0;
}

uint64_t luw_obj_env(const struct luw_obj *o, uint64_t l)
{
	uint64_t env = 0;

	if (!o->off.src || luw_obj_ref(o, l + o->off.l_env, &env) ||
	    !luw_obj_is(o, env, LUW_OBJ_TAB))
		return 0;
	return env;
}

int luw_obj_ffid(const struct luw_obj *o, uint64_t f, uint8_t *ffid)
{
	if (!luw_obj_is(o, f, o->ly->gct_func) ||
	    luw_obj_read(o, f + o->ly->fn_ffid, ffid, 1))
		return -1;
	return 0;
}

uint64_t luw_obj_lua_proto(const struct luw_obj *o, uint64_t f)
{
	const struct luw_lj_layout *ly = o->ly;
	uint8_t ffid;
	uint64_t pc;

	/* The closure's pc is its proto's first instruction, which follows
	 * the GCproto header: a closure whose pc is anything else is not
	 * taken. */
	if (luw_obj_ffid(o, f, &ffid) || ffid != LUW_LJ_FF_LUA ||
	    luw_obj_ref(o, f + ly->fn_pc, &pc) || pc < ly->pt_size)
		return 0;
	pc -= ly->pt_size;
	return luw_obj_is(o, pc, ly->gct_proto) ? pc : 0;
}

uint64_t luw_obj_cfunc(const struct luw_obj *o, uint64_t f)
{
	uint8_t ffid;
	uint64_t code = 0;

	if (luw_obj_ffid(o, f, &ffid) || ffid != LUW_LJ_FF_C ||
	    luw_obj_read(o, f + o->ly->fn_f, &code, 8))
		return 0;
	return code;
}

/* A reference of o's size in bytes b. */
static uint64_t ref_in(const struct luw_obj *o, const uint8_t *b)
{
	uint64_t v = 0;

	memcpy(&v, b, o->ref);
	return v;
}

#define PT_MAX 256		/* sizeof(GCproto) is about 0x68 */

int luw_obj_proto(const struct luw_obj *o, uint64_t pt, struct luw_obj_proto *p)
{
	const struct luw_lj_layout *ly = o->ly;
	/* GCproto: ... k, uv, sizekgc, sizekn, sizept, sizeuv, flags,
	 * trace, chunkname: sizekgc is 16 bytes and k 2 refs + 16 bytes
	 * before chunkname. */
	uint32_t k_at = ly->pt_chunkname - 2 * o->ref - 16;
	uint8_t h[PT_MAX];

	uint32_t end = ly->pt_size;

	memset(p, 0, sizeof(*p));
	/* The header in one read: one version of it, one system call. */
	if (end > PT_MAX || ly->gc_gct + 2u > end || ly->pt_sizebc + 4u > end ||
	    ly->pt_firstline + 4u > end || ly->pt_numline + 4u > end ||
	    ly->pt_lineinfo + o->ref > end || ly->pt_chunkname + o->ref > end ||
	    ly->pt_chunkname < 2 * o->ref + 16 ||
	    luw_obj_read(o, pt, h, end) || h[ly->gc_gct] != ly->gct_proto)
		return -1;
	p->addr = pt;
	p->bc = pt + ly->pt_size;
	p->numparams = h[ly->gc_gct + 1];
	memcpy(&p->sizebc, h + ly->pt_sizebc, 4);
	memcpy(&p->firstline, h + ly->pt_firstline, 4);
	memcpy(&p->numline, h + ly->pt_numline, 4);
	memcpy(&p->sizekgc, h + ly->pt_chunkname - 16, 4);
	p->lineinfo = ref_in(o, h + ly->pt_lineinfo);
	p->lineinfo_at = pt + ly->pt_lineinfo;
	p->chunkname = ref_in(o, h + ly->pt_chunkname);
	p->k = ref_in(o, h + k_at);
	return 0;
}

uint64_t luw_obj_trace(const struct luw_obj *o, uint64_t g, uint32_t n)
{
	const struct luw_lj_layout *ly = o->ly;
	uint64_t j = g + (uint64_t)(int64_t)ly->gg_g2j, arr = 0, t = 0;
	uint32_t size = 0;

	/* jit_State.trace is a C array of GCRefs: a native pointer. */
	if (!ly->gg_g2j || luw_obj_read(o, j + ly->j_trace, &arr, 8) ||
	    luw_obj_read(o, j + ly->j_sizetrace, &size, 4) || n >= size ||
	    luw_obj_ref(o, arr + (uint64_t)n * o->ref, &t) ||
	    !luw_obj_is(o, t, ly->gct_trace))
		return 0;
	return t;
}
