#!/bin/sh
# luaunwind-ctl attach refuses a process without LuaJIT, naming why.
# A layout descriptor that does not fit the process, on purpose: attach
# with one field of Debian luajit's layout moved by 8 bytes (lwstacks
# badattach, which otherwise attaches as luaunwind-ctl does).  The module
# must refuse it, or give samples whose failed Lua walks are flagged
# LUW_RF_LUA_TRUNC and counted as truncated -- never Lua frames that are
# not real protos, never an interpreter frame left unflagged.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
# Not LuaJIT at all: a clear refusal, nothing attached.
bg $K/spin; spin=$last
if $CTL attach $spin >"$W/spin.attach" 2>&1; then fail "spin accepted as LuaJIT"; fi
grep -q 'not a LuaJIT process' "$W/spin.attach" ||
	{ cat "$W/spin.attach" >&2; fail "unclear refusal"; }
if $CTL detach $spin 2>/dev/null; then fail "refused attach left a target"; fi
msg=
for field in g_mainthref l_glref l_stack fn_pc cframe_ofs_l gg_g2disp; do
	start_lua luajit $WL/payload_stock.lua nojit 3600 $K
	$STACKS badattach $pid $field 8 >"$W/$field.attach" 2>&1 ||
		{ cat "$W/$field.attach" >&2; fail "$field: badattach"; }
	if grep -q '^refused' "$W/$field.attach"; then
		msg="$msg $field refused;"
		stop_lua
		continue
	fi
	$STACKS read $pid 2 >"$W/$field.stacks" || fail "$field: lwstacks"
	$CTL status $pid >"$W/$field.status" || fail "$field: status"
	$CTL detach $pid || fail "$field: detach"
	stop_lua
	f=$W/$field.stacks
	n=$(wc -l <"$f")
	[ "$n" -ge 100 ] || fail "$field: only $n samples"
	# flags: bit 2 is LUW_RF_LUA_TRUNC.
	awk -v field=$field '
	function hex(s,   i, v, c) {
		v = 0
		for (i = 3; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	{
		fl = $2; sub(/^flags=/, "", fl); fl = hex(fl)
		trunc = int(fl / 4) % 2
		# By name: a field added to the lines must not move it.
		raw = -1
		for (i = 3; i <= NF; i++)
			if ($i ~ /^rawvm=/) raw = substr($i, 7) + 0
		if (raw < 0) { print "no rawvm field: " $0; bad++ }
		if (raw > 0 && !trunc) { print "unflagged VM frame: " $0; bad++ }
		if ($0 ~ /lua:\?/) { print "not a proto: " $0; bad++ }
		if (!trunc && $0 !~ /payload_stock\.lua:0:/) {
			print "no main chunk, not flagged: " $0; bad++
		}
		nt += trunc
	}
	END {
		printf "%d %d\n", nt, NR > "/dev/stderr"
		exit bad > 0
	}' "$f" 2>"$W/$field.count" >"$W/$field.bad" ||
		{ head -3 "$W/$field.bad" >&2; fail "$field: garbage or unflagged samples"; }
	read nt total <"$W/$field.count"
	counted=$(sed -n 's/.*truncated=\([0-9]*\).*/\1/p' "$W/$field.status")
	[ "$counted" -ge "$nt" ] ||
		fail "$field: $nt samples flagged but truncated=$counted"
	msg="$msg $field: $nt/$total truncated;"
done
# The fields G and L are found and checked by: nothing can be walked.
for field in g_mainthref l_glref; do
	read nt total <"$W/$field.count"
	[ $((100 * nt)) -ge $((95 * total)) ] ||
		fail "$field: only $nt of $total samples flagged"
done
unload
pass "$msg"
