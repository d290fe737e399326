#!/usr/bin/env bash
# Heap snapshots (luaunwind-ctl heap) of growing heaps: how fast the walk
# reads a heap, how long the target is stopped, how much memory the tool
# itself takes (figures only, nothing asserted on time).
#
# The target is Debian's luajit running tests/fixtures/workloads/heap.lua
# with a bulk of 1 KiB strings (arg 1, MiB) or of small tables (arg 2,
# MiB; 80 bytes each, so many more objects per MiB and every one of them
# on a path).  Each heap is snapshotted ROUNDS times stopped and once
# --live, under /usr/bin/time; best of the rounds by pause.  Walk speed is
# gc.total over the walk's time; the pause is per 100 MB of gc.total.  The
# figures and the machine go to the heap section of tests/bench/RESULTS.md.
#
# usage: tests/bench/heap.sh [BUILD_DIR]
#   LUW_BENCH_ROUNDS (default 3), LUW_BENCH_HEAPS (default "100 500 1000"
#   MiB of strings, then the same of tables)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
build=${1:-$top/build}
ctl=$build/bin/luaunwind-ctl
report=$build/bin/luaunwind-report
work=$build/bench/heap
rounds=${LUW_BENCH_ROUNDS:-3}
heaps=${LUW_BENCH_HEAPS:-"100 500 1000"}

[ -x "$ctl" ] || { echo "heap.sh: $ctl not built (make userspace)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "heap.sh: /usr/bin/time missing (scripts/deps.sh bench)" >&2; exit 1; }
command -v luajit >/dev/null || { echo "heap.sh: luajit missing (scripts/deps.sh bench)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
tp=
trap '[ -n "$tp" ] && kill "$tp" 2>/dev/null; exec 7>&- 2>/dev/null || true' EXIT

# one KIND MIB: the target with MIB of KIND, snapshotted; prints a row.
one() {
	local kind=$1 mib=$2 args best= live= rss= tot= objs= r p w m t o
	if [ "$kind" = strings ]; then args="$mib 0"; else args="0 $mib"; fi
	rm -f "$work/in"
	mkfifo "$work/in"
	luajit "$top/tests/fixtures/workloads/heap.lua" $args <"$work/in" >"$work/out" 2>&1 &
	tp=$!
	exec 7>"$work/in"
	for _ in $(seq 1200); do grep -q '^ready' "$work/out" && break; sleep 0.25; done
	for r in $(seq "$rounds"); do
		/usr/bin/time -f 'rss %M' "$ctl" heap -p "$tp" -o "$work/snap" 2>"$work/err"
		p=$(sed -n 's/.*paused \([0-9.]*\) ms.*/\1/p' "$work/err")
		m=$(sed -n 's/^rss //p' "$work/err")
		if [ -z "$best" ] || awk -v a="$p" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$p
			rss=$m
			read -r t o < <("$report" --top 1 "$work/snap" |
				sed -n 's/.*: \([0-9]*\) objects, .*gc.total \([0-9]*\) .*/\2 \1/p' | head -1)
			tot=$t
			objs=$o
			w=$(sed -n 's/.*the walk \([0-9.]*\) ms.*/\1/p' < <("$report" --top 1 "$work/snap"))
		fi
	done
	"$ctl" heap --live -p "$tp" -o "$work/snap" 2>"$work/err"
	live=$(sed -n 's/.*walked live in \([0-9.]*\) ms.*/\1/p' "$work/err")
	exec 7>&-
	wait "$tp" 2>/dev/null || true
	tp=
	awk -v k="$kind" -v tot="$tot" -v o="$objs" -v p="$best" -v w="$w" -v l="$live" -v rss="$rss" 'BEGIN {
		printf "| %s | %.0f | %d | %.0f | %.0f | %.0f | %.0f | %.1f |\n", k, tot / 1048576, o,
			tot / 1e6 / (w / 1000), p, p / (tot / 1e8), l, rss / 1024 }'
}

{
	echo "<!-- heap-bench:begin -->"
	echo "## Heap snapshots (tests/bench/heap.sh)"
	echo
	echo "$(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r), load before: $load_before;"
	echo "Debian's luajit, best of $rounds by pause."
	echo
	echo "| bulk | heap MB | objects | walk MB/s | pause ms | pause ms / 100 MB | --live walk ms | tool RSS MB |"
	echo "|---|---|---|---|---|---|---|---|"
	for kind in strings tables; do
		for mib in $heaps; do
			one "$kind" "$mib"
		done
	done
	echo
	echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "<!-- heap-bench:end -->"
} | tee "$work/section"
results_put heap <"$work/section"
