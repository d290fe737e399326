#!/bin/sh
# luaunwind-ctl --mode, sysprof's three modes, on the RFC payload under
# Debian's luajit (JIT off), through attach + dump + status and record +
# report:
#  - callchain (also what no --mode gives): whole merged stacks, main chunk
#    above the host frames down to main;
#  - leaf: every raw sample has one host frame and at most one Lua frame,
#    so a reported stack is the innermost Lua frame, alone when the host
#    frame is the interpreter's (lua_payload, unnamed: there is no caller
#    frame to name it), or under the host leaf (ffi.meta.__call;c_payload,
#    os.clock;[vdso]);
#  - default: raw samples are bare headers (no host, Lua or splice), the
#    module still counts them per vmstate (status), LFUNC and CFUNC both
#    seen; the record file reports as [VMSTATE] stacks whose counts are
#    --vmstates';
#  - an unknown mode: exit 1 with the usage, nothing attached.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
load
feat=$($CTL version | tr ' ' '\n' | sed -n 's/^features=//p')
[ $((feat & 0x10)) -ne 0 ] || fail "version features=$feat lacks LUW_FEAT_VMSTATE_ONLY"
start_lua luajit $WL/payload_stock.lua nojit 3600 $K

# ---- bad mode --------------------------------------------------------------
for cmd in "attach $pid" "record -p $pid -o $W/bad.luw"; do
	$CTL $cmd --mode stacks >"$W/bad.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || { cat "$W/bad.out" >&2; fail "$cmd --mode stacks: exit $rc, want 1"; }
	grep -q "unknown mode 'stacks'" "$W/bad.out" || fail "$cmd --mode stacks: no reason given"
	grep -q '^usage: ' "$W/bad.out" || fail "$cmd --mode stacks: no usage"
done
$CTL status | grep -q '^targets=0' || fail "a bad --mode left something attached"
[ ! -e "$W/bad.luw" ] || fail "record with a bad --mode wrote a file"

# ---- callchain ---------------------------------------------------------------
$CTL record -p "$pid" -o "$W/cc.luw" --duration 2 --mode callchain 2>"$W/cc.err" ||
	{ cat "$W/cc.err" >&2; fail "record --mode callchain"; }
$REP "$W/cc.luw" >"$W/cc.folded" || fail "report callchain"
total=$(folded_sum "$W/cc.folded")
full=$(folded_sum "$W/cc.folded" ';main;.*;main chunk @[^;]*payload_stock\.lua:0;')
[ "$total" -ge 300 ] || fail "callchain: only $total samples"
[ $((100 * full)) -ge $((90 * total)) ] ||
	fail "callchain: only $full of $total stacks go from main through the main chunk"

# ---- leaf: raw ---------------------------------------------------------------
$CTL attach "$pid" --freq 999 --mode leaf >"$W/leaf.attach" 2>&1 ||
	{ cat "$W/leaf.attach" >&2; fail "attach --mode leaf"; }
$CTL dump --duration 2 >"$W/leaf.dump" || fail "dump leaf"
$CTL detach "$pid" || fail "detach leaf"
n=$(grep -c '^sample ' "$W/leaf.dump")
[ "$n" -ge 300 ] || fail "leaf: only $n raw samples"
# more_than_one: dump sample lines with a second host pc or Lua frame.
more_than_one() {
	awk '/^sample / {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^(host|lua)=.*,/) { print; break }
	}' "$1"
}
bad=$(more_than_one "$W/leaf.dump" | wc -l)
[ "$bad" -eq 0 ] || {
	more_than_one "$W/leaf.dump" | head -3 >&2
	fail "leaf: $bad of $n raw samples have more than one host or Lua frame"
}
withlua=$(grep -c '^sample .* lua=' "$W/leaf.dump")
[ $((100 * withlua)) -ge $((50 * n)) ] || fail "leaf: only $withlua of $n samples carry their Lua frame"

# ---- leaf: record + report -----------------------------------------------------
$CTL record -p "$pid" -o "$W/leaf.luw" --duration 2 --mode leaf 2>"$W/leaf.err" ||
	{ cat "$W/leaf.err" >&2; fail "record --mode leaf"; }
