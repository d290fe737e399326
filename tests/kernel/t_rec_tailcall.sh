#!/bin/sh
# A name from a call site is the function's own, also after a tail call
# (tests/fixtures/workloads/tailcall.lua, Debian's luajit, JIT off): the
# call drive makes to `via` is under leaf's frame once via tail-calls
# leaf, and the report must not call leaf "via".
#  - every frame named leaf, direct or via is at that function's own
#    first line (leaf 1, via 6, direct 9 of tailcall_defs.lua);
#  - leaf under direct, both named by drive's and direct's upvalues:
#    >= 25% of the samples;
#  - leaf straight under drive (the tail call's), unnamed: >= 25%.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
load
start_lua luajit $WL/tailcall.lua
$CTL record -p "$pid" -o "$W/t.luw" --duration 4 --freq 999 2>"$W/rec.err" ||
	{ cat "$W/rec.err" >&2; fail "record"; }
stop_lua
$REP "$W/t.luw" >"$W/t.folded" 2>"$W/rep.err" || { cat "$W/rep.err" >&2; fail "report"; }
f=$W/t.folded
D='@[^;]*tailcall_defs\.lua'
total=$(sum '')
[ "$total" -ge 300 ] || fail "only $total samples in 4 s at 999 Hz"
wrong=$(grep -E "(^|;)(leaf $D:([02-9]|1[0-9])|via $D:([0-57-9]|1[0-9])|direct $D:([0-8]|1[0-9]))( [0-9]+$|;)" "$f" | folded_sum -)
[ "$wrong" -eq 0 ] ||
	{ grep -E "(leaf|via|direct) $D" "$f" | head -3 >&2; fail "$wrong samples name a frame by another function's call"; }
named=$(sum -E "$D:13;direct $D:9;leaf $D:1( [0-9]+\$|;)")
unnamed=$(sum -E "$D:13;$D:1( [0-9]+\$|;)")
if [ $((4 * named)) -lt "$total" ] || [ $((4 * unnamed)) -lt "$total" ]; then
	awk '{ print $NF, $0 }' "$f" | sort -rn | head -4 >&2
	fail "of $total samples, $named in leaf under direct (named), $unnamed in leaf under the tail call (unnamed)"
fi
unload
pass "$total samples: leaf under direct $named, under via's tail call $unnamed, none misnamed"
