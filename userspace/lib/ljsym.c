/*
 * ljsym: GCproto -> chunk/lines, ffid -> name.  See ljsym.h.
 */
#include "ljsym.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljlayout.h"

/*
 * Fast-function names in ffid order (ffid 0 is a Lua function, 1 a C
 * function, fast functions start at 2), from each tree's generated
 * lj_ffdef.h; "lib_name" is shown as "lib.name".
 * fftab 1: Debian luajit 2.1.0~beta3+git20220320
 * fftab 2: OpenResty luajit2 2.1-20230119
 * fftab 3: Tarantool 2.6 bundled LuaJIT
 */
static const char *const ff_deb[] = {
	"assert", "type", "next", "pairs", "ipairs_aux", "ipairs",
	"getmetatable", "setmetatable", "getfenv", "setfenv", "rawget",
	"rawset", "rawequal", "unpack", "select", "tonumber", "tostring",
	"error", "pcall", "xpcall", "loadfile", "load", "loadstring",
	"dofile", "gcinfo", "collectgarbage", "newproxy", "print",
	"coroutine.status", "coroutine.running", "coroutine.isyieldable",
	"coroutine.create", "coroutine.yield", "coroutine.resume",
	"coroutine.wrap_aux", "coroutine.wrap", "math.abs", "math.floor",
	"math.ceil", "math.sqrt", "math.log10", "math.exp", "math.sin",
	"math.cos", "math.tan", "math.asin", "math.acos", "math.atan",
	"math.sinh", "math.cosh", "math.tanh", "math.frexp", "math.modf",
	"math.log", "math.atan2", "math.pow", "math.fmod", "math.ldexp",
	"math.min", "math.max", "math.random", "math.randomseed",
	"bit.tobit", "bit.bnot", "bit.bswap", "bit.lshift", "bit.rshift",
	"bit.arshift", "bit.rol", "bit.ror", "bit.band", "bit.bor",
	"bit.bxor", "bit.tohex", "string.byte", "string.char", "string.sub",
	"string.rep", "string.reverse", "string.lower", "string.upper",
	"string.dump", "string.find", "string.match", "string.gmatch_aux",
	"string.gmatch", "string.gsub", "string.format", "table.maxn",
	"table.insert", "table.concat", "table.sort", "table.new",
	"table.clear", "io.method_close", "io.method_read",
	"io.method_write", "io.method_flush", "io.method_seek",
	"io.method_setvbuf", "io.method_lines", "io.method___gc",
	"io.method___tostring", "io.open", "io.popen", "io.tmpfile",
	"io.close", "io.read", "io.write", "io.flush", "io.input",
	"io.output", "io.lines", "io.type", "os.execute", "os.remove",
	"os.rename", "os.tmpname", "os.getenv", "os.exit", "os.clock",
	"os.date", "os.time", "os.difftime", "os.setlocale",
	"debug.getregistry", "debug.getmetatable", "debug.setmetatable",
	"debug.getfenv", "debug.setfenv", "debug.getinfo", "debug.getlocal",
	"debug.setlocal", "debug.getupvalue", "debug.setupvalue",
	"debug.upvalueid", "debug.upvaluejoin", "debug.sethook",
	"debug.gethook", "debug.debug", "debug.traceback", "jit.on",
	"jit.off", "jit.flush", "jit.status", "jit.security", "jit.attach",
	"jit.util_funcinfo", "jit.util_funcbc", "jit.util_funck",
	"jit.util_funcuvname", "jit.util_traceinfo", "jit.util_traceir",
	"jit.util_tracek", "jit.util_tracesnap", "jit.util_tracemc",
	"jit.util_traceexitstub", "jit.util_ircalladdr", "jit.opt_start",
	"jit.profile_start", "jit.profile_stop", "jit.profile_dumpstack",
	"ffi.meta.__index", "ffi.meta.__newindex", "ffi.meta.__eq",
	"ffi.meta.__len", "ffi.meta.__lt", "ffi.meta.__le",
	"ffi.meta.__concat", "ffi.meta.__call", "ffi.meta.__add",
	"ffi.meta.__sub", "ffi.meta.__mul", "ffi.meta.__div",
	"ffi.meta.__mod", "ffi.meta.__pow", "ffi.meta.__unm",
	"ffi.meta.__tostring", "ffi.meta.__pairs", "ffi.meta.__ipairs",
	"ffi.clib___index", "ffi.clib___newindex", "ffi.clib___gc",
	"ffi.callback_free", "ffi.callback_set", "ffi.cdef", "ffi.new",
	"ffi.cast", "ffi.typeof", "ffi.typeinfo", "ffi.istype", "ffi.sizeof",
	"ffi.alignof", "ffi.offsetof", "ffi.errno", "ffi.string", "ffi.copy",
	"ffi.fill", "ffi.abi", "ffi.metatype", "ffi.gc", "ffi.load",
	"buffer.method_free", "buffer.method_reset", "buffer.method_skip",
	"buffer.method_set", "buffer.method_put", "buffer.method_putf",
	"buffer.method_get", "buffer.method_putcdata",
	"buffer.method_reserve", "buffer.method_commit", "buffer.method_ref",
	"buffer.method_encode", "buffer.method_decode", "buffer.method___gc",
	"buffer.method___tostring", "buffer.method___len", "buffer.new",
	"buffer.encode", "buffer.decode",
};

