/*
 * global: names of Lua functions by what holds them in a universe's
 * globals, for the functions whose definition cannot be read.
 *
 * A function defined at the top level of a script (`function event()`,
 * `function M.handle()` in a module) is named by its definition only
 * when its parent prototype (the script's main chunk) is found
 * (target/funcname.h); but a main chunk that has finished has usually been
 * collected, and was never sampled.  Such a function is still held
 * where the definition stored it: a global, or a field of a module table
 * in package.loaded or in a global.  So: every closure in the hash part
 * of the globals table of each universe (the main thread's env; for a
 * sandbox, an env whose metatable's __index is a table as kresd has, that
 * table too), and in the hash part of every table package.loaded or the
 * globals hold under a string key, is matched against the prototypes
 * asked for; a prototype held under exactly one name, across every
 * universe, is named by it -- "event" for a global, "mod.field" for
 * module `mod`'s field.  Held under two names (an alias, the same
 * function in two modules, a module loaded under one name and stored in
 * a global of another) or none: unnamed.  Only keys that read as Lua
 * identifiers count.
 *
 * Tables and the main thread's environment are read through target/obj.h
 * (it must have its offsets: luw_layout_obj).  Every object read is
 * checked for its type (thread, table, string, Lua function) before it is
 * used, and a closure matches only when its bytecode pointer is exactly
 * its proto's; a wrong offset reads no name rather than a wrong one.
 */
#ifndef LUW_TARGET_GLOBAL_H
#define LUW_TARGET_GLOBAL_H

#include <stddef.h>
#include <stdint.h>

struct luw_obj;

/*
 * For each of the n prototypes pt[], names[i] = the one name that holds
 * a closure of it in the universes states[0..nstates) read through o
 * (malloc'd), or NULL.  Returns how many were named.
 */
int luw_global_names(const struct luw_obj *o, const uint64_t *states,
		     int nstates, const uint64_t *pt, size_t n, char **names);

#endif
