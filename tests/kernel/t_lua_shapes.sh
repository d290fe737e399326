#!/bin/sh
# Design section 6, shape 4, on all three targets: a sample in leaf()
# shows, innermost first, leaf (line 6), va (11, a vararg function), the
# __index handler (19, run as a metamethod continuation), prot (24),
# pcall and the main chunk -- and no frame for tail() (15) below them:
# the tail call reused its frame.  A sample in string.rep (C code, called from the
# VM through a fast function) shows string.rep, then rep() (31).
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
msg=
for name in luajit luajit2 tarantool; do
	start_lua $name $WL/shapes.lua
	record $name 4
	stop_lua
	f=$W/$name.stacks
	nleaf=$(stack_of <"$f" | grep -c '^lua:[^;]*shapes\.lua:6:')
	good=$(stack_of <"$f" | grep -Ec '^lua:[^;]*shapes\.lua:6:[0-9?]+;lua:[^;]*shapes\.lua:11:12;lua:[^;]*shapes\.lua:19:20;lua:[^;]*shapes\.lua:24:25;ff:pcall;lua:[^;]*shapes\.lua:0:[0-9]+;')
	[ "$nleaf" -ge 50 ] || fail "$name: only $nleaf samples in leaf()"
	if [ $((100 * good)) -lt $((90 * nleaf)) ]; then
		stack_of <"$f" | grep '^lua:[^;]*shapes\.lua:6:' | head -3 >&2
		fail "$name: $good of $nleaf samples in leaf() have the whole chain"
	fi
	# tail() itself may be sampled, but never below the frames it called.
	stack_of <"$f" | grep -q ';lua:[^;]*shapes\.lua:15:' &&
		fail "$name: the tail-called frame is shown below its callee"
	nrep=$(stack_of <"$f" | grep -Ec ';ff:string\.rep;lua:[^;]*shapes\.lua:31:32;')
	[ "$nrep" -ge 1 ] || fail "$name: no sample in string.rep called from rep()"
	msg="$msg $name: $good/$nleaf leaf, $nrep string.rep;"
done
unload
pass "$msg"
