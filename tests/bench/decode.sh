#!/usr/bin/env bash
# Decode speed and memory of luaunwind-report on synthesised Tarantool
# streams (figures only, nothing asserted on time).
#
# luw-synth (tests/encoder) repeats a fixture's workload: its symbols and
# stacks, memprof events replayed with rotating heap addresses, sysprof
# samples drawn from the fixture's.  Those memprof streams free what they
# allocate at once; the memprof-heap streams (luw-synth --heap) are shaped
# like a service's: a live heap growing to 300k (5.5 MB stream) or 2M
# (200 MB) chunks, reallocs, 2000 allocating Lua functions declared as the
# stream goes.  Each stream is decoded on one core
# (taskset -c 0) under /usr/bin/time; best of ROUNDS by wall time.  The
# 10 MB streams of the same workloads show that memory does not grow with
# the stream.  The figures and the machine go to the decode section of
# tests/bench/RESULTS.md (between its marker comments; other sections stay).
# The 5.5 MB heap stream is also run once under callgrind (valgrind): its
# instruction count is the figure that the machine's load does not move.
#
# usage: tests/bench/decode.sh [BUILD_DIR]
#   LUW_BENCH_ROUNDS (default 3), LUW_BENCH_KEEP=1 keeps build/bench/*.bin
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
build=${1:-$top/build}
report=$build/bin/luaunwind-report
synth=$build/userspace/tests/encoder/luw-synth
work=$build/bench
results=$top/tests/bench/RESULTS.md
rounds=${LUW_BENCH_ROUNDS:-3}
begin='<!-- decode-bench:begin -->'
end='<!-- decode-bench:end -->'

for t in "$report" "$synth"; do
	[ -x "$t" ] || { echo "decode.sh: $t not built (make userspace)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "decode.sh: /usr/bin/time missing (scripts/deps.sh bench)" >&2; exit 1; }
mkdir -p "$work"
# Other work on the machine slows the figures down: record how busy it was.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# name fixture bytes [live chunks: a --heap stream]
streams=(
	"memprof-500MB memprof_basic 500000000"
	"memprof-10MB memprof_basic 10000000"
	"memprof-heap-5MB memprof_basic 5500000 300000"
	"memprof-heap-200MB memprof_basic 200000000 2000000"
	"sysprof-200MB sysprof_callchain 200000000"
	"sysprof-10MB sysprof_callchain 10000000"
)
declare -A live
for s in "${streams[@]}"; do
	read -r name fix bytes nlive <<<"$s"
	if [ -n "$nlive" ]; then
		# luw-synth: allocs A reallocs R frees F symtab S live_end L ...
		live[$name]=$("$synth" --heap "$nlive" "$top/tests/fixtures/$fix.bin" \
			"$bytes" "$work/$name.bin" 1 2>&1 >/dev/null |
			awk '{ for (i = 1; i < NF; i++) if ($i == "live_end") print $(i + 1) }')
	else
		"$synth" "$top/tests/fixtures/$fix.bin" "$bytes" "$work/$name.bin" 1
	fi
done

# One measurement: "wall user sys maxrss_kb" of the best round.
measure() {
	local file=$1 mode=$2 best="" line
	for _ in $(seq "$rounds"); do
		# shellcheck disable=SC2086
		/usr/bin/time -f '%e %U %S %M' -o "$work/time.out" \
			taskset -c 0 "$report" $mode "$file" >/dev/null
		line=$(tail -1 "$work/time.out")
		if [ -z "$best" ] || awk -v a="$line" -v b="$best" \
			'BEGIN { split(a, x); split(b, y); exit !(x[1] < y[1]) }'; then
			best=$line
		fi
	done
	echo "$best"
}

# Instructions executed (callgrind's Ir, whole process: start, decoding
# and output): unlike time, the count hardly moves when other programs
# load the machine.  Only on the small heap stream (callgrind runs ~50x
# slower); "-" without valgrind.
instructions() {
	local file=$1 mode=$2
	if ! command -v valgrind >/dev/null || [ "$(stat -c %s "$file")" -gt 20000000 ]; then
		echo -
		return
	fi
	# shellcheck disable=SC2086
	valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$report" $mode "$file" 2>&1 >/dev/null |
		awk '/Collected :/ { print $NF }'
}

# The constant part of the peak RSS: the program on a small stream.
read -r _ _ _ base_rss <<<"$(measure "$top/tests/fixtures/memprof_basic.bin" "")"

rows=()
heaprows=()
printf '%-18s %-12s %5s %7s %6s %8s %9s  %s\n' stream mode MB wall_s MB/s cpu_MB/s peak_RSS target
for s in "${streams[@]}"; do
	read -r name fix bytes <<<"$s"
	case $name in
	memprof*) modes=("" "--leak-only") ;;
	*) modes=("--folded" "--compat") ;;
	esac
	size=$(stat -c %s "$work/$name.bin")
	for mode in "${modes[@]}"; do
		read -r wall user sys rss <<<"$(measure "$work/$name.bin" "$mode")"
		if [ -n "${live[$name]:-}" ]; then
			ir=$(instructions "$work/$name.bin" "$mode")
			# Rate targets include process start (wall time); memory:
			# at most 48 bytes per live chunk over the constant part.
			row=$(awk -v n="$name" -v m="${mode:-(default)}" -v b="$size" \
				-v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
				-v l="${live[$name]}" -v r0="$base_rss" -v ir="$ir" 'BEGIN {
				mb = b / 1e6; cpu = u + s
				rate = w > 0 ? mb / w : 0
				want = mb < 100 ? 150 : 300
				per = (r - r0) * 1024 / l
				# the live-heap table alone: 12-byte slots, load <= 3/4
				for (cap = 256; cap / 4 * 3 < l; cap *= 2) ;
				if (ir != "-")
					ir = sprintf("%.1fM", ir / 1e6)
				printf "%s|%s|%.1f|%.2f|%.0f|%.0f|%s|%d|%.1f MiB|%.0f|%.0f|%s, %s",
					n, m, mb, w, rate, (cpu > 0 ? mb / cpu : 0), ir, l,
					r / 1024, per, cap * 12 / l,
					(rate >= want ? "rate met" : "rate missed (>= " want ")"),
					(per <= 48 ? "memory met" : "memory missed") }')
			heaprows+=("$row")
			IFS='|' read -r a b c d e f _ _ g _ _ h <<<"$row"
		else
			row=$(awk -v n="$name" -v m="${mode:-(default)}" -v b="$size" \
				-v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
				mb = b / 1e6; cpu = u + s
				rate = w > 0 ? mb / w : 0
				if (n ~ /^memprof/)
					t = (rate >= 300 && r < 65536) ? "met" : "missed"
				else
					t = rate >= 200 ? "met" : "missed"
				if (mb < 100)
					t = "(too short to time)"
				printf "%s|%s|%.0f|%.2f|%.0f|%.0f|%.1f MiB|%s", n, m, mb, w,
					rate, (cpu > 0 ? mb / cpu : 0), r / 1024, t }')
			rows+=("$row")
			IFS='|' read -r a b c d e f g h <<<"$row"
		fi
		printf '%-18s %-12s %5s %7s %6s %8s %9s  %s\n' "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h"
	done
