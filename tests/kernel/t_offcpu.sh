#!/bin/sh
# Off-CPU time (luaunwind-ctl record --wall / --off-cpu, LUW_ATTACH_OFFCPU)
# of tests/fixtures/workloads/offcpu.lua, recorded whole (from before its
# first round to after its last):
#  - of the time it was blocked outside its two waits for the test's go
#    (wait_go, wait_end), at least 90% under blocker(), and blocker's
#    ways of blocking named by their system calls under it (poll, read of
#    a pipe, wait4 for a child, clone3 while the child execs); all of the
#    clone3 time under blocker (glibc's clone3 has no unwind rule after
#    its syscall: the table's SYSCALL row);
#  - blocker's time off the CPU agrees with what blocker measured of
#    itself (its wall time less its CPU time) within 5%;
#  - the wall-clock report (each run's exact CPU time placed by the CPU
#    samples, and off-CPU time) of everything between the waits adds up
#    to the wall time the workload measured over it within 1.5% (CPU
#    samples weighed by the sampling period alone came to 2.1% short in
#    one run: the cpu-clock timer skips the periods it fires late for);
#  - pprof: off_cpu/nanoseconds;
#  - a thread still blocked when record stops: its wait up to the stop
#    counted (the stop's reading of its CPU time closes it);
#  - threads created while recording: their switches recorded, their
#    exits closing their last intervals;
#  - record --off-cpu SIGKILLed while its target sleeps, and a target
#    killed while blocked (its wait in poll is there): nothing stays
#    attached.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
load

luajit $WL/offcpu.lua 8 "$W/go" >"$W/o.out" 2>&1 &
op=$!
kids="$kids $op"
within 120 grep -q ready "$W/o.out" || fail "the workload did not start"
$CTL record -p "$op" -o "$W/o.luw" --wall 2>"$W/o.err" &
rec=$!
within 60 grep -q 'attached' "$W/o.err" || { cat "$W/o.err" >&2; fail "record --wall did not attach"; }
touch "$W/go"
within 900 grep -q done "$W/o.out" || fail "the workload did not end its rounds: $(cat "$W/o.out")"
kill -TERM $rec
wait $rec || { cat "$W/o.err" >&2; fail "record --wall"; }
rm -f "$W/go"
wait $op
grep -q ' [1-9][0-9]* switches' "$W/o.err" || fail "no switch records: $(cat "$W/o.err")"

# Blocked time: under blocker, and how.
$REP --off-cpu=blocked --folded "$W/o.luw" >"$W/blocked.folded" 2>"$W/blocked.rep" ||
	{ cat "$W/blocked.rep" >&2; fail "report --off-cpu=blocked"; }
all=$(folded_sum "$W/blocked.folded")
waits=$(folded_sum "$W/blocked.folded" -E ';wait_(go|end) @')
blk=$(folded_sum "$W/blocked.folded" ';blocker @')
[ "$all" -gt 0 ] || fail "no blocked time: $(cat "$W/blocked.rep")"
[ $((10 * blk)) -ge $((9 * (all - waits))) ] ||
	fail "only $blk of $((all - waits)) ns blocked outside the waits under blocker()"
for sc in poll read wait4 clone3; do
	n=$(folded_sum "$W/blocked.folded" ";blocker @.*\[blocked: $sc\]")
	[ "$n" -gt 0 ] || fail "no time blocked in $sc under blocker(): $(grep blocker "$W/blocked.folded" | head -3)"
done

c3=$(folded_sum "$W/blocked.folded" '\[blocked: clone3\]')
[ "$(folded_sum "$W/blocked.folded" ';blocker @.*\[blocked: clone3\]')" = "$c3" ] ||
	fail "time blocked in clone3 outside blocker(): $(grep 'clone3' "$W/blocked.folded" | grep -v ';blocker @' | head -2)"

# blocker's own measurement of its time off the CPU.
$REP --off-cpu --folded "$W/o.luw" >"$W/off.folded" 2>"$W/off.rep" ||
	{ cat "$W/off.rep" >&2; fail "report --off-cpu"; }
off=$(folded_sum "$W/off.folded" ';blocker @')
exact=$(sed -n 's/^blocked \([0-9]*\)$/\1/p' "$W/o.out")
[ -n "$exact" ] || fail "the workload printed no blocked time"
awk -v a="$off" -v b="$exact" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.05 * b) }' ||
	fail "blocker() off the CPU: $off ns reported, $exact ns measured by itself"

# Wall-clock time between the waits against the workload's own.
$REP --wall --folded "$W/o.luw" >"$W/wall.folded" 2>"$W/wall.rep" ||
	{ cat "$W/wall.rep" >&2; fail "report --wall"; }
grep -q 's on the CPU (its runs, placed by the samples)' "$W/wall.rep" || fail "report --wall: $(cat "$W/wall.rep")"
between=$(($(folded_sum "$W/wall.folded") - $(folded_sum "$W/wall.folded" -E ';wait_(go|end) @')))
wall=$(sed -n 's/^wall \([0-9]*\)$/\1/p' "$W/o.out")
[ -n "$wall" ] || fail "the workload printed no wall time"
awk -v a="$between" -v b="$wall" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.015 * b) }' ||
	fail "between the waits: $between ns on and off the CPU reported, $wall ns of wall time measured"

$REP --off-cpu --pprof "$W/o.pb.gz" "$W/o.luw" 2>/dev/null || fail "report --off-cpu --pprof"
[ -s "$W/o.pb.gz" ] || fail "no pprof output"

