-- Lua -> C module function -> lua_call -> Lua -> FFI C leaf, forever.
-- usage: luajit rec_sandwich.lua DIR [N]  (DIR holds rec_sandwich.so;
-- the leaf computes fib(N), 20 by default: a small N leaves most of the
-- time to lua_call's way into and out of the VM)
local dir = arg[1]
local n = tonumber(arg[2]) or 20
package.cpath = dir .. "/?.so;" .. package.cpath
jit.off()
local ffi = require("ffi")
local sw = require("rec_sandwich")
ffi.cdef[[ double c_leaf(double n); ]]
local lib = ffi.load(dir .. "/rec_sandwich.so")
local function inner()
  local r = lib.c_leaf(n)
  return r
end
local function outer()
  local r = sw.call_back(inner)
  return r
end
io.stdout:write("ready\n") io.stdout:flush()
while true do outer() end
