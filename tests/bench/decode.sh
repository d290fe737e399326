#!/usr/bin/env bash
# Decode speed and memory of luaunwind-report on synthesised Tarantool
# streams (figures only, nothing asserted on time).
#
# luw-synth (tests/encoder) repeats a fixture's workload: its symbols and
# stacks, memprof events replayed with rotating heap addresses, sysprof
# samples drawn from the fixture's.  Each stream is decoded on one core
# (taskset -c 0) under /usr/bin/time; best of ROUNDS by wall time.  The
# 10 MB streams of the same workloads show that memory does not grow with
# the stream.  The figures and the machine go to the decode section of
# tests/bench/RESULTS.md (between its marker comments; other sections stay).
#
# usage: tests/bench/decode.sh [BUILD_DIR]
#   LUW_BENCH_ROUNDS (default 3), LUW_BENCH_KEEP=1 keeps build/bench/*.bin
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
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

# name fixture bytes
streams=(
	"memprof-500MB memprof_basic 500000000"
	"memprof-10MB memprof_basic 10000000"
	"sysprof-200MB sysprof_callchain 200000000"
	"sysprof-10MB sysprof_callchain 10000000"
)
for s in "${streams[@]}"; do
	read -r name fix bytes <<<"$s"
	"$synth" "$top/tests/fixtures/$fix.bin" "$bytes" "$work/$name.bin" 1
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

rows=()
printf '%-14s %-12s %5s %7s %6s %8s %9s  %s\n' stream mode MB wall_s MB/s cpu_MB/s peak_RSS target
for s in "${streams[@]}"; do
	read -r name fix bytes <<<"$s"
	case $name in
	memprof*) modes=("" "--leak-only") ;;
	*) modes=("--folded" "--compat") ;;
	esac
	size=$(stat -c %s "$work/$name.bin")
	for mode in "${modes[@]}"; do
		read -r wall user sys rss <<<"$(measure "$work/$name.bin" "$mode")"
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
		printf '%-14s %-12s %5s %7s %6s %8s %9s  %s\n' "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h"
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
	echo "MB = 10^6 bytes; MB/s by wall time, CPU MB/s by user+system time."
	echo "Targets: memprof >= 300 MB/s with peak RSS < 64 MB; sysprof >= 200 MB/s."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after"
	echo "(above 0 means other programs shared the cores during the run)."
	echo
	echo "| stream | mode | MB | wall s | MB/s | CPU MB/s | peak RSS | target |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
	for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
	echo "$end"
)

# Replace our section (or append it); everything else stays.
tmp=$(mktemp)
if [ -f "$results" ] && grep -qF "$begin" "$results"; then
	awk -v b="$begin" -v e="$end" -v sec="$section" '
		$0 == b { print sec; skip = 1; next }
		$0 == e { skip = 0; next }
		!skip { print }' "$results" >"$tmp"
else
	{ [ -f "$results" ] && cat "$results" && echo; echo "$section"; } >"$tmp"
fi
mv "$tmp" "$results"
chmod 644 "$results"
echo "decode.sh: figures written to $results"
