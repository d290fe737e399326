#!/bin/sh
# Allocation sampling (luaunwind-ctl record --alloc, LUW_IOC_ALLOC):
#  - two functions of tests/fixtures/workloads/alloc.lua allocate strings
#    in a ratio the workload measures itself (gc.total around each, the GC
#    stopped): the report's estimate of their bytes has the same ratio,
#    within sampling error (at least 300 records; the margin is five
#    standard errors of the share at that count), with the JIT on (the
#    records spliced under the traces) and off.  Both runs are recorded
#    whole, from before their first round to after their last: a fixed
#    amount of work, as many records however slow the machine.  The totals too:
#    the two functions' bytes against the workload's own total of them,
#    and every byte estimated against the probe's count, within five
#    standard errors;
#  - the breakpoint is in the target while it records (the first byte of
#    the allocator reads 0xcc through /proc/PID/mem), never in a second
#    process running the same library, and gone when record ends: after
#    --duration, after record is SIGKILLed, after detach, after rmmod;
#  - attach --alloc: status counts the probe's calls and records, and
#    record of the kept session takes the interval from the module;
#  - a target killed while probed is reaped; one that execs (the same
#    luajit again) leaves the session, no breakpoint in its new image;
#  - --no-cpu: allocation records alone.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/alloclib.sh
load

