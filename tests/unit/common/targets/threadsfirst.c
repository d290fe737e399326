/*
 * A host that starts threads before any Lua runs, as a server starts its
 * workers before its scripts: two threads that sleep, then a Lua state
 * runs the script argv[1] with argv[2] as arg[1], then the threads are
 * ended.  For record/launch.c: every thread must be stopped with the
 * one that reaches the VM first.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static volatile int done;

static void *idle(void *p)
{
	(void)p;
	while (!done)
		usleep(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	lua_State *L;
	int rc;

	if (argc < 3)
		return 2;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, idle, NULL))
			return 1;
	L = luaL_newstate();
	if (!L)
		return 1;
	luaL_openlibs(L);
	lua_newtable(L);
	lua_pushstring(L, argv[2]);
	lua_rawseti(L, -2, 1);
	lua_setglobal(L, "arg");
	rc = luaL_dofile(L, argv[1]);
	if (rc)
		fprintf(stderr, "threadsfirst: %s\n", lua_tostring(L, -1));
	done = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return rc;
}
