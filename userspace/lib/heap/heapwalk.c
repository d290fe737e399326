/*
 * heapwalk: a heap snapshot of a live LuaJIT process.  See heap/heapwalk.h.
 */
#include "heap/heapwalk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luajit/luaname.h"
#include "proc/mem.h"
#include "proc/memcache.h"
#include "target/funcname.h"
#include "target/gcstate.h"
#include "target/obj.h"
#include "target/proto.h"
#include "util/fail.h"
#include "util/grow.h"
#include "util/kvmap.h"

#define ADDR_BITS 56
#define ADDR_MASK (((uint64_t)1 << ADDR_BITS) - 1)
#define KEYS_NAMED 256		/* string keys of a table named one by one */
#define KEY_SHOWN 40		/* bytes of a quoted key shown */
#define ARRAY_CHUNK 4096	/* array slots read at once */
#define HASH_MAX (1u << 26)	/* nodes of one table read */
#define CT_ATTRIB 8u		/* lj_ctype.h: CT_ATTRIB, CT_HASSIZE */
#define CT_HASSIZE 5u

/* An object: address with its type in the top byte, size, path node
 * (0 until a path reaches it). */
struct hobj {
	uint64_t at;
	uint32_t size;
	uint32_t node;
};

static uint64_t h_addr(const struct hobj *h)
{
	return h->at & ADDR_MASK;
}

static uint32_t h_type(const struct hobj *h)
{
	return (uint32_t)(h->at >> ADDR_BITS);
}

/* A reference still to follow: the object and the node it gets. */
struct edge {
	uint32_t idx, node;
};

struct walk {
	struct luw_obj o;
	struct luw_layout_target *t;
	struct luw_proto_ctx *pctx;
	struct luw_gcstate gs;
	struct luw_heapsnap *s;
	struct luw_heapsnap_uni *u;
	int live;
	uint64_t limit;		/* objects a list may hold */

	struct hobj *obj;
	size_t n, cap;
	uint32_t *q;		/* breadth-first queue: objects (their node set) */
	struct edge *weak;	/* weak references, for after the queue */
	size_t qh, qn, qcap, nweak, weakcap;

	struct luw_kvmap parent;	/* proto -> the proto it is a constant of */
	struct luw_kvmap fname;		/* proto -> label of its name */
	struct luw_kvmap uvname;	/* (proto, i) -> label "upvalue ..." */
	uint32_t l_star, l_keys, l_meta, l_env, l_proto, l_const, l_skey,
		 l_openuv;
	unsigned int fr2;	/* 1 with two-slot frames (GC64) */
	char why[300];
};

static uint32_t label(struct walk *w, const char *text)
{
	return luw_heapsnap_label(w->s, text, strlen(text));
}

static uint32_t step(struct walk *w, uint32_t node, uint32_t lab)
{
	return luw_heapsnap_node(w->s, node, lab);
}

/* -- 1. Every object, from the lists ------------------------------------- */

static int rd(struct walk *w, uint64_t a, void *d, uint32_t n)
{
	return luw_obj_read(&w->o, a, d, n);
}

static uint64_t ref_at(struct walk *w, uint64_t a)
{
	uint64_t v = 0;

	return luw_obj_ref(&w->o, a, &v) ? 0 : v;
}

static uint32_t u32_at(struct walk *w, uint64_t a)
{
	uint32_t v = 0;

	return rd(w, a, &v, 4) ? 0 : v;
}

/* The object's gct and its nextgc link: 0, or -1 when unreadable. */
static int header(struct walk *w, uint64_t a, uint8_t *gct, uint64_t *next)
{
	uint8_t h[16];
	unsigned int r = w->o.ref;

	if ((a & 7) || rd(w, a, h, r + 2))
		return -1;
	*next = 0;
	memcpy(next, h, r);
	*gct = h[w->o.ly->gc_gct];
	return 0;
}

/* Appends object a of type gct.  0, or -1 when the list is longer than
 * the heap allows (a wrong layout, or a --live list that changed). */
static int add(struct walk *w, uint64_t a, uint8_t gct)
{
	if (w->n >= w->limit) {
		snprintf(w->why, sizeof(w->why), "the GC lists hold more objects "
			 "than gc.total allows (%llu)",
			 (unsigned long long)w->limit);
		return -1;
	}
	if (luw_grow((void **)&w->obj, &w->cap, w->n + 1, sizeof(*w->obj))) {
		snprintf(w->why, sizeof(w->why), "out of memory");
		return -1;
	}
	w->obj[w->n].at = a | (uint64_t)gct << ADDR_BITS;
	w->obj[w->n].size = 0;
	w->obj[w->n].node = 0;
	w->n++;
	return 0;
}

/* The objects of a nextgc chain from p (until 0, or `stop` once seen
 * again), each one of the types ok accepts. */
