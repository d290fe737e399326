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
cmake --build "$build" -j "$jobs" --target fuzz_sysprof fuzz_memprof

status=0
for kind in sysprof memprof; do
	corpus="$build/corpus/$kind"
	art="$build/artifacts/$kind"
	rm -rf "$corpus"
	mkdir -p "$corpus" "$art"
	find "$top/tests/fuzz/corpus" "$top/tests/fuzz/regressions" \
		-maxdepth 1 -type f ! -name 'README*' -exec cp {} "$corpus/" \;
	cp "$top"/tests/fixtures/*.bin "$corpus/"
	log="$build/fuzz_$kind.log"
	echo "check-fuzz: fuzz_$kind for ${secs}s (log: $log)"
	if "$build/tests/fuzz/fuzz_$kind" -max_total_time="$secs" \
		-max_len=$max_len -rss_limit_mb=1024 -timeout=25 \
		-print_final_stats=1 -artifact_prefix="$art/" "$corpus" \
		>"$log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" |
			sed "s/^/  fuzz_$kind: /" || true
	else
		status=1
		echo "check-fuzz: fuzz_$kind FAILED; the input is in $art/:" >&2
		ls -l "$art" >&2 || true
		grep -E 'ERROR|SUMMARY|fuzz property failed|==[0-9]+==' "$log" |
			head -20 >&2 || true
		echo "keep it in tests/fuzz/regressions/ once understood" >&2
	fi
done
exit $status
