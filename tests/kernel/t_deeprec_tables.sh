#!/bin/sh
# Host unwinding from uploaded tables: a C program with known deep
# recursion built -O2 -fomit-frame-pointer (no frame pointer to follow),
# attached with luaunwind-ctl (which uploads a table per executable
# mapping): every sample's host chain is exactly leaf, rec x DEPTH, main,
# then libc's start code down to _start.
. tests/kernel/lib.sh
DEPTH=60
load
$K/deeprec_nofp $DEPTH >"$W/ready" &
pid=$!
kids="$kids $pid"
within 120 grep -q ready "$W/ready" || fail "deeprec_nofp did not start"
$CTL attach $pid --freq 999 --no-lua >"$W/attach" || fail "attach"
$K/lwstacks read $pid 3 >"$W/stacks" || fail "lwstacks"
$CTL detach $pid || fail "detach"
n=$(wc -l <"$W/stacks")
[ "$n" -ge 100 ] || fail "only $n samples in 3 s at 999 Hz"
want="leaf;$(for i in $(seq $DEPTH); do printf 'rec;'; done)main;"
bad=$(sed 's/.* stack=//' "$W/stacks" | grep -v "^$want.*_start;\$" | wc -l)
if [ "$bad" -ne 0 ]; then
	sed 's/.* stack=//' "$W/stacks" | grep -v "^$want.*_start;\$" | head -3 >&2
	fail "$bad of $n samples are not leaf, $DEPTH x rec, main ... _start"
fi
# Control: without tables the frame-pointer walk cannot do it.
$K/deeprec_nofp $DEPTH >"$W/ready2" &
pid=$!
kids="$kids $pid"
within 120 grep -q ready "$W/ready2" || fail "deeprec_nofp 2 did not start"
$CTL attach $pid --freq 999 --no-lua --no-tables >"$W/attach2" || fail "attach 2"
$K/lwstacks read $pid 2 >"$W/stacks2" || fail "lwstacks 2"
$CTL detach $pid || fail "detach 2"
fp=$(sed 's/.* stack=//' "$W/stacks2" | grep -c "^$want")
[ "$fp" -eq 0 ] || fail "$fp samples complete without tables: the test proves nothing"
unload
pass "$n samples, all leaf + $DEPTH x rec + main ... _start (0 without tables)"
