/*
 * A host whose main thread's globals are an empty table, as Apache
 * Traffic Server's ts_lua leaves them: the libraries are opened, the
 * work is loaded (its functions keep the full globals as their
 * environment), then an empty table takes LUA_GLOBALSINDEX's place and
 * the work runs.  Prints "ready", then runs Lua until killed.
 */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static const char work[] =
	"local function fib(n)\n"
	"  if n < 2 then return n end\n"
	"  return fib(n - 1) + fib(n - 2)\n"
	"end\n"
	"io.stdout:write('ready\\n') io.stdout:flush()\n"
	"while true do fib(20) end\n";

int main(void)
{
	lua_State *L = luaL_newstate();

	if (!L)
		return 1;
	luaL_openlibs(L);
	if (luaL_loadstring(L, work)) {
		fprintf(stderr, "emptyglobals: %s\n", lua_tostring(L, -1));
		return 1;
	}
	lua_newtable(L);
	lua_replace(L, LUA_GLOBALSINDEX);
	if (lua_pcall(L, 0, 0, 0)) {
		fprintf(stderr, "emptyglobals: %s\n", lua_tostring(L, -1));
		return 1;
	}
	return 0;
}
