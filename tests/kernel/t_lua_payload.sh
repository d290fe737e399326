#!/bin/sh
# The sysprof RFC payload with the JIT off on Debian luajit, OpenResty
# luajit2 and tarantool, sampled by the module with the Lua walk, each
# sample named against the live process (tests/kernel/lwstacks.c):
#  - >= 95% of LFUNC samples are lua_payload frames (first line 8) down to
#    the main chunk (first line 0), and no Lua frame below that, leaving
#    out (at most 15% of them) the loop's own: the main chunk innermost;
#  - samples in c_payload (FFI, -O2 -fomit-frame-pointer) show the
#    c_payload chain first, then host frames, then the main chunk: the
#    Lua segment is spliced below the C code that it called;
#  - with unwind tables the host stack reaches main and _start.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
msg=
for name in luajit luajit2 tarantool; do
	start_lua $name $WL/payload_stock.lua nojit 3600 $K
	record $name 4
	stop_lua
	f=$W/$name.stacks
	n=$(wc -l <"$f")
	[ "$n" -ge 200 ] || fail "$name: only $n samples in 4 s at 999 Hz"
	# LFUNC: innermost lua_payload^k (k >= 1), then the main chunk, then
	# no more Lua frames (host frames, C functions, fast functions).
	# The loop's own time: the main chunk innermost among the Lua
	# frames, under os.clock's host code or none (its system call is
	# slow on the debug kernel: 28 of 483 LFUNC samples there, 6%).
	nl=$(grep -c '^vmstate=LFUNC ' "$f")
	set -- $(grep '^vmstate=LFUNC ' "$f" | stack_of | awk -F';' '
	{
		k = 1
		while (k <= NF && $k !~ /^lua:/) k++
		h = k
		while ($k ~ /^lua:.*payload_stock\.lua:8:/) k++
		if ($k !~ /^lua:.*payload_stock\.lua:0:/) next
		for (j = k + 1; j <= NF; j++) if ($j ~ /^lua:/) next
		if (h == 1 && k > h) ok++
		else if (k == h) loop++
	} END { print ok + 0, loop + 0 }')
	good=$1 loop=$2
	[ "$nl" -ge 100 ] || fail "$name: only $nl LFUNC samples of $n"
	if [ $((100 * good)) -lt $((95 * (nl - loop))) ] ||
	   [ $((100 * loop)) -gt $((15 * nl)) ]; then
		grep '^vmstate=LFUNC ' "$f" | head -3 >&2
		fail "$name: $good of $nl LFUNC samples are main -> lua_payload^k ($loop in the loop itself)"
	fi
	# FFI: c_payload^k, then host frames only, then the main chunk.
	nc=$(stack_of <"$f" | grep -c '^c_payload;')
	cgood=$(stack_of <"$f" | awk -F';' '
	/^c_payload;/ {
		k = 1
		while ($k == "c_payload") k++
		for (; k <= NF; k++) {
			if ($k ~ /^lua:.*payload_stock\.lua:0:/) { ok++; break }
			if ($k ~ /^lua:/ || $k == "c_payload") break
		}
	} END { print ok + 0 }')
	[ "$nc" -ge 20 ] || fail "$name: only $nc samples in c_payload"
	if [ $((100 * cgood)) -lt $((90 * nc)) ]; then
		stack_of <"$f" | grep '^c_payload;' | head -3 >&2
		fail "$name: $cgood of $nc c_payload samples have the main chunk below the C chain"
	fi
	# Debian's luajit: stripped, no frame pointers; tables reach _start.
	if [ $name = luajit ]; then
		full=$(stack_of <"$f" | grep -c ';main;.*_start;$')
		[ $((100 * full)) -ge $((95 * n)) ] ||
			fail "$name: only $full of $n host stacks reach main and _start"
	fi
	grep -q 'truncated=' "$W/$name.status" || fail "$name: no status"
	msg="$msg $name: $good/$nl LFUNC ($loop loop), $cgood/$nc FFI;"
done
unload
pass "$msg"
