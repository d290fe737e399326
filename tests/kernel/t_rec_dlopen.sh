#!/bin/sh
# A library loaded after `record` attached (ffi.load) has its frames named:
# record reads the maps again for pcs it has not seen and uploads unwind
# tables for the new mapping, so c_payload's recursion shows in full below
# the Lua code that called it.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
load
cat >"$W/late.lua" <<LUA
local ffi = require("ffi")
jit.off()
io.stdout:write("ready\n") io.stdout:flush()
-- Spin until the test says record is running.
while not io.open("$W/go") do local x = 0 for i = 1, 1e5 do x = x + i end end
ffi.cdef[[ double c_payload(double n); ]]
local c = ffi.load("$K/libc_payload.so")
local function late_caller() local r = c.c_payload(22) return r end
while true do late_caller() end
LUA
grep -q libc_payload "/proc/self/maps" && fail "libc_payload.so is already mapped here"
start_lua luajit "$W/late.lua"
grep -q libc_payload "/proc/$pid/maps" && fail "libc_payload.so mapped before record"
$CTL record -p "$pid" -o "$W/late.luw" --duration 6 2>"$W/rec.err" &
rec=$!
sleep 1.5
grep -q libc_payload "/proc/$pid/maps" && fail "libc_payload.so mapped before the go"
touch "$W/go"
wait $rec || { cat "$W/rec.err" >&2; fail "record"; }
grep -q libc_payload "/proc/$pid/maps" || fail "libc_payload.so never loaded"
stop_lua
$REP "$W/late.luw" >"$W/late.folded" || fail "report"
n=$(folded_sum "$W/late.folded" ';late_caller @[^;]*late\.lua:8;.*c_payload;c_payload;c_payload')
[ "$n" -ge 100 ] || { sort -k2 -n "$W/late.folded" | tail -3 >&2; fail "only $n samples of c_payload below late_caller"; }
! grep -q 'libc_payload\.so+0x' "$W/late.folded" || fail "unnamed frames in libc_payload.so"
pass "$n samples in the late library, named"
