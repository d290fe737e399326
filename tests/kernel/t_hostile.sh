#!/bin/sh
# A hostile target: LuaJIT attached with its real layout, then an FFI call
# that overwrites its whole stack above it (the interpreter's C frame
# included) with code addresses, stack addresses and random words, over
# and over.  Every sample stays within the per-sample budget (1024 reads,
# 16 faults), the target keeps running, and the kernel log stays clean
# (run.sh checks it).
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
cat >"$W/hostile.lua" <<LUA
local ffi = require("ffi")
ffi.cdef[[ void hostile_spin(void); ]]
local h = ffi.load("$K/hostile.so")
io.stdout:write("ready\n") io.stdout:flush()
while not io.open("$W/go") do local x = 0 for i = 1, 1e5 do x = x + i end end
local function victim() h.hostile_spin() end
victim()
LUA
start_lua luajit "$W/hostile.lua"
$CTL attach "$pid" --freq 999 >"$W/attach" 2>&1 || { cat "$W/attach" >&2; fail "attach"; }
touch "$W/go"
$CTL dump --duration 4 >"$W/dump" 2>"$W/dump.err" ||
	fail "dump: $(cat "$W/dump.err"); $(kill -0 $pid 2>&1 && echo target alive); $(cat $W/luajit.out)"
kill -0 "$pid" || fail "the target died: $(cat $W/luajit.out)"
st=$($CTL status "$pid" | sed -n 1p)
$CTL detach "$pid" || fail "detach"
n=$(field samples "$st")
max=$(field reads_max "$st")
[ "$n" -ge 100 ] || fail "only $n samples: $st"
[ "$max" -le 1024 ] || fail "a sample took $max reads (budget 1024): $st"
f=$(field faults "$st")
[ "$f" -le $((16 * n)) ] || fail "$f faults in $n samples"
stop_lua
unload
pass "$n samples, reads median $(field reads_median "$st") p99 $(field reads_p99 "$st") max $max, $(field budget_cuts "$st") budget cuts, $f faults"
