#include "luajit/ffnames.h"

#include <stdio.h>
#include <string.h>
#include <threads.h>

#define S LUW_FF_STOCK
#define O LUW_FF_OPENRESTY
#define T LUW_FF_TARANTOOL
#define L52 LUW_FF_LUA52
#define JO 0x100u	/* only with the JIT: gone with LUAJIT_DISABLE_JIT */

/* See ffnames.h.  Order matters: it is the ffid order of each family. */
static const struct {
	const char *name;
	unsigned int fam;
} list[] = {
	{ "assert", S|O|T },
	{ "type", S|O|T },
	{ "next", S|O|T },
	{ "pairs", S|O|T },
	{ "ipairs_aux", S|O|T },
	{ "ipairs", S|O|T },
	{ "getmetatable", S|O|T },
	{ "setmetatable", S|O|T },
	{ "getfenv", S|O|T },
	{ "setfenv", S|O|T },
	{ "rawget", S|O|T },
	{ "rawset", S|O|T },
	{ "rawequal", S|O|T },
	{ "rawlen", S|O|T|L52 },
	{ "unpack", S|O|T },
	{ "select", S|O|T },
	{ "tonumber", S|O|T },
	{ "tostring", S|O|T },
	{ "error", S|O|T },
	{ "pcall", S|O|T },
	{ "xpcall", S|O|T },
	{ "loadfile", S|O|T },
	{ "load", S|O|T },
	{ "loadstring", S|O|T },
	{ "dofile", S|O|T },
	{ "gcinfo", S|O|T },
	{ "collectgarbage", S|O|T },
	{ "newproxy", S|O|T },
	{ "print", S|O|T },
	{ "coroutine.status", S|O|T },
	{ "coroutine.running", S|O|T },
	{ "coroutine.isyieldable", S|O|T },
	{ "coroutine.create", S|O|T },
	{ "coroutine.yield", S|O|T },
	{ "coroutine.resume", S|O|T },
	{ "coroutine.wrap_aux", S|O|T },
	{ "coroutine.wrap", S|O|T },
	{ "thread.exdata", O },
	{ "thread.exdata2", O },
	{ "math.abs", S|O|T },
	{ "math.floor", S|O|T },
	{ "math.ceil", S|O|T },
	{ "math.sqrt", S|O|T },
	{ "math.log10", S|O|T },
	{ "math.exp", S|O|T },
	{ "math.sin", S|O|T },
	{ "math.cos", S|O|T },
	{ "math.tan", S|O|T },
	{ "math.asin", S|O|T },
	{ "math.acos", S|O|T },
	{ "math.atan", S|O|T },
	{ "math.sinh", S|O|T },
	{ "math.cosh", S|O|T },
	{ "math.tanh", S|O|T },
	{ "math.frexp", S|O|T },
	{ "math.modf", S|O|T },
	{ "math.log", S|O|T },
	{ "math.atan2", S|O|T },
	{ "math.pow", S|O|T },
	{ "math.fmod", S|O|T },
	{ "math.ldexp", S|O|T },
	{ "math.min", S|O|T },
	{ "math.max", S|O|T },
	{ "math.random", S|O|T },
	{ "math.randomseed", S|O|T },
	{ "bit.tobit", S|O|T },
	{ "bit.bnot", S|O|T },
	{ "bit.bswap", S|O|T },
	{ "bit.lshift", S|O|T },
	{ "bit.rshift", S|O|T },
	{ "bit.arshift", S|O|T },
	{ "bit.rol", S|O|T },
	{ "bit.ror", S|O|T },
	{ "bit.band", S|O|T },
	{ "bit.bor", S|O|T },
	{ "bit.bxor", S|O|T },
	{ "bit.tohex", S|O|T },
	{ "string.byte", S|O|T },
	{ "string.char", S|O|T },
	{ "string.sub", S|O|T },
	{ "string.rep", S|O|T },
	{ "string.reverse", S|O|T },
	{ "string.lower", S|O|T },
	{ "string.upper", S|O|T },
	{ "string.dump", S|O|T },
	{ "string.find", S|O|T },
	{ "string.match", S|O|T },
	{ "string.gmatch_aux", S|O|T },
	{ "string.gmatch", S|O|T },
	{ "string.gsub", S|O|T },
	{ "string.format", S|O|T },
	{ "table.maxn", S|O|T },
	{ "table.insert", S|O|T },
	{ "table.concat", S|O|T },
	{ "table.clone", O },
	{ "table.isarray", O },
	{ "table.nkeys", O },
	{ "table.isempty", O },
	{ "table.sort", S|O|T },
	{ "table.pack", S|O|T|L52 },
	{ "table.new", S|O|T },
	{ "table.clear", S|O|T },
	{ "io.method.close", S|O|T },
	{ "io.method.read", S|O|T },
	{ "io.method.write", S|O|T },
	{ "io.method.flush", S|O|T },
	{ "io.method.seek", S|O|T },
	{ "io.method.setvbuf", S|O|T },
	{ "io.method.lines", S|O|T },
	{ "io.method.__gc", S|O|T },
	{ "io.method.__tostring", S|O|T },
	{ "io.open", S|O|T },
	{ "io.popen", S|O|T },
	{ "io.tmpfile", S|O|T },
	{ "io.close", S|O|T },
	{ "io.read", S|O|T },
	{ "io.write", S|O|T },
	{ "io.flush", S|O|T },
	{ "io.input", S|O|T },
	{ "io.output", S|O|T },
	{ "io.lines", S|O|T },
	{ "io.type", S|O|T },
	{ "os.execute", S|O|T },
	{ "os.remove", S|O|T },
	{ "os.rename", S|O|T },
	{ "os.tmpname", S|O|T },
	{ "os.getenv", S|O|T },
	{ "os.exit", S|O|T },
	{ "os.clock", S|O|T },
	{ "os.date", S|O|T },
	{ "os.time", S|O|T },
	{ "os.difftime", S|O|T },
	{ "os.setlocale", S|O|T },
	{ "debug.getregistry", S|O|T },
	{ "debug.getmetatable", S|O|T },
	{ "debug.setmetatable", S|O|T },
	{ "debug.getfenv", S|O|T },
	{ "debug.setfenv", S|O|T },
	{ "debug.getinfo", S|O|T },
	{ "debug.getlocal", S|O|T },
	{ "debug.setlocal", S|O|T },
	{ "debug.getupvalue", S|O|T },
	{ "debug.setupvalue", S|O|T },
	{ "debug.upvalueid", S|O|T },
	{ "debug.upvaluejoin", S|O|T },
	{ "debug.getuservalue", S|O|T|L52 },
	{ "debug.setuservalue", S|O|T|L52 },
	{ "debug.sethook", S|O|T },
	{ "debug.gethook", S|O|T },
	{ "debug.debug", S|O|T },
	{ "debug.traceback", S|O|T },
	{ "jit.on", S|O|T },
	{ "jit.off", S|O|T },
	{ "jit.flush", S|O|T },
	{ "jit.status", S|O|T },
	{ "jit.security", S|O },
	{ "jit.attach", S|O|T },
	{ "jit.prngstate", O },
	{ "jit.util.funcinfo", S|O|T },
	{ "jit.util.funcbc", S|O|T },
	{ "jit.util.funck", S|O|T },
	{ "jit.util.funcuvname", S|O|T },
	{ "jit.util.traceinfo", S|O|T|JO },
	{ "jit.util.traceir", S|O|T|JO },
	{ "jit.util.tracek", S|O|T|JO },
	{ "jit.util.tracesnap", S|O|T|JO },
	{ "jit.util.tracemc", S|O|T|JO },
	{ "jit.util.traceexitstub", S|O|T|JO },
	{ "jit.util.ircalladdr", S|O|T|JO },
	{ "jit.opt.start", S|O|T|JO },
	{ "jit.profile.start", S|O|T },
	{ "jit.profile.stop", S|O|T },
	{ "jit.profile.dumpstack", S|O|T },
	{ "ffi.meta.__index", S|O|T },
	{ "ffi.meta.__newindex", S|O|T },
	{ "ffi.meta.__eq", S|O|T },
	{ "ffi.meta.__len", S|O|T },
	{ "ffi.meta.__lt", S|O|T },
	{ "ffi.meta.__le", S|O|T },
	{ "ffi.meta.__concat", S|O|T },
	{ "ffi.meta.__call", S|O|T },
	{ "ffi.meta.__add", S|O|T },
	{ "ffi.meta.__sub", S|O|T },
	{ "ffi.meta.__mul", S|O|T },
	{ "ffi.meta.__div", S|O|T },
	{ "ffi.meta.__mod", S|O|T },
	{ "ffi.meta.__pow", S|O|T },
	{ "ffi.meta.__unm", S|O|T },
	{ "ffi.meta.__tostring", S|O|T },
	{ "ffi.meta.__pairs", S|O|T },
	{ "ffi.meta.__ipairs", S|O|T },
	{ "ffi.clib.__index", S|O|T },
	{ "ffi.clib.__newindex", S|O|T },
	{ "ffi.clib.__gc", S|O|T },
	{ "ffi.callback.free", S|O|T },
	{ "ffi.callback.set", S|O|T },
	{ "ffi.cdef", S|O|T },
	{ "ffi.new", S|O|T },
	{ "ffi.cast", S|O|T },
	{ "ffi.typeof", S|O|T },
	{ "ffi.typeinfo", S|O|T },
	{ "ffi.istype", S|O|T },
	{ "ffi.sizeof", S|O|T },
	{ "ffi.alignof", S|O|T },
	{ "ffi.offsetof", S|O|T },
	{ "ffi.errno", S|O|T },
	{ "ffi.string", S|O|T },
	{ "ffi.copy", S|O|T },
	{ "ffi.fill", S|O|T },
	{ "ffi.abi", S|O|T },
	{ "ffi.metatype", S|O|T },
	{ "ffi.gc", S|O|T },
	{ "ffi.load", S|O|T },
	{ "misc.getmetrics", T },
	{ "misc.sysprof.start", T },
	{ "misc.sysprof.stop", T },
	{ "misc.sysprof.report", T },
	{ "misc.memprof.start", T },
	{ "misc.memprof.stop", T },
	{ "buffer.method.free", S|O },
	{ "buffer.method.reset", S|O },
	{ "buffer.method.skip", S|O },
	{ "buffer.method.set", S|O },
	{ "buffer.method.put", S|O },
	{ "buffer.method.putf", S|O },
	{ "buffer.method.get", S|O },
	{ "buffer.method.putcdata", S|O },
	{ "buffer.method.reserve", S|O },
	{ "buffer.method.commit", S|O },
	{ "buffer.method.ref", S|O },
	{ "buffer.method.encode", S|O },
	{ "buffer.method.decode", S|O },
	{ "buffer.method.__gc", S|O },
	{ "buffer.method.__tostring", S|O },
	{ "buffer.method.__len", S|O },
	{ "buffer.new", S|O },
	{ "buffer.encode", S|O },
	{ "buffer.decode", S|O },
};