# A wait still going on at the stop.
start_lua luajit $WL/offcpu.lua 0 "$W/go3" long
lp=$pid
$CTL record -p "$lp" -o "$W/l.luw" --off-cpu 2>"$W/l.err" &
rec=$!
within 60 grep -q 'attached' "$W/l.err" || { cat "$W/l.err" >&2; fail "record --off-cpu did not attach"; }
touch "$W/go3"
# In poll (7) once the kernel shows it there: switched out, its record
# written.
in_poll() {
	[ "$(cut -d' ' -f1 /proc/$lp/syscall 2>/dev/null)" = 7 ]
}
within 120 grep -q waiting "$W/luajit.out" || fail "the long wait did not start: $(cat "$W/luajit.out")"
within 120 in_poll || fail "the long wait is not in poll: $(cat /proc/$lp/syscall)"
kill -TERM $rec
wait $rec || { cat "$W/l.err" >&2; fail "record --off-cpu of the long wait"; }
$REP --off-cpu --folded "$W/l.luw" >"$W/l.folded" 2>"$W/l.rep" ||
	{ cat "$W/l.rep" >&2; fail "report --off-cpu of the long wait"; }
long=$(folded_sum "$W/l.folded" ';long_wait @.*\[blocked: poll\]')
[ "$long" -gt 0 ] || fail "no time blocked in long_wait's poll: $(cat "$W/l.rep")"
grep -q ' [1-9][0-9]* intervals without an end' "$W/l.rep" && fail "intervals left open: $(cat "$W/l.rep")"
kill $lp
wait $lp 2>/dev/null

# Threads created while the target is recorded (spin_threads: three
# spinners on two CPUs, started at the go file, so preempted now and
# then) carry the event inherited: their switches are recorded, and their
# exits close their last intervals (attach --off-cpu, record of the kept
# session, which reads the stop as record -p does).  The main thread
# exits once they are gone: a thread still on its way out when the whole
# group has exited misses its exit record (userspace/doc/offcpu.md).
$K/spin_threads 3 "$W/gt" 600 wait-gone &
tp=$!
kids="$kids $tp"
execd $tp $K/spin_threads
$CTL attach $tp --off-cpu --no-lua >"$W/tatt.out" 2>&1 || { cat "$W/tatt.out" >&2; fail "attach --off-cpu --no-lua"; }
$CTL record -o "$W/t.luw" 2>"$W/t.err" &
rec=$!
sleep 1
touch "$W/gt"
threads() {
	[ "$(ls /proc/$tp/task 2>/dev/null | wc -l)" -ge 4 ]
}
within 60 threads || fail "spin_threads did not start its threads"
sleep 2
rm -f "$W/gt"
wait $rec || { cat "$W/t.err" >&2; fail "record of the kept session"; }
grep -q 'every target exited' "$W/t.err" || fail "record did not end with spin_threads: $(cat "$W/t.err")"
$REP --off-cpu --by-tid --folded "$W/t.luw" >"$W/t.folded" 2>"$W/t.rep" ||
	{ cat "$W/t.rep" >&2; fail "report --off-cpu --by-tid"; }
newt=$(grep -v "^[^;]*-$tp/$tp;" "$W/t.folded" | grep ';spin;' | cut -d';' -f1 | sort -u | wc -l)
[ "$newt" -ge 3 ] || fail "only $newt new threads with time off the CPU under spin(): $(cut -c1-200 "$W/t.folded" | head -5)"
grep -q ' [1-9][0-9]* intervals without an end' "$W/t.rep" && fail "threads that exited left intervals open: $(cat "$W/t.rep")"

# SIGKILL of record while its target sleeps, and a target killed while
# blocked: their sessions end, nothing stays attached.
start_lua luajit $WL/offcpu.lua 1 "$W/never"
sp=$pid
$CTL record -p "$sp" -o "$W/k.luw" --off-cpu 2>"$W/k.err" &
rec=$!
within 60 grep -q 'attached' "$W/k.err" || { cat "$W/k.err" >&2; fail "record --off-cpu did not attach"; }
sleep 1
kill -KILL $rec
wait $rec 2>/dev/null
gone() {
	$CTL status | grep -q '^targets=0'
}
within 30 gone || fail "record SIGKILLed: still attached: $($CTL status | head -1)"
$CTL record -p "$sp" -o "$W/x.luw" --off-cpu 2>"$W/x.err" &
rec=$!
within 60 grep -q 'attached' "$W/x.err" || { cat "$W/x.err" >&2; fail "record --off-cpu did not attach again"; }
sleep 1
kill -TERM $sp
wait $rec || { cat "$W/x.err" >&2; fail "record --off-cpu of a target killed while blocked"; }
grep -q 'every target exited' "$W/x.err" || fail "record did not end with its target: $(cat "$W/x.err")"
within 30 gone || fail "a target killed while blocked: still attached: $($CTL status | head -1)"
$REP --off-cpu --folded "$W/x.luw" >"$W/x.folded" 2>"$W/x.rep" ||
	{ cat "$W/x.rep" >&2; fail "report --off-cpu of the killed target"; }
# Its Lua frames may be unnamed: a target killed while record is still
# behind takes its names with it (userspace/doc/offcpu.md).
n=$(folded_sum "$W/x.folded" ';__poll;\[blocked: poll\]')
[ "$n" -gt 0 ] || fail "the killed target: no time blocked in its poll: $(head -3 "$W/x.folded")"
unload
pass "long wait $long ns up to the stop; $newt new threads; blocked outside the waits $((all - waits)) ns, $blk under blocker; blocker off the CPU $off ns (measured $exact); between the waits $between ns (measured $wall)"
