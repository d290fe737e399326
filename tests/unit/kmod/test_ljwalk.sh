#!/usr/bin/env bash
# The Lua stack walk (kmod/ljwalk.c) on live, unmodified
# processes, through luaunwind-ljprobe (ptrace stops, registers, walk):
#  - the RFC payload with the JIT off on Debian luajit, OpenResty luajit2
#    and tarantool 2.6: >= 95% of 50 samples end in lua_payload frames and
#    start at the main chunk;
#  - the JIT on: samples inside traces name the trace and the Lua frames
#    below it down to the main chunk;
#  - coroutines: the resumer's frames below the coroutine's;
#  - pcall, a metamethod, a tail call, varargs, string.rep;
#  - every target is left running, not stopped, after the probes.
# usage: test_ljwalk.sh BINDIR FIXTURES
set -uo pipefail
bin=$1
fix=$2
top=$(cd "$fix/../.." && pwd)
probe=$bin/luaunwind-ljprobe
wl=$fix/workloads
. "$(dirname "$0")/../common/testlib.sh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cc -O2 -fPIC -shared -o "$tmp/libc_payload.so" "$wl/c_payload.c" || exit 1
"$top/scripts/luajit2-fetch.sh" "$top/build/luajit2" || exit 1
l2=$top/build/luajit2

# start NAME CMD...: runs CMD (killed after 120 s at the latest), waits
# for its "ready" line, sets $pid.
start() {
	local name=$1
	shift
	(cd "$tmp" && exec timeout -s KILL 120 "$@" >"$tmp/$name.out" 2>&1) &
	pid=$!
	pids+=("$pid")
	wait_line "$tmp/$name.out" ready "$pid" ||
		{ fail "$name did not start"; cat "$tmp/$name.out"; return 1; }
	# `timeout` forks: probe the workload, its child.
	local child
	child=$(pgrep -P "$pid" | head -1 || true)
	[ -n "$child" ] && pid=$child
	sleep 0.2
}

# still_running NAME: the target is alive and not left stopped by ptrace.
still_running() {
	local st
	st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)
	case "$st" in
	R|S|D) ;;
	*) fail "$1: target state after probing is '$st'" ;;
	esac
	kill -9 "$pid" 2>/dev/null || true
}

# ratio FILE PATTERN: percentage of "stack" lines matching the ERE.
ratio() {
	local total match
	total=$(grep -c '^stack ' "$1" || true)
	match=$(grep '^stack ' "$1" | grep -Ec "$2" || true)
	[ "$total" -gt 0 ] || { echo 0; return; }
	echo $((100 * match / total))
}

# The RFC payload, JIT off: innermost lua_payload (line 8), root the
# main chunk (first line 0), nothing but lua_payload in between.
payload_re='^stack [0-9]+ (c:0x[0-9a-f]+;)?lua:[^;]*payload_stock\.lua:0:[0-9]+(;lua:[^;]*payload_stock\.lua:8:[0-9?]+)+$'
main_ff_re='^stack [0-9]+ (c:0x[0-9a-f]+;)?lua:[^;]*payload_stock\.lua:0:[0-9]+;ff:[a-z_.]+$'
# In c_payload, called through the FFI from line 19, the Lua stack's
# innermost frame is the main chunk at that line (a C function called by
# the FFI has no Lua frame of its own).
main_ffi_re='^stack [0-9]+ (c:0x[0-9a-f]+;)?lua:[^;]*payload_stock\.lua:0:19$'
check_payload() {
	local name=$1
	shift
	start "$name" "$@" "$wl/payload_stock.lua" nojit 100 "$tmp" || return 0
	if ! "$probe" -n 50 "$pid" >"$tmp/$name.probe" 2>&1; then
		fail "$name: probe failed"; cat "$tmp/$name.probe"
	fi
	# The main loop itself shows as main -> a fast function (the FFI's
	# clib __index), c_payload as main at line 19: complete too, but most
	# time is in lua_payload.
	local r r2
	r=$(ratio "$tmp/$name.probe" "$payload_re|$main_ff_re|$main_ffi_re")
	r2=$(ratio "$tmp/$name.probe" "$payload_re")
	echo "$name: $r% of $(grep -c '^stack ' "$tmp/$name.probe" || true) samples complete, $r2% main -> lua_payload^n"
	[ "$r2" -ge 80 ] || fail "$name: only $r2% in lua_payload"
	head -4 "$tmp/$name.probe"
	grep '^stack ' "$tmp/$name.probe" | head -1 | cut -c1-300
	[ "$r" -ge 95 ] || { fail "$name: only $r% complete payload stacks"; grep '^stack' "$tmp/$name.probe" | grep -Ev "$payload_re|$main_ff_re|$main_ffi_re" | head -5; }
	still_running "$name"
}
check_payload luajit luajit
check_payload luajit2 env LD_LIBRARY_PATH="$l2/usr/lib/x86_64-linux-gnu" "$l2/usr/bin/luajit"
check_payload tarantool tarantool

