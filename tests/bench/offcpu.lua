-- Switch-heavy Lua work for tests/bench/offcpu.sh: every round blocks in
-- a poll(2) of 1 ms (a switch out, and one in) and computes a little.
-- Waits for the file GO, works ROUNDS rounds, prints "elapsed NS" (wall
-- clock, CLOCK_MONOTONIC) and "cpu S" (its own CPU time) and exits.
-- usage: luajit offcpu.lua GO ROUNDS
local ffi = require("ffi")
local go, rounds = arg[1], tonumber(arg[2])
ffi.cdef[[
int poll(void *fds, unsigned long n, int timeout);
int usleep(unsigned int usec);
]]
local now = dofile((arg[0]:match("^(.*)/") or ".") .. "/monoclock.lua")
local function work(n)
  local x = 0
  for i = 1, n do x = (x * 31 + i) % 1000003 end
  return x
end
io.stdout:write("ready\n") io.stdout:flush()
while not io.open(go) do ffi.C.usleep(20000) end
local t0 = now()
for _ = 1, rounds do
  ffi.C.poll(nil, 0, 1)
  work(2000)
end
io.stdout:write(string.format("elapsed %d cpu %.3f\n", now() - t0, os.clock()))