static const char *const ff_or[] = {
	"assert", "type", "next", "pairs", "ipairs_aux", "ipairs",
	"getmetatable", "setmetatable", "getfenv", "setfenv", "rawget",
	"rawset", "rawequal", "unpack", "select", "tonumber", "tostring",
	"error", "pcall", "xpcall", "loadfile", "load", "loadstring",
	"dofile", "gcinfo", "collectgarbage", "newproxy", "print",
	"coroutine.status", "coroutine.running", "coroutine.isyieldable",
	"coroutine.create", "coroutine.yield", "coroutine.resume",
	"coroutine.wrap_aux", "coroutine.wrap", "thread.exdata",
	"thread.exdata2", "math.abs", "math.floor", "math.ceil", "math.sqrt",
	"math.log10", "math.exp", "math.sin", "math.cos", "math.tan",
	"math.asin", "math.acos", "math.atan", "math.sinh", "math.cosh",
	"math.tanh", "math.frexp", "math.modf", "math.log", "math.atan2",
	"math.pow", "math.fmod", "math.ldexp", "math.min", "math.max",
	"math.random", "math.randomseed", "bit.tobit", "bit.bnot",
	"bit.bswap", "bit.lshift", "bit.rshift", "bit.arshift", "bit.rol",
	"bit.ror", "bit.band", "bit.bor", "bit.bxor", "bit.tohex",
	"string.byte", "string.char", "string.sub", "string.rep",
	"string.reverse", "string.lower", "string.upper", "string.dump",
	"string.find", "string.match", "string.gmatch_aux", "string.gmatch",
	"string.gsub", "string.format", "table.maxn", "table.insert",
	"table.concat", "table.clone", "table.isarray", "table.nkeys",
	"table.isempty", "table.sort", "table.new", "table.clear",
	"io.method_close", "io.method_read", "io.method_write",
	"io.method_flush", "io.method_seek", "io.method_setvbuf",
	"io.method_lines", "io.method___gc", "io.method___tostring",
	"io.open", "io.popen", "io.tmpfile", "io.close", "io.read",
	"io.write", "io.flush", "io.input", "io.output", "io.lines",
	"io.type", "os.execute", "os.remove", "os.rename", "os.tmpname",
	"os.getenv", "os.exit", "os.clock", "os.date", "os.time",
	"os.difftime", "os.setlocale", "debug.getregistry",
	"debug.getmetatable", "debug.setmetatable", "debug.getfenv",
	"debug.setfenv", "debug.getinfo", "debug.getlocal", "debug.setlocal",
	"debug.getupvalue", "debug.setupvalue", "debug.upvalueid",
	"debug.upvaluejoin", "debug.sethook", "debug.gethook", "debug.debug",
	"debug.traceback", "jit.on", "jit.off", "jit.flush", "jit.status",
	"jit.security", "jit.attach", "jit.prngstate", "jit.util_funcinfo",
	"jit.util_funcbc", "jit.util_funck", "jit.util_funcuvname",
	"jit.util_traceinfo", "jit.util_traceir", "jit.util_tracek",
	"jit.util_tracesnap", "jit.util_tracemc", "jit.util_traceexitstub",
	"jit.util_ircalladdr", "jit.opt_start", "jit.profile_start",
	"jit.profile_stop", "jit.profile_dumpstack", "ffi.meta.__index",
	"ffi.meta.__newindex", "ffi.meta.__eq", "ffi.meta.__len",
	"ffi.meta.__lt", "ffi.meta.__le", "ffi.meta.__concat",
	"ffi.meta.__call", "ffi.meta.__add", "ffi.meta.__sub",
	"ffi.meta.__mul", "ffi.meta.__div", "ffi.meta.__mod",
	"ffi.meta.__pow", "ffi.meta.__unm", "ffi.meta.__tostring",
	"ffi.meta.__pairs", "ffi.meta.__ipairs", "ffi.clib___index",
	"ffi.clib___newindex", "ffi.clib___gc", "ffi.callback_free",
	"ffi.callback_set", "ffi.cdef", "ffi.new", "ffi.cast", "ffi.typeof",
	"ffi.typeinfo", "ffi.istype", "ffi.sizeof", "ffi.alignof",
	"ffi.offsetof", "ffi.errno", "ffi.string", "ffi.copy", "ffi.fill",
	"ffi.abi", "ffi.metatype", "ffi.gc", "ffi.load",
	"buffer.method_free", "buffer.method_reset", "buffer.method_skip",
	"buffer.method_set", "buffer.method_put", "buffer.method_putf",
	"buffer.method_get", "buffer.method_putcdata",
	"buffer.method_reserve", "buffer.method_commit", "buffer.method_ref",
	"buffer.method_encode", "buffer.method_decode", "buffer.method___gc",
	"buffer.method___tostring", "buffer.method___len", "buffer.new",
	"buffer.encode", "buffer.decode",
};

