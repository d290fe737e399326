#!/bin/sh
# The sandwich (design section 6, shape 2) recorded and reported under
# Debian's luajit: root first,
#   ... lua_pcall; main chunk @rec_sandwich.lua:0; outer @rec_sandwich.lua:17;
#   call_back's C function (host frame, once); lua_call where it has a
#   frame of its own (Debian's luajit compiles it to a tail jump into
#   lj_vm_call, so there it has none); inner @rec_sandwich.lua:13 (called
#   from C, named by its definition); then c_leaf's FFI chain -- with
#   the VM frames folded away, and kept by --vm-frames.
. tests/kernel/lib.sh
REP=$K/luaunwind-report
SO=$W/rec_sandwich.so
cc -O2 -fPIC -shared -fomit-frame-pointer -I/usr/include/luajit-2.1 \
	-o "$SO" tests/kernel/rec_sandwich.c || fail "building rec_sandwich.so"
# sandwich NAME SECONDS [LEAF]: runs the sandwich (fib(LEAF) at the
# leaf), records it for SECONDS into $W/NAME.luw, reports $W/NAME.folded;
# $pid is the target, left running.
sandwich() {
	luajit tests/kernel/rec_sandwich.lua "$W" ${3:-} >"$W/$1.out" 2>&1 &
	pid=$!
	kids="$kids $pid"
	within 120 grep -q ready "$W/$1.out" || { cat "$W/$1.out" >&2; fail "$1: target did not start"; }
	$CTL record -p "$pid" -o "$W/$1.luw" --duration "$2" 2>"$W/$1.err" ||
		{ cat "$W/$1.err" >&2; fail "$1: record"; }
	$REP "$W/$1.luw" >"$W/$1.folded" || fail "$1: report"
}
load
sandwich sw 4
total=$(folded_sum "$W/sw.folded")
seq='lua_pcall;main chunk @[^;]*rec_sandwich\.lua:0;outer @[^;]*rec_sandwich\.lua:17;sw_call_back;(lua_call;)?inner @[^;]*rec_sandwich\.lua:13;[^@]*c_leaf;c_leaf'
n=$(folded_sum "$W/sw.folded" -E "$seq")
if [ $((100 * n)) -lt $((80 * total)) ]; then
	awk '{print $NF, $0}' "$W/sw.folded" | sort -rn | head -3 >&2
	fail "$n of $total samples have the full sandwich"
fi
[ "$(grep -c 'sw_call_back;.*sw_call_back' "$W/sw.folded")" -eq 0 ] ||
	fail "the C function appears twice"
$REP --vm-frames "$W/sw.luw" >"$W/vm.folded" || fail "--vm-frames"
grep -q 'outer @[^;]*rec_sandwich\.lua:17;sw_call_back' "$W/vm.folded" ||
	fail "--vm-frames lost the sandwich"
[ "$(md5sum <"$W/vm.folded")" != "$(md5sum <"$W/sw.folded")" ] ||
	fail "--vm-frames changed nothing"
kill "$pid"

# A trivial leaf: much of the time goes to lua_call's way into and out of
# the VM, where the callee's C frame is linked but owns no Lua frame yet
# (or any more).  sw_call_back stays below that activation, once, and
# every stack through outer keeps the order main chunk -> outer ->
# sw_call_back.
sandwich sw1 3 1
t1=$(folded_sum "$W/sw1.folded")
cb=$(folded_sum "$W/sw1.folded" 'sw_call_back')
twice=$(folded_sum "$W/sw1.folded" 'sw_call_back;.*sw_call_back')
order=$(grep 'outer @' "$W/sw1.folded" |
	grep -Ev 'lua_pcall;main chunk @[^;]*rec_sandwich\.lua:0;outer @[^;]*rec_sandwich\.lua:17(;sw_call_back(;.*)?)? [0-9]+$' |
	folded_sum -)
if [ "$twice" -ne 0 ] || [ "$order" -ne 0 ]; then
	grep -e 'sw_call_back;.*sw_call_back' "$W/sw1.folded" | head -3 >&2
	fail "leaf 1: $twice samples with sw_call_back twice, $order out of order (of $t1)"
fi
[ "$cb" -ge 100 ] || fail "leaf 1: only $cb of $t1 samples in sw_call_back"
pass "$n of $total samples: full sandwich; leaf 1: $cb of $t1 through sw_call_back, all in order"