#define NLIST (sizeof(list) / sizeof(list[0]))

void luw_ffnames_init(struct luw_ffnames *f, const char *src)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->src, sizeof(f->src), "%s", src ? src : "");
}

int luw_ffnames_set(struct luw_ffnames *f, unsigned int ffid,
		    const char *name)
{
	size_t l = strlen(name) + 1;

	if (ffid >= LUW_FF_MAX || f->used + l > sizeof(f->pool))
		return -1;
	memcpy(f->pool + f->used, name, l);
	if (!f->off[ffid])
		f->count++;
	f->off[ffid] = (uint16_t)(f->used + 1);
	f->used += (uint32_t)l;
	return 0;
}

const char *luw_ffnames_get(const struct luw_ffnames *f, unsigned int ffid)
{
	if (!f || ffid >= LUW_FF_MAX || !f->off[ffid])
		return NULL;
	return f->pool + f->off[ffid] - 1;
}

static int in_family(unsigned int fam, unsigned int want)
{
	if (!(fam & want & (S | O | T)))
		return 0;
	if ((fam & JO) && (want & LUW_FF_NOJIT))
		return 0;
	return !(fam & L52) || (want & L52);
}

void luw_ffnames_family(struct luw_ffnames *f, unsigned int family,
			const char *src)
{
	unsigned int id = 2;
	size_t i;

	luw_ffnames_init(f, src);
	for (i = 0; i < NLIST && id < LUW_FF_MAX; i++)
		if (in_family(list[i].fam, family))
			luw_ffnames_set(f, id++, list[i].name);
}