# JIT on: samples in traces name the trace (vmstate >= 0) and show the
# Lua frames from jit_base down to the main chunk.  tarantool's traces
# keep no DISPATCH register (32-bit refs): G comes from the probe's hint.
trace_re='^stack [0-9]+ (c:0x[0-9a-f]+;)?lua:[^;]*payload_stock\.lua:0:[0-9]+(;lua:[^;]*payload_stock\.lua:8:[0-9?]+)*;trace:[0-9]+:[^;]*payload_stock\.lua:[0-9]+$'
check_jit() {
	local name=$1
	shift
	start "$name" "$@" "$wl/payload_stock.lua" jit 100 "$tmp" || return 0
	if "$probe" -n 10 --want TRACE "$pid" >"$tmp/$name.probe" 2>&1; then
		local r
		r=$(ratio "$tmp/$name.probe" "$trace_re")
		echo "$name: $r% of trace samples show main -> lua_payload* -> TRACE"
		grep '^sample ' "$tmp/$name.probe" | head -1
		[ "$r" -ge 90 ] || { fail "$name: only $r% trace stacks complete"; grep '^stack' "$tmp/$name.probe" | head -3; }
		grep -q '^sample .*vmstate=TRACE raw=[0-9]' "$tmp/$name.probe" || fail "$name: no trace number"
	else
		fail "$name: no trace samples"; tail -3 "$tmp/$name.probe"
	fi
	still_running "$name"
}
check_jit jit-luajit luajit
check_jit jit-luajit2 env LD_LIBRARY_PATH="$l2/usr/lib/x86_64-linux-gnu" "$l2/usr/bin/luajit"
check_jit jit-tarantool tarantool

# Coroutines: work (line 4) in body (line 9) resumed by resumer (line 16)
# from the main chunk.  Same on every target.
coro_re='^stack [0-9]+ (c:0x[0-9a-f]+;)?lua:[^;]*coro\.lua:0:[0-9]+;lua:[^;]*coro\.lua:16:[0-9]+;ff:coroutine\.resume;lua:[^;]*coro\.lua:9:[0-9]+;lua:[^;]*coro\.lua:4:[0-9?]+$'
check_coro() {
	local name=$1
	shift
	start "$name" "$@" "$wl/coro.lua" || return 0
	"$probe" -n 20 -v "$pid" >"$tmp/$name.probe" 2>&1 || fail "$name: probe failed"
	local r
	r=$(ratio "$tmp/$name.probe" "$coro_re")
	echo "$name: $r% of samples show main -> resumer -> coroutine.resume -> body -> work"
	[ "$r" -ge 90 ] || { fail "$name: only $r% coroutine chains"; grep '^stack' "$tmp/$name.probe" | head -3; }
	grep -q 'seg 0 .* resumed' "$tmp/$name.probe" || fail "$name: no resumed segment"
	still_running "$name"
}
check_coro coro-luajit luajit
check_coro coro-luajit2 env LD_LIBRARY_PATH="$l2/usr/lib/x86_64-linux-gnu" "$l2/usr/bin/luajit"
check_coro coro-tarantool tarantool

