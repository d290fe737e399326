-- A fixed amount of Lua work for tests/bench/overhead.sh, JIT off so that
-- every sample is in the interpreter: a recursion, and table.sort with a
-- Lua comparator (the sort's C code calls back into Lua: both walks).
-- Waits for the file GO, works ROUNDS rounds, prints "elapsed NS" (wall
-- clock, CLOCK_MONOTONIC) and "cpu S" (its own CPU time) and exits.
-- usage: luajit overhead.lua GO ROUNDS
local ffi = require("ffi")
local jit = require("jit")
local go, rounds = arg[1], tonumber(arg[2])
ffi.cdef[[
int usleep(unsigned int usec);
]]
jit.off() jit.flush()
local now = dofile((arg[0]:match("^(.*)/") or ".") .. "/monoclock.lua")
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
local function later(a, b) return a > b end
local t = {}
io.stdout:write("ready\n") io.stdout:flush()
while not io.open(go) do ffi.C.usleep(20000) end
local t0 = now()
for _ = 1, rounds do
  fib(20)
  for i = 1, 3000 do t[i] = (i * 7919) % 3001 end
  table.sort(t, later)
end
-- os.clock(): this process's own CPU time, which overhead.sh takes out of
-- what perf and its child together used.
io.stdout:write(string.format("elapsed %d cpu %.3f\n", now() - t0, os.clock()))
