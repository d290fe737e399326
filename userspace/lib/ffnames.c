#include "ffnames.h"

#include <stddef.h>

static const char *const ffnames[] = {
	"Lua", "C", "assert", "type", "next", "pairs", "ipairs_aux",
	"ipairs", "getmetatable", "setmetatable", "getfenv", "setfenv",
	"rawget", "rawset", "rawequal", "unpack", "select", "tonumber",
	"tostring", "error", "pcall", "xpcall", "loadfile", "load",
	"loadstring", "dofile", "gcinfo", "collectgarbage", "newproxy",
	"print", "coroutine.status", "coroutine.running",
	"coroutine.isyieldable", "coroutine.create", "coroutine.yield",
	"coroutine.resume", "coroutine.wrap_aux", "coroutine.wrap",
	"math.abs", "math.floor", "math.ceil", "math.sqrt", "math.log10",
	"math.exp", "math.sin", "math.cos", "math.tan", "math.asin",
	"math.acos", "math.atan", "math.sinh", "math.cosh", "math.tanh",
	"math.frexp", "math.modf", "math.log", "math.atan2", "math.pow",
	"math.fmod", "math.ldexp", "math.min", "math.max", "math.random",
	"math.randomseed", "bit.tobit", "bit.bnot", "bit.bswap",
	"bit.lshift", "bit.rshift", "bit.arshift", "bit.rol", "bit.ror",
	"bit.band", "bit.bor", "bit.bxor", "bit.tohex", "string.byte",
	"string.char", "string.sub", "string.rep", "string.reverse",
	"string.lower", "string.upper", "string.dump", "string.find",
	"string.match", "string.gmatch_aux", "string.gmatch", "string.gsub",
	"string.format", "table.maxn", "table.insert", "table.concat",
	"table.sort", "table.new", "table.clear", "io.method.close",
	"io.method.read", "io.method.write", "io.method.flush",
	"io.method.seek", "io.method.setvbuf", "io.method.lines",
	"io.method.__gc", "io.method.__tostring", "io.open", "io.popen",
	"io.tmpfile", "io.close", "io.read", "io.write", "io.flush",
	"io.input", "io.output", "io.lines", "io.type", "os.execute",
	"os.remove", "os.rename", "os.tmpname", "os.getenv", "os.exit",
	"os.clock", "os.date", "os.time", "os.difftime", "os.setlocale",
	"debug.getregistry", "debug.getmetatable", "debug.setmetatable",
	"debug.getfenv", "debug.setfenv", "debug.getinfo", "debug.getlocal",
	"debug.setlocal", "debug.getupvalue", "debug.setupvalue",
	"debug.upvalueid", "debug.upvaluejoin", "debug.sethook",
	"debug.gethook", "debug.debug", "debug.traceback", "jit.on",
	"jit.off", "jit.flush", "jit.status", "jit.attach",
	"jit.util.funcinfo", "jit.util.funcbc", "jit.util.funck",
	"jit.util.funcuvname", "jit.util.traceinfo", "jit.util.traceir",
	"jit.util.tracek", "jit.util.tracesnap", "jit.util.tracemc",
	"jit.util.traceexitstub", "jit.util.ircalladdr", "jit.opt.start",
	"jit.profile.start", "jit.profile.stop", "jit.profile.dumpstack",
	"ffi.meta.__index", "ffi.meta.__newindex", "ffi.meta.__eq",
	"ffi.meta.__len", "ffi.meta.__lt", "ffi.meta.__le",
	"ffi.meta.__concat", "ffi.meta.__call", "ffi.meta.__add",
	"ffi.meta.__sub", "ffi.meta.__mul", "ffi.meta.__div",
	"ffi.meta.__mod", "ffi.meta.__pow", "ffi.meta.__unm",
	"ffi.meta.__tostring", "ffi.meta.__pairs", "ffi.meta.__ipairs",
	"ffi.clib.__index", "ffi.clib.__newindex", "ffi.clib.__gc",
	"ffi.callback.free", "ffi.callback.set", "ffi.cdef", "ffi.new",
	"ffi.cast", "ffi.typeof", "ffi.typeinfo", "ffi.istype", "ffi.sizeof",
	"ffi.alignof", "ffi.offsetof", "ffi.errno", "ffi.string", "ffi.copy",
	"ffi.fill", "ffi.abi", "ffi.metatype", "ffi.gc", "ffi.load",
	"misc.getmetrics", "misc.sysprof.start", "misc.sysprof.stop",
	"misc.sysprof.report", "misc.memprof.start", "misc.memprof.stop",
};

const char *luw_ffname(uint64_t ffid)
{
	return ffid < sizeof(ffnames) / sizeof(ffnames[0]) ? ffnames[ffid]
							   : NULL;
}