static int chain(struct walk *w, uint64_t p, uint64_t stop,
		 int (*ok)(uint8_t gct), const char *what)
{
	uint64_t next, first = p;
	uint8_t gct;

	while (p) {
		if (header(w, p, &gct, &next) || !ok(gct)) {
			if (w->live) {
				w->u->skipped++;
				return 0;	/* the rest of the chain is lost */
			}
			snprintf(w->why, sizeof(w->why), "%s: 0x%llx is no object "
				 "of the list", what, (unsigned long long)p);
			return -1;
		}
		if (add(w, p, gct))
			return -1;
		p = next;
		if (stop && p == first)
			break;
	}
	return 0;
}

static int is_listed(uint8_t gct)
{
	return gct >= LUWH_T_UPVAL && gct <= LUWH_T_UDATA;
}

static int is_upval(uint8_t gct)
{
	return gct == LUWH_T_UPVAL;
}

static uint64_t size_str_len(struct walk *w, uint32_t len)
{
	return w->o.off.str_new ? w->o.ly->str_size + ((len + 4) & ~3u) :
				  w->o.ly->str_size + (uint64_t)len + 1;
}

#define SBATCH 16384u		/* chains of the string table read at once */

/*
 * The strings, with their sizes: the chains of SBATCH buckets followed
 * together, one link of each per round, every round's headers read in
 * one gather (proc/mem.h) -- strings lie in hash order all over the heap,
 * and one read per string would be the walk's whole cost.
 */
static int strings(struct walk *w)
{
	const struct luw_gcstate *gs = &w->gs;
	const struct luw_lj_layout *ly = w->o.ly;
	unsigned int r = w->o.ref, hl = ly->str_len + 4u;
	uint64_t *cur = malloc(SBATCH * sizeof(*cur)), *nxt = malloc(SBATCH * sizeof(*nxt));
	uint8_t *hdr = malloc((size_t)SBATCH * hl), *ok = malloc(SBATCH),
		*tab = malloc((size_t)SBATCH * r);
	int rc = -1;

	if (!cur || !nxt || !hdr || !ok || !tab) {
		snprintf(w->why, sizeof(w->why), "out of memory");
		goto out;
	}
	for (uint64_t c = 0; c <= gs->strmask; c += SBATCH) {
		uint32_t k = gs->strmask + 1 - c < SBATCH ? (uint32_t)(gs->strmask + 1 - c) :
							     SBATCH, ncur = 0;

		if (luw_mem_read(w->t->pid, gs->strtab + c * r, tab, (size_t)k * r)) {
			snprintf(w->why, sizeof(w->why), "string table unreadable");
			goto out;
		}
		for (uint32_t i = 0; i < k; i++) {
			uint64_t h = 0;

			memcpy(&h, tab + (size_t)i * r, r);
			if ((h &= ~(uint64_t)1))	/* 2.1's mark of a rehashed chain */
				cur[ncur++] = h;
		}
		while (ncur) {
			uint32_t nn = 0;

			luw_mem_gather(w->t->pid, cur, ncur, hl, hdr, ok);
			for (uint32_t i = 0; i < ncur; i++) {
				const uint8_t *h = hdr + (size_t)i * hl;
				uint64_t next = 0;
				uint32_t len;

				if (!ok[i] || h[ly->gc_gct] != LUWH_T_STR || (cur[i] & 7)) {
					if (w->live) {
						w->u->skipped++;
						continue;
					}
					snprintf(w->why, sizeof(w->why), "string table: "
						 "0x%llx is no string",
						 (unsigned long long)cur[i]);
					goto out;
				}
				if (add(w, cur[i], LUWH_T_STR))
					goto out;
				memcpy(&len, h + ly->str_len, 4);
				w->obj[w->n - 1].size = (uint32_t)size_str_len(w, len);
				memcpy(&next, h, r);
				if (next)
					nxt[nn++] = next;
			}
			memcpy(cur, nxt, nn * sizeof(*cur));
			ncur = nn;
		}
	}
	rc = 0;
out:
	free(cur);
	free(nxt);
	free(hdr);
	free(ok);
	free(tab);
	return rc;
}

static int by_addr(const void *a, const void *b)
{
	uint64_t x = h_addr(a), y = h_addr(b);

	return x < y ? -1 : x > y;
}

