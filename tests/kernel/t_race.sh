#!/bin/sh
# Concurrent attach, table upload, detach, stats, reads, joins and reaping
# of exiting children on one session (tests/kernel/race.c), then rmmod.
# The kernel log check of tests/kernel/run.sh (and KASAN and lockdep on
# the debug lane) judges the races; the module must work afterwards.
. tests/kernel/lib.sh
load
bg $K/spin; pid=$last
$K/race $pid 8 || fail "race"
unload
pass
