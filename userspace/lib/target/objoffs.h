/*
 * objoffs: where the objects' fields lie that the layout descriptor does
 * not carry (struct luw_obj_offs, target/obj.h), for one LuaJIT object.
 *
 * Two sources.  The lj_obj.h model: the object structs (GCtab, GCfunc,
 * GCupval, GCudata, GCcdata, lua_State, Node) are the same in every
 * LuaJIT 2.1 of the build matrix, OpenResty's and Tarantool's forks
 * included, so their fields are fixed multiples of a reference (ref: 8
 * bytes with GC64, 4 without) and of the descriptor's own fields:
 *
 *   GCtab     array 2r  metatable 4r  node 5r  asize 6r  hmask 6r+4
 *             colo r+3  sizeof 64 (GC64: freetop after hmask) or 32
 *   GCfunc    nupvalues ffid+1  env 2r  uvptr[] pc+r  C upvalue[] f+8
 *   GCupval   closed r+2  tv 2r  v 4r  sizeof 6r (48 or 24)
 *   GCudata   env 2r  len 3r  metatable 4r  sizeof 6r
 *   GCcdata   ctypeid r+2  sizeof 2r      CType sizeof 24 or 16
 *   lua_State openupval cframe-2r  env cframe-r
 *             sizeof: -gg_g2l (GG_State puts global_State right after the
 *             main lua_State; OpenResty's is 16 bytes longer than stock)
 *
 * and global_State in one of two arrangements, told apart by where the
 * descriptor's vmstate lies:
 *
 *   since 2020 (StrInternState str; vmstate after it):
 *     allocf allocd gc strempty .. str{tab mask num} vmstate mainthref
 *     tmpbuf tmptv tmptv2 nilnode registrytv .. jit_base ctype_state
 *     prng? gcroot[]
 *   before (2.1.0-beta3, Tarantool's fork; vmstate right after gc):
 *     strhash strmask strnum [strbloom] allocf allocd gc vmstate tmpbuf
 *     strempty .. mainthref registrytv .. jit_base ctype_state gcroot[]
 *   gc = GCState{ total threshold (GCSize each) .. sweepstr root sweep
 *                 gray grayagain weak mmudata .. }
 *
 * The DWARF of the object, where it has any, gives every field by name;
 * it must then agree with the model, field by field, or the heap part is
 * refused with the first field that differs -- the check that proves the
 * model on each DWARF cell of the matrix, and so on its stripped twin.
 * The global_State offsets are candidates either way: target/gcstate.h
 * proves them on each live universe before a walk uses them.
 */
#ifndef LUW_TARGET_OBJOFFS_H
#define LUW_TARGET_OBJOFFS_H

#include <stddef.h>

#include "target/obj.h"

/*
 * The offsets for the LuaJIT object at path (NULL: the model only) laid
 * out as ly.  0 when the name part (off->src) was worked out; -1 with the
 * check that failed in why, and off->src 0.  The heap part may fail on
 * its own: off->heap_src 0 and off->why_heap.  It opens the object's
 * DWARF: do it once per object (target/layout.h's luw_layout_obj does).
 */
int luw_objoffs_find(struct luw_obj_offs *off, const struct luw_lj_layout *ly,
		     const char *path, char *why, size_t whylen);

#endif