static struct hobj *find(struct walk *w, uint64_t a)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t m = h_addr(&w->obj[mid]);

		if (m == a)
			return &w->obj[mid];
		if (m < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int enumerate(struct walk *w)
{
	const struct luw_gcstate *gs = &w->gs;
	size_t nthreads, i, k;
	uint64_t first;

	if (chain(w, gs->root, 0, is_listed, "gc.root"))
		return -1;
	if (gs->mmudata) {
		first = ref_at(w, gs->mmudata);
		if (first && chain(w, first, 1, is_listed, "gc.mmudata"))
			return -1;
	}
	if (strings(w))
		return -1;
	nthreads = w->n;
	for (i = 0; i < nthreads; i++) {
		uint64_t l = h_addr(&w->obj[i]);

		if (h_type(&w->obj[i]) == LUWH_T_THREAD &&
		    chain(w, ref_at(w, l + w->o.off.l_openupval), 0, is_upval,
			  "open upvalues"))
			return -1;
	}
	qsort(w->obj, w->n, sizeof(*w->obj), by_addr);
	for (i = k = 0; i < w->n; i++) {
		if (k && h_addr(&w->obj[k - 1]) == h_addr(&w->obj[i])) {
			if (!w->live) {
				snprintf(w->why, sizeof(w->why), "object 0x%llx "
					 "is on two GC lists",
					 (unsigned long long)h_addr(&w->obj[i]));
				return -1;
			}
			w->u->skipped++;
			continue;
		}
		w->obj[k++] = w->obj[i];
	}
	w->n = k;
	return 0;
}

/* -- Sizes, as LuaJIT frees the objects ---------------------------------- */

static uint64_t size_tab(struct walk *w, uint64_t a)
{
	const struct luw_obj_offs *f = &w->o.off;
	uint32_t asize = u32_at(w, a + f->t_asize),
		 hmask = u32_at(w, a + f->t_hmask);
	int8_t colo = 0;
	uint64_t sz = f->t_size;

	rd(w, a + f->t_colo, &colo, 1);
	if (hmask)
		sz += ((uint64_t)hmask + 1) * f->node_size;
	if (asize && colo <= 0)
		sz += (uint64_t)asize * 8;
	if (colo)
		sz += (uint64_t)((uint8_t)colo & 0x7f) * 8;
	return sz;
}

static uint64_t size_func(struct walk *w, uint64_t a)
{
	const struct luw_obj_offs *f = &w->o.off;
	uint8_t ffid = 0, nupv = 0;

	rd(w, a + w->o.ly->fn_ffid, &ffid, 1);
	rd(w, a + f->fn_nupv, &nupv, 1);
	return ffid == LUW_LJ_FF_LUA ? f->fn_uvptr + (uint64_t)w->o.ref * nupv :
				       f->fn_cupv + 8ull * nupv;
}

static uint64_t size_thread(struct walk *w, uint64_t a)
{
	uint64_t stack = 8ull * u32_at(w, a + w->o.ly->l_stacksize);

	/* The main thread is part of GG_State: only its stack is its own. */
	return a == w->gs.mainthread ? stack : w->o.off.l_size + stack;
}

static uint64_t size_proto(struct walk *w, uint64_t a)
{
	return u32_at(w, a + w->o.ly->pt_chunkname - 8);	/* sizept */
}

static uint64_t size_cdata(struct walk *w, uint64_t a, int *unsized)
{
	const struct luw_obj_offs *f = &w->o.off;
	uint8_t marked = 0;
	uint16_t id = 0;
	uint32_t ct[2];

	if (rd(w, a + w->o.ref, &marked, 1))
		goto bad;
	if (marked & 0x80) {	/* GCcdataVar: offset, extra, len before it */
		uint16_t v[4];

		if (rd(w, a - 8, v, 8))
			goto bad;
		return (uint64_t)(v[2] | (uint32_t)v[3] << 16) + v[1];
	}
	if (!w->gs.ctype || rd(w, a + f->cd_ctypeid, &id, 2))
		goto bad;
	/* ctype_raw: past attributes to the type itself. */
	for (int i = 0; i < 16; i++) {
		if (id >= w->gs.ct_top ||
		    rd(w, w->gs.ct_tab + (uint64_t)id * f->ct_size, ct, 8))
			goto bad;
		if (ct[0] >> 28 != CT_ATTRIB)
			return f->cd_size + (ct[0] >> 28 <= CT_HASSIZE ? ct[1] : 8);
		id = (uint16_t)ct[0];
	}
bad:
	*unsized = 1;
	return 0;
}

/*
 * A trace is one allocation: the header, its IR from nk up, the
 * snapshots and the snapshot map, in that order (lj_trace.c), so it ends
 * at snapmap + 4 * nsnapmap.  Where nsnap and nsnapmap sit and how big a
 * SnapShot is changed between releases; the candidate whose snapshots
 * exactly fill snap .. snapmap is taken, none is a trace left unsized.
 */
static uint64_t size_trace(struct walk *w, uint64_t a, int *unsized)
{
	unsigned int r = w->o.ref, sp = w->o.ly->tr_startpt;
	uint64_t snap = 0, snapmap = 0;
	uint16_t nsnap_new = 0, old[2] = { 0, 0 };
	uint32_t nsnapmap_new = 0;

	if (sp < 24 || rd(w, a + sp - 16, &snap, 8) ||
	    rd(w, a + sp - 8, &snapmap, 8) || rd(w, a + r + 2, &nsnap_new, 2) ||
	    rd(w, a + sp - 20, &nsnapmap_new, 4) || rd(w, a + sp - 20, old, 4) ||
	    snapmap < snap || snap < a)
		goto bad;
	if (nsnap_new && (snapmap - snap == 12ull * nsnap_new ||
			  snapmap - snap == 8ull * nsnap_new))
		return snapmap + 4ull * nsnapmap_new - a;
	if (old[0] && snapmap - snap == 8ull * old[0])
		return snapmap + 4ull * old[1] - a;
bad:
	*unsized = 1;
	return 0;
}

static void sizes(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct hobj *h = &w->obj[i];
		uint64_t a = h_addr(h), sz = 0;
		int unsized = 0;

		switch (h_type(h)) {
		case LUWH_T_STR: continue;	/* sized by strings() */
		case LUWH_T_UPVAL: sz = w->o.off.uv_size; break;
		case LUWH_T_THREAD: sz = size_thread(w, a); break;
		case LUWH_T_PROTO: sz = size_proto(w, a); break;
		case LUWH_T_FUNC: sz = size_func(w, a); break;
		case LUWH_T_TRACE: sz = size_trace(w, a, &unsized); break;
		case LUWH_T_CDATA: sz = size_cdata(w, a, &unsized); break;
		case LUWH_T_TAB: sz = size_tab(w, a); break;
		case LUWH_T_UDATA:
			sz = w->o.off.ud_size + u32_at(w, a + w->o.off.ud_len);
			break;
		}
		if (sz > UINT32_MAX) {	/* no LuaJIT object is; a bad read */
			sz = 0;
			unsized = 1;
		}
		h->size = (uint32_t)sz;
		w->u->unsized += unsized;
	}
}

