-- CLOCK_MONOTONIC in ns through the FFI, for the benchmarks' Lua
-- workloads: local now = dofile(DIR .. "/monoclock.lua")
local ffi = require("ffi")
ffi.cdef[[
struct luw_ts { long sec, nsec; };
int clock_gettime(int clk, struct luw_ts *ts);
]]
local ts = ffi.new("struct luw_ts")
return function()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.sec) * 1e9 + tonumber(ts.nsec)
end
