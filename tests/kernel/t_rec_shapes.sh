#!/bin/sh
# More shapes of design section 6 through record + report under Debian's
# luajit:
#  - coroutines (shape 3): a sample in work() inside a coroutine reads,
#    root first, main chunk; resumer; coroutine.resume; body; work -- the
#    names come from the definitions (locals), body's too (a
#    coroutine's first function: no calling instruction names it);
#  - JIT on (shape 5): samples in traces show TRACE_n @chunk:line above
#    the Lua frames they run in, down to the main chunk;
#  - a split between a C and a Lua function that the workload measures
#    itself comes out within 7 percentage points (share of C among the
#    samples in either).
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
load

start_lua luajit $WL/coro.lua
$CTL record -p "$pid" -o "$W/coro.luw" --duration 3 2>"$W/coro.err" ||
	{ cat "$W/coro.err" >&2; fail "coro: record"; }
stop_lua
$REP "$W/coro.luw" >"$W/coro.folded" || fail "coro: report"
c='@[^;]*coro\.lua'
nw=$(grep "work $c:4 [0-9]*\$" "$W/coro.folded" | awk '{ n += $NF } END { print n + 0 }')
good=$(grep "lua_pcall;main chunk $c:0;resumer $c:16;coroutine\.resume;body $c:9;work $c:4 [0-9]*\$" "$W/coro.folded" |
	awk '{ n += $NF } END { print n + 0 }')
[ "$nw" -ge 100 ] || { head -3 "$W/coro.folded" >&2; fail "coro: only $nw samples in work()"; }
[ $((100 * good)) -ge $((90 * nw)) ] || fail "coro: $good of $nw samples in work() have the full shape"

start_lua luajit $WL/payload_stock.lua jit 3600 $K
$CTL record -p "$pid" -o "$W/jit.luw" --duration 3 2>"$W/jit.err" ||
	{ cat "$W/jit.err" >&2; fail "jit: record"; }
stop_lua
$REP "$W/jit.luw" >"$W/jit.folded" || fail "jit: report"
p='@[^;]*payload_stock\.lua'
nt=$(grep "lua_pcall;main chunk $p:0;.*TRACE_[0-9]* $p:[0-9]*" "$W/jit.folded" | awk '{ n += $NF } END { print n + 0 }')
$REP --vmstates "$W/jit.luw" >"$W/jit.vmstates"
ntr=$(sed -n 's/^TRACE	//p' "$W/jit.vmstates")
[ "$ntr" -ge 100 ] || fail "jit: only $ntr TRACE samples"
[ $((100 * nt)) -ge $((90 * ntr)) ] || fail "jit: $nt of $ntr trace samples show TRACE_n above the main chunk"

# The workload and the recording see the same stretch of time: the
# workload waits blocked on a FIFO (no samples) until record has attached,
# then works 5 s of its CPU clock and exits, which ends the recording.
# Compared over different windows (the workload's whole life against 4 s
# of it) the shares drifted apart by 7 points either way on the loaded
# debug kernel.  249 Hz: the sample handler's time is charged to the
# task, hence to the workload's clock.
# The split is the ratio of the median C call to the median Lua call (one
# of each per round), not of the summed times: in a guest on a loaded
# host the CPU clock of a call also counts the time the host took the
# vCPU away, in stretches far longer than a call, which a few calls
# collect and the median leaves out (summed, it measured 51% C where the
# report and every quiet run said 65%, sid beside two other guests).
# Within 7 points: a loaded guest delivers half the nominal rate, ~630 of
# the 5 s's 1245 samples, where sampling alone has a standard deviation of
# 2 points (6.12 beside another guest: 56% against 61%, at 5 the edge).
# The FIFO in the guest's tmpfs ($W is on 9p, which has none), held open
# read-write here so that the workload's open does not wait for a writer.
# (Not on stdin: an asynchronous command of a script reads /dev/null.)
go=$(mktemp -u /tmp/split-go.XXXXXX)
mkfifo "$go" || fail "split: mkfifo"
exec 3<>"$go"
cat >"$W/split.lua" <<LUA
-- Alternates C (FFI c_payload) and Lua (lua_fib) work, timing each call
-- with the process CPU clock, from a line on the FIFO for 5 s of that
-- clock, and prints the C share of the median calls (and of the sums).
jit.off()
local ffi = require("ffi")
ffi.cdef[[ double c_payload(double n); ]]
local c = ffi.load("$K/libc_payload.so")
local function lua_fib(n) if n < 2 then return n end return lua_fib(n - 1) + lua_fib(n - 2) end
local dc, dl, n = {}, {}, 0
io.stdout:write("ready\n") io.stdout:flush()
io.open("$go"):read("l")
local start = os.clock()
while os.clock() - start < 5 do
  local t0 = os.clock() local r = c.c_payload(21)
  local t1 = os.clock() r = lua_fib(16)
  local t2 = os.clock()
  n = n + 1
  dc[n], dl[n] = t1 - t0, t2 - t1
end
local function sum(t) local s = 0 for i = 1, #t do s = s + t[i] end return s end
local sc, sl = sum(dc), sum(dl)
table.sort(dc) table.sort(dl)
local mc, ml = dc[math.ceil(n / 2)], dl[math.ceil(n / 2)]
io.stdout:write(string.format("cshare %d summed %d rounds %d\n",
  math.floor(100 * mc / (mc + ml) + 0.5), math.floor(100 * sc / (sc + sl) + 0.5), n))
io.stdout:flush()
LUA
start_lua luajit "$W/split.lua"
$CTL record -p "$pid" -o "$W/split.luw" --duration 300 --freq 249 2>"$W/split.err" &
rec=$!
# version counts every session's targets (status sees only its own).
attached() {
	[ "$(field all_targets "$($CTL version)")" = 1 ]
}
for i in $(seq 300); do attached && break; sleep 0.1; done
attached || { cat "$W/split.err" >&2; fail "split: record did not attach"; }
echo go >&3
wait $rec || { cat "$W/split.err" >&2; fail "split: record"; }
wait "$pid"
exec 3>&-
rm -f "$go"
want=$(sed -n 's/^cshare \([0-9]*\) .*/\1/p' "$W/luajit.out")
[ -n "$want" ] || fail "split: the workload did not report its split: $(tail -2 "$W/luajit.out" | tr "\n" " ")"
$REP "$W/split.luw" >"$W/split.folded" || fail "split: report"
tot=$(awk '{ n += $NF } END { print n + 0 }' "$W/split.folded")
nc=$(grep ';c_payload [0-9]*$' "$W/split.folded" | awk '{ n += $NF } END { print n + 0 }')
nl=$(grep ';lua_fib @[^;]*split\.lua:8 [0-9]*$' "$W/split.folded" | awk '{ n += $NF } END { print n + 0 }')
[ $((100 * (nc + nl))) -ge $((80 * tot)) ] || fail "split: only $nc C + $nl Lua samples of $tot"
got=$(( (100 * nc + (nc + nl) / 2) / (nc + nl) ))
d=$((got - want))
[ "$d" -le 7 ] && [ "$d" -ge -7 ] || fail "split: C share $got% in the report, $want% measured ($(sed -n "s/^cshare //p" "$W/luajit.out"))"
pass "coro $good/$nw; jit $nt/$ntr; split C $got% (measured $want%: $(sed -n 's/^cshare //p' "$W/luajit.out"))"