/* -- 2. Paths ------------------------------------------------------------ */

/* Reference to object a from a path at node: the object takes the node
 * unless an earlier path reached it. */
static void reach(struct walk *w, uint64_t a, uint32_t node, int weak)
{
	struct hobj *h;

	if (!a || !node)
		return;
	h = find(w, a & ADDR_MASK);
	/* The empty string lives in global_State itself, on no list. */
	if (!h && a == w->gs.g + w->o.ly->g_strempty)
		return;
	if (!h) {
		w->u->dangling++;
		return;
	}
	if (h->node)
		return;
	if (weak) {
		if (luw_grow((void **)&w->weak, &w->weakcap, w->nweak + 1,
			     sizeof(*w->weak))) {
			w->s->oom = 1;
			return;
		}
		w->weak[w->nweak++] = (struct edge){ (uint32_t)(h - w->obj), node };
		return;
	}
	if (luw_grow((void **)&w->q, &w->qcap, w->qn + 1, sizeof(*w->q))) {
		w->s->oom = 1;
		return;
	}
	h->node = node;
	w->q[w->qn++] = (uint32_t)(h - w->obj);
}

static void reach_tv(struct walk *w, const uint8_t *tv, uint32_t node, int weak)
{
	struct luw_obj_tv v;

	luw_obj_tv(&w->o, tv, &v);
	if (v.t >= LUWH_T_STR && v.t <= LUWH_T_UDATA && v.t != LUWH_T_UPVAL &&
	    v.t != LUWH_T_PROTO && v.t != LUWH_T_TRACE)
		reach(w, v.gc, node, weak);
}

/* "name @chunk:line" of proto pt as the CPU profiles name a function. */
static uint32_t fname(struct walk *w, uint64_t pt)
{
	const struct luw_proto_info *pi;
	struct luw_kv *kv = luw_kvmap_get(&w->fname, pt, 0), *par;
	char name[128], text[512];
	int isnew;

	if (kv)
		return (uint32_t)kv->v;
	name[0] = 0;
	par = luw_kvmap_get(&w->parent, pt, 0);
	if (par && luw_funcname_def_name(w->t->pid, w->o.ly, par->v, pt, name,
					 sizeof(name)) != 1)
		name[0] = 0;
	if (luw_proto_get(w->pctx, pt, &pi))
		snprintf(text, sizeof(text), "@?0x%llx", (unsigned long long)pt);
	else if (luw_funcname_is_main_chunk(pi->firstline, pi->numline))
		snprintf(text, sizeof(text), LUW_LJFN_MAIN_CHUNK " @%s:%d",
			 pi->chunk, pi->firstline);
	else
		snprintf(text, sizeof(text), "%s%s@%s:%d", name, name[0] ? " " : "",
			 pi->chunk, pi->firstline);
	kv = luw_kvmap_put(&w->fname, pt, 0, &isnew);
	if (!kv)
		return UINT32_MAX;
	kv->v = label(w, text);
	return (uint32_t)kv->v;
}

/* A proto's upvalue names: the i-th NUL-terminated name of uvinfo. */
static uint32_t uvlabel(struct walk *w, uint64_t pt, uint32_t i, const char *of)
{
	struct luw_kv *kv = luw_kvmap_get(&w->uvname, pt, i);
	struct luw_obj_proto p;
	char buf[512], text[700], nm[64];
	uint64_t uvinfo = 0;
	int isnew;

	if (kv)
		return (uint32_t)kv->v;
	snprintf(nm, sizeof(nm), "#%u", i);
	if (pt && !luw_obj_proto(&w->o, pt, &p) &&
	    (uvinfo = ref_at(w, p.lineinfo_at + w->o.ref)) &&
	    !rd(w, uvinfo, buf, 1)) {
		/* Read a small window: names are short. */
		size_t got = 0;

		while (got < sizeof(buf) - 1 && !rd(w, uvinfo + got, buf + got, 1))
			got++;
		buf[got] = 0;
		for (size_t k = 0, at = 0, idx = 0; k < got; k++) {
			if (buf[k])
				continue;
			if (idx++ == i) {
				snprintf(nm, sizeof(nm), "'%.60s'", buf + at);
				break;
			}
			at = k + 1;
		}
	}
	snprintf(text, sizeof(text), "upvalue %s of %s", nm, of);
	kv = luw_kvmap_put(&w->uvname, pt, i, &isnew);
	if (!kv)
		return UINT32_MAX;
	kv->v = label(w, text);
	return (uint32_t)kv->v;
}

