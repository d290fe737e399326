/*
 * A host that has no LuaJIT when it starts: it sleeps a moment (as a
 * server reading its configuration), then dlopens Debian's
 * libluajit-5.1 and runs SCRIPT with ARGS as the luajit command line
 * would (arg[0] the script).  test_launch starts it, t_follow records
 * it with record -- CMD: launch must wait for the mapping and stop it
 * before its first Lua.
 *   lua_dlopen SCRIPT [ARG...]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

typedef struct lua_State lua_State;

#define LIB "libluajit-5.1.so.2"

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 200 * 1000 * 1000 };
	lua_State *(*newstate)(void);
	void (*openlibs)(lua_State *);
	int (*loadfile)(lua_State *, const char *);
	int (*pcall)(lua_State *, int, int, int);
	void (*pushstring)(lua_State *, const char *);
	void (*createtable)(lua_State *, int, int);
	void (*rawseti)(lua_State *, int, int);
	void (*setfield)(lua_State *, int, const char *);
	const char *(*tolstring)(lua_State *, int, size_t *);
	void (*close)(lua_State *);
	lua_State *L;
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: lua_dlopen SCRIPT [ARG...]\n");
		return 2;
	}
	nanosleep(&nap, NULL);
	h = dlopen(LIB, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "lua_dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&newstate = dlsym(h, "luaL_newstate");
	*(void **)&openlibs = dlsym(h, "luaL_openlibs");
	*(void **)&loadfile = dlsym(h, "luaL_loadfile");
	*(void **)&pcall = dlsym(h, "lua_pcall");
	*(void **)&pushstring = dlsym(h, "lua_pushstring");
	*(void **)&createtable = dlsym(h, "lua_createtable");
	*(void **)&rawseti = dlsym(h, "lua_rawseti");
	*(void **)&setfield = dlsym(h, "lua_setfield");
	*(void **)&tolstring = dlsym(h, "lua_tolstring");
	*(void **)&close = dlsym(h, "lua_close");
	if (!newstate || !openlibs || !loadfile || !pcall || !pushstring ||
	    !createtable || !rawseti || !setfield || !tolstring || !close) {
		fprintf(stderr, "lua_dlopen: %s lacks a function\n", LIB);
		return 1;
	}
	L = newstate();
	openlibs(L);
	createtable(L, argc, 0);
	for (int i = 1; i < argc; i++) {
		pushstring(L, argv[i]);
		rawseti(L, -2, i - 1);
	}
	setfield(L, -10002, "arg");	/* LUA_GLOBALSINDEX */
	if (loadfile(L, argv[1]) || pcall(L, 0, 0, 0)) {
		fprintf(stderr, "lua_dlopen: %s\n", tolstring(L, -1, NULL));
		return 1;
	}
	close(L);
	return 0;
}
