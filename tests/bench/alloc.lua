-- Allocation-heavy Lua work for tests/bench/alloc.sh, JIT on: every round
-- makes 1000 small tables and 1000 new 64-byte strings, and the collector
-- frees them (every allocator call, allocations and frees alike, traps
-- into the kernel while a probe is on).  Waits for the file GO, works
-- ROUNDS rounds, prints "elapsed NS cpu S" (wall clock, CLOCK_MONOTONIC;
-- its own CPU time) and exits.
-- usage: luajit alloc.lua GO ROUNDS
local ffi = require("ffi")
local go, rounds = arg[1], tonumber(arg[2])
ffi.cdef[[
int usleep(unsigned int usec);
]]
local now = dofile((arg[0]:match("^(.*)/") or ".") .. "/monoclock.lua")
local fmt = string.format
local keep = {}
for i = 1, 2000 do keep[i] = false end
io.stdout:write("ready\n") io.stdout:flush()
while not io.open(go) do ffi.C.usleep(20000) end
local t0 = now()
for r = 1, rounds do
  for i = 1, 1000 do
    keep[i] = { r, i }
    keep[1000 + i] = fmt("%064d", r * 1000 + i)
  end
end
io.stdout:write(string.format("elapsed %d cpu %.3f\n", now() - t0, os.clock()))