/* The step of a string key: bare identifier or quoted and cut. */
static uint32_t key_label(struct walk *w, uint64_t s)
{
	char buf[KEY_SHOWN + 1], text[KEY_SHOWN * 4 + 16];
	uint32_t len = 0;
	size_t k = 0;

	if (luw_obj_str(&w->o, s, buf, sizeof(buf), &len))
		return w->l_skey;
	if (len <= KEY_SHOWN && luw_luaname_ident(buf, len))
		return label(w, buf);
	text[k++] = '[';
	text[k++] = '"';
	for (uint32_t i = 0; i < len && i < KEY_SHOWN; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '"' || c == '\\') {
			text[k++] = '\\';
			text[k++] = (char)c;
		} else if (c < 0x20 || c == ';' || c >= 0x7f) {
			k += (size_t)snprintf(text + k, 5, "\\x%02x", c);
		} else {
			text[k++] = (char)c;
		}
	}
	if (len > KEY_SHOWN)
		k += (size_t)snprintf(text + k, 8, "...");
	text[k++] = '"';
	text[k++] = ']';
	text[k] = 0;
	return label(w, text);
}

static uint32_t other_key_label(struct walk *w, const struct luw_obj_tv *k)
{
	char text[48];

	if (k->t == 1 || k->t == 2)	/* ~LJ_TFALSE, ~LJ_TTRUE */
		return label(w, k->t == 2 ? "[true]" : "[false]");
	if (k->t == 3)
		return label(w, "[lightuserdata]");
	if (k->t >= LUWH_T_STR && k->t < LUWH_NTYPES) {
		snprintf(text, sizeof(text), "[%s]", luw_heapsnap_type_name(k->t));
		return label(w, text);
	}
	return w->l_star;	/* numbers */
}

/* Weakness of table t: bit 1 keys, bit 2 values (its metatable's __mode). */
static int weakness(struct walk *w, uint64_t mt)
{
	struct luw_obj_tv v;
	char mode[8];
	uint32_t len;
	int wk = 0;

	if (!mt || luw_obj_tab_getstr(&w->o, mt, "__mode", &v) != 1 ||
	    v.t != LUWH_T_STR || luw_obj_str(&w->o, v.gc, mode, sizeof(mode), &len))
		return 0;
	wk |= strchr(mode, 'k') ? 1 : 0;
	wk |= strchr(mode, 'v') ? 2 : 0;
	return wk;
}

static void walk_tab(struct walk *w, uint64_t a, uint32_t node)
{
	const struct luw_obj_offs *f = &w->o.off;
	uint64_t mt = luw_obj_tab_meta(&w->o, a), arr;
	uint32_t asize = u32_at(w, a + f->t_asize), count, nskeys = 0;
	uint8_t buf[ARRAY_CHUNK * 8], *nodes;
	uint32_t star = step(w, node, w->l_star), keys = step(w, node, w->l_keys);
	int wk = weakness(w, mt);

	reach(w, mt, step(w, node, w->l_meta), 0);
	arr = ref_at(w, a + f->t_array);
	for (uint32_t i = 0; arr && i < asize; i += ARRAY_CHUNK) {
		uint32_t k = asize - i < ARRAY_CHUNK ? asize - i : ARRAY_CHUNK;

		if (rd(w, arr + (uint64_t)i * 8, buf, k * 8)) {
			w->u->skipped++;
			break;
		}
		for (uint32_t j = 0; j < k; j++)
			reach_tv(w, buf + j * 8, star, wk & 2);
	}
	if (u32_at(w, a + f->t_hmask) == 0)
		return;
	if (luw_obj_tab_nodes(&w->o, a, HASH_MAX, &nodes, &count)) {
		w->u->skipped++;	/* its hash part is not followed */
		return;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct luw_obj_tv k, v;

		luw_obj_node(&w->o, nodes, i, &k, &v);
		nskeys += v.t != 0 && k.t == LUWH_T_STR;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct luw_obj_tv k, v;
		const uint8_t *nd = nodes + (size_t)i * f->node_size;
		uint32_t lab;

		luw_obj_node(&w->o, nodes, i, &k, &v);
		if (v.t == 0)
			continue;
		if (k.t == LUWH_T_STR)
			lab = nskeys > KEYS_NAMED ? w->l_skey : key_label(w, k.gc);
		else
			lab = other_key_label(w, &k);
		reach_tv(w, nd, step(w, node, lab), wk & 2);
		reach_tv(w, nd + f->node_key, keys, wk & 1);
	}
	free(nodes);
}

