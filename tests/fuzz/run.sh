#!/usr/bin/env bash
# Build the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined)
# in BUILD_DIR and run each for SECONDS, seeded with a copy of the corpus,
# the fixtures and the kept regressions (the repository is never written).
#
# usage: tests/fuzz/run.sh BUILD_DIR SECONDS
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: run.sh BUILD_DIR SECONDS}
secs=${2:?usage: run.sh BUILD_DIR SECONDS}
jobs=${JOBS:-2}
# Inputs up to 64 KiB: the compact seeds and the fixtures' first 64 KiB
# (libFuzzer cuts longer seeds); longer inputs only slow mutation down.
max_len=65536

case "$build" in /*) ;; *) build="$top/$build" ;; esac
if [ ! -f "$build/CMakeCache.txt" ]; then
	CC=clang cmake -S "$top/userspace" -B "$build" \
		-DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DLUW_FUZZ=ON -DLUW_BIN_DIR="$build/bin" >/dev/null
fi
cmake --build "$build" -j "$jobs" --target fuzz_sysprof fuzz_memprof fuzz_heapsnap

# fuzz KIND: one target for SECONDS; its verdict on stdout, 0 or 1.
fuzz() {
	local kind=$1 corpus="$build/corpus/$1" art="$build/artifacts/$1"
	local log="$build/fuzz_$1.log"
	rm -rf "$corpus"
	mkdir -p "$corpus" "$art"
	find "$top/tests/fuzz/corpus" "$top/tests/fuzz/regressions" \
		-maxdepth 1 -type f ! -name 'README*' -exec cp {} "$corpus/" \;
	cp "$top"/tests/fixtures/*.bin "$corpus/"
	echo "check-fuzz: fuzz_$kind for ${secs}s (log: $log)"
	if "$build/tests/fuzz/fuzz_$kind" -max_total_time="$secs" \
		-max_len=$max_len -rss_limit_mb=1024 -timeout=25 \
		-print_final_stats=1 -artifact_prefix="$art/" "$corpus" \
		>"$log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" |
			sed "s/^/  fuzz_$kind: /" || true
		return 0
	fi
	echo "check-fuzz: fuzz_$kind FAILED; the input is in $art/:" >&2
	ls -l "$art" >&2 || true
	grep -E 'ERROR|SUMMARY|fuzz property failed|==[0-9]+==' "$log" |
		head -20 >&2 || true
	echo "keep it in tests/fuzz/regressions/ once understood" >&2
	return 1
}

# Each target is one process: with two jobs they run side by side, each
# printing its verdict whole when it ends.
kinds=(sysprof memprof heapsnap)
status=0
if [ "$jobs" -ge 2 ]; then
	out=$(mktemp -d)
	pids=()
	for kind in "${kinds[@]}"; do
		fuzz "$kind" >"$out/$kind" 2>&1 &
		pids+=($!)
	done
	for i in "${!kinds[@]}"; do
		wait "${pids[$i]}" || status=1
		cat "$out/${kinds[$i]}"
	done
	rm -rf "$out"
else
	for kind in "${kinds[@]}"; do fuzz "$kind" || status=1; done
fi
exit $status
