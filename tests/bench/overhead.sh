#!/usr/bin/env bash
# What profiling costs the target and the machine, luaunwind against perf,
# in a QEMU TCG guest (Debian's 6.1 kernel); figures only, nothing
# asserted.  One fixed workload (overhead.lua: interpreter recursion and
# table.sort with a Lua comparator, JIT off) run alone, under
# `luaunwind-ctl record`, under `perf record -g` and under `perf record
# --call-graph dwarf`, all at 999 Hz on cpu-clock; the kinds interleaved,
# 3 runs each.  luaunwind-raw is the module's sampling alone: attach, and a
# reader that writes the raw records nowhere (luaunwind-ctl dump --raw),
# where record also names every frame from the live process as it reads.
#
# The guest has one vCPU whose clock is its instruction count
# (LUW_VM_ICOUNT: 1 ns an instruction), so its times do not depend on the
# host's load, and a run repeats to a few parts in 10^4: the figures are
# instructions, not time, which is what a ratio needs (TCG's times depend
# on the host's load by tens of percent).  Per kind: the workload's own CPU
# time (os.clock(): the sample handler runs in its time, in hardirq on its
# CPU; the recorder's work is the recorder's) and its ratio to running
# alone -- what profiling costs the target --, the wall time (one CPU:
# the recorder's work shares it), and the recorder's own CPU time
# (user + system).  Instruction counts carry over to hardware only
# roughly: a copy from user memory, an interrupt or a page-table walk is
# many more instructions under TCG than on a CPU.
#
# usage: tests/bench/overhead.sh            (host: boots the guest)
#        tests/bench/overhead.sh --guest    (inside it; run by the above)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
cd "$top"

if [ "${1:-}" != --guest ]; then
	bench_header() {
		echo '## What profiling costs: luaunwind against perf (tests/bench/overhead.sh)'
		echo
		echo "$when; host: $cpu,"
		echo "$ncpu cores; guest: Debian kernel $rel under qemu-system-x86_64 -accel tcg"
		echo '-icount shift=0 (one vCPU, 1 ns an instruction; cpu-clock sampling).'
		echo '**Instruction counts under TCG**: only the ratios mean something'
		echo 'beyond this machine, and they only roughly (see overhead.sh).'
		echo "Load average (1, 5, 15 min) before: $load0; after: $load1 (the"
		echo 'figures do not depend on it).' 
		echo 'Target (issue 24): the slowdown under luaunwind no more than under'
		echo 'perf -g, and the recorder'"'"'s CPU no more than perf'"'"'s.'
		echo
	}
	LUW_VM_ICOUNT=1 guest_bench overhead 1800
	exit
fi

# ---- in the guest ---------------------------------------------------------
guest_prelude overhead /tmp/luw-overhead
command -v perf >/dev/null || die "no perf (scripts/deps.sh bench)"

# work ROUNDS KIND: one run; prints "ELAPSED_NS RECORDER_CPU_S CPU_S".  perf
# starts the workload itself (perf record -p fails with ESRCH in this
# guest, whose programs run chrooted over 9p; not looked into): GNU time
# then counts the workload's CPU with perf's, and the workload's own is
# taken out.  luaunwind-ctl record attaches to it with -p.
work() {
	local rounds=$1 kind=$2 pid wl
	# Without ASLR (setarch -R, which execs: the pid is the workload's):
	# where the libraries land moves which return addresses share a slot
	# of the module's step memo, and with it a sample's cost by a few
	# hundred instructions from boot to boot; without, runs repeat.
	local lj=(setarch -R luajit tests/bench/overhead.lua "$W/go" "$rounds")
	rm -f "$W/go" "$W/rt"
	case $kind in
	alone | luaunwind | luaunwind-raw) wl=("${lj[@]}") ;;
	perf-g) wl=(/usr/bin/time -f '%U %S' -o "$W/rt" perf record -e cpu-clock -F 999 -g -o "$W/perf.data" -- "${lj[@]}") ;;
	perf-dwarf) wl=(/usr/bin/time -f '%U %S' -o "$W/rt" perf record -e cpu-clock -F 999 --call-graph dwarf -o "$W/perf.data" -- "${lj[@]}") ;;
	esac
	"${wl[@]}" >"$W/w.out" 2>"$W/w.err" &
	pid=$!
	for _ in $(seq 300); do grep -q ready "$W/w.out" && break; sleep 0.1; done
	grep -q ready "$W/w.out" || die "$kind: the workload did not start: $(cat "$W/w.out" "$W/w.err")"
	case $kind in
	luaunwind)
		/usr/bin/time -f '%U %S' -o "$W/rt" "$CTL" record -p "$pid" -o "$W/rec.luw" \
			--freq 999 >"$W/rec.out" 2>&1 &
		kids="$kids $!"
		;;
	luaunwind-raw)
		"$CTL" attach "$pid" --freq 999 >"$W/rec.out" 2>&1 || die "attach: $(cat "$W/rec.out")"
		/usr/bin/time -f '%U %S' -o "$W/rt" "$CTL" dump --raw >/dev/null 2>>"$W/rec.out" &
		kids="$kids $!"
		;;
	esac
	# Attached or started well before the work begins.
	sleep 2
	touch "$W/go"
	wait
	grep -q '^elapsed' "$W/w.out" || die "$kind: no result: $(cat "$W/w.out" "$W/w.err")"
	awk -v kind="$kind" -v rt="$W/rt" '/^elapsed/ {
		c = 0
		if ((getline l < rt) > 0) {
			split(l, f, " ")
			c = f[1] + f[2]
			if (kind ~ /^perf/)
				c -= $4
		}
		printf "%s %.2f %s\n", $2, c, $4
	}' "$W/w.out"
}

