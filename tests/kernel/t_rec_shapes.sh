#!/bin/sh
# More shapes of design section 6 through record + report under Debian's
# luajit:
#  - coroutines (shape 3): a sample in work() inside a coroutine reads,
#    root first, main chunk; resumer; coroutine.resume; body; work -- the
#    names come from the definitions (locals), body's too (a
#    coroutine's first function: no calling instruction names it);
#  - JIT on (shape 5): samples in traces show TRACE_n @chunk:line above
#    the Lua frames they run in, down to the main chunk;
#  - a split between a C and a Lua function that the workload profiles
#    itself (SIGPROF) comes out within 7 percentage points (share of C
#    among the samples in either).
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
nw=$(folded_sum "$W/coro.folded" "work $c:4 [0-9]*\$")
good=$(folded_sum "$W/coro.folded" "lua_pcall;main chunk $c:0;resumer $c:16;coroutine\.resume;body $c:9;work $c:4 [0-9]*\$")
[ "$nw" -ge 100 ] || { head -3 "$W/coro.folded" >&2; fail "coro: only $nw samples in work()"; }
[ $((100 * good)) -ge $((90 * nw)) ] || fail "coro: $good of $nw samples in work() have the full shape"

start_lua luajit $WL/payload_stock.lua jit 3600 $K
$CTL record -p "$pid" -o "$W/jit.luw" --duration 3 2>"$W/jit.err" ||
	{ cat "$W/jit.err" >&2; fail "jit: record"; }
stop_lua
$REP "$W/jit.luw" >"$W/jit.folded" || fail "jit: report"
p='@[^;]*payload_stock\.lua'
nt=$(folded_sum "$W/jit.folded" "lua_pcall;main chunk $p:0;.*TRACE_[0-9]* $p:[0-9]*")
$REP --vmstates "$W/jit.luw" >"$W/jit.vmstates"
ntr=$(sed -n 's/^TRACE	//p' "$W/jit.vmstates")
[ "$ntr" -ge 100 ] || fail "jit: only $ntr TRACE samples"
[ $((100 * nt)) -ge $((90 * ntr)) ] || fail "jit: $nt of $ntr trace samples show TRACE_n above the main chunk"

# The split: the workload profiles itself (build/ktest/libselfprof.so: a
# SIGPROF timer on its CPU clock counts which of its two functions it is
# in) while luaunwind records it; the two C shares must agree.  Both
# sample the same clock over the same stretch: the workload waits blocked
# on a FIFO (no samples) until record has attached, then works until its
# own profiler has 1250 samples (5 s of CPU clock in a quiet guest, more
# in a loaded one, where its timer misses expiries) and exits, which ends
# the recording.  Timing each call with the clock instead did not hold
# up: in a guest on a loaded host a call's CPU time also counts the
# stretches the host took the vCPU away, far longer than a call, which
# yield one sample each (summed: 51% C where the report said 65%);
# medians of the calls, which leave those out, still differed from the
# report by 6-9 points (debug kernel and 6.12, each beside another guest);
# and each clock read is a system call, which the debug kernel makes
# costly (15% of its samples).
# Each call lasts several sampling periods, of a random size: with calls
# of c_payload(21) and lua_fib(16), about 1 ms each under TCG, four calls
# fit in a period, and two periodic samplers with periods 4.000 ms (the
# tick behind ITIMER_PROF) and 4.016 ms (249 Hz) aliased against that
# rhythm, each its own way: the shares differed by 4 points at times (and
# a CI run failed this check on the debug kernel), while the C share
# itself moved between 56% and 66% with luaunwind's rate (its handler's
# time counts in the phase it interrupts, for both).  With long calls of
# random length, four runs differed by 0-1 point (6.1, beside a kernel
# build).
# Within 7 points: with 1250 samples and luaunwind's 1170-1840 seen (a
# C share of two thirds), sampling alone gives the difference a standard
# deviation of 2 points.
# The FIFO in the guest's tmpfs ($W is on 9p, which has none), held open
# read-write here so that the workload's open does not wait for a writer.
# (Not on stdin: an asynchronous command of a script reads /dev/null.)
go=$(mktemp -u /tmp/split-go.XXXXXX)
mkfifo "$go" || fail "split: mkfifo"
exec 3<>"$go"
cat >"$W/split.lua" <<LUA
-- C (FFI c_payload) and Lua (lua_fib) calls in turn from a line on the
-- FIFO, under the workload's own profiler, until it has 1250 samples.
-- Each call spans a few sampling periods, its size drawn anew each time.
jit.off()
local ffi = require("ffi")
ffi.cdef[[ double c_payload(double n); int selfprof_phase; unsigned long selfprof_hits[3]; int selfprof_start(long usec); int selfprof_stop(void); ]]
local c, sp = ffi.load("$K/libc_payload.so"), ffi.load("$K/libselfprof.so")
local function lua_fib(n) if n < 2 then return n end return lua_fib(n - 1) + lua_fib(n - 2) end
io.stdout:write("ready\n") io.stdout:flush()
io.open("$go"):read("l")
assert(sp.selfprof_start(4000) == 0, "selfprof_start")
repeat
  sp.selfprof_phase = 1 local r = c.c_payload(math.random(25, 28))
  sp.selfprof_phase = 2 r = lua_fib(math.random(20, 23))