/* a == b with '.' in b matching '_' in a. */
static int same_underscored(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != (b[i] == '.' ? '_' : b[i]))
			return 0;
	return 1;
}

int luw_ffname_from_enum(const char *en, char *out, size_t n)
{
	size_t i, best = 0, l;
	const char *bestlib = NULL;

	if (strncmp(en, "FF_", 3) || !en[3])
		return -1;
	en += 3;
	l = strlen(en);
	for (i = 0; i < NLIST; i++) {
		const char *nm = list[i].name, *dot = strrchr(nm, '.');
		size_t ll;

		if (strlen(nm) == l && same_underscored(en, nm, l)) {
			snprintf(out, n, "%s", nm);
			return 0;
		}
		/* Library prefix "lib" or "lib.sub" of this entry. */
		if (!dot)
			continue;
		ll = (size_t)(dot - nm);
		if (ll > best && ll + 1 < l && en[ll] == '_' &&
		    same_underscored(en, nm, ll)) {
			best = ll;
			bestlib = nm;
		}
	}
	if (bestlib)
		snprintf(out, n, "%.*s.%s", (int)best, bestlib, en + best + 1);
	else
		snprintf(out, n, "%s", en);
	return 0;
}

static int list_pos(const char *name)
{
	size_t i;

	for (i = 0; i < NLIST; i++)
		if (!strcmp(list[i].name, name))
			return (int)i;
	return -1;
}

