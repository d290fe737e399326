/*
 * ffscan: what a live LuaJIT's own tables tell about it, read through a
 * layout already found: the fast functions' names from the library
 * tables, and the check that strings read right with a layout.
 */
#ifndef LUW_TARGET_FFSCAN_H
#define LUW_TARGET_FFSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct luw_layout_target;
struct luw_lj_layout;

/*
 * Fast-function names from the live library tables, for a
 * target whose layout is accepted; 0, or -1 with the reason.
 */
int luw_ffscan_names(struct luw_layout_target *t, char *why, size_t whylen);

/*
 * Strings read right with `ly`: the metamethod names every state anchors
 * in G (G->gcroot: "__index", "__newindex", "__gc", "__mode", "__eq",
 * "__len" in a row) read as exactly those through gc_gct, str_len and
 * str_size.  Nothing the program does with its globals changes them.
 * 0, or -1 with the reason.
 */
int luw_ffscan_check_strings(pid_t pid, const struct luw_lj_layout *ly, uint64_t g,
		      char *why, size_t whylen);

#endif
