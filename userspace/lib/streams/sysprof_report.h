/*
 * Reports of a sysprof stream: aggregates the samples the decoder
 * delivers (sysprof.h) in constant memory per distinct stack.
 *
 * Compat (LUW_SPR_COMPAT): the lines of the fork's luajit-parse-sysprof,
 * "stack<TAB>count" with every frame followed by ';', frames named as its
 * symtab.demangle() names them ("name:0xSTART" for C symbols, "@chunk:N"
 * for Lua functions, fast functions by name), and its merge, quirks
 * included: host frames root first; after a host frame named lua_cpcall*
 * the innermost Lua frame is dropped; after a host frame named lua_call* or
 * lua_pcall* the Lua frames are appended root first up to the first C
 * function, and only that one frame is removed from the Lua stack.  Trace
 * samples and samples without such host frames lose their Lua frames.
 * Lines come out in bytewise order.
 *
 * Folded (LUW_SPR_FOLDED, the default): one stack per sample, root first,
 * into a luw_stacks aggregate (flamegraph.pl input).  Every Lua frame is
 * kept.  Merge rules:
 *   - Lua frames are split at their C-function frames.  A C-function frame
 *     whose symbol is also a host frame (found by symbol start address,
 *     searching root to leaf after the previous match) anchors the split:
 *     the host frames up to it, then the Lua frames that called it, then
 *     the C function once (as its host frame).
 *   - Lua frames after the last anchor go above the innermost host frame.
 *     When some C-function frame of the Lua stack has no host frame (the
 *     fork's default backtracer returns two frames, so this is the usual
 *     case), the Lua part cannot be placed exactly and comes after a
 *     "[lua]" marker frame, its C functions named by symbol.
 *   - Names: host frames and C functions by symbol ("0x..." if none), Lua
 *     functions "@chunk:line" (the stream carries the prototype and its
 *     first line, not the function's name), fast functions by name
 *     ("[ffid N]" if unknown), a trace sample as its function then
 *     "TRACE_n @chunk:line" where the trace starts.  ';' in a name becomes
 *     ':' and control characters become '?', so every frame survives the
 *     folded format.
 *   - A sample with no frame at all (leaf mode in the interpreter) counts
 *     as the single frame "[VMSTATE]", e.g. "[INTERP]".
 *
 * Vmstates: samples per VM state (INTERP .. TRACE), as sysprof's default
 * mode counts them.
 */
#ifndef LUW_STREAMS_SYSPROF_REPORT_H
#define LUW_STREAMS_SYSPROF_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "streams/reader.h"
#include "output/stacks.h"
#include "streams/symtab.h"
#include "streams/sysprof.h"

enum luw_sysprof_report_mode {
	LUW_SPR_FOLDED,
	LUW_SPR_COMPAT,
	LUW_SPR_VMSTATES,
};

struct luw_sysprof_report;

/*
 * A report over the symbols in st (which the report extends with the
 * stream's updates; it stays the caller's).  For LUW_SPR_FOLDED the
 * stacks go into out_stacks (the caller's).
 */
struct luw_sysprof_report *luw_sysprof_report_new(enum luw_sysprof_report_mode mode, struct luw_symtab *st,
			    struct luw_stacks *out_stacks);
void luw_sysprof_report_free(struct luw_sysprof_report *rep);

/* Decoder callbacks that feed rep (ctx = rep). */
extern const struct luw_sysprof_ops luw_sysprof_report_ops;

/* Samples seen, in total and per vmstate (0..9). */
uint64_t luw_sysprof_report_samples(const struct luw_sysprof_report *rep);
uint64_t luw_sysprof_report_vmstate(const struct luw_sysprof_report *rep, unsigned int vmstate);

/* Non-zero if aggregation ran out of memory (decoding stopped). */
int luw_sysprof_report_oom(const struct luw_sysprof_report *rep);

/*
 * Write the compat lines or the vmstate counts ("NAME<TAB>count" per
 * state, after "samples<TAB>total").  Folded output is the stacks'
 * luw_stacks_write_folded().  0, or -1 on a write error.
 */
int luw_sysprof_report_write(const struct luw_sysprof_report *rep, FILE *out);

#endif
