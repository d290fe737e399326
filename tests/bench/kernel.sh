#!/usr/bin/env bash
# luaunwind.ko in a QEMU TCG guest (scripts/vm-run, Debian's 6.1 kernel);
# figures only, nothing asserted:
#  1. handler cost per sample, median and p99 ns from the module's own
#     handler-time histogram (luaunwind-ctl status), on lua_threads with
#     one thread: ~30 Lua frames (work_0) into a lua_CFunction and 28 C
#     frames of c_rec (-O2, no frame pointers), 999 Hz, a reader draining;
#  2. slowdown of the RFC payload's loop (payload_rounds.lua: Lua and FFI C
#     Fibonacci, Debian's luajit, JIT off) at 99, 999 and 4999 Hz against
#     no attach: one process runs fixed-size rounds timed by the wall
#     clock, the guest attaches and detaches between them (4 attached and
#     4 detached windows of 2 rounds each per frequency, alternating);
#     the slowdown is median attached round / median detached round - 1,
#     and the median ratio of adjacent window pairs;
#  3. drops at 10 kHz on the payload with a reader (luaunwind-ctl dump --raw,
#     then luaunwind-ctl record), from the module's stats.
# Writes its section of tests/bench/RESULTS.md.  TCG emulates every
# instruction: absolute times are 10-50x those of hardware.
#
# usage: tests/bench/kernel.sh            (host: boots the guest)
#        tests/bench/kernel.sh --guest    (inside it; run by the above)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
cd "$top"

if [ "${1:-}" != --guest ]; then
	bench_header() {
		echo '## luaunwind.ko in a QEMU TCG guest (tests/bench/kernel.sh)'
		echo
		echo "$when; host: $cpu, $ncpu cores, Linux $(uname -r);"
		echo "guest: Debian kernel $rel under qemu-system-x86_64 -accel tcg"
		echo '(2 vCPUs, software cpu-clock sampling: there is no PMU).'
		echo '**These are TCG figures**: TCG emulates every instruction, so times'
		echo 'are roughly 10-50x what the same code takes on hardware, and the'
		echo 'emulation itself competes with the guest for the 2 host cores.'
		echo "Load average (1, 5, 15 min) before: $load0; after: $load1"
		echo '(above 0 means other programs, e.g. other QEMU guests, shared the'
		echo 'cores during the run).'
		echo 'Targets: <= 1% payload slowdown at 999 Hz, no drops at 10 kHz.'
		echo
	}
	guest_bench kernel 900
	exit
fi

# ---- in the guest ---------------------------------------------------------
guest_prelude kernel /tmp/luw-bench
# This shell and what it starts run on CPU 1 unless pinned to CPU 0: the
# sampled workloads have CPU 0 to themselves.
taskset -p -c 1 $$ >/dev/null

# field NAME FILE: the value of NAME=... in a status line.
field() { tr ' ' '\n' <"$2" | sed -n "s/^$1=//p" | head -1; }

wait_ready() {
	for _ in $(seq 300); do grep -q ready "$1" && return 0; sleep 0.1; done
	cat "$1" >&2
	die "target did not start"
}

# ---- 1. handler cost at host ~30 + Lua ~30 --------------------------------
taskset -c 0 $K/lua_threads 1 30 28 >"$W/deep.out" 2>&1 &
deep=$!
kids="$kids $deep"
wait_ready "$W/deep.out"
$CTL attach $deep --freq 999 >"$W/deep.attach" 2>&1 || { cat "$W/deep.attach" >&2; die "attach"; }
# Depths of the stacks actually sampled (lwstacks drains the rings too;
# its window's counters on stderr: the target is sampled on, undrained,
# while it names the records).
$K/lwstacks read $deep 6 >"$W/deep.stacks" 2>"$W/deep.window" ||
	{ cat "$W/deep.window" >&2; die "lwstacks"; }
$CTL status $deep >"$W/deep.status" || die "status"
$CTL detach $deep
kill $deep; wait $deep 2>/dev/null
awk '{
	for (f = 1; f <= NF; f++) {
		if ($f ~ /^nhost=/) h += substr($f, 7)
		if ($f ~ /^nlua=/) l += substr($f, 6)
	}
	n++ } END { printf "%.1f %.1f %d\n", h / n, l / n, n }' "$W/deep.stacks" >"$W/deep.depth"
