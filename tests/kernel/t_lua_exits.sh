#!/bin/sh
# Trace exits (issue 25 items 3 and 4): exits.lua leaves its trace on
# every other iteration and never gets a side trace, so a share of the samples
# land in lj_trace_exit and the snapshot restore it runs under a
# protected call (vmstate EXIT), below ->vm_exit_handler's frame.  On
# Debian's luajit, OpenResty's luajit2 and tarantool (not GC64), of the
# EXIT samples:
#  - >= 90% read, innermost first: host frames, work (exits.lua:10), the
#    main chunk, no other Lua frame, and host frames through lua_pcall:
#    the walk goes from the protected call's activation to the exit
#    handler and on at the trace's activation.  Before, it ended at the
#    exit handler (its frame holds the exit state, not the VM's C frame),
#    after a bare address read as its return address or, later, flagged.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
msg=
for name in luajit luajit2 tarantool; do
	start_lua $name $WL/exits.lua
	sleep 1		# let the trace be recorded
	record $name 4
	stop_lua
	f=$W/$name.stacks
	ne=$(grep -c '^vmstate=EXIT ' "$f")
	good=$(grep '^vmstate=EXIT ' "$f" | awk '
	{
		s = $0; sub(/.* stack=/, "", s)
		n = split(s, fr, ";")
		k = 1
		while (k <= n && fr[k] !~ /^(lua|trace|ff|c):/) k++
		if (fr[k] !~ /^lua:.*exits\.lua:10:/) next
		k++
		if (fr[k] !~ /^lua:.*exits\.lua:0:/) next
		for (j = k + 1; j <= n; j++) if (fr[j] ~ /^(lua|trace):/) next
		if (s !~ /;lua_pcall;/) next
		ok++
	} END { print ok + 0 }')
	[ "$ne" -ge 20 ] || { head -5 "$f" >&2; fail "$name: only $ne EXIT samples"; }
	if [ $((100 * good)) -lt $((90 * ne)) ]; then
		grep '^vmstate=EXIT ' "$f" | grep -v ';lua_pcall;' | head -5 >&2
		fail "$name: $good of $ne EXIT samples are C -> work -> main -> lua_pcall"
	fi
	msg="$msg $name: $good/$ne EXIT whole;"
done
unload
pass "$msg"
