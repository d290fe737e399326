#!/bin/sh
# Allocation sampling on the other targets of design section 6 (t_alloc
# covers Debian's luajit in depth): OpenResty's luajit2 and Tarantool,
# JIT on.  On each, record --alloc --no-cpu of alloc.lua's whole run:
# big_strings' share of the bytes and the two functions' total against
# the workload's own count, every byte estimated against the probe's,
# within five standard errors (alloclib.sh, share and whole).
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/alloclib.sh
load
rm -f "$W/shares"
for t in luajit2 tarantool; do
	start_lua $t $WL/alloc.lua 6 jit "$W/go-$t"
	$CTL record -p "$pid" -o "$W/$t.luw" --alloc-interval 4096 --no-cpu \
		2>"$W/$t.err" &
	rec=$!
	within 60 probed "$W/$t.err" || { cat "$W/$t.err" >&2; fail "$t: record --alloc did not attach"; }
	a=$(allocf "$W/$t.err")
	[ "$(byte "$pid" "$a")" = cc ] || fail "$t: no breakpoint at the allocator $a"
	rounds $pid $rec "$W/$t.err" "$W/$t.out" "$W/go-$t"
	share $t "$W/$t.out"
	whole $t
done
pass "$(tr '\n' ' ' <"$W/shares")"
