/*
 * obj: LuaJIT's objects as they lie in a live process -- the one place
 * that reads a reference, a TValue, a string, a table, a function or a
 * prototype of another process, as lj_obj.h lays them out.
 *
 * Offsets come from the layout descriptor (luaunwind_layout.h), proven
 * against the live process before anything here is used.  A table's
 * hash part, lua_State.env and what a heap walk reads are beyond the
 * descriptor; target/objoffs.h works them out once per LuaJIT object
 * (its DWARF, else the lj_obj.h model, taken only where the descriptor
 * agrees with that model):
 *
 *   GCtab  = { GCHeader; nomm; colo; MRef array; GCRef gclist;
 *              GCRef metatable; MRef node; asize; hmask; ... }
 *   Node   = { TValue val; TValue key; MRef next; ... }      24 bytes
 *   lua_State.env = the GCRef just before cframe
 *
 * in units of a reference (ref: 8 bytes with GC64, 4 without), the same
 * in LuaJIT 2.0, 2.1, OpenResty's luajit2 and Tarantool's fork.
 *
 * Every reader checks what it is given: an object is used only when its
 * gct is the type asked for, so a stale or wrong address reads as
 * nothing rather than as something else.  The target runs on while we
 * read: a table's nodes are copied in one read, so one walk sees one
 * version of the table.
 */
#ifndef LUW_TARGET_OBJ_H
#define LUW_TARGET_OBJ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "luaunwind_layout.h"

/* GC types as gct stores them (~LJ_T*), LuaJIT 2.0 and 2.1 alike.  The
 * descriptor carries its own for all but the table; these are what the
 * lj_obj.h model assumes. */
enum {
	LUW_OBJ_NIL = 0,	/* ~LJ_TNIL, as a TValue's type reads */
	LUW_OBJ_STR = 4,
	LUW_OBJ_THREAD = 6,
	LUW_OBJ_PROTO = 7,
	LUW_OBJ_FUNC = 8,
	LUW_OBJ_TAB = 11,
};

/*
 * The offsets beyond the descriptor, worked out once per LuaJIT object by
 * target/objoffs.h.  Two groups: what names need (tables, lua_State.env;
 * src) and what a heap walk needs besides (heap_src; why_heap when not).
 */
struct luw_obj_offs {
	int src;		/* 0 none, LUW_OBJ_DWARF, LUW_OBJ_MODEL */
	uint16_t l_env;		/* GCRef env in lua_State */
	uint16_t t_meta;	/* GCRef metatable in GCtab */
	uint16_t t_node;	/* MRef node in GCtab */
	uint16_t t_hmask;	/* uint32_t hmask in GCtab */
	uint16_t node_size;	/* sizeof(Node) */
	uint16_t node_key;	/* TValue key in Node (val at 0) */

	int heap_src;		/* 0 none (why_heap), LUW_OBJ_DWARF, LUW_OBJ_MODEL */
	char why_heap[160];
	uint16_t t_array, t_asize, t_colo, t_size;	/* GCtab */
	uint16_t fn_nupv, fn_env, fn_uvptr, fn_cupv;	/* GCfuncL/C */
	uint16_t uv_closed, uv_tv, uv_v, uv_size;	/* GCupval */
	uint16_t ud_env, ud_len, ud_meta, ud_size;	/* GCudata */
	uint16_t cd_ctypeid, cd_size, ct_size;		/* GCcdata, CType */
	uint16_t l_openupval, l_size;			/* lua_State */
	uint8_t gcsize;		/* bytes of a GCSize */
	uint8_t str_new;	/* strings take sizeof(GCstr) + (len + 4 & ~3),
				 * not sizeof(GCstr) + len + 1 */
	/* global_State, each proven on every universe (target/gcstate.h): */
	uint16_t g_total, g_root, g_mmudata;	/* gc.total, gc.root, gc.mmudata */
	uint16_t g_allocf;	/* allocf (allocd follows) */
	uint16_t g_strtab, g_strmask, g_strnum;	/* the string table */
	uint16_t g_registry, g_ctype;		/* registrytv, ctype_state */
	uint16_t g_gcroot[2];	/* gcroot[]: candidates, LUW_LJ_NOFIELD none */
};
#define LUW_OBJ_DWARF	1
#define LUW_OBJ_MODEL	2

/* GC types of the objects a heap holds beyond those above. */
enum {
	LUW_OBJ_UPVAL = 5,
	LUW_OBJ_TRACE = 9,
	LUW_OBJ_CDATA = 10,
	LUW_OBJ_UDATA = 12,
};

