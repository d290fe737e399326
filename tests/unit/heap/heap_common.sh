# Sourced by the heap snapshot tests (tests/unit/heap/test_heap.sh,
# tests/matrix/test_heapmatrix.sh) after testlib.sh, with $tmp set:
#   check WHAT STATUS      "ok: WHAT" for status 0, else "FAIL: WHAT" (fail=1)
#   start NAME CMD...      fixtures/workloads/heap.lua under CMD, its stdin
#                          on fd 7, up to its first "ready"; sets tp, tout
#   say CMD                one command to it, up to its next "ready"
#   bytes FOLDED PREFIX    bytes of the folded lines whose path starts so
#   stopped PID            0 when a thread of PID is in a ptrace or job stop
#   catch_walk VICTIM OUT  a stopping walk of $tp caught with its target
#                          stopped, then VICTIM (ctl or target) SIGKILLed
#   known_paths NAME FOLDED   each holder of heap.lua at its path
#   totals NAME TOP COUNT  the snapshot against gc.total and the count
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

# catch_walk VICTIM OUT: `luaunwind-ctl heap` of $tp into OUT, and the
# moment its target is seen stopped (the walk is on), SIGKILL of VICTIM:
# "ctl" (the walker) or "target".  A walk that ended before the catch is
# tried again, up to five times.  Sets caught (0 when the kill landed
# mid-walk) and st (luaunwind-ctl's exit status); its stderr is in
# $tmp/err.
catch_walk() {
	local victim=$1 out=$2 cp
	caught=1
	for _ in 1 2 3 4 5; do
		"$ctl" heap -p "$tp" -o "$out" 2>"$tmp/err" &
		cp=$!
		wait_line "$tmp/err" 'walking' "$cp"
		if stopped "$tp"; then
			if [ "$victim" = ctl ]; then kill -9 "$cp"; else kill -9 "$tp"; fi
			caught=0
		fi
		wait "$cp" 2>/dev/null
		st=$?
		[ $caught = 0 ] && return
	done
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

