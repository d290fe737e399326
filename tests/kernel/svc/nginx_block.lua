-- content_by_lua_file of t_offcpu_nginx: a handler that blocks its worker
-- (the classic OpenResty mistake: a blocking call where a cosocket or
-- ngx.sleep belongs).  slow_lookup waits 50 ms in poll(2) through the
-- FFI; the reply is the wall time of its poll call in ns, on
-- CLOCK_MONOTONIC (the clock the module stamps its records with), for
-- the test to add up: the time the worker was off the CPU in that call
-- lies within it.
local ffi = require("ffi")
-- Every request runs this chunk: the declarations are made once.
pcall(ffi.cdef, [[
int poll(void *fds, unsigned long n, int timeout);
struct luw_bts { long sec, nsec; };
int clock_gettime(int clk, struct luw_bts *ts);
]])
local ts = ffi.new("struct luw_bts")

local function clock(id)
	ffi.C.clock_gettime(id, ts)
	return tonumber(ts.sec) * 1e9 + tonumber(ts.nsec)
end

local function slow_lookup()
	local w0 = clock(1)
	ffi.C.poll(nil, 0, 50)
	return clock(1) - w0
end

ngx.say(string.format("%d", slow_lookup()))