static void walk_func(struct walk *w, uint64_t a, uint32_t node)
{
	const struct luw_obj_offs *f = &w->o.off;
	uint64_t pt = luw_obj_lua_proto(&w->o, a);
	uint8_t nupv = 0;
	uint32_t of;
	char text[600];

	rd(w, a + f->fn_nupv, &nupv, 1);
	reach(w, ref_at(w, a + f->fn_env), step(w, node, w->l_env), 0);
	if (pt) {
		reach(w, pt, step(w, node, w->l_proto), 0);
		of = fname(w, pt);
		snprintf(text, sizeof(text), "%s", of < w->s->nlabels ?
			 w->s->labels[of] : "?");
		for (uint32_t i = 0; i < nupv; i++)
			reach(w, ref_at(w, a + f->fn_uvptr + (uint64_t)i * w->o.ref),
			      step(w, node, uvlabel(w, pt, i, text)), 0);
		return;
	}
	for (uint32_t i = 0; i < nupv; i++) {
		uint8_t tv[8];

		if (!rd(w, a + f->fn_cupv + 8ull * i, tv, 8))
			reach_tv(w, tv, step(w, node, uvlabel(w, 0, i, "C function")),
				 0);
	}
}

/* 1 when a is an object of the lists, of type t (no read: a stack
 * slot's low word may be any number). */
static int listed_as(struct walk *w, uint64_t a, uint32_t t)
{
	struct hobj *h = a ? find(w, a) : NULL;

	return h && h_type(h) == t;
}

/* With 32-bit references a frame slot holds its function in the low
 * word and the frame link in the type word, so it is no TValue: the
 * function of such a slot, or 0. */
static uint64_t frame_func(struct walk *w, const uint8_t *slot)
{
	uint32_t lo;

	if (w->o.ref != 4)
		return 0;
	memcpy(&lo, slot, 4);
	return listed_as(w, lo, LUWH_T_FUNC) ? lo : 0;
}

/* The first function on thread l's stack: what the coroutine runs. */
static uint64_t thread_body(struct walk *w, const uint8_t *slots, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct luw_obj_tv v;
		uint64_t f;

		luw_obj_tv(&w->o, slots + i * 8, &v);
		if (v.t == LUWH_T_FUNC)
			return v.gc;
		f = frame_func(w, slots + i * 8);
		if (f)
			return f;
	}
	return 0;
}

#define STACK_MAX (1u << 20)	/* slots of one stack read */

static void walk_thread(struct walk *w, uint64_t a, uint32_t node)
{
	const struct luw_lj_layout *ly = w->o.ly;
	uint64_t stack = ref_at(w, a + ly->l_stack), top = 0, body, pt, uv;
	uint32_t n, lab;
	uint8_t *slots;
	char text[600];

	rd(w, a + ly->l_top, &top, 8);
	reach(w, ref_at(w, a + w->o.off.l_env), step(w, node, w->l_env), 0);
	lab = step(w, node, w->l_openuv);
	/* Open upvalues, bounded: the chain is on the thread's own list. */
	for (uv = ref_at(w, a + w->o.off.l_openupval), n = 0; uv && n < STACK_MAX;
	     uv = ref_at(w, uv), n++)
		reach(w, uv, lab, 0);
	if (!stack)
		return;
	stack += (1 + w->fr2) * 8ull;	/* past the bottom frame's link */
	if (top <= stack || (top - stack) / 8 > STACK_MAX)
		return;
	n = (uint32_t)((top - stack) / 8);
	slots = malloc((size_t)n * 8);
	if (!slots || rd(w, stack, slots, n * 8)) {
		free(slots);
		w->u->skipped++;
		return;
	}
	if (a == w->gs.mainthread) {
		lab = label(w, "(stack)");
	} else {
		body = thread_body(w, slots, n);
		pt = body ? luw_obj_lua_proto(&w->o, body) : 0;
		if (pt) {
			uint32_t f = fname(w, pt);

			snprintf(text, sizeof(text), "stack of coroutine %s",
				 f < w->s->nlabels ? w->s->labels[f] : "?");
		} else {
			snprintf(text, sizeof(text), "stack of coroutine");
		}
		lab = label(w, text);
	}
	lab = step(w, node, lab);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t f = frame_func(w, slots + i * 8);

		reach_tv(w, slots + i * 8, lab, 0);
		if (f)
			reach(w, f, lab, 0);
	}
	free(slots);
}

static void walk_proto(struct walk *w, uint64_t a, uint32_t node)
{
	struct luw_obj_proto p;
	uint32_t c = step(w, node, w->l_const);

	if (luw_obj_proto(&w->o, a, &p))
		return;
	reach(w, p.chunkname, c, 0);
	for (uint32_t i = 0; i < p.sizekgc && i < (1u << 20); i++)
		reach(w, ref_at(w, p.k - (uint64_t)(i + 1) * w->o.ref), c, 0);
}

static void walk_udata(struct walk *w, uint64_t a, uint32_t node)
{
	reach(w, ref_at(w, a + w->o.off.ud_meta), step(w, node, w->l_meta), 0);
	reach(w, ref_at(w, a + w->o.off.ud_env), step(w, node, w->l_env), 0);
}