$REP "$W/leaf.luw" >"$W/leaf.folded" || fail "report leaf"
total=$(folded_sum "$W/leaf.folded")
[ "$total" -ge 300 ] || fail "leaf: only $total samples recorded"
deep=$(awk '{ $NF = ""; if (split($0, f, ";") > 2) n++ } END { print n + 0 }' "$W/leaf.folded")
[ "$deep" -eq 0 ] || { head -3 "$W/leaf.folded" >&2; fail "leaf: $deep stacks of more than two frames"; }
# No caller frame and no parent proto in the sample: the function is named
# by the global that holds it (ljglobal), not by a call site.
lp=$(folded_sum "$W/leaf.folded" '^lua_payload @[^;]*payload_stock\.lua:8 [0-9]*$')
cp=$(folded_sum "$W/leaf.folded" '^ffi\.meta\.__call;c_payload [0-9]*$')
# The loop's own time: the main chunk, and os.clock with its host leaf (a
# syscall, slow on a debug kernel: 8% of the samples there).
lc=$(folded_sum "$W/leaf.folded" -E '^(main chunk @[^;]*payload_stock\.lua:0|os\.clock;[^;]*) [0-9]*$')
[ $((100 * (lp + cp + lc))) -ge $((90 * total)) ] || {
	awk '{ print $NF, $0 }' "$W/leaf.folded" | sort -rn | head -5 >&2
	fail "leaf: $lp lua_payload + $cp c_payload + $lc loop of $total samples"
}
[ "$lp" -ge $((total / 4)) ] || fail "leaf: only $lp lua_payload samples"
[ "$cp" -ge $((total / 20)) ] || fail "leaf: only $cp c_payload samples"

# ---- default: raw + status -------------------------------------------------
$CTL attach "$pid" --freq 999 --mode default >"$W/def.attach" 2>&1 ||
	{ cat "$W/def.attach" >&2; fail "attach --mode default"; }
$CTL dump --duration 2 >"$W/def.dump" || fail "dump default"
$CTL stop "$pid" || fail "stop default"
$CTL dump --nonblock >>"$W/def.dump" || fail "dump default (drain)"
$CTL status "$pid" >"$W/def.status" || fail "status default"
$CTL detach "$pid" || fail "detach default"
n=$(grep -c '^sample ' "$W/def.dump")
[ "$n" -ge 300 ] || fail "default: only $n raw samples"
bad=$(grep '^sample ' "$W/def.dump" | grep -cv ' host=$')
[ "$bad" -eq 0 ] || { grep -v ' host=$' "$W/def.dump" | head -3 >&2; fail "default: $bad of $n samples carry frames"; }
st=$(sed -n 1p "$W/def.status")
vs=$(sed -n 2p "$W/def.status")
samples=$(field samples "$st")
[ "$samples" -eq "$n" ] || fail "default: status says $samples samples, dump read $n"
lf=$(field LFUNC "$vs")
cf=$(field CFUNC "$vs")
vsum=$(echo "$vs" | tr ' ' '\n' | sed -n 's/^[A-Z]*=//p' | awk '{ n += $1 } END { print n + 0 }')
[ "$vsum" -eq "$samples" ] || fail "default: vmstates add up to $vsum, not $samples"
[ $((100 * lf)) -ge $((50 * samples)) ] || fail "default: LFUNC $lf of $samples ($vs)"
[ "$cf" -ge $((samples / 20)) ] || fail "default: CFUNC $cf of $samples ($vs)"
for s in LFUNC CFUNC; do
	d=$(grep -c "^sample .* vmstate=$s " "$W/def.dump")
	[ "$d" -eq "$(field $s "$vs")" ] || fail "default: $d $s records, status counts $(field $s "$vs")"
done

# ---- default: record + report ----------------------------------------------
$CTL record -p "$pid" -o "$W/def.luw" --duration 2 --mode default 2>"$W/def.err" ||
	{ cat "$W/def.err" >&2; fail "record --mode default"; }
$REP "$W/def.luw" >"$W/def.folded" || fail "report default"
$REP --vmstates "$W/def.luw" >"$W/def.vmstates" || fail "--vmstates default"
total=$(folded_sum "$W/def.folded")
[ "$total" -ge 300 ] || fail "default: only $total samples recorded"
! grep -qv '^\[[A-Z]*\] [0-9]*$' "$W/def.folded" ||
	{ grep -v '^\[[A-Z]*\] [0-9]*$' "$W/def.folded" | head -3 >&2; fail "default: a stack other than [VMSTATE]"; }
grep -q "^samples	$total\$" "$W/def.vmstates" || fail "default: --vmstates total is not $total"
while read -r st cnt; do
	st=${st#[}
	st=${st%]}
	grep -q "^$st	$cnt\$" "$W/def.vmstates" || fail "default: [$st] $cnt is not --vmstates' $st"
done <"$W/def.folded"
grep -q '^\[LFUNC\] ' "$W/def.folded" || fail "default: no [LFUNC] stack"
stop_lua
pass "callchain $full/$(folded_sum "$W/cc.folded") full; leaf $lp lua_payload + $cp c_payload of $(folded_sum "$W/leaf.folded"); default $samples samples LFUNC=$lf CFUNC=$cf, recorded $(tr '\n' ' ' <"$W/def.folded")"
