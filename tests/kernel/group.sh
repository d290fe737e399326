#!/bin/sh
# Run kernel tests one after the other in one guest boot (tests/kernel/run.sh):
#   sh tests/kernel/group.sh QUEUE [MAX [LIMIT]]
# QUEUE is a directory shared with the host and with the other guests
# running the same kernel's tests (scripts/vm-run's LUW_VM_SHARE):
# QUEUE/order lists the tests, one per line, and a test is this boot's once
# mkdir QUEUE/claim/TEST succeeds, so guests side by side never run one
# twice and each takes the next test as soon as it is free.  MAX caps the
# tests this boot takes (run.sh -1: one), LIMIT the seconds a test may run
# before it is killed and failed (default 600).
#
# Each test runs as in a boot of its own, with LUW_OUT/TEST.out and the
# kernel log it caused in LUW_OUT/TEST.dmesg (from a marker written to
# /dev/kmsg before it), and a line "TEST STATUS SECONDS PIDS" in
# LUW_OUT/results once it is over.  PIDS counts the processes and threads
# it started (the last pid in /proc/loadavg): a fork and exec took 135 ms
# in a debug kernel guest and 45 ms in 6.12's, so they show where a lane's
# time goes.  Between tests every process it left is killed, the module
# unloaded, CPUs put back online and perf's rate limit reset, so the next
# one starts from the state a boot gives.  LUW_OUT/started lists the tests
# this boot took; one there without a results line is the test the guest
# died or hung in: run.sh fails it.  With kmemleak on (run.sh -m) a last
# result, kmemleak, fails when the boot's tests left memory allocated from
# the module's code (below).
set -u
out=${LUW_OUT:?run me through scripts/vm-run}
queue=${1:?usage: group.sh QUEUE [MAX [LIMIT]]}
max=${2:-0}
limit=${3:-600}
# perf lowers this when handlers run long (TCG): each test starts from the
# boot's value.
rate=/proc/sys/kernel/perf_event_max_sample_rate
rate0=$(cat $rate)
# A TCG workaround (keyhold.c says why): perf's scheduler hook stays
# patched in for the whole boot.
hold=$(build/ktest/keyhold) || { echo "group.sh: keyhold failed" >&2; exit 1; }
ran=0
while read -r t <&4; do
	[ "$max" -gt 0 ] && [ $ran -ge "$max" ] && break
	mkdir "$queue/claim/$t" 2>/dev/null || continue
	ran=$((ran + 1))
	echo "$t" >>"$out/started"
	echo "luw-test: $t" >/dev/kmsg
	start=$(date +%s)
	read -r _ _ _ _ pid0 _ </proc/loadavg
	timeout -s KILL "$limit" sh "tests/kernel/$t.sh" >"$out/$t.out" 2>&1 </dev/null
	rc=$?
	end=$(date +%s)
	read -r _ _ _ _ pid1 _ </proc/loadavg
	pids=$((pid1 - pid0))
	[ $pids -ge 0 ] || pids=$((pids + $(cat /proc/sys/kernel/pid_max)))
	# Everything but init, this shell and keyhold: what the test left.
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		case $p in 1 | $$ | $hold) ;; *) kill -9 "$p" 2>/dev/null ;; esac
	done
	sleep 0.2
	rmmod luaunwind 2>/dev/null
	echo "$rate0" >$rate
	for c in /sys/devices/system/cpu/cpu*/online; do
		echo 1 >"$c" 2>/dev/null
	done
	dmesg | sed -n "/luw-test: $t\$/,\$p" >"$out/$t.dmesg"
	echo "$t $rc $((end - start)) $pids" >>"$out/results"
done 4<"$queue/order"

# kmemleak, when the boot turned it on (the debug kernel; run.sh -m), once
# the boot's tests are over, as one more result, "kmemleak": the objects
# they left allocated from the module's code.  The module is gone by now,
# so its frames in an allocation's backtrace are raw addresses in the
# module area, where no other module runs (the debug kernel has
# luaunwind's alone).  kmemleak reports an object unreferenced in a scan
# and unchanged since the scan before (its checksum), never one younger
# than 5 s: two scans, after 5 s.  The allocating process (comm) names the
# test.  A scan takes about 20 s there: once a boot, not after each test.
# What it can miss: it scans the interrupt stacks as roots, and a stale
# word of the sample handler's there can keep an object the handler read
# referenced (a host unwind table left unfreed on purpose was not
# reported; sessions were).
if [ $ran -gt 0 ] && [ -w /sys/kernel/debug/kmemleak ] &&
	grep -qw kmemleak=on /proc/cmdline; then
	t=kmemleak
	echo "$t" >>"$out/started"
	echo "luw-test: $t" >/dev/kmsg
	start=$(date +%s)
	sleep 5
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	awk '
	function flush() { if (ours) printf "%s", rec; rec = ""; ours = 0 }
	/^unreferenced object/ { flush() }
	{ rec = rec $0 "\n" }
	/^    \[</ && $NF ~ /^0x[0-9a-f]+$/ && length($NF) == 18 &&
		$NF >= "0xffffffffa0000000" { ours = 1 }
	END { flush() }' /sys/kernel/debug/kmemleak >"$out/$t.leaks"
	rc=0
	if [ -s "$out/$t.leaks" ]; then
		rc=1
		{ echo "left allocated from luaunwind's code (kmemleak; comm: the process that allocated):"
		  cat "$out/$t.leaks"; } >"$out/$t.out"
	fi
	end=$(date +%s)
	dmesg | sed -n "/luw-test: $t\$/,\$p" >"$out/$t.dmesg"
	echo "$t $rc $((end - start)) 0" >>"$out/results"
fi
