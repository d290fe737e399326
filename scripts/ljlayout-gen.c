/*
 * Print the luaunwind layout descriptor of one LuaJIT source tree as a C
 * definition, `static const struct luw_lj_layout NAME = { ... };`, for
 * userspace/lib/luajit/known_layouts.h.  Compiled by
 * scripts/ljtables-gen.sh with the tree's own headers and the defines
 * its package build uses, so every offset is the compiler's, not ours.
 *
 * The fields are include/luaunwind_layout.h's list, each printed from
 * its row: a member row as offsetof(ctype, member), a value row as its
 * expression evaluated here -- or, when the expression is luaunwind's
 * own constant (LUW_*, the struct's size), as written.
 *
 * usage: ljlayout-gen NAME
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lj_obj.h"
#include "lj_frame.h"
#include "lj_jit.h"
#include "lj_dispatch.h"

#include "luaunwind_layout.h"

#define OFS(t, f)	((long long)offsetof(t, f))

static void flags(long long v)
{
	printf("\t.flags = %s%s%s,\n", v & LUW_LJ_F_GC64 ? "LUW_LJ_F_GC64" : "",
	       (v & LUW_LJ_F_GC64) && (v & LUW_LJ_F_JIT) ? " | " : "",
	       v & LUW_LJ_F_JIT ? "LUW_LJ_F_JIT" : (v ? "" : "0"));
}

static void value(const char *name, const char *text, long long v)
{
	if (!strcmp(name, "flags"))
		flags(v);
	else if (!strncmp(text, "LUW_", 4) || strstr(text, "luw_lj_layout"))
		printf("\t.%s = %s,\n", name, text);
	else
		printf("\t.%s = %lld,\n", name, v);
}

#define GEN_M(type, name, ctype, member) \
	printf("\t.%s = %lld,\n", #name, OFS(ctype, member));
#define GEN_V(type, name, val) \
	value(#name, #val, (long long)(val));

int main(int argc, char **argv)
{
	/* The raw states the known table maps with VMST_STOCK. */
	static const int stock[] = {
		LJ_VMST_INTERP, LJ_VMST_C, LJ_VMST_GC, LJ_VMST_EXIT,
		LJ_VMST_RECORD, LJ_VMST_OPT, LJ_VMST_ASM,
	};

	if (argc != 2) {
		fprintf(stderr, "usage: ljlayout-gen NAME\n");
		return 2;
	}
	for (int i = 0; i < (int)(sizeof(stock) / sizeof(stock[0])); i++)
		if (stock[i] != i || LJ_VMST__MAX != 7) {
			fprintf(stderr, "ljlayout-gen: LJ_VMST_* are not stock "
				"LuaJIT 2.1's; write this tree's vmst_map\n");
			return 1;
		}
	printf("static const struct luw_lj_layout %s = {\n", argv[1]);
	LUW_LJ_LAYOUT_FIELDS(GEN_M, GEN_V)
	printf("\t.vmst_map = VMST_STOCK,\n};\n");
	return 0;
}
