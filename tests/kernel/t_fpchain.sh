#!/bin/sh
# Frame-pointer host walk of a C program with known deep recursion
# (-O2 -fno-omit-frame-pointer): every sample's host chain, symbolized
# with nm and the load bias from /proc/PID/maps, must be exactly
# leaf, rec x DEPTH, main, and maybe libc frames below main.
. tests/kernel/lib.sh
DEPTH=60
load
$K/deeprec $DEPTH >"$W/ready" &
pid=$!
kids="$kids $pid"
within 120 grep -q ready "$W/ready" || fail "deeprec did not start"
# PIE: the mapping at file offset 0 gives the load bias.
bias=$(awk -v f="$(readlink -f $K/deeprec)" '$6 == f && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' /proc/$pid/maps)
[ -n "$bias" ] || fail "no mapping of deeprec in /proc/$pid/maps"
$CTL attach $pid --freq 999 --no-lua --no-tables || fail "attach"
$CTL dump --duration 3 >"$W/dump" || fail "dump"
$CTL status $pid >"$W/status"
$CTL detach $pid || fail "detach"
nm -S --defined-only $K/deeprec >"$W/nm"
awk -v pid=$pid -v bias=$bias -f tests/kernel/symbolize.awk "$W/nm" "$W/dump" >"$W/stacks"
n=$(wc -l <"$W/stacks")
[ "$n" -ge 20 ] || fail "only $n samples in 3 s at 999 Hz"
want="leaf$(for i in $(seq $DEPTH); do printf ' rec'; done) main"
bad=$(awk -v want="$want" 'substr($0, 1, length(want)) != want' "$W/stacks" | wc -l)
if [ "$bad" -ne 0 ]; then
	awk -v want="$want" 'substr($0, 1, length(want)) != want' "$W/stacks" | head -3 >&2
	fail "$bad of $n samples do not start with leaf, $DEPTH x rec, main"
fi
pass "$n samples, all leaf + $DEPTH x rec + main"
unload
