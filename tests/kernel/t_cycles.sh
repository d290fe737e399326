#!/bin/sh
# 1000 attach/detach cycles on live targets while a reader drains; then 300
# with off-CPU switch records as well (LUW_ATTACH_OFFCPU), whose handler
# runs from the scheduler at every switch of a target's threads while the
# detaches release its events.
. tests/kernel/lib.sh
load
bg $K/spin; a=$last
bg $K/spin_threads 4 /nonexistent 1000; b=$last
$K/attach_cycles 1000 $a $b || fail "attach_cycles"
$K/attach_cycles -o 300 $a $b || fail "attach_cycles -o"
kill -0 $a && kill -0 $b || fail "a target died"
unload
pass
