#!/bin/sh
# GC steps called from a trace (issue 9): gcjit.lua's trace allocates and
# calls lj_gc_step_jit, which runs with G->vmstate GC.  On Debian's
# luajit, OpenResty's luajit2 and tarantool, of the GC samples
# (vmstate=GC):
#  - >= 75% read, innermost first: host frames (the GC's C code), the
#    trace (trace:N:gcjit.lua:LINE), alloc, the main chunk and then host
#    frames only, through lua_pcall (measured 85-99%; the others are GC
#    steps the trace exit handler runs, the atomic phase never runs on a
#    trace).  Before, the host walk ended at a bare address in the
#    trace's machine code (no unwind rule there): 0 of 1242 on luajit.
#  - >= 95% are that or, for the exit handler's, the same without the
#    trace frame (its Lua frames, then the host stack from the VM entry's
#    caller).  Before, the host walk ended at the exit handler, flagged,
#    without Lua frames.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
msg=
for name in luajit luajit2 tarantool; do
	start_lua $name $WL/gcjit.lua
	sleep 1		# let the trace be recorded
	record $name 4
	stop_lua
	f=$W/$name.stacks
	ng=$(grep -c '^vmstate=GC ' "$f")
	set -- $(grep '^vmstate=GC ' "$f" | awk '
	{
		s = $0; sub(/.* stack=/, "", s)
		n = split(s, fr, ";")
		k = 1
		while (k <= n && fr[k] !~ /^(lua|trace|ff|c):/) k++
		if (k == 1) next
		tr = fr[k] ~ /^trace:[0-9]+:.*gcjit\.lua:/
		if (tr) k++
		if (fr[k] !~ /^lua:.*gcjit\.lua:8:/) next
		k++
		if (fr[k] !~ /^lua:.*gcjit\.lua:0:/) next
		for (j = k + 1; j <= n; j++) if (fr[j] ~ /^(lua|trace):/) next
		if (s !~ /;lua_pcall;/) next
		whole++
		if (tr) ok++
	} END { print ok + 0, whole + 0 }')
	good=$1 whole=$2
	[ "$ng" -ge 20 ] || { head -5 "$f" >&2; fail "$name: only $ng GC samples"; }
	if [ $((100 * good)) -lt $((75 * ng)) ]; then
		grep '^vmstate=GC ' "$f" | head -5 >&2
		fail "$name: $good of $ng GC samples are C -> trace -> alloc -> main -> lua_pcall"
	fi
	if [ $((100 * whole)) -lt $((95 * ng)) ]; then
		grep '^vmstate=GC ' "$f" | grep -v 'trace:' | head -5 >&2
		fail "$name: $whole of $ng GC samples are C [-> trace] -> alloc -> main -> lua_pcall"
	fi
	msg="$msg $name: $good/$ng GC in a trace, $whole whole;"
done
unload
pass "$msg"
