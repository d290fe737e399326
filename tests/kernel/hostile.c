/*
 * A target whose stack is garbage, loaded into LuaJIT through the FFI:
 * hostile_spin() never returns, and keeps overwriting every word between
 * its own frame and the top of the stack -- its callers' frames, the
 * interpreter's C frame among them -- with what a walker would follow:
 * addresses inside LuaJIT's code (the VM included), addresses inside this
 * stack (loops, frames going down), and random words.  Whatever a sample
 * finds there, the module must stay within its per-sample budget.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

extern char **environ;

static uint64_t stack_end(void)
{
	char line[256];
	uint64_t lo, hi, end = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

void hostile_spin(void)
{
	uint64_t code = (uint64_t)dlsym(RTLD_DEFAULT, "lua_pcall");
	uint64_t lo = (uint64_t)__builtin_frame_address(0) + 64;
	uint64_t hi = stack_end();
	uint64_t seed = 0x9e3779b97f4a7c15ULL, r;
	volatile uint64_t *p;

	/* Up to the environment, which lies above main's frame: the frames in
	 * between are all garbage then, and the process keeps its argv, env
	 * and auxv. */
	if ((uint64_t)environ > lo && (uint64_t)environ < hi)
		hi = (uint64_t)environ & ~7ULL;
	else
		hi -= 65536;
	if (!code || hi <= lo) {
		fprintf(stderr, "hostile: no room (code %#lx, %#lx-%#lx)\n",
			code, lo, hi);
		return;
	}
	for (;;) {
		for (p = (volatile uint64_t *)lo; (uint64_t)p < hi; p++) {
			r = xorshift(&seed);
			switch (r & 3) {
			case 0:	/* somewhere in LuaJIT's code, 512 KiB around */
				*p = code - (1 << 18) + ((r >> 8) & ((1 << 19) - 1));
				break;
			case 1:	/* somewhere in this stack */
				*p = (lo + ((r >> 8) % (hi - lo))) & ~7ULL;
				break;
			case 2:	/* the next word up: a frame that never ends */
				*p = (uint64_t)(p + 1);
				break;
			default:
				*p = r;
			}
		}
	}
}