struct luw_memcache;
struct luw_obj {
	pid_t pid;
	struct luw_memcache *mc;	/* reads through it when set (a walk) */
	const struct luw_lj_layout *ly;
	unsigned int ref;	/* bytes of a GCRef/MRef */
	struct luw_obj_offs off;	/* src 0 until luw_obj_use */
};

/* A reader of pid's objects laid out as ly (which must outlive it). */
void luw_obj_init(struct luw_obj *o, pid_t pid, const struct luw_lj_layout *ly);

/* Gives o the offsets (target/objoffs.h; src non-zero). */
void luw_obj_use(struct luw_obj *o, const struct luw_obj_offs *off);

/* n bytes at a (never at 0): 0, or -1. */
int luw_obj_read(const struct luw_obj *o, uint64_t a, void *d, uint32_t n);
/* The reference at a, zero-extended: 0, or -1. */
int luw_obj_ref(const struct luw_obj *o, uint64_t a, uint64_t *v);
/* 1 when obj is readable and its gct is `gct`. */
int luw_obj_is(const struct luw_obj *o, uint64_t obj, unsigned int gct);

/* A TValue's type (~itype: a GC type reads as its gct) and GC object. */
struct luw_obj_tv {
	unsigned int t;
	uint64_t gc;
};
void luw_obj_tv(const struct luw_obj *o, const void *tv, struct luw_obj_tv *v);
/* The GC object of the TValue at tv when its type is gct, else 0. */
uint64_t luw_obj_tv_gc(const struct luw_obj *o, const void *tv,
		       unsigned int gct);

/*
 * String s into buf (at most n - 1 characters and a NUL) and its whole
 * length into *len: 0, or -1 when s is no readable string.
 */
int luw_obj_str(const struct luw_obj *o, uint64_t s, char *buf, size_t n,
		uint32_t *len);

/*
 * Table t's hash part (needs the offsets): a malloc'd copy of its
 * nodes and their number, at most max.  0, or -1 when t is no table, its
 * hash part is larger or unreadable.
 */
int luw_obj_tab_nodes(const struct luw_obj *o, uint64_t t, uint32_t max,
		      uint8_t **nodes, uint32_t *count);
/* Node i of such a copy: its key and value. */
void luw_obj_node(const struct luw_obj *o, const uint8_t *nodes, uint32_t i,
		  struct luw_obj_tv *key, struct luw_obj_tv *val);
/*
 * The value of table t's string key `key` (its hash part only, as
 * metatables and the registry keep such keys): 1 and *val, 0 when t has
 * no such key, -1 when t is no readable table.
 */
int luw_obj_tab_getstr(const struct luw_obj *o, uint64_t t, const char *key,
		       struct luw_obj_tv *val);
/* Table t's metatable, 0 when none or unreadable. */
uint64_t luw_obj_tab_meta(const struct luw_obj *o, uint64_t t);

/* The main thread of universe g, 0 when it does not read as a thread. */
uint64_t luw_obj_mainthread(const struct luw_obj *o, uint64_t g);
/* Thread l's environment (its globals table), 0 when no table. */
uint64_t luw_obj_env(const struct luw_obj *o, uint64_t l);

/* The proto of Lua closure f, 0 when f is no Lua function. */
uint64_t luw_obj_lua_proto(const struct luw_obj *o, uint64_t f);
/* The ffid of function f: 0 or -1 when f is no function. */
int luw_obj_ffid(const struct luw_obj *o, uint64_t f, uint8_t *ffid);
/* The code of C function f (GCfuncC.f), 0 when f is no C function. */
uint64_t luw_obj_cfunc(const struct luw_obj *o, uint64_t f);

/* A prototype's header. */
struct luw_obj_proto {
	uint64_t addr;
	uint64_t bc;		/* first instruction: addr + sizeof(GCproto) */
	uint64_t k;		/* constants: numbers up, GC objects down */
	uint64_t lineinfo;	/* MRef; uvinfo and varinfo follow the field */
	uint64_t lineinfo_at;	/* the field's own address */
	uint64_t chunkname;	/* GCstr */
	uint32_t sizebc, firstline, numline;
	uint32_t sizekgc;	/* GC constants below k */
	uint8_t numparams;
};
/* The prototype at pt: 0, or -1 when pt is no readable proto. */
int luw_obj_proto(const struct luw_obj *o, uint64_t pt, struct luw_obj_proto *p);

/* Trace n of universe g (jit_State.trace[n]), 0 when none. */
uint64_t luw_obj_trace(const struct luw_obj *o, uint64_t g, uint32_t n);

#endif
