/*
 * merge: one stack per sample record, host and Lua frames interleaved in
 * call order, following the "Merging" rule of include/luaunwind.h:
 *
 *   - host frames are walked innermost first; at host index host-first of
 *     a splice its Lua frames come instead of its host-count VM frames;
 *     a splice with host-first == nhost puts its segment below every host
 *     frame;
 *   - host frames in the VM's own code that no splice covers (an entry
 *     trampoline, lj_vm_ffi_call, a sample without Lua frames) are left
 *     out unless keep_vm: they say "LuaJIT ran here", which the Lua frames
 *     say better; with keep_vm every VM host frame stays, a splice's just
 *     below (callers' side of) its Lua frames;
 *   - a lua_CFunction appears once: when a segment's innermost Lua frame is
 *     a C function and a host frame lies above the segment, that host
 *     frame is the C function and the Lua one is dropped;
 *   - Lua frames that no splice places (a record that carries none) go
 *     above the innermost host frame after a marker frame, so nothing the
 *     module found is lost and the guess is visible.
 *
 * The result is root first (flame graph order).  Pure: no I/O, no names.
 */
#ifndef LUW_RECORD_MERGE_H
#define LUW_RECORD_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "luaunwind.h"

enum luw_mf_src {
	LUW_MF_HOST,		/* host[idx] */
	LUW_MF_LUA,		/* lua[idx] */
	LUW_MF_MARK,		/* "[unplaced lua]" marker */
};

struct luw_mframe {
	uint16_t src;		/* enum luw_mf_src */
	uint16_t idx;
};

#define LUW_MERGE_MAX	(LUW_MAX_HOST_FRAMES + LUW_MAX_LUA_FRAMES + 1)

/* Whether host pc is in the VM's own code (interpreter, lj_vm_*, lj_BC_*). */
typedef int (*luw_is_vm_fn)(void *ctx, uint64_t pc);

/*
 * Merge one sample (r: fields of a struct luw_dev_rec) into out[0..n),
 * root first; returns n (at most max), or -1 when the record's splices
 * break the rule (unsorted, overlapping, out of range).
 */
int luw_merge(const struct luw_sample *s, const uint64_t *host,
	      const struct luw_lua_frame *lua, const struct luw_splice *sp,
	      int keep_vm, luw_is_vm_fn is_vm, void *ctx,
	      struct luw_mframe *out, size_t max);

#endif