int luw_ffnames_listed(const char *name)
{
	return list_pos(name) >= 0;
}

static int named_in(const struct luw_ffnames *f, const char *name)
{
	unsigned int id;

	for (id = 2; id < LUW_FF_MAX; id++)
		if (f->off[id] && !strcmp(f->pool + f->off[id] - 1, name))
			return 1;
	return 0;
}

unsigned int luw_ffnames_fill_gaps(struct luw_ffnames *f)
{
	static const unsigned int fams[] = {
		0, S, O, T, S | L52, O | L52, T | L52,
		S | LUW_FF_NOJIT, O | LUW_FF_NOJIT, T | LUW_FF_NOJIT,
		S | L52 | LUW_FF_NOJIT, O | L52 | LUW_FF_NOJIT,
		T | L52 | LUW_FF_NOJIT,
	};
	int a = 1, pa = -1, b, pb;	/* ffid 1 (C) sits before the list */
	unsigned int done = 0;

	for (b = 2; b < LUW_FF_MAX; b++) {
		const char *nm = luw_ffnames_get(f, (unsigned int)b);
		int pick[LUW_FF_MAX], cand[LUW_FF_MAX], npick = -1, ok = 1;
		size_t k;

		if (!nm || (pb = list_pos(nm)) < 0)
			continue;
		for (k = (size_t)a + 1; k < (size_t)b; k++)
			if (f->off[k])
				ok = 0;	/* a name the list lacks: no gap */
		if (ok && b - a > 1 && pb > pa) {
			for (k = 0; k < sizeof(fams) / sizeof(fams[0]) && ok; k++) {
				int i, nc = 0;

				for (i = pa + 1; i < pb && nc < LUW_FF_MAX; i++) {
					if (fams[k] && !in_family(list[i].fam, fams[k]))
						continue;
					if (named_in(f, list[i].name))
						continue;
					cand[nc++] = i;
				}
				if (nc != b - a - 1)
					continue;
				if (npick < 0) {
					memcpy(pick, cand, sizeof(int) * (size_t)nc);
					npick = nc;
				} else if (memcmp(pick, cand, sizeof(int) * (size_t)nc)) {
					ok = 0;	/* two families disagree */
				}
			}
			if (ok && npick > 0) {
				int i;

				for (i = 0; i < npick; i++)
					luw_ffnames_set(f, (unsigned int)(a + 1 + i),
							list[pick[i]].name);
				done += (unsigned int)npick;
			}
		}
		a = b;
		pa = pb;
	}
	return done;
}

static struct luw_ffnames tnt;
static once_flag tnt_once = ONCE_FLAG_INIT;

static void tnt_init(void)
{
	luw_ffnames_family(&tnt, LUW_FF_TARANTOOL, "Tarantool");
}

const char *luw_ffname(uint64_t ffid)
{
	if (ffid == 0)
		return "Lua";
	if (ffid == 1)
		return "C";
	call_once(&tnt_once, tnt_init);
	return ffid < LUW_FF_MAX ? luw_ffnames_get(&tnt, (unsigned int)ffid) :
				   NULL;
}
