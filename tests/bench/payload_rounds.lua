-- The RFC payload's loop (tests/fixtures/workloads/payload_stock.lua, JIT
-- off: Lua and FFI C Fibonacci alternating) in rounds of a fixed number
-- of iterations; after each round prints "round N NS" with the round's
-- wall time (CLOCK_MONOTONIC), so a benchmark can compare rounds run
-- attached and not attached in one process.
-- usage: luajit payload_rounds.lua LIBDIR ITERATIONS [ROUNDS]
local ffi = require("ffi")
local jit = require("jit")
local libdir, iters, rounds = arg[1], tonumber(arg[2]), tonumber(arg[3])
function lua_payload(n)
  if n <= 1 then return n end
  return lua_payload(n - 1) + lua_payload(n - 2)
end
local c = ffi.load(libdir .. "/libc_payload.so")
ffi.cdef[[
double c_payload(double n);
]]
jit.off() jit.flush()
local now = dofile((arg[0]:match("^(.*)/") or ".") .. "/monoclock.lua")
io.stdout:write("ready\n") io.stdout:flush()
local r = 0
while not rounds or r < rounds do
  local t0 = now()
  for i = 0, iters - 1 do
    if i % 2 == 0 then c.c_payload(20) else lua_payload(20) end
  end
  r = r + 1
  io.stdout:write(string.format("round %d %d\n", r, now() - t0))
  io.stdout:flush()
end