static void walk_upval(struct walk *w, uint64_t a, uint32_t node)
{
	uint8_t closed = 0, tv[8];

	/* A closed upvalue holds its value: the value is on the same path.
	 * An open one points into a stack, which the thread walks. */
	if (!rd(w, a + w->o.off.uv_closed, &closed, 1) && closed &&
	    !rd(w, a + w->o.off.uv_tv, tv, 8))
		reach_tv(w, tv, node, 0);
}

static void walk_one(struct walk *w, uint32_t idx)
{
	struct hobj *h = &w->obj[idx];
	uint64_t a = h_addr(h);
	uint32_t node = h->node;

	switch (h_type(h)) {
	case LUWH_T_TAB: walk_tab(w, a, node); break;
	case LUWH_T_FUNC: walk_func(w, a, node); break;
	case LUWH_T_THREAD: walk_thread(w, a, node); break;
	case LUWH_T_PROTO: walk_proto(w, a, node); break;
	case LUWH_T_UDATA: walk_udata(w, a, node); break;
	case LUWH_T_UPVAL: walk_upval(w, a, node); break;
	case LUWH_T_TRACE:
		reach(w, ref_at(w, a + w->o.ly->tr_startpt),
		      step(w, node, w->l_proto), 0);
		break;
	default:
		break;
	}
}

/* Drains the queue; then the weak references, each a new start. */
static void drain(struct walk *w)
{
	for (;;) {
		while (w->qh < w->qn)
			walk_one(w, w->q[w->qh++]);
		if (!w->nweak)
			return;
		/* Weak references reach what nothing strong did. */
		{
			struct edge *weak = w->weak;
			size_t n = w->nweak;

			w->weak = NULL;
			w->nweak = w->weakcap = 0;
			for (size_t i = 0; i < n; i++)
				reach(w, h_addr(&w->obj[weak[i].idx]),
				      weak[i].node, 0);
			free(weak);
		}
	}
}

/* Proto constants: who is whose parent, for the function names. */
static void parents(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct luw_obj_proto p;
		int isnew;

		if (h_type(&w->obj[i]) != LUWH_T_PROTO ||
		    luw_obj_proto(&w->o, h_addr(&w->obj[i]), &p))
			continue;
		for (uint32_t k = 0; k < p.sizekgc && k < (1u << 16); k++) {
			uint64_t c = ref_at(w, p.k - (uint64_t)(k + 1) * w->o.ref);
			struct hobj *h = c ? find(w, c) : NULL;
			struct luw_kv *kv;

			if (h && h_type(h) == LUWH_T_PROTO &&
			    (kv = luw_kvmap_put(&w->parent, c, 0, &isnew)))
				kv->v = h_addr(&w->obj[i]);
		}
	}
}

/*
 * The roots in three rounds, each walked to the end before the next: the
 * program's own data (the globals, the loaded modules, the registry),
 * then the main thread (what only the running code's locals hold), then
 * what the VM, the FFI and the JIT keep.  Within a round, breadth first.
 */
static void roots(struct walk *w, uint32_t base)
{
	const struct luw_gcstate *gs = &w->gs;
	uint32_t vm = step(w, base, label(w, "VM roots")), n;

	reach(w, gs->globals, step(w, base, label(w, "_G")), 0);
	reach(w, gs->loaded, step(w, base, label(w, "package.loaded")), 0);
	reach(w, gs->registry, step(w, base, label(w, "registry")), 0);
	drain(w);
	reach(w, gs->mainthread, step(w, base, label(w, "main thread")), 0);
	drain(w);
	n = step(w, vm, label(w, "(metamethod names)"));
	for (unsigned int i = 0; i < gs->ngcroot; i++) {
		const char *bt = luw_gcstate_basemt_name(gs, i);
		char text[64];

		if (i >= gs->nmmname && bt) {
			snprintf(text, sizeof(text), "metatable of %s", bt);
			n = step(w, vm, label(w, text));
		} else if (i >= gs->nmmname) {
			n = step(w, vm, label(w, "io default files"));
		}
		reach(w, gs->gcroot[i], n, 0);
	}
	reach(w, gs->ct_finalizer, step(w, base, label(w, "ffi finalizers")), 0);
	reach(w, gs->ct_miscmap, step(w, base, label(w, "ffi metatables")), 0);
	n = step(w, base, label(w, "JIT traces"));
	for (size_t i = 0; i < w->n; i++)
		if (h_type(&w->obj[i]) == LUWH_T_TRACE)
			reach(w, h_addr(&w->obj[i]), n, 0);
	if (gs->mmudata) {
		n = step(w, base, label(w, "(to be finalized)"));
		for (uint64_t p = ref_at(w, gs->mmudata), k = 0;
		     p && k < w->n; k++) {
			reach(w, p, n, 0);
			if (p == gs->mmudata)
				break;
			p = ref_at(w, p);
		}
	}
	drain(w);
}