static const char *const ff_tnt[] = {
	"assert", "type", "next", "pairs", "ipairs_aux", "ipairs",
	"getmetatable", "setmetatable", "getfenv", "setfenv", "rawget",
	"rawset", "rawequal", "unpack", "select", "tonumber", "tostring",
	"error", "pcall", "xpcall", "loadfile", "load", "loadstring",
	"dofile", "gcinfo", "collectgarbage", "newproxy", "print",
	"coroutine.status", "coroutine.running", "coroutine.isyieldable",
	"coroutine.create", "coroutine.yield", "coroutine.resume",
	"coroutine.wrap_aux", "coroutine.wrap", "math.abs", "math.floor",
	"math.ceil", "math.sqrt", "math.log10", "math.exp", "math.sin",
	"math.cos", "math.tan", "math.asin", "math.acos", "math.atan",
	"math.sinh", "math.cosh", "math.tanh", "math.frexp", "math.modf",
	"math.log", "math.atan2", "math.pow", "math.fmod", "math.ldexp",
	"math.min", "math.max", "math.random", "math.randomseed",
	"bit.tobit", "bit.bnot", "bit.bswap", "bit.lshift", "bit.rshift",
	"bit.arshift", "bit.rol", "bit.ror", "bit.band", "bit.bor",
	"bit.bxor", "bit.tohex", "string.byte", "string.char", "string.sub",
	"string.rep", "string.reverse", "string.lower", "string.upper",
	"string.dump", "string.find", "string.match", "string.gmatch_aux",
	"string.gmatch", "string.gsub", "string.format", "table.maxn",
	"table.insert", "table.concat", "table.sort", "table.new",
	"table.clear", "io.method_close", "io.method_read",
	"io.method_write", "io.method_flush", "io.method_seek",
	"io.method_setvbuf", "io.method_lines", "io.method___gc",
	"io.method___tostring", "io.open", "io.popen", "io.tmpfile",
	"io.close", "io.read", "io.write", "io.flush", "io.input",
	"io.output", "io.lines", "io.type", "os.execute", "os.remove",
	"os.rename", "os.tmpname", "os.getenv", "os.exit", "os.clock",
	"os.date", "os.time", "os.difftime", "os.setlocale",
	"debug.getregistry", "debug.getmetatable", "debug.setmetatable",
	"debug.getfenv", "debug.setfenv", "debug.getinfo", "debug.getlocal",
	"debug.setlocal", "debug.getupvalue", "debug.setupvalue",
	"debug.upvalueid", "debug.upvaluejoin", "debug.sethook",
	"debug.gethook", "debug.debug", "debug.traceback", "jit.on",
	"jit.off", "jit.flush", "jit.status", "jit.attach",
	"jit.util_funcinfo", "jit.util_funcbc", "jit.util_funck",
	"jit.util_funcuvname", "jit.util_traceinfo", "jit.util_traceir",
	"jit.util_tracek", "jit.util_tracesnap", "jit.util_tracemc",
	"jit.util_traceexitstub", "jit.util_ircalladdr", "jit.opt_start",
	"jit.profile_start", "jit.profile_stop", "jit.profile_dumpstack",
	"ffi.meta.__index", "ffi.meta.__newindex", "ffi.meta.__eq",
	"ffi.meta.__len", "ffi.meta.__lt", "ffi.meta.__le",
	"ffi.meta.__concat", "ffi.meta.__call", "ffi.meta.__add",
	"ffi.meta.__sub", "ffi.meta.__mul", "ffi.meta.__div",
	"ffi.meta.__mod", "ffi.meta.__pow", "ffi.meta.__unm",
	"ffi.meta.__tostring", "ffi.meta.__pairs", "ffi.meta.__ipairs",
	"ffi.clib___index", "ffi.clib___newindex", "ffi.clib___gc",
	"ffi.callback_free", "ffi.callback_set", "ffi.cdef", "ffi.new",
	"ffi.cast", "ffi.typeof", "ffi.typeinfo", "ffi.istype", "ffi.sizeof",
	"ffi.alignof", "ffi.offsetof", "ffi.errno", "ffi.string", "ffi.copy",
	"ffi.fill", "ffi.abi", "ffi.metatype", "ffi.gc", "ffi.load",
};

