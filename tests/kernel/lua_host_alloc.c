/*
 * A C host of Debian's libluajit-5.1 that gives its Lua universe an
 * allocator of its own (lua_newstate): host_alloc, over the C library's
 * realloc and free, in this executable rather than in LuaJIT.  It runs
 * the script SCRIPT with ARGS as the luajit command line would (arg[0]
 * the script, arg[1..] the rest): t_alloc_targets runs alloc.lua in it,
 * and the allocation probe must go where G->allocf points, here.
 *   lua_host_alloc SCRIPT [ARG...]
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>

/* noinline: the probe's address is this function's own. */
static __attribute__((noinline)) void *host_alloc(void *ud, void *ptr,
						  size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (!nsize) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, nsize);
}

int main(int argc, char **argv)
{
	lua_State *L;

	if (argc < 2) {
		fprintf(stderr, "usage: lua_host_alloc SCRIPT [ARG...]\n");
		return 2;
	}
	L = lua_newstate(host_alloc, NULL);
	if (!L) {
		fprintf(stderr, "lua_host_alloc: lua_newstate refused the "
			"allocator (a build without GC64)\n");
		return 1;
	}
	luaL_openlibs(L);
	lua_createtable(L, argc, 0);
	for (int i = 1; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	if (luaL_dofile(L, argv[1])) {
		fprintf(stderr, "lua_host_alloc: %s\n", lua_tostring(L, -1));
		return 1;
	}
	lua_close(L);
	return 0;
}