read -r nh nl nsamp <"$W/deep.depth"
R "### Handler cost per sample"
R ""
R "lua_threads 1 30 28 (C host of Debian's libluajit-5.1: main chunk ->"
R "work_0 x 30 -> lua_CFunction cleaf -> c_rec x 28, -O2 without frame"
R "pointers; unwind tables uploaded), 999 Hz, 6 s, lwstacks draining."
R "Mean depth of the $nsamp samples read: $nh host frames (VM frames"
R "spliced out included), $nl Lua frames.  Calls, samples and drops to"
R "the end of the 6 s; times from the module's histogram (4 buckets per"
R "power of two: a figure is its bucket's lower bound)."
R ""
R "| handler calls | samples | drops | truncated | median ns | p99 ns |"
R "| ---: | ---: | ---: | ---: | ---: | ---: |"
hc=$(field handler_calls "$W/deep.window")
R "| $hc | $(field samples "$W/deep.window") | $(field drops "$W/deep.window") | $(field truncated "$W/deep.status") | $(field handler_ns_median "$W/deep.status") | $(field handler_ns_p99 "$W/deep.status") |"
R ""
# ---- 2. slowdown of the RFC payload at 99, 999, 4999 Hz -------------------
# The session's counters (pid 0) survive detach: deltas give each phase's
# figures.
gstat() { $CTL status >"$W/g.$1" || die "status"; }
gdelta() { echo $(($(field "$1" "$W/g.$3") - $(field "$1" "$W/g.$2"))); }

# Calibrate: rounds of about 1.5 s of guest wall time.
taskset -c 0 luajit tests/bench/payload_rounds.lua $K 10 1 >"$W/cal.out" 2>&1 || { cat "$W/cal.out" >&2; die "payload"; }
cal=$(awk '/^round/ { print $3 }' "$W/cal.out")
iters=$(awk -v ns="$cal" 'BEGIN { n = int(10 * 1e9 / ns / 2) * 2; print n < 2 ? 2 : n }')
# The payload is attached and detached in the kept session (luaunwind-ctl
# attach); an idle process attached all along keeps that session, its
# counters and its reader alive between the windows.
sleep 100000 &
anchor=$!
kids="$kids $anchor"
$CTL attach $anchor --freq 99 --no-lua >/dev/null || die "attach anchor"
$CTL dump --raw >/dev/null &
reader=$!
kids="$kids $reader"
taskset -c 0 luajit tests/bench/payload_rounds.lua $K "$iters" >"$W/pay.out" 2>&1 &
pay=$!
kids="$kids $pay"
wait_ready "$W/pay.out"

# window FILE: wait for the round in progress to end, then append the
# wall times of the next 2 rounds to FILE.
window() {
	local start
	start=$(grep -c '^round' "$W/pay.out")
	while [ "$(grep -c '^round' "$W/pay.out")" -lt $((start + 3)) ]; do sleep 0.1; done
	grep '^round' "$W/pay.out" | sed -n "$((start + 2)),$((start + 3))p" |
		awk '{ print $3 }' >>"$1"
}
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

R "### Slowdown of the RFC payload"
R ""
R "payload_rounds.lua (the loop of payload_stock.lua + c_payload.c under"
R "Debian's luajit, JIT off) on CPU 0 in rounds of $iters iterations (about"
R "1 s each here); per frequency 4 detached and 4 attached windows of 2"
R "rounds, alternating, in one process and one boot; luaunwind-ctl dump --raw on"
R "CPU 1 drains the rings throughout.  Each window's first round (the one"
R "running when attach or detach returned) is skipped.  Slowdown: median"
R "attached round / median detached round - 1, and the median over the 4"
R "adjacent detached/attached window pairs of their time ratio - 1."
R ""
R "| Hz | detached round ms | attached round ms | slowdown (medians) | slowdown (median of 4 pairs) | detached spread | Hz x handler median | samples | drops | handler median ns | p99 ns |"
R "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
# Hz 0 is the control: the same schedule with no attach (luaunwind-ctl
# status in its place), so its "slowdown" is the noise of the method.
for hz in 0 99 999 4999; do
	: >"$W/det.$hz"
	: >"$W/att.$hz"
	gstat before
	for _ in 1 2 3 4; do
		window "$W/det.$hz"
		if [ $hz = 0 ]; then
			$CTL status >"$W/pay.status.$hz" || die "status"
		else
			$CTL attach $pay --freq $hz >"$W/pay.attach" 2>&1 ||
				{ cat "$W/pay.attach" >&2; die "attach"; }
		fi
		window "$W/att.$hz"
		if [ $hz != 0 ]; then
			$CTL status $pay >"$W/pay.status.$hz" || die "status"
			$CTL detach $pay || die "detach"
		fi
	done
	gstat after
	d=$(median "$W/det.$hz")
	a=$(median "$W/att.$hz")
	# Adjacent windows see about the same host load: their ratio drifts
	# less than the medians do.
	paste -d' ' "$W/det.$hz" "$W/att.$hz" | awk '
		{ d += $1; a += $2 } NR % 2 == 0 { print a / d; a = d = 0 }' >"$W/ratio.$hz"
	r=$(median "$W/ratio.$hz")
	med=- p99=-
	if [ $hz != 0 ]; then
		med=$(field handler_ns_median "$W/pay.status.$hz")
		p99=$(field handler_ns_p99 "$W/pay.status.$hz")
	fi
	R "$(awk -v hz=$hz -v d="$d" -v a="$a" -v r="$r" -v s="$(gdelta samples before after)" \
		-v dr="$(gdelta drops before after)" \
		-v lo="$(sort -n "$W/det.$hz" | head -1)" -v hi="$(sort -n "$W/det.$hz" | tail -1)" \
		-v med="$med" -v p99="$p99" \
		'BEGIN { printf "| %d | %.0f | %.0f | %+.1f%% | %+.1f%% | %.0f-%.0f%% | %.1f%% | %d | %d | %s | %s |", hz, d / 1e6, a / 1e6, (a / d - 1) * 100, (r - 1) * 100, lo / d * 100, hi / d * 100, hz * med / 1e7, s, dr, med, p99 }')"
	echo "$r" >"$W/pair.$hz"
	awk -v hz=$hz -v med="$med" 'BEGIN { printf "%.1f\n", hz * med / 1e7 }' >"$W/share.$hz"
	echo "  $hz Hz: detached $(tr '\n' ' ' <"$W/det.$hz")/ attached $(tr '\n' ' ' <"$W/att.$hz")" >&2