# depth KIND: of the last run's recording, the frames a sample holds and
# the share of samples whose stack reaches the program's main(), whole to
# the bottom (below main, perf's unwinders and ours name libc's frames
# differently): "FRAMES SHARE".  What a sample costs is worth knowing with
# what it gives: perf -g follows rbp, which Debian's luajit does not keep
# as a frame pointer, so its stacks go astray near the top; dwarf unwinds
# a copy of the stack's top 8 KiB after the fact, in perf script, and
# names no Lua function.
depth() {
	case $1 in
	luaunwind)
		"$K/luaunwind-report" "$W/rec.luw" 2>/dev/null | awk '
			{ c = $NF; $NF = ""; n += c; f += c * split($0, a, ";")
			  if ($0 ~ /(^|;)main(;|$)/) b += c }
			END { if (n) printf "%.1f %.0f%%\n", f / n, 100 * b / n }' ;;
	perf-*)
		perf script -F ip,sym -i "$W/perf.data" 2>/dev/null | awk '
			NF == 0 { if (k) { n++; f += k; b += bot }; k = 0; bot = 0; next }
			{ k++; if ($2 == "main") bot = 1 }
			END { if (k) { n++; f += k; b += bot }
			      if (n) printf "%.1f %.0f%%\n", f / n, 100 * b / n }' ;;
	esac
}

# About 2 s of work alone (virtual: instructions).
cal=$(work 10 alone | cut -d' ' -f1)
[ -n "$cal" ] || die "calibration failed"
rounds=$(awk -v ns="$cal" 'BEGIN { n = int(10 * 2e9 / ns); print n < 10 ? 10 : n }')
kinds="alone luaunwind luaunwind-raw perf-g perf-dwarf"
for i in 1 2 3; do
	for k in $kinds; do
		work "$rounds" "$k" >>"$W/res.$k" || die "$k"
		echo "  run $i $k: $(tail -1 "$W/res.$k")" >&2
		[ "$i" = 3 ] && depth "$k" >"$W/depth.$k"
	done
done
base=$(cut -d' ' -f3 "$W/res.alone" | median)
wbase=$(cut -d' ' -f1 "$W/res.alone" | median)
R "overhead.lua, $rounds rounds (about 2 s alone); 3 runs of each kind,"
R "interleaved; medians.  Target CPU: the workload's own CPU time, which"
R "holds the sample handler's (hardirq, on its CPU) and not the"
R "recorder's; its ratio to running alone is what profiling costs the"
R "target.  Wall: one CPU, so the recorder's work is in it too.  Recorder"
R "CPU: user + system (perf's includes its work after the target exits:"
R "build-ids).  Frames: a sample's, in the last run's recording (perf's"
R "as perf script gives them), and the share of samples whose stack"
R "reaches the program's main() (the bottom of the thread)."
R ""
R "| kind | target CPU s | target slowdown | runs (s) | wall s | wall slowdown | recorder CPU s | frames | to main() |"
R "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for k in $kinds; do
	m=$(cut -d' ' -f3 "$W/res.$k" | median)
	w=$(cut -d' ' -f1 "$W/res.$k" | median)
	c=$(cut -d' ' -f2 "$W/res.$k" | median)
	runs=$(cut -d' ' -f3 "$W/res.$k" | awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $1 }')
	d=$(cat "$W/depth.$k" 2>/dev/null)
	R "$(awk -v k="$k" -v m="$m" -v b="$base" -v w="$w" -v wb="$wbase" -v c="$c" -v runs="$runs" -v d="${d:-- -}" \
		'BEGIN { split(d, dd, " "); printf "| %s | %.3f | %+.1f%% | %s | %.2f | %+.1f%% | %.2f | %s | %s |", k, m, (m / b - 1) * 100, runs, w / 1e9, (w / wb - 1) * 100, c, dd[1], dd[2] }')"
done
R ""
