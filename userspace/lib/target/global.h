/*
 * global: names of Lua functions by what holds them in a universe's
 * globals, for the functions whose definition cannot be read.
 *
 * A function defined at the top level of a script (`function event()`,
 * `function M.handle()` in a module) is named by its definition only
 * when its parent prototype (the script's main chunk) is found
 * (target/funcname.h); but a main chunk that has finished has usually been
 * collected, and was never sampled.  Such a function is still held
 * where the definition stored it: a global, or a field of a module table
 * in package.loaded or in a global.  So: every closure in the hash part
 * of the globals table of each universe (the main thread's env; for a
 * sandbox, an env whose metatable's __index is a table as kresd has, that
 * table too), and in the hash part of every table package.loaded or the
 * globals hold under a string key, is matched against the prototypes
 * asked for; a prototype held under exactly one name, across every
 * universe, is named by it -- "event" for a global, "mod.field" for
 * module `mod`'s field.  Held under two names (an alias, the same
 * function in two modules, a module loaded under one name and stored in
 * a global of another) or none: unnamed.  Only keys that read as Lua
 * identifiers count.
 *
 * Offsets the layout descriptor (luaunwind_layout.h) does not carry:
 *   lua_State.env, GCtab.node, GCtab.hmask, sizeof(Node), Node.key
 * come from the LuaJIT object's DWARF when it has one (struct lua_State,
 * GCtab, Node); otherwise from the struct definitions of lj_obj.h, the
 * same in LuaJIT 2.1, OpenResty's luajit2 and Tarantool's fork, written
 * in units of a GCRef (ref = 8 with GC64, 4 without):
 *   env   = lua_State.cframe - ref      (GCRef env; void *cframe;)
 *   node  = 5 * ref, hmask = 6 * ref + 4  (GCHeader; nomm; colo; array;
 *                                          gclist; metatable; node;
 *                                          asize; hmask)
 *   Node  = { TValue val; TValue key; MRef next; ... }, 24 bytes
 * The fallback is used only when the descriptor agrees with that header
 * model: GCfunc.pc at 4 * ref (GCHeader; ffid; nupvalues; env; gclist;
 * pc) and the GC type numbers of LuaJIT 2.x (str 4, proto 7, func 8,
 * table 11 as stored in gct).  Every object read is checked for its type
 * (thread, table, string, Lua function) before it is used, and a closure
 * matches only when its bytecode pointer is exactly its proto's; a wrong
 * offset reads no name rather than a wrong one.
 */
#ifndef LUW_TARGET_GLOBAL_H
#define LUW_TARGET_GLOBAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "luaunwind_layout.h"

struct luw_global_offs {
	uint16_t l_env;		/* GCRef env in lua_State */
	uint16_t t_node;	/* MRef node in GCtab */
	uint16_t t_hmask;	/* uint32_t hmask in GCtab */
	uint16_t node_size;	/* sizeof(Node) */
	uint16_t node_key;	/* TValue key in Node (val at 0) */
	int dwarf;		/* 1 from DWARF, 0 the lj_obj.h model */
};

/*
 * Offsets for the LuaJIT object at path (its DWARF, else the model
 * above, checked against ly).  0; -1 with the failed check in why.
 */
int luw_global_offsets(const char *path, const struct luw_lj_layout *ly,
		struct luw_global_offs *o, char *why, size_t whylen);

/*
 * For each of the n prototypes pt[], names[i] = the one name that holds
 * a closure of it in the universes states[0..nstates) of process pid
 * (malloc'd), or NULL.  Returns how many were named.
 */
int luw_global_names(pid_t pid, const struct luw_lj_layout *ly,
	      const struct luw_global_offs *o, const uint64_t *states, int nstates,
	      const uint64_t *pt, size_t n, char **names);

#endif
