#!/bin/sh
# The RFC payload with the JIT on, on all three targets: samples taken in
# a trace's machine code have vmstate TRACE and the trace's number, and
# their stack is the trace (named after the proto and line it starts at),
# the Lua frames below it down to the main chunk, then the host stack
# from the VM entry's caller (the module never unwinds through mcode);
# the c_payload chain of a JIT-compiled FFI call comes above the trace.
# tarantool's traces keep no DISPATCH register: G is the attach hint.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
msg=
for name in luajit luajit2 tarantool; do
	start_lua $name $WL/payload_stock.lua jit 3600 $K
	sleep 1		# let the traces be recorded
	record $name 4
	stop_lua
	f=$W/$name.stacks
	nt=$(grep -c '^vmstate=TRACE ' "$f")
	good=$(grep '^vmstate=TRACE ' "$f" | awk '
	{
		t = $6; sub(/^trace=/, "", t)
		s = $0; sub(/.* stack=/, "", s)
		n = split(s, fr, ";")
		# JIT-compiled FFI calls: c_payload runs above the trace.
		k = 1
		while (fr[k] == "c_payload") k++
		if (t + 0 < 1 || fr[k] !~ "^trace:" t ":.*payload_stock\\.lua:") next
		k++
		while (fr[k] ~ /^lua:.*payload_stock\.lua:8:/) k++
		if (fr[k] !~ /^lua:.*payload_stock\.lua:0:/) next
		for (j = k + 1; j <= n; j++) if (fr[j] ~ /^(lua|trace):/) next
		if (s !~ /lua_pcall;/) next
		ok++
	} END { print ok + 0 }')
	[ "$nt" -ge 20 ] || { head -5 "$f" >&2; fail "$name: only $nt TRACE samples"; }
	if [ $((100 * good)) -lt $((90 * nt)) ]; then
		grep '^vmstate=TRACE ' "$f" | head -3 >&2
		fail "$name: $good of $nt trace samples are trace -> lua_payload* -> main -> host"
	fi
	msg="$msg $name: $good/$nt TRACE;"
done
unload
pass "$msg"
