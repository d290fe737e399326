#!/bin/sh
# record --every S --dir DIR [--keep N] (issue 30): one whole file an
# interval, without a server.
#  - --every 2 -d 6: three files, each complete (luaunwind-report reads it
#    to its end section) and holding the workload's work() by name;
#  - --keep 2 over four intervals: the newest two files remain;
#  - record SIGKILLed after its second interval: every finished file is
#    intact, the unfinished one never took a final name, and nothing
#    stays attached.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
load
H='work @[^;]*coro\.lua:4'

start_lua luajit $WL/coro.lua
lp=$pid

# whole DIR: every luaunwind-*.luw of DIR complete, with work(); echoes
# how many.
whole() {
	local n=0 g
	for g in "$1"/luaunwind-*.luw; do
		[ -e "$g" ] || continue
		$REP --folded "$g" >"$g.folded" 2>"$g.err" || { cat "$g.err" >&2; fail "$g is not whole"; }
		grep -qE "$H" "$g.folded" || fail "$g lacks work()"
		n=$((n + 1))
	done
	echo $n
}

mkdir "$W/d1" "$W/d2" "$W/d3"
$CTL record -p "$lp" --every 2 --dir "$W/d1" -d 6 2>"$W/d1.err" || { cat "$W/d1.err" >&2; fail "record --every"; }
n=$(whole "$W/d1")
[ "$n" = 3 ] || fail "--every 2 -d 6: $n files: $(ls -a "$W/d1")"
ls -a "$W/d1" | grep -q '\.part$' && fail "a .part left: $(ls -a "$W/d1")"

$CTL record -p "$lp" --every 2 --dir "$W/d2" --keep 2 -d 8 2>"$W/d2.err" || { cat "$W/d2.err" >&2; fail "record --keep"; }
n=$(whole "$W/d2")
[ "$n" = 2 ] || fail "--keep 2 over 4 intervals: $n files: $(ls -a "$W/d2")"
[ "$(grep -c 'samples,' "$W/d2.err")" = 4 ] || fail "--keep 2: not 4 intervals recorded: $(cat "$W/d2.err")"

$CTL record -p "$lp" --every 2 --dir "$W/d3" 2>"$W/d3.err" &
rec=$!
kids="$kids $rec"
two() {
	[ "$(ls "$W/d3" | grep -c '^luaunwind-.*\.luw$')" = 2 ]
}
within 120 two || fail "record --every: no two files: $(cat "$W/d3.err")"
sleep 1
kill -9 $rec
wait $rec 2>/dev/null
n=$(whole "$W/d3")
[ "$n" -ge 2 ] || fail "after SIGKILL: $n whole files: $(ls -a "$W/d3")"
[ "$(ls -a "$W/d3" | grep -c '\.part$')" -le 1 ] || fail "after SIGKILL: more than one .part: $(ls -a "$W/d3")"
v=$($CTL version)
[ "$(field all_targets "$v")" = 0 ] || fail "attached after record was killed: $v"
pass "--every: 3 whole files; --keep 2: 2 of 4; SIGKILL: the $n finished intact ($(ls -a "$W/d3" | grep -c part) unfinished left as .part)"
