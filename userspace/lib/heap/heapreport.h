/*
 * heapreport: what a heap snapshot (heap/heapsnap.h) says, and what grew
 * between two.
 *
 * A path's text joins its steps as Lua would write them: after a key,
 * identifier keys with '.' and bracketed ones as they are; any other
 * step, or any step after one that is no key, after " > ":
 *   _G.cache.users[*]
 *   package.loaded["app.session"].store
 *   _G.handler > upvalue 'pool' of handler @app.lua:12 > [*]
 * As stacks (for folded text, the SVG flame graph and pprof), each step
 * is a frame, root first, and the object type is the leaf: "(table)",
 * "(string)", ...; the count is bytes, the second value objects.  A ';'
 * in a step becomes ':' so frames survive the folded format.
 *
 * Two snapshots are matched by path text and type: growth is what the
 * newer one holds at a path beyond what the older one held there.
 */
#ifndef LUW_HEAP_HEAPREPORT_H
#define LUW_HEAP_HEAPREPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heap/heapsnap.h"
#include "output/stacks.h"
#include "util/strbuf.h"

/* The text of node's path into b (appended). */
void luw_heapreport_path(const struct luw_heapsnap *s, uint32_t node,
			 struct luw_strbuf *b);

/* Every group of s into st: bytes as the count, objects as aux.  0, or
 * -1 with errno. */
int luw_heapreport_stacks(const struct luw_heapsnap *s, struct luw_stacks *st);

/*
 * For people: where the snapshot came from; per universe the bytes found
 * against gc.total; by type (objects, bytes); the n heaviest paths by
 * what they retain (the path and every path below it); the n largest
 * objects.  0, or -1 on a write error.
 */
int luw_heapreport_top(const struct luw_heapsnap *s, FILE *out, size_t n);

/*
 * Growth from old to cur (the same process, later): into growth (may be
 * NULL) the paths that grew, by the bytes they grew (objects as aux); to
 * top (may be NULL) the totals of both and the n paths that grew most and
 * the n that shrank most.  0, or -1 with errno.
 */
int luw_heapreport_diff(const struct luw_heapsnap *old,
			const struct luw_heapsnap *cur,
			struct luw_stacks *growth, FILE *top, size_t n);

#endif
