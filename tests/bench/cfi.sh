#!/usr/bin/env bash
# Unwind-table and symbol loading speed (figures only, nothing asserted):
# for libc, Debian's luajit, libluajit-5.1 and tarantool, the time to build
# the compact table from .eh_frame with libdw and to load the symbols,
# median of 5 cold builds (each run of the tool starts with empty caches);
# then the cost of one ptrace probe + unwind of a live luajit FFI loop.
#
# usage: tests/bench/cfi.sh [BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
tool=$build/bin/luaunwind-hostunwind
[ -x "$tool" ] || { echo "cfi.sh: $tool not built (make userspace)" >&2; exit 1; }

libc=$(ldd /usr/bin/luajit | awk '/libc\.so/ { print $3 }')
files=("$libc" /usr/bin/luajit)
for f in /usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2 /usr/bin/tarantool; do
	[ -e "$f" ] && files+=("$(readlink -f "$f")")
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "== unwind tables from .eh_frame (libdw) and symbols (libelf), median of 5"
printf '%-50s %7s %8s %9s %9s %10s %8s\n' file FDEs rows entries bytes table_ms sym_ms
for f in "${files[@]}"; do
	: >"${TMPDIR:-/tmp}/luw-bench.$$"
	for _ in 1 2 3 4 5; do
		"$tool" --table "$f" | grep '^table ' >>"${TMPDIR:-/tmp}/luw-bench.$$"
	done
	line=$(head -1 "${TMPDIR:-/tmp}/luw-bench.$$")
	fdes=$(sed -E 's/.*: ([0-9]+) FDEs.*/\1/' <<<"$line")
	rows=$(sed -E 's/.* ([0-9]+) rows.*/\1/' <<<"$line")
	ents=$(sed -E 's/.*-> ([0-9]+) entries.*/\1/' <<<"$line")
	bytes=$(sed -E 's/.* ([0-9]+) bytes.*/\1/' <<<"$line")
	tms=$(sed -E 's/.*built in ([0-9.]+) ms.*/\1/' "${TMPDIR:-/tmp}/luw-bench.$$" | median)
	sms=$(sed -E 's/.*loaded in ([0-9.]+) ms.*/\1/' "${TMPDIR:-/tmp}/luw-bench.$$" | median)
	printf '%-50s %7s %8s %9s %9s %10s %8s\n' "$f" "$fdes" "$rows" "$ents" "$bytes" "$tms" "$sms"
done
rm -f "${TMPDIR:-/tmp}/luw-bench.$$"

so=$build/userspace/tests/unit/c_payload.so
if [ -e "$so" ]; then
	echo "== live probes: luajit -joff calling c_payload through the FFI"
	dir=$(mktemp -d)
	cat >"$dir/ffi.lua" <<'LUA'
local ffi = require'ffi'
ffi.cdef'double c_payload(double n);'
local c = ffi.load(arg[1])
while true do c.c_payload(25) end
LUA
	/usr/bin/luajit -joff "$dir/ffi.lua" "$so" &
	pid=$!
	sleep 0.3
	t0=$(date +%s%N)
	"$tool" -n 500 -i 0 "$pid" >"$dir/out"
	t1=$(date +%s%N)
	kill "$pid"; wait "$pid" 2>/dev/null || true
	awk -v ns=$((t1 - t0)) '/^probe/ { n++; f += $6 } /^summary/ { c = $NF }
		END { printf "%d probes, %d complete, %.1f frames each, %.1f us per probe (stop, read regs, unwind, symbolize, print, resume; tables cached)\n", n, c, f / n, ns / n / 1000 }' "$dir/out"
	rm -rf "$dir"
fi
