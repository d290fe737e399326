#!/bin/sh
# Samples taken while the CPU is in a LuaJIT VM entry's prologue (the
# callee-saved pushes of lj_vm_call/pcall/cpcall/resume or the FFI
# callback) or an exit's epilogue (the pops and ret): the unwind table has
# exact rows there (userspace/lib/luajit/vmseq.c), so the host stack goes
# on into the C caller and down to the thread's entry instead of ending.
# vmentry.lua enters the VM from C all the time (table.sort and
# string.gsub with Lua functions, coroutine.resume, an FFI callback from
# libc's qsort).  On each target, every sample lwstacks places in such a
# sequence (at=entry|exit, from the file's table) must have the whole
# host stack -- not flagged truncated, no bare address, and main in it
# for luajit and luajit2 -- and there must be some.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
msg= errs=
for name in luajit luajit2 tarantool; do
	start_lua $name $WL/vmentry.lua
	# Rounds of 6 s until 3 samples fall in a sequence (at most 5): a
	# slow guest (the debug kernel, a loaded host) gets fewer per round.
	: >"$W/$name.all"
	for round in 1 2 3 4 5; do
		record $name 6
		cat "$W/$name.stacks" >>"$W/$name.all"
		[ "$(grep -Ec ' at=(entry|exit) ' "$W/$name.all")" -ge 3 ] && break
	done
	mv "$W/$name.all" "$W/$name.stacks"
	stop_lua
	f=$W/$name.stacks
	needmain=1
	[ $name = tarantool ] && needmain=0
	set -- $(awk -v needmain=$needmain '
		function hex(s,   i, c, v) {
			v = 0
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", substr(s, i, 1)) - 1
				v = v * 16 + c
			}
			return v
		}
		$8 == "at=-" { next }
		{
			n++
			fl = $2; sub(/^flags=0x/, "", fl); fl = hex(fl)
			st = $0; sub(/.* stack=/, "", st)
			why = ""
			if (int(fl / 2) % 2) why = "host stack cut"
			else if (st ~ /(^|;)0x[0-9a-f]+;/) why = "bare address"
			else if (needmain && st !~ /;main;/) why = "no main"
			if (why == "") { good++; next }
			if (bad++ < 3) print "bad (" why "): " $0 > "/dev/stderr"
		}
		END { print n + 0, good + 0 }' "$f")
	nseq=$1 good=$2
	echo "$name: $nseq samples in a VM entry/exit sequence, $good whole"
	# Every target is measured before the test fails: the counts matter.
	[ "$nseq" -ge 3 ] || errs="$errs $name: only $nseq samples in a VM entry/exit sequence;"
	[ "$good" -eq "$nseq" ] ||
		errs="$errs $name: $((nseq - good)) of $nseq samples in a VM entry/exit sequence lose their host stack;"
	msg="$msg $name: $good/$nseq;"
done
unload
[ -z "$errs" ] || fail "$errs"
pass "$msg"
