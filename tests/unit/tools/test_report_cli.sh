#!/bin/bash
# luaunwind-report's command line: exit codes and messages for usage
# errors, unreadable inputs and truncated or corrupt streams.
set -u
bin=$1/luaunwind-report
fix=$2
. "$(dirname "$0")/../common/testlib.sh"

expect 1 'no input file' "$bin"
expect 1 "unknown option '--bogus'" "$bin" --bogus "$fix/memprof_basic.bin"
expect 1 'more than one input' "$bin" "$fix/memprof_basic.bin" "$fix/memprof_leak.bin"
expect 1 'conflicts' "$bin" --compat --vmstates "$fix/sysprof_leaf.bin"
expect 1 'leak-only is for memprof' "$bin" --leak-only "$fix/sysprof_leaf.bin"
expect 1 'no option but --leak-only' "$bin" --compat "$fix/memprof_basic.bin"
expect 1 "^luaunwind-report: $tmp/missing.bin: No such file or directory$" "$bin" "$tmp/missing.bin"
expect 1 "^luaunwind-report: $tmp: Is a directory$" "$bin" "$tmp"

"$bin" --help >"$tmp/help" 2>&1
if [ $? -ne 0 ] || ! grep -q -- '--leak-only' "$tmp/help"; then
	echo "FAIL: --help"; fail=1
else
	echo "ok: --help"
fi

# Not a profile at all.
printf 'hello, world\n' >"$tmp/text"
expect 2 "^luaunwind-report: $tmp/text: offset 0: expected 'ljs' prologue$" "$bin" "$tmp/text"
: >"$tmp/empty"
expect 2 "offset 0: stream ends, expected prologue$" "$bin" "$tmp/empty"

# Truncated streams: the decoded part is reported, then the offset error.
for f in sysprof_callchain memprof_basic; do
	size=$(stat -c %s "$fix/$f.bin")
	for cut in 5 123530 $((size / 2)) $((size - 1)); do
		head -c "$cut" "$fix/$f.bin" >"$tmp/cut.bin"
		expect 2 "^luaunwind-report: $tmp/cut.bin: offset [0-9]+: stream ends, expected .+$" \
			"$bin" "$tmp/cut.bin"
		off=$(sed -n 's/.*: offset \([0-9]*\): .*/\1/p' "$tmp/err")
		if [ -n "$off" ] && [ "$off" -gt "$cut" ]; then
			echo "FAIL: offset $off beyond the cut at $cut"; fail=1
		fi
	done
done
# Half a sysprof stream still reports the samples before the cut.
size=$(stat -c %s "$fix/sysprof_callchain.bin")
head -c $((size - 1)) "$fix/sysprof_callchain.bin" >"$tmp/cut.bin"
"$bin" --vmstates "$tmp/cut.bin" >"$tmp/out" 2>/dev/null
if ! grep -qx 'samples	500' "$tmp/out"; then
	echo "FAIL: a stream cut before its epilogue lost samples:"; cat "$tmp/out"; fail=1
fi
# Half a memprof stream: a report with the sections, then exit 2.
head -c $((size / 2 + 123529)) "$fix/memprof_basic.bin" >"$tmp/cut.bin"
"$bin" "$tmp/cut.bin" >"$tmp/out" 2>/dev/null
if [ $? -ne 2 ] || ! grep -q '^HEAP SUMMARY:$' "$tmp/out" ||
   ! grep -q 'events' "$tmp/out"; then
	echo "FAIL: partial memprof report missing"; fail=1
fi

# Corrupt bytes: a bad sample header in the sysprof body.
cp "$fix/sysprof_callchain.bin" "$tmp/bad.bin"
printf '\x55' | dd of="$tmp/bad.bin" bs=1 seek=123693 conv=notrunc 2>/dev/null
expect 2 "offset 123693: expected sample header 0..12 or 0x80 \(found 0x55\)$" "$bin" "$tmp/bad.bin"
# Trailing bytes after the epilogue.
cat "$fix/memprof_leak.bin" >"$tmp/tail.bin"; printf 'x' >>"$tmp/tail.bin"
expect 2 "offset $(stat -c %s "$fix/memprof_leak.bin"): expected end of stream after the epilogue$" "$bin" "$tmp/tail.bin"
# A symtab of an unsupported version.
printf 'ljs\x02\0\0\0\x80' >"$tmp/v2.bin"
expect 2 "offset 3: expected 'ljs' format version 3 \(stream has 2\)$" "$bin" "$tmp/v2.bin"

# Standard input.
"$bin" --leak-only - <"$fix/memprof_leak.bin" >"$tmp/out" 2>"$tmp/err"
if [ $? -ne 0 ] || ! grep -q '^HEAP SUMMARY:$' "$tmp/out"; then
	echo "FAIL: reading from stdin"; cat "$tmp/err"; fail=1
else
	echo "ok: - reads standard input"
fi
exit $fail
