#!/bin/sh
# read()/poll()/O_NONBLOCK, whole records, and drops on a small ring.
. tests/kernel/lib.sh
load ring_kb=16
bg $K/spin
$K/readpoll $last || fail "readpoll"
unload
pass
