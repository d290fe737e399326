#!/bin/sh
# read()/poll()/O_NONBLOCK, whole records, and drops on a small ring.
. tests/kernel/lib.sh
load ring_kb=16
# The target pinned to one CPU: its samples, its drops and the LOST record
# that follows them go to one ring.  The LOST record rides on the next
# sample written into the ring that dropped; a target that had moved to
# the other CPU left none there in 10 s (6.12 beside other guests).
bg $K/spin
taskset -a -p -c 0 "$last" >/dev/null || fail "taskset"
$K/readpoll $last || fail "readpoll"
unload
pass
