#!/bin/sh
# A target that exits while `luaunwind-ctl record` runs leaves a complete,
# reportable file, and record stops by itself.  This one is attached with
# `luaunwind-ctl attach` first and recorded without -p (record takes
# whatever is attached).  Before that: record stopped by SIGINT (Ctrl-C)
# also leaves a complete file, and detaches the target it attached; one
# killed with SIGKILL leaves nothing attached.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
# record names a sample's frames when it reads it, from the live process,
# so the target is stopped or made to exit once record's file holds
# lua_payload samples with their names.  The kernel's sample count would
# not do: under load record can start reading after the exit, and then
# every Lua frame is "@?ADDR" (1 of 8 on the debug kernel beside two busy
# loops, 0 of 12 with this).
# named FILE N: FILE so far (reported up to its cut) has N of them.
PAYLOAD=';lua_payload @[^;]*payload_stock\.lua:8'
named() {
	$REP "$1" >"$W/sofar.folded" 2>/dev/null
	[ "$(folded_sum "$W/sofar.folded" "$PAYLOAD")" -ge "$2" ]
}
load
rm -f "$W/int.luw" "$W/exit.luw"
start_lua luajit $WL/payload_stock.lua nojit 3600 $K
$CTL record -p "$pid" -o "$W/int.luw" --duration 120 2>"$W/int.err" &
rec=$!
within 120 named "$W/int.luw" 100 || true
kill -INT $rec
wait $rec || { cat "$W/int.err" >&2; fail "record stopped by SIGINT failed"; }
$REP "$W/int.luw" >"$W/int.folded" || fail "report of the SIGINT file"
n=$(folded_sum "$W/int.folded")
[ "$n" -ge 100 ] || fail "SIGINT: only $n samples"
$CTL status | grep -q '^targets=0' || fail "record -p left the target attached"
# SIGKILL leaves nothing sampling either: record -p's session ends with
# its file.  version counts every session's targets.
targets() {
	field all_targets "$($CTL version)"
}
one_target() {
	[ "$(targets)" = 1 ]
}
$CTL record -p "$pid" -o "$W/kill.luw" --duration 120 2>"$W/kill.err" &
rec=$!
within 120 one_target || fail "record -p did not attach: $(cat "$W/kill.err")"
sleep 1
kill -KILL $rec
wait $rec 2>/dev/null
[ "$(targets)" = 0 ] || fail "SIGKILL of record left $(targets) target(s) sampling"
stop_lua
# The target is made to exit by a signal once record has its samples: a
# target timed by its own CPU clock (os.clock) could spend that time while
# attach was still running on a loaded one-vCPU guest and be gone before
# record started.
start_lua luajit $WL/payload_stock.lua nojit 300 $K
$CTL attach "$pid" --freq 999 >"$W/attach.out" 2>&1 ||
	{ cat "$W/attach.out" >&2; fail "attach"; }
$CTL record -o "$W/exit.luw" --duration 120 2>"$W/rec.err" &
rec=$!
within 60 named "$W/exit.luw" 100 || true
kill -TERM "$pid"
wait $rec || { cat "$W/rec.err" >&2; fail "record"; }
# record's --duration is 120 s: only the exit can have stopped it with
# this on its stderr.
grep -q 'every target exited' "$W/rec.err" || { cat "$W/rec.err" >&2; fail "record did not notice the exit"; }
$REP "$W/exit.luw" >"$W/exit.folded" 2>"$W/rep.err" ||
	{ cat "$W/rep.err" >&2; fail "report of the file left by an exited target"; }
total=$(folded_sum "$W/exit.folded")
[ "$total" -ge 300 ] || fail "only $total samples"
grep -q "$PAYLOAD" "$W/exit.folded" || fail "no lua_payload frames"
# A file cut short is reported up to the cut, with exit status 2.
size=$(stat -c %s "$W/exit.luw")
head -c $((size - 100)) "$W/exit.luw" >"$W/cut.luw"
$REP "$W/cut.luw" >"$W/cut.folded" 2>"$W/cut.err"
rc=$?
[ $rc -eq 2 ] || fail "cut file: exit $rc, want 2"
grep -q 'offset [0-9]*:.*cut short' "$W/cut.err" || { cat "$W/cut.err" >&2; fail "cut file: no offset in the error"; }
[ -s "$W/cut.folded" ] || fail "cut file: nothing reported"
pass "SIGINT: $n samples; exit: $total samples, record stopped by the exit"
