#!/bin/sh
# Per-user caps (issue 24, items 5-6): one user of a shared machine cannot
# take what the module has for all.  With small caps set at load: opens
# past max_user_sessions are EMFILE, attaches past max_user_targets or
# max_user_events (a thread is an event) ENOSPC, and rings past
# max_user_ring_kb ENOMEM -- while another user, under the same caps,
# still opens and attaches.  Rings are allocated by an attach that
# succeeds, for the online CPUs: open files alone hold none, and a failed
# attach leaves none behind.  What a user held is given back with its
# files, and rings once their targets are gone and end of file was read.
. tests/kernel/lib.sh
ncpu=$(grep -c '^processor' /proc/cpuinfo)
# Two sessions' rings at 64 KiB per CPU.
load ring_kb=64 max_user_sessions=4 max_user_targets=3 max_user_events=8 \
	max_user_ring_kb=$((2 * 64 * ncpu))
# The module's own checks, not the device's mode, are under test.
chmod 0666 /dev/luaunwind
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

# nobody_target N: a process of nobody's with N idle threads beside its
# main one; its pid in $last.
nobody_target() {
	$NOBODY $K/ucaps threads "$1" >/dev/null &
	last=$!
	kids="$kids $last"
	execd $last $K/ucaps
}
nobody_target 0; a=$last
nobody_target 0; b=$last
nobody_target 0; c=$last
nobody_target 0; d=$last
nobody_target 6; seven=$last
nobody_target 8; nine=$last
bg sleep 3600; rootpid=$last

# expect WHAT WANT CMD...: CMD's line is WANT.
expect() {
	local what=$1 want=$2 out
	shift 2
	out=$("$@")
	[ "$out" = "$want" ] || fail "$what: '$out', want '$want'"
}

expect "sessions" "4 EMFILE" $AS_NOBODY $K/ucaps sessions 5
expect "targets" "3 ENOSPC" $AS_NOBODY $K/ucaps targets $a $b $c $d
# 9 events (threads) where 8 are allowed; then 7, 1 and 1 more.
expect "events" "0 ENOSPC" $AS_NOBODY $K/ucaps targets $nine
expect "events" "2 ENOSPC" $AS_NOBODY $K/ucaps targets $seven $a $b
# A failed attach (another user's process) in each of many files holds no
# ring; then two sessions' rings fit and a third does not.
expect "failed attaches" "0 EPERM" $AS_NOBODY $K/ucaps rings 3 $rootpid
expect "rings" "2 ENOMEM" $AS_NOBODY $K/ucaps rings 3 $a

# While nobody holds all the rings it may (two sessions'), root opens and attaches as before, and nobody gets nothing more.
$AS_NOBODY $K/ucaps hold rings 2 $a >"$W/hold.out" &
holder=$!; kids="$kids $holder"
within 60 test -s "$W/hold.out" || fail "the holder did not start"
[ "$(cat "$W/hold.out")" = "2 ok" ] || fail "holder: $(cat "$W/hold.out")"
expect "nobody at its caps" "0 ENOMEM" $AS_NOBODY $K/ucaps rings 1 $b
expect "root beside nobody at its caps" "2 ok" $K/ucaps targets $rootpid $a
# ... and what nobody held comes back when its files close.
kill $holder
wait $holder 2>/dev/null
expect "after the holder closed" "2 ok" $AS_NOBODY $K/ucaps rings 2 $a
# Rings go back once the targets are gone and their records read, though
# the files stay open: two files' rings (all nobody may have), their
# targets killed, each file read to end of file, then a third attach.
nobody_target 0; e=$last
nobody_target 0; f=$last
expect "rings after end of file" "5 ok" $AS_NOBODY $K/ucaps reuse $e $f $c
unload
pass
