#!/bin/sh
# record + report on the other two targets of design section 6: OpenResty's
# luajit2 and tarantool 2.6 (non-GC64, its own LuaJIT fork), RFC payload,
# JIT off.  Per target: most samples are lua_payload (named from the
# caller's bytecode) right above the main chunk, or c_payload's FFI chain
# above it; no VM frame is left in the default output.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
load
msg=
for name in luajit2 tarantool; do
	start_lua $name $WL/payload_stock.lua nojit 3600 $K
	$CTL record -p "$pid" -o "$W/$name.luw" --duration 4 2>"$W/$name.err" ||
		{ cat "$W/$name.err" >&2; fail "$name: record"; }
	stop_lua
	$REP "$W/$name.luw" >"$W/$name.folded" || fail "$name: report"
	total=$(folded_sum "$W/$name.folded")
	[ "$total" -ge 500 ] || fail "$name: only $total samples"
	lua=$(folded_sum "$W/$name.folded" 'main chunk @[^;]*payload_stock\.lua:0;lua_payload @[^;]*payload_stock\.lua:8')
	c=$(folded_sum "$W/$name.folded" 'main chunk @[^;]*payload_stock\.lua:0;.*;c_payload;c_payload')
	# The loop's own time: the main chunk innermost, and os.clock with
	# its host frames (a syscall, slow on a debug kernel: 8% there).
	loop=$(folded_sum "$W/$name.folded" -E 'main chunk @[^;]*payload_stock\.lua:0(;os\.clock(;[^;]*)*)? [0-9]+$')
	if [ $((100 * (lua + c + loop))) -lt $((90 * total)) ]; then
		awk '{print $NF, $0}' "$W/$name.folded" | sort -rn | head -3 >&2
		fail "$name: $lua lua_payload + $c c_payload + $loop loop samples of $total"
	fi
	[ "$lua" -ge $((total / 4)) ] || fail "$name: only $lua lua_payload samples"
	[ "$c" -ge $((total / 20)) ] || fail "$name: only $c c_payload samples"
	! grep -q 'lj_vm_\|lj_BC_' "$W/$name.folded" || fail "$name: VM frames left"
	msg="$msg $name $lua+$c/$total"
done
pass "$msg"
