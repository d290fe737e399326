#!/usr/bin/env bash
# What off-CPU recording costs (issue 29), in a QEMU TCG guest on Debian's
# 6.1 kernel whose clock is its instruction count (LUW_VM_ICOUNT, as
# overhead.sh: times are instructions, a ratio is what carries over);
# figures only, nothing asserted.  One switch-heavy workload (offcpu.lua:
# each round a poll(2) of 1 ms and a little Lua work) run alone, under
# record --off-cpu, and attached --off-cpu with a reader that keeps the
# raw records (dump --raw); the kinds interleaved, 3 runs each.  The
# switch handler runs in the scheduler as the thread switches out, after
# the scheduler has charged the thread its CPU time, and mostly while
# the thread's own wait has begun: neither the target's CPU time nor
# the machine's busy jiffies (tick-sampled, so the idle guest's) show
# it.  Its figure is the module's own: status gives the handler's runs
# and mean time (local_clock, instructions here), read while the target
# runs; the target's elapsed time shows what the handler adds to its
# latency.
#
# usage: tests/bench/offcpu.sh            (host: boots the guest)
#        tests/bench/offcpu.sh --guest    (inside it; run by the above)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
cd "$top"

if [ "${1:-}" != --guest ]; then
	bench_header() {
		echo '## What off-CPU recording costs (tests/bench/offcpu.sh)'
		echo
		echo "$when; host: $cpu,"
		echo "$ncpu cores; guest: Debian kernel $rel under qemu-system-x86_64 -accel tcg"
		echo '-icount shift=0 (one vCPU, 1 ns an instruction).'
		echo '**Instruction counts under TCG**: only the ratios mean something'
		echo 'beyond this machine, and they only roughly.'
		echo "Load average (1, 5, 15 min) before: $load0; after: $load1 (the"
		echo 'figures do not depend on it).'
		echo
	}
	LUW_VM_ICOUNT=1 guest_bench offcpu 3600
	exit
fi

# ---- in the guest ---------------------------------------------------------
guest_prelude offcpu /tmp/luw-offcpu

# work ROUNDS KIND: one run; prints "ELAPSED_NS CPU_S SWITCHES CALLS
# HANDLER_NS".
work() {
	local rounds=$1 kind=$2 pid sw=0 s calls=0 hns=0
	rm -f "$W/go"
	luajit tests/bench/offcpu.lua "$W/go" "$rounds" >"$W/w.out" 2>"$W/w.err" &
	pid=$!
	for _ in $(seq 300); do grep -q ready "$W/w.out" && break; sleep 0.1; done
	grep -q ready "$W/w.out" || die "$kind: the workload did not start: $(cat "$W/w.out" "$W/w.err")"
	case $kind in
	record)
		"$CTL" record -p "$pid" -o "$W/rec.luw" --off-cpu >"$W/rec.out" 2>&1 &
		kids="$kids $!"
		;;
	raw)
		"$CTL" attach "$pid" --off-cpu >"$W/rec.out" 2>&1 || die "attach: $(cat "$W/rec.out")"
		"$CTL" dump --raw >"$W/raw" 2>>"$W/rec.out" &
		kids="$kids $!"
		;;
	esac
	sleep 2
	touch "$W/go"
	# The module's figures for its handler while the target lives (its
	# stats go with it): each status run costs the target a little.
	while kill -0 "$pid" 2>/dev/null; do
		s=$("$CTL" status "$pid" 2>/dev/null | sed -n 's/^switch calls=\([0-9]*\) .*handler_ns_mean=\([0-9]*\)/\1 \2/p')
		[ -n "$s" ] && set -- $s && calls=$1 hns=$2
		sleep 0.5
	done
	wait "$pid"
	wait
	grep -q '^elapsed' "$W/w.out" || die "$kind: no result: $(cat "$W/w.out" "$W/w.err")"
	case $kind in
	record) sw=$(sed -n 's/.* \([0-9]*\) switches, .*/\1/p' "$W/rec.out") ;;
	raw) sw=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
o = n = 0
while o + 8 <= len(d):
	size, typ = struct.unpack_from("<HB", d, o)
	if size < 8:
		break
	n += typ == 5	# LUW_REC_SWITCH
	o += size
print(n)' "$W/raw") ;;
	esac
	awk -v sw="${sw:-0}" -v c="$calls" -v h="$hns" \
		'/^elapsed/ { printf "%s %s %d %d %d\n", $2, $4, sw, c, h }' "$W/w.out"
}

# About 2 s of work alone (virtual: instructions).
cal=$(work 200 alone | cut -d' ' -f1)
[ -n "$cal" ] || die "calibration failed"
rounds=$(awk -v ns="$cal" 'BEGIN { n = int(200 * 2e9 / ns); print n < 200 ? 200 : n }')
kinds="alone record raw"
for i in 1 2 3; do
	for k in $kinds; do
		work "$rounds" "$k" >>"$W/res.$k" || die "$k"
		echo "  run $i $k: $(tail -1 "$W/res.$k")" >&2
	done
done
base=$(cut -d' ' -f1 "$W/res.alone" | median)
R "offcpu.lua, $rounds rounds (about 2 s alone, each a poll(2) of 1 ms:"
R "a switch out and one in); 3 runs of each kind, interleaved; medians."
R "Elapsed: the workload's wall time (instructions); target CPU: its own"
R "CPU time; handler: the module's count of the switch handler's runs"
R "and its mean time (status, read every 0.5 s while the target ran, so"
R "the runs of the last half second are missing; every kind runs it, but"
R "it sees only the kept session's targets: raw's), and that mean times"
R "the records over the elapsed time: the machine's share spent in it."
R ""
R "| kind | elapsed s | elapsed more | target CPU s | switch records | handler runs | handler mean (ns) | share of the CPU |"
R "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for k in $kinds; do
	m=$(cut -d' ' -f1 "$W/res.$k" | median)
	c=$(cut -d' ' -f2 "$W/res.$k" | median)
	sw=$(cut -d' ' -f3 "$W/res.$k" | median)
	calls=$(cut -d' ' -f4 "$W/res.$k" | median)
	hns=$(cut -d' ' -f5 "$W/res.$k" | median)
	R "$(awk -v k="$k" -v m="$m" -v b="$base" -v c="$c" -v sw="$sw" -v calls="$calls" -v h="$hns" 'BEGIN {
		runs = mean = share = "-"
		if (calls > 0) {
			runs = calls
			mean = h
			share = sprintf("%.1f%%", 100 * sw * h / m)
		}
		printf "| %s | %.3f | %+.2f%% | %.3f | %d | %s | %s | %s |", k, m / 1e9, (m / b - 1) * 100, c, sw, runs, mean, share
	}')"
done
R ""
