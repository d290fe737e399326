#!/bin/sh
# Host unwinding from uploaded tables through a function gcc realigns
# with a DRAP register (tests/unit/common/targets/realign.c: CFA = *(rbp - N),
# rbp saved at rbp + 0) below frame-pointer-less callers, in main and two
# threads.  Every sample's host chain must be exactly [leaf_spin;]
# realigned;outer_b;outer_a; then main ... _start or thread_main ...
# clone3: a frame-pointer step over the realigned frame gave the right
# return address and a wrong sp, and outer_b's rule read garbage there.
. tests/kernel/lib.sh
load
$K/realign 2 >"$W/ready" &
pid=$!
kids="$kids $pid"
within 120 grep -q ready "$W/ready" || fail "realign did not start"
$CTL attach $pid --freq 999 --no-lua >"$W/attach" || fail "attach"
$K/lwstacks read $pid 3 >"$W/stacks" || fail "lwstacks"
$CTL detach $pid || fail "detach"
n=$(wc -l <"$W/stacks")
[ "$n" -ge 100 ] || fail "only $n samples in 3 s at 999 Hz"
want='^(leaf_spin;)?realigned;outer_b;outer_a;(main;.*_start|thread_main;start_thread;clone3?);$'
bad=$(sed 's/.* stack=//' "$W/stacks" | grep -Ev "$want" | wc -l)
if [ "$bad" -ne 0 ]; then
	sed 's/.* stack=//' "$W/stacks" | grep -Ev "$want" | head -3 >&2
	fail "$bad of $n samples are not [leaf_spin;]realigned;outer_b;outer_a;main ... _start (or thread_main ... clone3)"
fi
inr=$(sed 's/.* stack=//' "$W/stacks" | grep '^realigned;' | wc -l)
[ $((inr * 10)) -ge "$n" ] || fail "only $inr of $n samples in realigned() itself"
unload
pass "$n samples, all [leaf_spin;]realigned;outer_b;outer_a;main ... _start or thread_main ... clone3 ($inr in realigned())"
