/*
 * funcname: names of Lua functions read from bytecode in a live process.
 *
 * By definition (luw_funcname_def_name): the prototype that creates a function's
 * closures (its parent: the child proto is one of the parent's GC
 * constants, used by exactly one FNEW) and what the FNEW's result is
 * stored into -- `local function f` / `local f = function` (the local
 * that starts right after it, from varinfo), `function f` (GSET),
 * `function M.f` / `function obj:m` (TSETS, the table named as a slot),
 * an upvalue (USETV).  This does not depend on who calls the function.
 *
 * By call site (luw_funcname_callee_name): the name a Lua function was called by, read from its caller's
 * bytecode in a live process -- what debug.getinfo(f, "n") reports:
 * the local, global, field/method or upvalue that held the function at
 * the call instruction.
 *
 * Bytecode numbering is LuaJIT 2.1's (the same in Debian's luajit,
 * OpenResty's luajit2 and Tarantool's fork: checked against each one's
 * jit.vmdef).  The GCproto fields the layout descriptor does not carry
 * (k, uvinfo, varinfo) sit at fixed distances from the ones it does, as
 * the GCproto struct of lj_obj.h is the same in all three:
 *   k        = chunkname - 32 bytes (GC64) or - 24 (32-bit refs)
 *   uvinfo   = lineinfo + 1 ref,  varinfo = lineinfo + 2 refs.
 */
#ifndef LUW_TARGET_FUNCNAME_H
#define LUW_TARGET_FUNCNAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "luaunwind_layout.h"

/*
 * Where the callee's name came from (luw_funcname_callee_name): what a
 * reader of the live process can check the callee against, since the
 * frame a call made may run another function by now (a tail call
 * replaces it and leaves the caller's call site).
 *   MM      the metamethod event the instruction ran (not a call)
 *   LOCAL   a local of the caller (its value is gone after the sample)
 *   GLOBAL  the caller's environment's field `name`
 *   UPVAL   the caller's upvalue uv
 *   FIELD   field `name` of a table: table_kind GLOBAL (the global
 *           `table`) or UPVAL (upvalue uv, named `table`), 0 for a table
 *           held anywhere else (a local, a field of a field)
 */
enum { LUW_CS_NONE, LUW_CS_MM, LUW_CS_LOCAL, LUW_CS_GLOBAL, LUW_CS_UPVAL,
       LUW_CS_FIELD };
struct luw_callee_src {
	int kind;		/* LUW_CS_* */
	int table_kind;		/* FIELD: LUW_CS_GLOBAL, _UPVAL or 0 */
	uint32_t uv;		/* UPVAL, FIELD of an upvalue: its index */
	char table[256];	/* FIELD of a global: the global's name */
};

/*
 * Name of the function called by the instruction before bytecode index
 * `pc` (a return position, as frame links hold it) of proto `pt` in
 * process pid (for an instruction that is not a call, the metamethod it
 * ran, "__index" etc.).  1 and out filled, 0 when the bytecode names nothing
 * (a computed callee), -1 when memory could not be read.  src (unless
 * NULL) says where the name came from.
 */
int luw_funcname_callee_name(pid_t pid, const struct luw_lj_layout *ly, uint64_t pt,
		    uint32_t pc, char *out, size_t outlen,
		    struct luw_callee_src *src);

/*
 * Definition name of proto `child` if proto `parent` creates its closures:
 * 1 and out filled; 2 when parent is its parent but stores the closure
 * nowhere nameable (an argument, a table constructor's positional slot);
 * 0 when parent is not its parent; -1 when memory could not be read.
 */
int luw_funcname_def_name(pid_t pid, const struct luw_lj_layout *ly, uint64_t parent,
		 uint64_t child, char *out, size_t outlen);

/*
 * A main chunk has no definition: it is the prototype a loader (load,
 * loadfile, luaL_loadbuffer, require) made of a whole chunk, never a
 * child constant of another proto.  It is named LUW_LJFN_MAIN_CHUNK, as Lua's
 * tracebacks say "in main chunk".  LuaJIT tells it by its line range, the
 * test behind debug.getinfo's what == "main" (lj_debug.c): the parser
 * gives the main chunk firstline 0 and every function the line of its
 * `function` keyword, >= 1; bytecode loaded with its debug info keeps
 * both.  Stripped bytecode has firstline = numline = 0 in every proto, so
 * none of its protos can be told apart: none is named.
 */
#define LUW_LJFN_MAIN_CHUNK "main chunk"

static inline int luw_funcname_is_main_chunk(int32_t firstline, int32_t numline)
{
	return firstline == 0 && numline > 0;
}

#endif