static void account(struct walk *w, uint32_t base)
{
	struct luw_heapsnap_uni *u = w->u;
	uint32_t unreached = step(w, base, label(w, "(unreachable)"));
	const struct luw_lj_layout *ly = w->o.ly;
	uint32_t sizetrace = 0;

	for (size_t i = 0; i < w->n; i++) {
		struct hobj *h = &w->obj[i];
		uint32_t t = h_type(h), node = h->node ? h->node : unreached;

		u->objects++;
		u->bytes += h->size;
		u->type_objects[t]++;
		u->type_bytes[t] += h->size;
		if (!h->node) {
			u->unreached_objects++;
			u->unreached_bytes += h->size;
		}
		luw_heapsnap_add(w->s, node, t, 1, h->size);
		luw_heapsnap_offer(w->s, h_addr(h), node, t, h->size);
	}
	/* What gc.total counts besides the objects, where it can be sized:
	 * GG_State up to the end of the dispatch table, the string table's
	 * array, the FFI's type table, the JIT's trace array. */
	u->internal = (uint64_t)(ly->gg_g2disp - ly->gg_g2l) + 8ull * ly->gg_ndisp +
		      ((uint64_t)w->gs.strmask + 1) * w->o.ref;
	if (w->gs.ctype) {
		uint32_t sizetab = u32_at(w, w->gs.ctype + 12);

		u->internal += (uint64_t)sizetab * w->o.off.ct_size;
	}
	/* The temporary buffer's: b and e before tmpbuf.L, native pointers
	 * since 2020, references before. */
	{
		unsigned int psz = w->o.off.str_new ? 8 : w->o.ref;
		uint64_t b = 0, e = 0, l = w->gs.g + ly->g_tmpbuf_l;

		if (!rd(w, l - psz, &b, psz) && !rd(w, l - 2 * psz, &e, psz) &&
		    e > b && e - b < (1u << 30))
			u->internal += e - b;
	}
	if (ly->gg_g2j &&
	    !rd(w, w->gs.g + (uint64_t)(int64_t)ly->gg_g2j + ly->j_sizetrace,
		&sizetrace, 4))
		u->internal += (uint64_t)sizetrace * w->o.ref;
}

static int universe(struct walk *w, uint64_t g, uint32_t base)
{
	char why[200];

	if (luw_gcstate_read(&w->o, g, &w->gs, why, sizeof(why))) {
		snprintf(w->why, sizeof(w->why), "global_State 0x%llx: %s",
			 (unsigned long long)g, why);
		return -1;
	}
	w->u = luw_heapsnap_uni(w->s);
	if (!w->u)
		return -1;
	w->u->g = g;
	w->u->gc_total = w->gs.total;
	w->u->root = base;
	/* The smallest object is 8 bytes (a 32-bit build's cdata). */
	w->limit = w->gs.total / 8 + 1024;
	w->n = w->qh = w->qn = w->nweak = 0;
	luw_kvmap_clear(&w->parent);
	if (enumerate(w))
		return -1;
	sizes(w);
	parents(w);
	roots(w, base);
	account(w, base);
	return w->s->oom ? -1 : 0;
}

int luw_heapwalk_run(struct luw_layout_target *t,
		     const struct luw_heapwalk_opts *opts,
		     struct luw_heapsnap *s, char *why, size_t n)
{
	struct walk w;
	struct luw_memcache mc;
	int rc = 0;

	memset(&w, 0, sizeof(w));
	if (luw_layout_obj(t, &w.o, why, n))
		return -1;
	if (luw_memcache_init(&mc, t->pid, opts->cache_bytes ?
			      opts->cache_bytes : 64u << 20))
		return luw_fail(why, n, "out of memory");
	w.o.mc = &mc;
	w.t = t;
	w.s = s;
	w.live = opts->live;
	w.fr2 = w.o.ref == 8;
	w.pctx = luw_proto_new(t->pid, &t->layout, &t->ff);
	luw_kvmap_init(&w.parent);
	luw_kvmap_init(&w.fname);
	luw_kvmap_init(&w.uvname);
	w.l_star = label(&w, "[*]");
	w.l_skey = label(&w, "[\"*\"]");
	w.l_keys = label(&w, "(keys)");
	w.l_meta = label(&w, "(metatable)");
	w.l_env = label(&w, "(env)");
	w.l_proto = label(&w, "(proto)");
	w.l_const = label(&w, "(constants)");
	w.l_openuv = label(&w, "(open upvalues)");
	if (!w.pctx)
		rc = luw_fail(why, n, "out of memory");
	for (int i = 0; !rc && i < t->nstates; i++) {
		uint32_t base = 0;
		char text[64];

		if (t->nstates > 1) {
			snprintf(text, sizeof(text), "universe %d", i + 1);
			base = step(&w, 0, label(&w, text));
		}
		luw_kvmap_clear(&w.fname);
		luw_kvmap_clear(&w.uvname);
		if (universe(&w, t->states[i], base))
			rc = luw_fail(why, n, "%s", w.why[0] ? w.why : "out of memory");
	}
	free(w.obj);
	free(w.q);
	free(w.weak);
	luw_kvmap_free(&w.parent);
	luw_kvmap_free(&w.fname);
	luw_kvmap_free(&w.uvname);
	if (w.pctx)
		luw_proto_free(w.pctx);
	luw_memcache_free(&mc);
	return rc;
}
