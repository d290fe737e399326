#!/usr/bin/env bash
# heap/: snapshots of live processes whose heap holds known things
# (fixtures/workloads/heap.lua), taken by luaunwind-ctl heap and read by
# luaunwind-report, on Debian's luajit (GC64, no DWARF: the lj_obj.h
# model) and tarantool 2.6 (32-bit references, DWARF):
#   - each known holder at its path, with the bytes it must hold
#   - the snapshot's bytes against gc.total and collectgarbage("count")
#   - --diff of two snapshots names the growing module list first
#   - --live, --svg, --pprof (read back by go tool pprof)
#   - the target is never left stopped: luaunwind-ctl SIGKILLed mid-walk,
#     the target SIGKILLed mid-walk, the target exiting during a live walk
#
# usage: test_heap.sh BIN_DIR FIXTURES_DIR
set -u
bin=$1
fixtures=$2
. "$(dirname "$0")/../common/testlib.sh"
ctl=$bin/luaunwind-ctl
rep=$bin/luaunwind-report
work=$fixtures/workloads/heap.lua
export LC_ALL=C

check() {	# check WHAT CONDITION-STATUS
	if [ "$2" = 0 ]; then
		echo "ok: $1"
	else
		echo "FAIL: $1"
		fail=1
	fi
}

# start NAME CMD...: the workload under CMD, its stdin on fd 7; waits for
# its first "ready".  Sets tp (its pid) and tout (its output).
start() {
	local name=$1
	shift
	tout=$tmp/$name.out
	rm -f "$tmp/$name.in"
	mkfifo "$tmp/$name.in"
	"$@" <"$tmp/$name.in" >"$tout" 2>&1 &
	tp=$!
	pids+=("$tp")
	exec 7>"$tmp/$name.in"
	wait_line "$tout" '^ready' "$tp" || { echo "FAIL: $name did not start"; cat "$tout"; fail=1; return 1; }
}

# say CMD: one command to the workload; waits for its next "ready".
say() {
	local n
	n=$(grep -c '^ready' "$tout")
	echo "$1" >&7
	for _ in $(seq 600); do
		[ "$(grep -c '^ready' "$tout")" -gt "$n" ] && return 0
		sleep 0.05
	done
	return 1
}

# bytes FILE PREFIX: the bytes of the folded lines whose path starts so.
bytes() {
	awk -v p="$2" 'index($0, p) == 1 { n = $NF; sub(/ [0-9]+$/, ""); s += n } END { print s + 0 }' "$1"
}

# stopped PID: 0 when any thread of PID is in a ptrace or job stop.
stopped() {
	local f
	for f in /proc/"$1"/task/*/stat; do
		[ "$(sed 's/^.*) //' "$f" 2>/dev/null | cut -c1)" = t ] && return 0
		[ "$(sed 's/^.*) //' "$f" 2>/dev/null | cut -c1)" = T ] && return 0
	done
	return 1
}

known_paths() {	# known_paths NAME FOLDED: each holder at its path
	local name=$1 f=$2 v
	v=$(bytes "$f" '_G;cache;[*];(string) ')
	check "$name: _G.cache[*] holds 2000 strings of 200 bytes ($v bytes)" \
		"$([ "$v" -ge 400000 ] && [ "$v" -le 520000 ]; echo $?)"
	v=$(bytes "$f" "_G;handler;upvalue 'pool' of ")
	check "$name: the closure's upvalue 'pool' holds 3000 tables ($v bytes)" \
		"$([ "$v" -ge 96000 ]; echo $?)"
	v=$(bytes "$f" '_G;workers;[*];stack of coroutine ')
	check "$name: the parked coroutines' stacks hold 1010 tables ($v bytes)" \
		"$([ "$v" -ge 32000 ]; echo $?)"
	v=$(bytes "$f" '_G;workers;[*];(thread) ')
	check "$name: ten coroutines 100 calls deep ($v bytes)" \
		"$([ "$v" -ge 32000 ]; echo $?)"
	v=$(bytes "$f" '_G;buf;(cdata) ')
	check "$name: _G.buf, a 1 MiB VLA cdata ($v bytes)" \
		"$([ "$v" -ge 1048576 ] && [ "$v" -le 1048700 ]; echo $?)"
	v=$(bytes "$f" '_G;big;(cdata) ')
	check "$name: _G.big, a 64 KiB struct cdata ($v bytes)" \
		"$([ "$v" -ge 65536 ] && [ "$v" -le 65600 ]; echo $?)"
	v=$(bytes "$f" '_G;logf;(userdata) ')
	check "$name: _G.logf, a file userdata ($v bytes)" "$([ "$v" -gt 0 ]; echo $?)"
	v=$(bytes "$f" 'package.loaded;["app.session"];store;[*];(string) ')
	check "$name: package.loaded[\"app.session\"].store[*] ($v bytes)" \
		"$([ "$v" -ge 200000 ]; echo $?)"
}

# totals NAME TOP COUNT: the snapshot's bytes (objects and the VM's own)
# within 0.5% of gc.total, and gc.total within 16 KiB of the count the
# workload printed (what it allocates between the two: its output, and
# the 8 KiB line buffer its first read of stdin grows).
totals() {
	local name=$1 top=$2 count=$3 found total
	read -r found total < <(sed -n 's/.* = \([0-9]*\); gc.total \([0-9]*\) .*/\1 \2/p' "$top" | head -1)
	check "$name: found $found bytes, gc.total $total, count $count" \
		"$([ -n "$found" ] && [ $((found > total ? found - total : total - found)) -le $((total / 200)) ] &&
		   [ $((total > count ? total - count : count - total)) -le 16384 ]; echo $?)"
}

