#!/bin/sh
# Allocation sampling on the other targets of design section 6 (t_alloc
# covers Debian's luajit in depth): OpenResty's luajit2 and Tarantool,
# JIT on; a C host whose universe has its own allocator (lua_newstate,
# lua_host_alloc.c); and on the cells of the LuaJIT build matrix
# t_rec_matrix takes.  On each, record --alloc --no-cpu of alloc.lua's whole run (the
# breakpoint at the allocator while it records): big_strings' share of
# the bytes and the two functions' total against the workload's own
# count, every byte estimated against the probe's, within five standard
# errors (alloclib.sh, rec_start and rec_whole).
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/alloclib.sh
load
rm -f "$W/shares"
for t in luajit2 tarantool; do
	start_lua $t $WL/alloc.lua 6 jit "$W/go-$t"
	rec_start $t "$pid" --no-cpu
	rec_whole $t "$pid" "$W/$t.out" "$W/go-$t"
done
# A universe with an allocator of its host's (lua_newstate): the probe
# goes where G->allocf points, into the host's own code.
t=host_alloc
$K/lua_host_alloc $WL/alloc.lua 6 jit "$W/go-$t" >"$W/$t.out" 2>&1 &
pid=$!
kids="$kids $pid"
within 120 grep -q ready "$W/$t.out" || fail "$t did not start: $(cat "$W/$t.out")"
rec_start $t "$pid" --no-cpu
set -- $(lib "$pid" "$pa")
case ${2:-} in
*/lua_host_alloc) ;;
*) fail "$t: the probe at $pa is in ${2:-no mapping}, not in the host's code" ;;
esac
rec_whole $t "$pid" "$W/$t.out" "$W/go-$t"
grep -q ';main chunk @[^;]*alloc.lua:0;big_strings @[^;]*alloc.lua:17;.*;host_alloc [0-9]*$' "$W/$t.folded" ||
	fail "$t: no big_strings stack ending in host_alloc: $(grep big_strings "$W/$t.folded" | head -2)"
# The cells of the build matrix t_rec_matrix records (rec_matrix.cells:
# 2017 to 2025, GC64 off, LUA52COMPAT, no JIT, assertions, tarantool's
# fork; stripped ones with the layout from their machine code, and a
# static host that exports none of LuaJIT): the
# allocator found and probed on each, the same checks.
while read -r cell fl; do
	case $cell in '#'* | '') continue ;; esac
	b=$(matrix_bin "$cell" "$fl")
	[ -x "$b" ] || fail "$cell: no $b (make -C tests/kernel prep-t_alloc_targets on the host)"
	t=$cell-$fl
	"$b" $WL/alloc.lua 6 jit "$W/go-$t" >"$W/$t.out" 2>&1 </dev/null &
	pid=$!
	kids="$kids $pid"
	within 120 grep -q ready "$W/$t.out" || fail "$t did not start: $(cat "$W/$t.out")"
	rec_start $t "$pid" --no-cpu
	rec_whole $t "$pid" "$W/$t.out" "$W/go-$t"
done <tests/kernel/rec_matrix.cells
pass "$(tr '\n' ' ' <"$W/shares")"
