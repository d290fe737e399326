#!/bin/sh
# 1000 attach/detach cycles on live targets while a reader drains.
. tests/kernel/lib.sh
load
bg $K/spin; a=$last
bg $K/spin_threads 4 /nonexistent 1000; b=$last
$K/attach_cycles 1000 $a $b || fail "attach_cycles"
kill -0 $a && kill -0 $b || fail "a target died"
unload
pass