until sp.selfprof_hits[1] + sp.selfprof_hits[2] >= 1250
sp.selfprof_phase = 0
assert(sp.selfprof_stop() == 0, "selfprof_stop")
local hc, hl = tonumber(sp.selfprof_hits[1]), tonumber(sp.selfprof_hits[2])
io.stdout:write(string.format("cshare %d c %d lua %d\n",
  math.floor(100 * hc / (hc + hl) + 0.5), hc, hl))
io.stdout:flush()
LUA
start_lua luajit "$W/split.lua"
$CTL record -p "$pid" -o "$W/split.luw" --duration 300 --freq 249 2>"$W/split.err" &
rec=$!
# version counts every session's targets (status sees only its own).
attached() {
	[ "$(field all_targets "$($CTL version)")" = 1 ]
}
within 120 attached || { cat "$W/split.err" >&2; fail "split: record did not attach"; }
echo go >&3
wait $rec || { cat "$W/split.err" >&2; fail "split: record"; }
wait "$pid"
exec 3>&-
rm -f "$go"
want=$(sed -n 's/^cshare \([0-9]*\) .*/\1/p' "$W/luajit.out")
[ -n "$want" ] || fail "split: the workload did not report its split: $(tail -2 "$W/luajit.out" | tr "\n" " ")"
$REP "$W/split.luw" >"$W/split.folded" || fail "split: report"
tot=$(folded_sum "$W/split.folded")
nc=$(folded_sum "$W/split.folded" ';c_payload [0-9]*$')
lfib=$(grep -n '^local function lua_fib' "$W/split.lua" | cut -d: -f1)
nl=$(folded_sum "$W/split.folded" ";lua_fib @[^;]*split\\.lua:$lfib [0-9]*\$")
[ $((100 * (nc + nl))) -ge $((80 * tot)) ] || fail "split: only $nc C + $nl Lua samples of $tot"
got=$(( (100 * nc + (nc + nl) / 2) / (nc + nl) ))
d=$((got - want))
[ "$d" -le 7 ] && [ "$d" -ge -7 ] || fail "split: C share $got% in the report ($nc C, $nl Lua), $want% by the workload's own profile ($(sed -n "s/^cshare [0-9]* //p" "$W/luajit.out"))"
pass "coro $good/$nw; jit $nt/$ntr; split C $got% ($nc C, $nl Lua; own profile $want%: $(sed -n 's/^cshare [0-9]* //p' "$W/luajit.out"))"
