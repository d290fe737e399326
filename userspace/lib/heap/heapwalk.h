/*
 * heapwalk: a heap snapshot of a live LuaJIT process (heap/heapsnap.h).
 *
 * For every universe (global_State) of the process, proven by
 * target/gcstate.h:
 *
 * 1. Every object, from the collector's own lists: gc.root (and the
 *    userdata chained after the main thread), the finalizer list
 *    (gc.mmudata), the string table's chains and each thread's open
 *    upvalues; each one's size as LuaJIT frees it (lj_gc.c's free
 *    functions: a table with its array and hash parts, a thread with its
 *    stack, a cdata with its C type's size from the FFI's type table, a
 *    trace with its IR and snapshots).  The main thread lives inside
 *    GG_State: only its stack is its own; GG_State, the string table's
 *    array, the FFI type table and the trace array are the VM's
 *    "internal" bytes.
 * 2. Paths, breadth first from the roots in three rounds, each walked
 *    to its end before the next starts: the program's data (the globals
 *    _G, package.loaded, the registry); the main thread (its stack: what
 *    only the running code's locals hold); what the VM keeps (metamethod
 *    names, base types' metatables, the io files), the FFI's finalizer
 *    and metatable tables, the JIT's traces, objects waiting for their
 *    finalizer.  So a table a module holds and a local of the main chunk
 *    also holds is named by the module.  Each object takes the first
 *    path that reaches it; references out of weak tables are followed
 *    only after every strong one of the round.  Steps are named:
 *      "name" / "[\"key\"]"   a string key (identifiers bare, others quoted
 *                             and cut at 40 bytes; a table with more than
 *                             256 string keys has them all as ["*"])
 *      "[*]"                  the array part, a number key
 *      "[true]", "[table]"..  other keys, by value or type
 *      "(keys)"               the key objects of a table
 *      "(metatable)" "(env)" "(proto)" "(constants)"
 *      "upvalue 'x' of f @chunk:line"   a closure's upvalue (by its
 *                             proto's debug names, "#i" without them)
 *      "(stack)", "stack of coroutine f @chunk:line"
 *    Functions are named as the CPU profiles name them.  What no path
 *    reaches is garbage the next cycle frees: "(unreachable)".
 *
 * The walk reads through a block cache (proc/memcache.h): sound on a
 * stopped target.  With opts->live the target runs: every object read is
 * checked (its type tag, reads that fail on unmapped memory), objects
 * that do not check out are skipped and counted, and lists are bounded by
 * what gc.total allows.
 */
#ifndef LUW_HEAP_HEAPWALK_H
#define LUW_HEAP_HEAPWALK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heap/heapsnap.h"
#include "target/layout.h"

struct luw_heapwalk_opts {
	int live;		/* the target is not stopped */
	size_t cache_bytes;	/* 0: 64 MiB */
	FILE *progress;		/* a line as the walk starts; NULL: none */
};

/*
 * Walks every universe of t's process (attached: t's layout proven, its
 * states found) into s.  0, or -1 with why (a universe whose heap state
 * does not prove refuses the whole walk).
 */
int luw_heapwalk_run(struct luw_layout_target *t,
		     const struct luw_heapwalk_opts *opts,
		     struct luw_heapsnap *s, char *why, size_t n);

#endif