done
R ""
R "Hz 0 is a control: the same schedule with no attach at all, so its"
R "slowdown is the noise of the method in this run."
R "Detached spread: the fastest and slowest detached round as % of their"
R "median, the noise floor of this run.  Hz x handler median: the share of"
R "a CPU the module's handler itself takes (its median time per sample"
R "times the rate); the rest of a slowdown is the emulated timer interrupt"
R "and perf's hrtimer path, the reader, and host contention.  Under TCG each"
R "vCPU is a host thread: the per-CPU event also wakes the otherwise idle"
R "CPU 1 at the sampling rate, and its QEMU thread then competes with CPU"
R "0's for the 2 loaded host cores -- likely much of the gap between the"
R "handler's share and the measured slowdown (not verified here).  Handler"
R "figures are those of the last attached window at each frequency."
R ""

# ---- 3. drops at 10 kHz with a reader -------------------------------------
R "### Drops at 10 kHz"
R ""
R "The payload attached at 10000 Hz for 5 s, first with luaunwind-ctl dump --raw"
R "as the reader, then with luaunwind-ctl record -p (which also names the"
R "frames while it reads); samples and drops from the module's stats."
R ""
R "| reader | samples | drops | handler median ns | p99 ns |"
R "| --- | ---: | ---: | ---: | ---: |"
gstat before
$CTL attach $pay --freq 10000 >"$W/pay.attach" 2>&1 || { cat "$W/pay.attach" >&2; die "attach"; }
sleep 5
$CTL status $pay >"$W/pay.status.10k" || die "status"
$CTL detach $pay || die "detach"
gstat after
drops10k=$(gdelta drops before after)
rate10k=$(($(gdelta samples before after) / 5))
R "| luaunwind-ctl dump --raw | $(gdelta samples before after) | $drops10k | $(field handler_ns_median "$W/pay.status.10k") | $(field handler_ns_p99 "$W/pay.status.10k") |"
kill $reader; wait $reader 2>/dev/null
# record -p samples in a session of its own: its counts are its own
# closing line ("N samples, M lost").
$CTL record -p $pay -o "$W/p10k.luw" --duration 5 --freq 10000 >"$W/rec.out" 2>&1 ||
	{ cat "$W/rec.out" >&2; die "record"; }
rs=$(sed -n 's/.*: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$W/rec.out")
rl=$(sed -n 's/.*: \([0-9]*\) samples, \([0-9]*\) lost.*/\2/p' "$W/rec.out")
drops10k=$((drops10k + ${rl:-0}))
R "| luaunwind-ctl record | ${rs:-?} | ${rl:-?} | | |"
R ""
R "record's own summary: $(sed 's/^luaunwind-ctl: [^:]*: //' "$W/rec.out" | tail -1)."
R "The payload got about $rate10k samples/s, not 10000: the emulated timer"
R "cannot interrupt a TCG vCPU that often (each interrupt and handler run"
R "is emulated too), so this is the most TCG can ask of the rings."
R ""
R "### Against the targets"
R ""
R "$(awk -v r="$(cat "$W/pair.999")" -v c="$(cat "$W/pair.0")" -v sh="$(cat "$W/share.999")" \
	'BEGIN { printf "- <= 1%% slowdown at 999 Hz: measured %+.1f%% (pairs), with the control at %+.1f%%; under TCG the handler alone takes %s%% of the CPU at 999 Hz, which at TCG'"'"'s 10-50x is %.2f-%.2f%% on hardware (an estimate, not a measurement): the target needs a run on a machine that can load the module.", (r - 1) * 100, (c - 1) * 100, sh, sh / 50, sh / 10 }')"
if [ "$drops10k" -eq 0 ]; then
	R "- no drops at 10 kHz: 0 drops with either reader, at the $rate10k samples/s TCG delivered (see the slowdown table for drops at other rates)."
else
	R "- no drops at 10 kHz: not met ($drops10k drops)."
fi
kill $pay; wait $pay 2>/dev/null
rmmod luaunwind || die "rmmod"
