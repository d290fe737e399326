#!/bin/sh
# GC steps called from a trace (issue 9): gcjit.lua's trace allocates and
# calls lj_gc_step_jit, which runs with G->vmstate GC.  On Debian's
# luajit, OpenResty's luajit2 and tarantool, >= 80% of the GC samples
# (vmstate=GC) read, innermost first: host frames (the GC's C code), the
# trace (trace:N:gcjit.lua:LINE), alloc, the main chunk and then host
# frames only, through lua_pcall.  Before, the host walk ended at the
# trace's machine code (no unwind rule there) and the trace frame and
# every frame below it were lost.  The rest are GC steps the interpreter
# ran (the atomic phase is never run on a trace).
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
	good=$(grep '^vmstate=GC ' "$f" | awk '
	{
		s = $0; sub(/.* stack=/, "", s)
		n = split(s, fr, ";")
		k = 1
		while (k <= n && fr[k] !~ /^(lua|trace|ff|c):/) k++
		if (k == 1 || fr[k] !~ /^trace:[0-9]+:.*gcjit\.lua:/) next
		k++
		if (fr[k] !~ /^lua:.*gcjit\.lua:8:/) next
		k++
		if (fr[k] !~ /^lua:.*gcjit\.lua:0:/) next
		for (j = k + 1; j <= n; j++) if (fr[j] ~ /^(lua|trace):/) next
		if (s !~ /;lua_pcall;/) next
		ok++
	} END { print ok + 0 }')
	[ "$ng" -ge 20 ] || { head -5 "$f" >&2; fail "$name: only $ng GC samples"; }
	if [ $((100 * good)) -lt $((80 * ng)) ]; then
		grep '^vmstate=GC ' "$f" | head -5 >&2
		fail "$name: $good of $ng GC samples are C -> trace -> alloc -> main -> lua_pcall"
	fi
	msg="$msg $name: $good/$ng GC;"
done
unload
pass "$msg"
