/*
 * known: the LuaJIT builds luaunwind knows by build-id -- Debian 12's
 * luajit, luajit2 (OpenResty) and tarantool, binary and library -- each
 * with its layout descriptor and the family of its fast-function names,
 * and, after them, the families tried in order on a build-id not in the
 * list (their layouts are validated against the process; their ffids
 * cannot be, so they lend no names).
 *
 * The layouts are generated (known_layouts.h, scripts/ljtables-gen.sh)
 * from the packages' sources; the build-ids are those of the packages'
 * binaries.
 */
#ifndef LUW_LUAJIT_KNOWN_H
#define LUW_LUAJIT_KNOWN_H

#include <stddef.h>

#include "luaunwind_layout.h"

struct luw_known {
	const char *name;
	const char *build_id;	/* NULL: a family entry, matched by trial */
	unsigned int ffam;	/* LUW_FF_* family of its fast functions */
	const struct luw_lj_layout *layout;
};

/* The list, build-ids first, then the families; *n entries. */
const struct luw_known *luw_known_layouts(size_t *n);

#endif
