/*
 * dwlayout: a LuaJIT build's layout descriptor read from its DWARF (libdw):
 * the member rows of include/luaunwind_layout.h's field list by their
 * names, GG_State's parts, the LJ_VMST_* enumerators for vmst_map and the
 * FF_* ones for the fast functions' ids.  What no DWARF holds -- the VM's
 * C frame and registers, the type tags -- is x64's, for the caller to
 * replace with what the machine code shows (fromcode.h).
 */
#ifndef LUW_TARGET_DWLAYOUT_H
#define LUW_TARGET_DWLAYOUT_H

#include <libelf.h>
#include <stddef.h>

struct luw_layout_target;
struct luw_lj_layout;
struct luw_ffnames;

/*
 * The layout from the DWARF of elf (the object at objpath), or of its
 * separate debug file as t's process sees the files; the file read in
 * src.  0, or -1 with the reason.
 */
int luw_dwlayout_any(const struct luw_layout_target *t, Elf *elf,
		     const char *objpath, struct luw_lj_layout *ly,
		     struct luw_ffnames *ff, char *src, size_t sn,
		     char *err, size_t n);

#endif
