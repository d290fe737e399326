/*
 * luaname: what Lua itself calls a name.  A key that is a name is shown
 * bare (`_G.cache.users`), any other string key quoted
 * (`_G.cache["user 7"]`), in heap paths and in the names found for
 * functions, so that every path reads as the Lua that would reach it.
 */
#ifndef LUW_LUAJIT_LUANAME_H
#define LUW_LUAJIT_LUANAME_H

#include <stddef.h>

/*
 * 1 when the n bytes at s are a Lua name (Lua 5.1 manual, 2.1: letters,
 * digits and underscores, not beginning with a digit, and not one of the
 * reserved words), else 0.  Stricter than LuaJIT's lexer in two ways, so
 * that a name shown bare is one in every build and prints as it is: the
 * letters are ASCII (LuaJIT takes any byte above 0x7f into a name), and
 * `goto` is reserved (it is in Lua 5.2 and in LuaJIT built with
 * LUAJIT_ENABLE_LUA52COMPAT, Tarantool's; a plain LuaJIT takes it as a
 * name).
 */
int luw_luaname_ident(const char *s, size_t n);

#endif
