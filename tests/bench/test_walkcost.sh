#!/usr/bin/env bash
# luw-walkcost (tests/bench/walkcost.c) on the RFC payload under Debian's
# luajit, JIT off: every sample it keeps has a merged stack (host frames
# down to the process's start, and Lua frames: lua_payload's recursion, or
# the main chunk alone when the stop lands in its own loop), and its
# replay over the snapshot walks exactly as the live capture did (the
# tool fails otherwise); it counts the reads the module's walk makes (at
# least one per Lua frame: the walkers read each frame's slots), each of
# 1 to 64 bytes, within the sample's budget.
# --copycost prints its three figures.
# usage: test_walkcost.sh LUW_WALKCOST FIXTURES
set -uo pipefail
wc=$1
fix=$2
. "$(dirname "$0")/../unit/common/testlib.sh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cc -O2 -fPIC -shared -o "$tmp/libc_payload.so" "$fix/workloads/c_payload.c" || exit 1
luajit "$fix/workloads/payload_stock.lua" nojit 120 "$tmp" >"$tmp/out" 2>&1 &
pid=$!
pids+=("$pid")
wait_line "$tmp/out" ready "$pid" || { cat "$tmp/out"; exit 1; }
sleep 0.3

"$wc" -n 12 -i 20 "$pid" >"$tmp/wc.txt" 2>"$tmp/wc.err"
rc=$?
[ "$rc" = 0 ] || { cat "$tmp/wc.err"; fail "luw-walkcost exited $rc"; }
n=$(grep -c '^sample ' "$tmp/wc.txt")
[ "$n" = 12 ] || fail "12 samples wanted, got $n"
# sample I tid T host H lua L reads R faults F bytes B pages P walk_ns W
#   read_ns X
bad=$(awk '$1 == "sample" && !($6 >= 4 && $8 >= 1 && $10 >= $8 &&
	$10 <= 1024 && $12 <= 16 && $14 >= $10 && $14 <= 64 * $10 &&
	$16 >= 1 && $18 > 0) { print }' "$tmp/wc.txt")
[ -z "$bad" ] || fail "implausible samples: $bad"
# The payload spends nearly all its time in the recursion, so most samples
# show it (main chunk and at least one lua_payload frame).
deep=$(awk '$1 == "sample" && $8 >= 2' "$tmp/wc.txt" | wc -l)
[ "$deep" -ge $((n / 2)) ] ||
	fail "only $deep of $n samples inside lua_payload: $(cat "$tmp/wc.txt")"
for k in host_frames lua_frames reads bytes walk_ns read_ns code_ns; do
	grep -q "^summary $k median [0-9]* p99 [0-9]*$" "$tmp/wc.txt" ||
		fail "no summary of $k"
done
# The target runs on after the samples, not left stopped.
st=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || echo gone)
case $st in R|S) ;; *) fail "payload state after sampling: $st" ;; esac

"$wc" --copycost >"$tmp/copy.txt"
rc=$?
[ "$rc" = 0 ] || fail "--copycost exited $rc"
grep -Eq '^copy syscall_ns [0-9.]+ copy8_ns [0-9.]+ byte_ns [0-9.]+$' \
	"$tmp/copy.txt" || fail "--copycost output: $(cat "$tmp/copy.txt")"

[ "$fails" = 0 ] && echo "test_walkcost: ok ($n samples)"
exit $((fails != 0))