run() {
	local name=$1 count grown
	shift
	start "$name" "$@" || return
	count=$(sed -n 's/^count //p' "$tout" | tail -1)
	"$ctl" heap -p "$tp" -o "$tmp/$name.1" 2>"$tmp/err" ||
		{ echo "FAIL: $name: heap: $(cat "$tmp/err")"; fail=1; return; }
	check "$name: the target runs on after the snapshot" "$(stopped "$tp" && echo 1 || echo 0)"
	"$rep" --folded "$tmp/$name.1" >"$tmp/$name.folded"
	"$rep" --top 10 "$tmp/$name.1" >"$tmp/$name.top"
	known_paths "$name" "$tmp/$name.folded"
	totals "$name" "$tmp/$name.top" "$count"

	say grow
	"$ctl" heap -p "$tp" -o "$tmp/$name.2" 2>"$tmp/err" || { echo "FAIL: $name: heap 2"; fail=1; }
	"$rep" --diff "$tmp/$name.1" "$tmp/$name.2" --top 3 >"$tmp/$name.diff"
	grown=$(sed -n '/^grew most/{n;n;p}' "$tmp/$name.diff")
	check "$name: --diff names the growing list first: $grown" \
		"$(echo "$grown" | grep -q 'package.loaded\["app.session"\].store\[\*\]$'; echo $?)"
	"$rep" --diff "$tmp/$name.1" "$tmp/$name.2" --folded >"$tmp/$name.gfolded"
	check "$name: the growth's widest path is the list" \
		"$(sort -k2 -n -t' ' "$tmp/$name.gfolded" | tail -1 | grep -q '^package.loaded;\["app.session"\];store;\[\*\];(string) '; echo $?)"

	echo "spin 4" >&7
	wait_line "$tout" '^spinning' "$tp"
	"$ctl" heap --live -p "$tp" -o "$tmp/$name.live" 2>"$tmp/err"
	check "$name: --live on a running target: $(cat "$tmp/err")" "$?"
	"$rep" --folded "$tmp/$name.live" >"$tmp/$name.lfolded"
	known_paths "$name --live" "$tmp/$name.lfolded"
	exec 7>&-
}

run luajit luajit "$work"
run tarantool tarantool "$work"

# Outputs: an SVG flame graph and pprof's inuse_objects and inuse_space.
"$rep" --svg "$tmp/h.svg" "$tmp/luajit.1"
check "--svg writes a flame graph of the paths" \
	"$(grep -q 'cache' "$tmp/h.svg" && grep -q '</svg>' "$tmp/h.svg"; echo $?)"
"$rep" --pprof "$tmp/h.pb.gz" "$tmp/luajit.1"
if command -v go >/dev/null; then
	export HOME=$tmp/home GOCACHE=$tmp/gocache
	mkdir -p "$HOME"
	go tool pprof -raw "$tmp/h.pb.gz" >"$tmp/raw" 2>"$tmp/err"
	want=$(awk '{ s += $NF } END { print s }' "$tmp/luajit.folded")
	got=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ +[0-9]+:/ { s += $2 } END { print s + 0 }' "$tmp/raw")
	check "--pprof: go tool pprof reads inuse_objects/inuse_space, $got of $want bytes" \
		"$(grep -q 'inuse_objects/count inuse_space/bytes' "$tmp/raw" && [ "$got" = "$want" ]; echo $?)"
else
	check "--pprof: go tool pprof is installed (scripts/deps.sh test)" 1
fi

# A cut file: what was read is reported, and where it stopped.
head -c 300 "$tmp/luajit.1" >"$tmp/cut"
expect 2 'cut short at byte|does not parse' "$rep" --top 5 "$tmp/cut"

# The target is never left stopped.  A heap of 150 MiB takes the walk
# long enough to be caught in it.
start big luajit "$work" 150 || exit 1
"$ctl" heap -p "$tp" -o "$tmp/big" 2>"$tmp/err" &
cp=$!
wait_line "$tmp/err" 'walking' "$cp"
caught=1
stopped "$tp" && caught=0
kill -9 "$cp"
wait "$cp" 2>/dev/null
check "luaunwind-ctl SIGKILLed mid-walk (its target caught stopped)" "$caught"
sleep 0.2
check "... the target runs on" "$(stopped "$tp" && echo 1 || echo 0)"
say count
check "... and answers" "$?"

"$ctl" heap -p "$tp" -o "$tmp/big" 2>"$tmp/err" &
cp=$!
wait_line "$tmp/err" 'walking' "$cp"
kill -9 "$tp"
wait "$cp"
st=$?
check "the target SIGKILLed mid-walk: luaunwind-ctl ends ($st): $(head -c 200 "$tmp/err")" \
	"$([ $st -le 1 ]; echo $?)"

start big2 luajit "$work" 150 || exit 1
echo "spin 30" >&7
wait_line "$tout" '^spinning' "$tp"
"$ctl" heap --live -p "$tp" -o "$tmp/big2" 2>"$tmp/err" &
cp=$!
wait_line "$tmp/err" 'walking' "$cp"
kill -TERM "$tp"
wait "$cp"
st=$?
check "the target exiting during a live walk: luaunwind-ctl ends ($st): $(head -c 200 "$tmp/err")" \
	"$([ $st -le 1 ]; echo $?)"
exit $fail
