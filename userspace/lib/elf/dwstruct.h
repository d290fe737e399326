/*
 * dwstruct: C structs as DWARF describes them, for the layouts read from
 * a LuaJIT build's debug information (target/layout.c: the whole layout
 * descriptor; target/global.c: the few table offsets it needs).
 */
#ifndef LUW_ELF_DWSTRUCT_H
#define LUW_ELF_DWSTRUCT_H

#include <elfutils/libdw.h>

/* The definition (with members) of struct name in any CU: 0, or -1. */
int luw_dwstruct_struct(Dwarf *dw, const char *name, Dwarf_Die *out);

/*
 * Member name of struct s: its offset in *off and, when type is not
 * NULL, its type with typedefs and qualifiers peeled.  0, or -1.
 */
int luw_dwstruct_member(Dwarf_Die *s, const char *name, long *off, Dwarf_Die *type);

#endif
