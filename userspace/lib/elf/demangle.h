/*
 * demangle: C++ symbol names as people read them, through libstdc++'s
 * __cxa_demangle (the Itanium C++ ABI's own entry point, callable from C).
 */
#ifndef LUW_ELF_DEMANGLE_H
#define LUW_ELF_DEMANGLE_H

#include <stddef.h>

/*
 * The demangled form of a mangled name ("_Z..."), malloc'd; NULL when
 * the name is not mangled or does not demangle (then use it as it is).
 */
char *luw_demangle(const char *name);

#endif