static const struct {
	const char *const *names;
	unsigned int n;
} fftabs[] = {
	{ NULL, 0 },
	{ ff_deb, sizeof(ff_deb) / sizeof(ff_deb[0]) },
	{ ff_or, sizeof(ff_or) / sizeof(ff_or[0]) },
	{ ff_tnt, sizeof(ff_tnt) / sizeof(ff_tnt[0]) },
};

#define CACHE_BITS 12

struct ljs_ctx {
	pid_t pid;
	struct luw_lj_layout ly;
	int fftab;
	struct ljs_proto *slots;	/* open addressing, addr 0 = empty */
	unsigned int used;
};

struct ljs_ctx *ljs_new(pid_t pid, const struct luw_lj_layout *ly, int fftab)
{
	struct ljs_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->slots = calloc(1u << CACHE_BITS, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->pid = pid;
	c->ly = *ly;
	c->fftab = fftab >= 0 && fftab < (int)(sizeof(fftabs) / sizeof(fftabs[0])) ?
		   fftab : 0;
	return c;
}

void ljs_free(struct ljs_ctx *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c);
}

static int rd(struct ljs_ctx *c, uint64_t a, void *d, uint32_t n)
{
	return ljl_read_mem(&c->pid, a, d, n);
}

static int rd_ref(struct ljs_ctx *c, uint64_t a, uint64_t *v)
{
	uint32_t v32;

	if (c->ly.flags & LUW_LJ_F_GC64)
		return rd(c, a, v, 8);
	if (rd(c, a, &v32, 4))
		return -1;
	*v = v32;
	return 0;
}

static int load_proto(struct ljs_ctx *c, uint64_t pt, struct ljs_proto *p)
{
	const struct luw_lj_layout *ly = &c->ly;
	uint64_t name = 0;
	uint32_t len = 0;
	uint8_t gct = 0;
	char tmp[sizeof(p->chunk)];

	memset(p, 0, sizeof(*p));
	if (rd(c, pt + ly->gc_gct, &gct, 1) || gct != ly->gct_proto)
		return -1;
	if (rd(c, pt + ly->pt_sizebc, &p->sizebc, 4) ||
	    rd(c, pt + ly->pt_firstline, &p->firstline, 4) ||
	    rd(c, pt + ly->pt_numline, &p->numline, 4) ||
	    rd_ref(c, pt + ly->pt_lineinfo, &p->lineinfo) ||
	    rd_ref(c, pt + ly->pt_chunkname, &name))
		return -1;
	if (!name || rd(c, name + ly->gc_gct, &gct, 1) || gct != ly->gct_str ||
	    rd(c, name + ly->str_len, &len, 4))
		return -1;
	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	if (len && rd(c, name + ly->str_size, tmp, len))
		return -1;
	tmp[len] = 0;
	/* As LuaJIT's tracebacks show it: "@file" is a file, "=x" is x. */
	if (tmp[0] == '@' || tmp[0] == '=')
		snprintf(p->chunk, sizeof(p->chunk), "%s", tmp + 1);
	else
		snprintf(p->chunk, sizeof(p->chunk), "[string \"%.*s\"]",
			 (int)strcspn(tmp, "\n") > 60 ? 60 : (int)strcspn(tmp, "\n"),
			 tmp);
	p->addr = pt;
	return 0;
}