# The JIT one, recorded from before its first round to after its last:
# a fixed amount of work, so as many records however slow the machine.
luajit $WL/alloc.lua 6 jit "$W/go" >"$W/a.out" 2>&1 &
ap=$!
kids="$kids $ap"
within 120 grep -q ready "$W/a.out" || fail "the luajit did not start"
luajit $WL/alloc.lua 1000000 >"$W/other.out" 2>&1 &
other=$!
kids="$kids $other"
within 120 grep -q ready "$W/other.out" || fail "the second luajit did not start"
rec_start a "$ap"
set -- $(lib "$ap" "$pa")
[ $# = 2 ] || fail "the allocator $pa is in no executable mapping of the target"
base=$1 path=$2
ob=$(bias "$other" "$path")
[ -n "$ob" ] || fail "the second luajit does not map $path"
oa=$((ob + pa - base))
ob=$(byte "$other" "$oa")
[ -n "$ob" ] && [ "$ob" != cc ] || fail "a breakpoint in another process mapping $path: '$ob'"
rm -f "$W/shares"
rec_whole a "$ap" "$W/a.out" "$W/go"
# With the JIT on, the strings are made in traces: their records are
# spliced as CPU samples are (function > TRACE_N > the C below).
tbig=$(folded_sum "$W/a.folded" 'big_strings @[^;]*;TRACE_[0-9]')
[ $((2 * tbig)) -ge "$big" ] ||
	fail "only $tbig of big_strings' $big bytes under a trace"

# A long-running one for the rest.
start_lua luajit $WL/alloc.lua 1000000
tp=$pid

# SIGKILL of record takes the breakpoint away too (the session ends).
$CTL record -p "$tp" -o "$W/k.luw" --alloc --no-cpu --duration 3600 2>"$W/k.err" &
rec=$!
within 60 probed "$W/k.err" || { cat "$W/k.err" >&2; fail "record --alloc --no-cpu did not attach"; }
a=$(allocf "$W/k.err")
[ "$(byte "$tp" "$a")" = cc ] || fail "no breakpoint in the second record"
kill -KILL $rec
wait $rec 2>/dev/null
within 60 sh -c "[ \"\$(dd if=/proc/$tp/mem bs=1 skip=$((a)) count=1 2>/dev/null | od -An -tx1 | tr -d ' \n')\" != cc ]" ||
	fail "the breakpoint stayed after record was SIGKILLed"

# attach --alloc, then record without -p: the kept session's probes,
# their interval from the module; status counts the probe's calls (as
# they come: however slow the machine), and the record drains the
# records written since the attach.
$CTL attach "$tp" --alloc-interval 4096 --no-cpu >"$W/att.out" 2>&1 ||
	{ cat "$W/att.out" >&2; fail "attach --alloc --no-cpu"; }
counted() {
	$CTL status "$tp" >"$W/status"
	calls=$(sed -n 's/^alloc calls=\([0-9]*\) .*/\1/p' "$W/status")
	asamples=$(sed -n 's/^alloc .* samples=\([0-9]*\) .*/\1/p' "$W/status")
	[ "${calls:-0}" -gt 1000 ] && [ "${asamples:-0}" -gt 10 ]
}
within 600 counted || fail "status: $(grep '^alloc' "$W/status")"
$CTL record -o "$W/kept.luw" --duration 5 2>"$W/kept.err" ||
	{ cat "$W/kept.err" >&2; fail "record of the kept session"; }
$REP --alloc "$W/kept.luw" >"$W/kept.folded" 2>"$W/kept.rep" ||
	{ cat "$W/kept.rep" >&2; fail "report --alloc of the kept session's record"; }
[ "$(folded_sum "$W/kept.folded" 'big_strings')" -gt 0 ] ||
	fail "the kept session's record: no big_strings"
$CTL detach "$tp" || fail "detach"
[ "$(byte "$tp" "$a")" != cc ] || fail "the breakpoint stayed after detach"

# A target that exits while probed (killed mid-allocation): reaped, its
# probe with it.
luajit $WL/alloc.lua 1000000 >"$W/short.out" 2>&1 &
sp=$!
kids="$kids $sp"
within 120 grep -q ready "$W/short.out" || fail "the third luajit did not start"
$CTL attach "$sp" --alloc --no-cpu >"$W/satt.out" 2>&1 ||
	{ cat "$W/satt.out" >&2; fail "attach --alloc of the third luajit"; }
sleep 1
kill -TERM $sp
wait $sp 2>/dev/null
gone() {
	$CTL status | grep -q '^targets=0'
}
within 30 gone || fail "the exited target stayed attached: $($CTL status | head -1)"

# A target that execs while probed (the same luajit again, on the same
# script): it leaves the session, and the new image, which maps the same
# file, has no breakpoint at the allocator.
luajit $WL/alloc.lua 1 jit "$W/go2" exec >"$W/exec.out" 2>&1 &
ep=$!
kids="$kids $ep"
within 120 grep -q ready "$W/exec.out" || fail "the exec'ing luajit did not start"
$CTL attach "$ep" --alloc --no-cpu >"$W/eatt.out" 2>&1 ||
	{ cat "$W/eatt.out" >&2; fail "attach --alloc of the exec'ing luajit"; }
ea=$(allocf "$W/eatt.out")
set -- $(lib "$ep" "$ea")
[ $# = 2 ] || fail "the allocator $ea is in no executable mapping of the exec'ing luajit"
[ "$(byte "$ep" "$ea")" = cc ] || fail "no breakpoint in the exec'ing luajit"
eb=$1 epath=$2
touch "$W/go2"
twice() {
	[ "$(grep -c ready "$W/exec.out")" -ge 2 ]
}
within 120 twice || fail "the luajit did not exec: $(cat "$W/exec.out")"
within 30 gone || fail "the exec'd target stayed attached: $($CTL status | head -1)"
nb=$(bias "$ep" "$epath")
[ -n "$nb" ] || fail "the exec'd luajit does not map $epath"
[ "$(byte "$ep" $((nb + ea - eb)))" != cc ] || fail "a breakpoint in the exec'd image"
kill $ep

# The interpreter alone (JIT off), recorded whole as the JIT one.
luajit $WL/alloc.lua 6 nojit "$W/goi" >"$W/nojit.out" 2>&1 &
np=$!
kids="$kids $np"
within 120 grep -q ready "$W/nojit.out" || fail "the nojit luajit did not start"
rec_start i "$np" --no-cpu
rec_whole i "$np" "$W/nojit.out" "$W/goi"

# --no-cpu: only allocation records.
$CTL record -p "$tp" -o "$W/n.luw" --alloc-interval 4096 --no-cpu --duration 5 2>"$W/n.err" ||
	{ cat "$W/n.err" >&2; fail "record --alloc --no-cpu"; }
grep -q ': 0 samples, [1-9][0-9]* allocation samples' "$W/n.err" ||
	fail "--no-cpu: $(cat "$W/n.err")"
[ "$(byte "$tp" "$a")" != cc ] || fail "the breakpoint stayed after record --duration ended"
# rmmod with a probed target in the kept session: the probe goes with it.
$CTL attach "$tp" --alloc --no-cpu >"$W/ratt.out" 2>&1 ||
	{ cat "$W/ratt.out" >&2; fail "attach --alloc before rmmod"; }
sleep 1
[ "$(byte "$tp" "$a")" = cc ] || fail "no breakpoint before rmmod"
unload
[ "$(byte "$tp" "$a")" != cc ] || fail "the breakpoint stayed after rmmod"
$REP --alloc --vmstates "$W/a.luw" >"$W/a.vmstates" 2>"$W/a.vrep" || { cat "$W/a.vrep" >&2; fail "report --alloc --vmstates"; }
pass "$(tr '\n' ' ' <"$W/shares")vmstates of the JIT one: $(tr '\n' ' ' <"$W/a.vmstates"); no breakpoint elsewhere or after"