# pcall -> prot (23) -> __index handler (18, a continuation frame) ->
# [tail (15) replaced by] va (11, vararg) -> leaf (6).
start shapes luajit "$wl/shapes.lua"
"$probe" -n 100 --any "$pid" >"$tmp/shapes.probe" 2>&1 || fail "shapes: probe failed"
shapes_re='^stack [0-9]+ (c:0x[0-9a-f]+;)?lua:[^;]*shapes\.lua:0:[0-9]+;ff:pcall;lua:[^;]*shapes\.lua:24:25;lua:[^;]*shapes\.lua:19:20;lua:[^;]*shapes\.lua:11:12;lua:[^;]*shapes\.lua:6:[0-9?]+$'
n_leaf=$(grep '^stack ' "$tmp/shapes.probe" | grep -c 'shapes\.lua:6:[0-9?]*$' || true)
n_ok=$(grep -Ec "$shapes_re" "$tmp/shapes.probe" || true)
echo "shapes: $n_ok of $n_leaf samples in leaf() have the whole pcall/metamethod/tail/vararg chain"
[ "$n_leaf" -ge 10 ] && [ $((100 * n_ok / n_leaf)) -ge 90 ] || { fail "shapes: chain"; grep '^stack' "$tmp/shapes.probe" | head -3; }
# tail() itself may be sampled (innermost, before its CALLT), but never
# below a frame it called: stacks here are root first.
grep -Eq '^stack .*shapes\.lua:15:[0-9?]+;' "$tmp/shapes.probe" &&
	fail "shapes: the tail-called frame is shown below its callee"
# string.rep runs in C (vmstate C): the walk starts from L->base there.
n_rep=$(grep -Ec '^stack [0-9]+ .*lua:[^;]*shapes\.lua:31:32;ff:string\.rep$' "$tmp/shapes.probe" || true)
echo "shapes: $n_rep samples in string.rep called from rep()"
[ "$n_rep" -ge 1 ] || fail "shapes: no string.rep sample"
still_running shapes

# The sandwich with a trivial leaf: most samples fall on lua_call's way
# into the VM (C frame linked, callee's frame not yet written) and out of
# it (frame popped, C frame still linked).  The C function that called
# lua_call belongs to the activation below: no segment may hold
# sw_call_back when rec_sandwich.so entered that segment's activation
# (its C frame's return address is in the library); that activation shows
# as an empty segment instead.
cc -O2 -fPIC -shared -fomit-frame-pointer -I/usr/include/luajit-2.1 \
	-o "$tmp/rec_sandwich.so" "$top/tests/kernel/rec_sandwich.c" || exit 1
start sandwich luajit "$top/tests/kernel/rec_sandwich.lua" "$tmp" 1
if "$probe" -n 400 -v "$pid" >"$tmp/sandwich.probe" 2>&1; then
	# The library's address range, and "seg RET HEAD" per segment (HEAD:
	# the segment's innermost frame, "-" when it has none).
	read -r lo hi < <(awk '/rec_sandwich\.so/ { split($1, r, "-"); print r[1], r[2] }' \
		"/proc/$pid/maps" | sort | awk 'NR == 1 { lo = $1 } { hi = $2 } END { print lo, hi }')
	awk '/^  seg / { if (s != "") print s, "-"; s = substr($5, 5); next }
	     /^    #/ { if (s != "") print s, $2; s = ""; next }
	     { if (s != "") print s, "-"; s = "" }
	     END { if (s != "") print s, "-" }' "$tmp/sandwich.probe" >"$tmp/sandwich.segs"
	inlib() { local x=$((16#${1#0x})); [ "$x" -ge $((16#$lo)) ] && [ "$x" -lt $((16#$hi)) ]; }
	bad=0 empty=0
	while read -r ret head; do
		inlib "$ret" || continue
		case $head in
		-) empty=$((empty + 1)) ;;
		c:*) inlib "${head#c:}" && bad=$((bad + 1)) ;;
		esac
	done <"$tmp/sandwich.segs"
	echo "sandwich: $empty samples inside lua_call's way into or out of the VM; $bad with sw_call_back in the activation it entered"
	[ "$bad" -eq 0 ] || { fail "sandwich: sw_call_back in its own callee's activation"; grep -A2 'seg 0 ' "$tmp/sandwich.probe" | head -12; }
	[ "$empty" -ge 1 ] || fail "sandwich: no sample inside lua_call's way into or out of the VM"
else
	fail "sandwich: probe failed"; tail -3 "$tmp/sandwich.probe"
fi
still_running sandwich

# Not a LuaJIT process: a clear error, exit 2.
sleep 30 & pids+=($!)
if "$probe" -n 1 $! >"$tmp/none.out" 2>&1; then fail "sleep accepted as LuaJIT"; fi
grep -q 'not a LuaJIT process' "$tmp/none.out" || { fail "unclear refusal"; cat "$tmp/none.out"; }

[ "$fails" -eq 0 ] && echo ok || { echo "$fails failure(s)"; exit 1; }
