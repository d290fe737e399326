/*
 * gcstate: what a universe's global_State says about its heap -- the GC
 * object list, the string table, the registry, the VM's own roots, the
 * FFI's type table -- read with the offsets of target/objoffs.h, and each
 * one proven on the live universe before it is believed:
 *
 *   main thread   G's own lua_State reads as a thread (as for attach)
 *   gc.root       the list's first objects all read as list objects
 *                 (no string: strings live in the string table)
 *   string table  mask + 1 is a power of two and every chain it starts
 *                 (up to 64 looked at) begins with a string
 *   registry      registrytv holds a table
 *   gcroot[]      gcroot[0] is the string "__index", the first of the
 *                 metamethod names (the candidate that reads so is taken)
 *   ctype_state   none, or a CTState whose g is this global_State
 *
 * A check that fails refuses the heap walk of the universe with that
 * check's words.
 */
#ifndef LUW_TARGET_GCSTATE_H
#define LUW_TARGET_GCSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "target/obj.h"

/* gcroot[] as lj_obj.h orders it: metamethod names, then one metatable
 * per base type (indexed by ~itype), then the io library's two files. */
#define LUW_GCSTATE_NBASEMT 14
#define LUW_GCSTATE_MAXROOT 64

struct luw_gcstate {
	uint64_t g;
	uint64_t total;		/* gc.total: bytes the GC accounts */
	uint64_t root;		/* first object of gc.root */
	uint64_t mmudata;	/* last of the circular list to finalize, or 0 */
	uint64_t strtab;	/* GCRef[strmask + 1] */
	uint32_t strmask, strnum;
	uint64_t mainthread, globals;	/* its env: _G */
	uint64_t registry;	/* table */
	uint64_t loaded;	/* registry._LOADED (package.loaded), or 0 */
	uint64_t gcroot[LUW_GCSTATE_MAXROOT];
	unsigned int ngcroot, nmmname;	/* entries; of them metamethod names */
	uint64_t ctype;		/* CTState, 0 without the FFI loaded */
	uint64_t ct_tab;	/* CType[ct_top] */
	uint32_t ct_top;
	uint64_t ct_finalizer, ct_miscmap;	/* tables, or 0 */
};

/*
 * Reads and proves universe g's heap state with o (its offsets must have
 * a heap part).  0, or -1 with the check that failed in why.
 */
int luw_gcstate_read(const struct luw_obj *o, uint64_t g, struct luw_gcstate *s,
		     char *why, size_t n);

/* The base type whose metatable gcroot[] entry i (i >= nmmname) is:
 * "string", "number", ...; NULL past them (the io files). */
const char *luw_gcstate_basemt_name(const struct luw_gcstate *s, unsigned int i);

#endif
