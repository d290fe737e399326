#!/bin/sh
# Allocation sampling on the other targets of design section 6 (t_alloc
# covers Debian's luajit in depth): OpenResty's luajit2 and Tarantool,
# JIT on.  On each, record --alloc --no-cpu of alloc.lua: big_strings'
# share of the bytes against the workload's own count, within five
# standard errors (alloclib.sh, share), and the breakpoint gone after.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/alloclib.sh
load
rm -f "$W/shares"
for t in luajit2 tarantool; do
	start_lua $t $WL/alloc.lua 1000000
	$CTL record -p "$pid" -o "$W/$t.luw" --alloc-interval 4096 --no-cpu \
		--duration 20 2>"$W/$t.err" ||
		{ cat "$W/$t.err" >&2; fail "$t: record --alloc"; }
	a=$(allocf "$W/$t.err")
	[ -n "$a" ] || fail "$t: no allocator probed: $(cat "$W/$t.err")"
	[ "$(byte "$pid" "$a")" != cc ] || fail "$t: the breakpoint stayed after record"
	share $t "$W/$t.out"
	stop_lua
done
pass "$(tr '\n' ' ' <"$W/shares")"
