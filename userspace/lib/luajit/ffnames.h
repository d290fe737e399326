/*
 * Names of LuaJIT's fast functions by ffid: the one list of names in
 * luaunwind, and per-target name sets built from it or from the target.
 *
 * The ffid of a fast function is its position in the target's generated
 * lj_ffdef.h: 0 is a Lua function, 1 a C function, fast functions follow
 * in the order of the LJLIB_CF/LJLIB_ASM definitions of lib_base, math,
 * bit, string, table, io, os, package, debug, jit, ffi, buffer (and a
 * fork's own libraries).  Which functions exist depends on the fork
 * (OpenResty adds thread.*, table.clone..., Tarantool drops jit.security
 * and string.buffer and adds misc.*) and on the build (LUA52COMPAT adds
 * rawlen, table.pack, debug.get/setuservalue), so ids shift from build to
 * build, and LUAJIT_DISABLE_JIT drops jit.util's trace functions and
 * jit.opt.start.  The list below is the union in definition order, each entry
 * tagged with the families that have it; names are spelled as jit.vmdef's
 * "ffnames" spells them ("math.floor", "io.method.close",
 * "ffi.meta.__call").
 *
 * A target's names come, best first, from its DWARF (the FF_* enumerators
 * give each id; the list gives the spelling), from its live library
 * tables, or -- for a build identified by its build-id only -- from the
 * list filtered by the build's family.  A family filter is never applied
 * to a build it was not checked against: ids shift silently.
 */
#ifndef LUW_LUAJIT_FFNAMES_H
#define LUW_LUAJIT_FFNAMES_H

#include <stddef.h>
#include <stdint.h>

/* Families of the list (bits), LUW_FF_LUA52 in addition to one of them. */
#define LUW_FF_STOCK		0x1u	/* LuaJIT 2.1 (Debian luajit 2022) */
#define LUW_FF_OPENRESTY	0x2u	/* OpenResty luajit2 2.1-20230119 */
#define LUW_FF_TARANTOOL	0x4u	/* Tarantool's fork (2.6 .. 2.11) */
#define LUW_FF_LUA52		0x8u	/* built with LUAJIT_ENABLE_LUA52COMPAT */
#define LUW_FF_NOJIT		0x10u	/* built with LUAJIT_DISABLE_JIT */

#define LUW_FF_MAX 256			/* ffid is a uint8_t */

/* A target's fast-function names. */
struct luw_ffnames {
	char src[64];			/* where they came from; "" = none */
	uint16_t off[LUW_FF_MAX];	/* 1 + offset in pool; 0 = unnamed */
	uint32_t used;
	uint32_t count;
	char pool[6144];
};

void luw_ffnames_init(struct luw_ffnames *f, const char *src);

/* Sets the name of ffid; 0, or -1 when full or ffid is out of range. */
int luw_ffnames_set(struct luw_ffnames *f, unsigned int ffid,
		    const char *name);

/* Name of ffid, or NULL. */
const char *luw_ffnames_get(const struct luw_ffnames *f, unsigned int ffid);

/* The list filtered by family (LUW_FF_*): ids 2.. in list order. */
void luw_ffnames_family(struct luw_ffnames *f, unsigned int family,
			const char *src);

/*
 * The name of a DWARF enumerator "FF_math_floor" as the list spells it
 * ("math.floor"); a name the list lacks gets the dots of the longest
 * library prefix the list knows ("FF_jit_util_new" -> "jit.util.new").
 * 0, or -1 when `en` is no FF_ enumerator.
 */
int luw_ffname_from_enum(const char *en, char *out, size_t n);

/* 1 when the list has `name` (as spelled there). */
int luw_ffnames_listed(const char *name);

/*
 * Names the ids between two named ones (anchors) when the list leaves no
 * doubt: the entries the list has between the anchors' names, for the
 * union of all families or for any one family with or without LUA52COMPAT,
 * are exactly as many as the ids in between, and every family that fits
 * gives the same names.  That is how the functions no library table holds
 * (ipairs_aux, io.method.*, ffi.meta.*) get named from a target whose
 * other names were read from the process.  Returns the count named.
 */
unsigned int luw_ffnames_fill_gaps(struct luw_ffnames *f);

/*
 * Name of fast function ffid for the LuaJIT that wrote Tarantool's sysprof
 * streams (the fixtures confirm: ffid 122 is os.clock, 170 is
 * ffi.meta.__call), or NULL.  "Lua" and "C" for 0 and 1.
 */
const char *luw_ffname(uint64_t ffid);

#endif