done
[ "${LUW_BENCH_KEEP:-0}" = 1 ] || rm -f "$work"/*.bin "$work/time.out"

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
section=$(
	echo "$begin"
	echo "## Decoding sysprof/memprof streams (tests/bench/decode.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $cpu, $(nproc) cores, Linux $(uname -r);"
	echo "\`luaunwind-report\` on one core (\`taskset -c 0\`), best of $rounds by wall time;"
	echo "streams synthesised by \`luw-synth\` from \`memprof_basic.bin\` and"
	echo "\`sysprof_callchain.bin\` (a fixed workload: the fixture's symbols and stacks)."
	echo "MB = 10^6 bytes; MB/s by wall time, CPU MB/s by user+system time (the"
	echo "better guide when the load average below is high: wall time then"
	echo "includes waiting for a core)."
	echo "Targets: memprof >= 300 MB/s with peak RSS < 64 MB; sysprof >= 200 MB/s."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after"
	echo "(above 0 means other programs shared the cores during the run)."
	echo
	echo "| stream | mode | MB | wall s | MB/s | CPU MB/s | peak RSS | target |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
	for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
	echo
	echo "### Service-shaped memprof streams"
	echo
	echo "\`luw-synth --heap LIVE\` (tests/encoder/gen.h): the live heap grows to"
	echo "LIVE chunks and then churns; reallocs are 10% of the events while it"
	echo "grows and 30% after, mostly at the chunk's own site; frees mostly by the"
	echo "GC (INTERNAL); 2000 allocating Lua functions with skewed use, each"
	echo "declared by a symtab event on first use, plus the fixture's C symbols."
	echo "Targets: >= 150 MB/s including process start on the 5 MB stream,"
	echo ">= 300 MB/s on the large one; peak RSS <= 48 bytes per live chunk plus"
	echo "a constant.  Constant: the peak RSS on memprof_basic.bin ($(awk -v r="$base_rss" 'BEGIN { printf "%.1f", r / 1024 }') MiB);"
	echo "B/live = (peak RSS - constant) / live chunks at the end, an upper bound"
	echo "for what live chunks cost, as it also holds what grows with allocation"
	echo "sites and site pairs (the report's records); table B/live = the live-heap"
	echo "table alone (12-byte slots, load <= 3/4) at that count."
	echo "A real stream could not be captured: Debian's tarantool is 2.6.0, which"
	echo "has no memory profiler (no \`misc\` module; the binary holds no memprof"
	echo "code; misc.memprof arrived in later Tarantool releases)."
	echo
	echo "Instructions: callgrind's count for the whole process (start, decoding,"
	echo "output), one run; it barely changes with the machine's load, unlike the"
	echo "times (only the 5.5 MB stream: callgrind runs ~50x slower)."
	echo
	echo "| stream | mode | MB | wall s | MB/s | CPU MB/s | instructions | live chunks | peak RSS | B/live | table B/live | targets |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
	for r in "${heaprows[@]}"; do echo "| ${r//|/ | } |"; done
	echo "$end"
)

# Replace our section (or append it); everything else stays.
results_put decode <<<"$section"
echo "decode.sh: figures written to $results"
