-- content_by_lua_file of t_offcpu_nginx: a handler that blocks its worker
-- (the classic OpenResty mistake: a blocking call where a cosocket or
-- ngx.sleep belongs).  slow_lookup waits 50 ms in poll(2) through the
-- FFI; the reply is the time it measured itself blocked, in ns (its wall
-- time less its CPU time), for the test to add up.
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
	local w0, c0 = clock(1), clock(3)
	ffi.C.poll(nil, 0, 50)
	return (clock(1) - w0) - (clock(3) - c0)
end

ngx.say(string.format("%d", slow_lookup()))
