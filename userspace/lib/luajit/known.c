/*
 * known: the LuaJIT builds luaunwind knows by build-id, and the families
 * tried on a build it does not know.  See known.h.
 */
#include "luajit/known.h"

#include "luajit/ffnames.h"

/* Raw LJ_VMST_* index -> canonical state, stock 2.1 order (the generator
 * refuses a tree whose states are in another). */
#define VMST_STOCK { LUW_VMST_INTERP, LUW_VMST_CFUNC, LUW_VMST_GC, \
		     LUW_VMST_EXIT, LUW_VMST_RECORD, LUW_VMST_OPT, \
		     LUW_VMST_ASM }

/* ly_debian_gc64, ly_openresty_gc64, ly_tarantool26 */
#include "luajit/known_layouts.h"

/* ffam: the family of names (ffnames.h) each build was checked against. */
static const struct luw_known known[] = {
	{ "Debian luajit 2.1.0~beta3+git20220320 (luajit)",
	  "79b0b8114f05a2726860c3141195279ceb0f6e29", LUW_FF_STOCK, &ly_debian_gc64 },
	{ "Debian luajit 2.1.0~beta3+git20220320 (libluajit-5.1.so.2)",
	  "2e18b5eadde600273e47ba2f83a1df8b6a5b2540", LUW_FF_STOCK, &ly_debian_gc64 },
	{ "Debian luajit2 2.1-20230119 (luajit)",
	  "3e3d615119e82f1b42bd151e94701750bfd15a9d", LUW_FF_OPENRESTY, &ly_openresty_gc64 },
	{ "Debian luajit2 2.1-20230119 (libluajit-5.1.so.2)",
	  "0a6563c55d870716908fd332f88bf7cdd9bc6a71", LUW_FF_OPENRESTY, &ly_openresty_gc64 },
	{ "Debian tarantool 2.6.0-1.2+b1",
	  "979be6afc59bd8217b8b9ee495740b86ca0e77e9", LUW_FF_TARANTOOL, &ly_tarantool26 },
	/*
	 * Families, tried in order on an unknown build-id.  Their layouts
	 * are validated against the process; their fast-function ids cannot
	 * be (LUA52COMPAT and forks shift them), so they lend no names.
	 */
	{ "LuaJIT 2.1 GC64 (as Debian luajit 2022)", NULL, 0, &ly_debian_gc64 },
	{ "OpenResty luajit2 GC64 (as 2.1-20230119)", NULL, 0,
	  &ly_openresty_gc64 },
	{ "Tarantool 2.6 LuaJIT (non-GC64)", NULL, 0, &ly_tarantool26 },
};

const struct luw_known *luw_known_layouts(size_t *n)
{
	*n = sizeof(known) / sizeof(known[0]);
	return known;
}
