/*
 * Names of LuaJIT's fast functions by ffid, as jit.vmdef's "ffnames"
 * gives them for the LuaJIT that wrote the sysprof fixtures: Tarantool's
 * fork of LuaJIT 2.1.
 *
 * The ids come from the order of LJLIB_CF/LJLIB_ASM definitions in the
 * lib_*.c files (lib_base, math, bit, string, table, io, os, package,
 * debug, jit, ffi, then the fork's lib_misc).  Compared with stock 2.1 as
 * Debian ships it, the fork has no jit.security and no string.buffer
 * library, and adds misc.*; the fixtures confirm the shift (ffid 122 is
 * os.clock, 170 is the FFI call metamethod ffi.meta.__call).
 */
#ifndef LUW_FFNAMES_H
#define LUW_FFNAMES_H

#include <stdint.h>

/* Name of fast function ffid, or NULL when the id is unknown. */
const char *luw_ffname(uint64_t ffid);

#endif
