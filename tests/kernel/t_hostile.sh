#!/bin/sh
# A hostile target: LuaJIT attached with its real layout, then an FFI call
# that overwrites its whole stack above it (the interpreter's C frame
# included) with code addresses, stack addresses and random words, over
# and over.  Every sample stays within the per-sample budget (1024 read
# requests, 16 faults), the target keeps running, and the kernel log
# stays clean (run.sh checks it).
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

# A stack whose walk asks for more than the budget: a Lua recursion 400 deep, spinning at
# the bottom, each level a closure of its own, so that the walk's memory
# of the function objects it checked (ljwalk.c) never spares a request:
# about 3 per Lua frame, so the 128 Lua frames a sample keeps ask for
# about 400.  The admin's budget (sample_reads) is lowered to 256 for it:
# every sample stops at 256 and is counted cut.  (Once, only the read
# cache's copies counted, about 20 a sample here, and each Lua walk had a
# limit of its own.)
cat >"$W/deep.lua" <<LUA
local function make()
	local function rec(n)
		if n == 0 then local x = 0 while true do x = x + 1 end end
		return make()(n - 1) + 1
	end
	return rec
end
io.stdout:write("ready\n") io.stdout:flush()
make()(400)
LUA
echo 256 >/sys/module/luaunwind/parameters/sample_reads || fail "sample_reads"
start_lua luajit "$W/deep.lua"
$CTL attach "$pid" --freq 999 >"$W/attach" 2>&1 || { cat "$W/attach" >&2; fail "attach deep"; }
$CTL dump --duration 3 >/dev/null 2>&1 || fail "dump deep"
sd=$($CTL status "$pid" | sed -n 1p)
$CTL detach "$pid" || fail "detach deep"
stop_lua
nd=$(field samples "$sd")
[ "$nd" -ge 100 ] || fail "deep: only $nd samples: $sd"
[ "$(field reads_max "$sd")" -eq 256 ] && [ "$(field reads_median "$sd")" -eq 256 ] ||
	fail "deep: the walks did not stop at the budget: $sd"
[ "$(field budget_cuts "$sd")" -ge "$nd" ] || fail "deep: cut samples not counted: $sd"
unload
pass "$n samples, reads median $(field reads_median "$st") p99 $(field reads_p99 "$st") max $max, $(field budget_cuts "$st") budget cuts, $f faults; 400 Lua frames deep: $nd samples cut at 256 reads"
