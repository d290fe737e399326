#!/bin/bash
# --folded keeps the Lua frames that --compat (the reference merge) loses,
# and every sample is counted once.
set -u
bin=$1/luaunwind-report
fix=$2
. "$(dirname "$0")/../common/testlib.sh"

total() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

"$bin" "$fix/sysprof_callchain.bin" >"$tmp/f" || fail=1
"$bin" --folded "$fix/sysprof_callchain.bin" | cmp -s - "$tmp/f" || { echo "FAIL: default is not --folded"; fail=1; }
"$bin" --compat "$fix/sysprof_callchain.bin" >"$tmp/c" || fail=1

check "callchain: 500 samples" '[ "$(total "$tmp/f")" = 500 ]'
# The Lua recursion is in the stream: payload.lua's lua_payload (defined at
# line 4) under the main chunk under pmain, placed after the [lua] marker
# because the host stack has no frame of pmain.
check "callchain: Lua frames kept" \
	'grep -q "^_start;__libc_start_main;\[lua\];pmain;@payload.lua:0;@payload.lua:4;@payload.lua:4" "$tmp/f"'
n=$(grep -c '@payload.lua:4' "$tmp/f")
check "callchain: $n stacks with lua_payload frames" '[ "$n" -ge 10 ]'
lua=$(awk '/@payload.lua:4/ { n += $NF } END { print n + 0 }' "$tmp/f")
check "callchain: $lua of 500 samples in lua_payload (342 LFUNC samples)" '[ "$lua" -ge 342 ]'
check "compat loses them" '! grep -q "@payload.lua" "$tmp/c"'
# The FFI call shows as the fast function that makes it.
check "callchain: ffi.meta.__call named" 'grep -q ";@payload.lua:0;ffi.meta.__call " "$tmp/f"'
# Where the host stack does reach pmain, the Lua frames go right after it.
check "callchain: anchored at the host frame of pmain" \
	'grep -q "^_start;__libc_start_main;__libc_init_first;main;lua_cpcall;lj_BC_FUNCC;pmain;docall;lua_pcall;@payload.lua:0;ffi.meta.__call 2$" "$tmp/f"'
check "callchain: flamegraph.pl syntax" '! grep -Ev "^[^ ;][^;]*(;[^;]+)* [0-9]+$" "$tmp/f" | grep -q .'

"$bin" "$fix/sysprof_callchain_jit.bin" >"$tmp/j" || fail=1
check "jit: 500 samples" '[ "$(total "$tmp/j")" = 500 ]'
t=$(awk '/;TRACE_[0-9]+ @payload.lua:[0-9]+ [0-9]+$/ { n += $NF } END { print n + 0 }' "$tmp/j")
check "jit: $t trace samples named TRACE_n @chunk:line (498)" '[ "$t" = 498 ]'
check "jit: trace 7 starts at payload.lua:6" 'grep -q "^@payload.lua:4;TRACE_7 @payload.lua:6 " "$tmp/j"'

"$bin" "$fix/sysprof_leaf.bin" >"$tmp/l" || fail=1
check "leaf: 250 samples" '[ "$(total "$tmp/l")" = 250 ]'
check "leaf: interpreter samples without frames" 'grep -q "^\[INTERP\] [0-9]*$" "$tmp/l"'
check "leaf: Lua frames without host frames" 'grep -q "^pmain;@payload.lua:0;@payload.lua:4" "$tmp/l"'

"$bin" --vmstates "$fix/sysprof_callchain.bin" >"$tmp/v" || fail=1
check "vmstates" '[ "$(tr "\n" " " <"$tmp/v")" = "samples	500 INTERP	147 LFUNC	342 FFUNC	0 CFUNC	11 GC	0 EXIT	0 RECORD	0 OPT	0 ASM	0 TRACE	0 " ]'
"$bin" --svg "$tmp/f.svg" "$fix/sysprof_callchain.bin" >"$tmp/svgout" || fail=1
check "svg: written, nothing on stdout" '[ -s "$tmp/f.svg" ] && [ ! -s "$tmp/svgout" ]'
check "svg: holds the Lua frames" 'grep -q "@payload.lua:4" "$tmp/f.svg" && grep -q "\[lua\]" "$tmp/f.svg"'
exit $fail
