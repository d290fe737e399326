/*
 * The sandwich of design section 6 for t_rec_sandwich.sh: a Lua C module
 * function that calls back into Lua (sw_call_back -> lua_call), and an
 * FFI leaf that recurses so samples land in it (c_leaf).  Loaded by
 * luajit with require("rec_sandwich"); its lua_* symbols come from the
 * luajit executable.
 */
#include <lauxlib.h>
#include <lua.h>

__attribute__((noinline)) double c_leaf(double n)
{
	if (n <= 1)
		return n;
	return c_leaf(n - 1) + c_leaf(n - 2);
}

static int sw_call_back(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_pushvalue(L, 1);
	lua_call(L, 0, 1);
	return 1;
}

int luaopen_rec_sandwich(lua_State *L)
{
	lua_newtable(L);
	lua_pushcfunction(L, sw_call_back);
	lua_setfield(L, -2, "call_back");
	return 1;
}