int ljs_proto(struct ljs_ctx *c, uint64_t pt, const struct ljs_proto **out)
{
	unsigned int mask = (1u << CACHE_BITS) - 1;
	unsigned int h = (unsigned int)((pt >> 3) * 2654435761u) & mask, i;
	struct ljs_proto tmp;

	if (!pt)
		return -1;
	for (i = 0; i <= mask; i++) {
		struct ljs_proto *s = &c->slots[(h + i) & mask];

		if (s->addr == pt) {
			*out = s;
			return 0;
		}
		if (!s->addr)
			break;
	}
	if (load_proto(c, pt, &tmp))
		return -1;
	if (c->used >= mask / 2) {
		/* Full enough: start over rather than probe forever. */
		memset(c->slots, 0, (mask + 1) * sizeof(*c->slots));
		c->used = 0;
		i = 0;
	}
	for (;; i++) {
		struct ljs_proto *s = &c->slots[(h + i) & mask];

		if (!s->addr) {
			*s = tmp;
			c->used++;
			*out = s;
			return 0;
		}
	}
}

int32_t ljs_line(struct ljs_ctx *c, uint64_t pt, uint64_t pc, int after)
{
	const struct ljs_proto *p;
	uint64_t bc = pt + c->ly.pt_size, pos;

	if (ljs_proto(c, pt, &p) || !pc || pc < bc || (pc - bc) % 4)
		return -1;
	pos = (pc - bc) / 4;
	if (after) {
		if (!pos)
			return -1;
		pos--;
	}
	/* lj_debug_line: position 0 is the function header. */
	if (pos > p->sizebc || !p->lineinfo)
		return -1;
	if (pos == p->sizebc)
		return p->firstline + p->numline;
	if (pos == 0)
		return p->firstline;
	pos--;
	if (p->numline < 256) {
		uint8_t d;

		return rd(c, p->lineinfo + pos, &d, 1) ? -1 : p->firstline + d;
	} else if (p->numline < 65536) {
		uint16_t d;

		return rd(c, p->lineinfo + 2 * pos, &d, 2) ? -1 : p->firstline + d;
	} else {
		uint32_t d;

		return rd(c, p->lineinfo + 4 * pos, &d, 4) ? -1 :
		       p->firstline + (int32_t)d;
	}
}

const char *ljs_ffname(const struct ljs_ctx *c, unsigned int ffid)
{
	if (ffid < 2 || !c->fftab || ffid - 2 >= fftabs[c->fftab].n)
		return NULL;
	return fftabs[c->fftab].names[ffid - 2];
}

static void lineno(char *b, size_t n, int32_t l)
{
	if (l >= 0)
		snprintf(b, n, "%d", l);
	else
		snprintf(b, n, "?");
}

char *ljs_frame_str(struct ljs_ctx *c, const struct luw_lj_frame *f, char *buf,
		    size_t n)
{
	const struct ljs_proto *p = NULL;
	const char *ff;
	char ln[16];

	switch (f->kind) {
	case LUW_LJF_LUA:
		if (ljs_proto(c, f->proto, &p)) {
			snprintf(buf, n, "lua:?0x%llx", (unsigned long long)f->proto);
			break;
		}
		lineno(ln, sizeof(ln), ljs_line(c, f->proto, f->pc,
						 !(f->flags & LUW_LJF_PC_TRACE)));
		snprintf(buf, n, "lua:%s:%d:%s", p->chunk, p->firstline, ln);
		break;
	case LUW_LJF_FF:
		ff = ljs_ffname(c, f->ffid);
		if (ff)
			snprintf(buf, n, "ff:%s", ff);
		else
			snprintf(buf, n, "ff:#%u", f->ffid);
		break;
	case LUW_LJF_C:
		snprintf(buf, n, "c:0x%llx", (unsigned long long)f->pc);
		break;
	case LUW_LJF_TRACE:
		if (f->proto && !ljs_proto(c, f->proto, &p)) {
			lineno(ln, sizeof(ln), ljs_line(c, f->proto, f->pc, 0));
			snprintf(buf, n, "trace:%u:%s:%s", f->trace, p->chunk, ln);
		} else {
			snprintf(buf, n, "trace:%u", f->trace);
		}
		break;
	default:
		snprintf(buf, n, "?");
	}
	return buf;
}
