/*
 * allocf: the allocator of each Lua universe of a process -- the function
 * global_State.allocf points to, which every allocation and free of that
 * universe calls (luaunwind.h, LUW_IOC_ALLOC, probes it).
 *
 * Its place in global_State is target/objoffs.h's (DWARF, or the model
 * proven with the rest of the heap part); each value read is proven on
 * the live process: it must lie in an executable mapping of a file, where
 * a uprobe can go (code made at run time cannot be probed).
 */
#ifndef LUW_TARGET_ALLOCF_H
#define LUW_TARGET_ALLOCF_H

#include <stddef.h>
#include <stdint.h>

struct luw_layout_target;

/*
 * The distinct allocators of t's universes into fns (at most max, in the
 * order of t->states): their number, or -1 with the check that failed in
 * why.
 */
int luw_allocf_find(struct luw_layout_target *t, uint64_t *fns, int max,
		    char *why, size_t n);

#endif
