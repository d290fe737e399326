# Sourced (after lib.sh, lualib.sh and reclib.sh) by the t_svc_* tests:
# real services from Debian's archive (nginx + its Lua module, tarantool,
# sysbench) recorded with luaunwind-ctl record and checked through the
# report's folded stacks ($f, as reclib.sh's sum and most read them).
NGXLUA=build/nginx-lua
L2LIB=$L2/usr/lib/x86_64-linux-gnu

# The guest boots with its loopback down; the services and their load
# generators talk over 127.0.0.1 only.
lo_up() {
	ip link set lo up 2>/dev/null || ifconfig lo up ||
		fail "cannot bring up the loopback interface"
}

# report LUW [OPTIONS]: the folded stacks of LUW into $f.
report() {
	local luw=$1
	shift
	f=${luw%.luw}.folded
	$REP "$@" "$luw" >"$f" || fail "report $luw"
	[ -s "$f" ] || fail "$luw: no samples"
}

# rooted ROOTRE [SKIP]: samples of $f whose outermost frame (after SKIP
# leading frames, 1 for the comm-PID frame of --by-pid) matches the
# extended regex ROOTRE.
rooted() {
	awk -v re="^($1)\$" -v skip="${2:-0}" '{
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		k = split(s, fr, ";")
		if (k > skip && fr[skip + 1] ~ re) t += n
	} END { print t + 0 }' "$f"
}

# no_garbage WHAT [exited]: fails on any frame that is a bare address (a
# pc in no mapping: the walk went off the stack), an unreadable proto
# (@?0x...), or an unplaced Lua segment; prints the first such stacks
# whole (the bad frame is often near the leaf).  With "exited", $f holds
# processes that exited while record ran: a function first sampled just
# before the exit can have its proto gone before record reads its name
# (offcpu.md's "short-lived" case), so @?0x... frames are allowed there;
# bare addresses and unplaced segments are not.
no_garbage() {
	local bad re='0x[0-9a-f]+|\[unplaced lua\]'
	[ "${2:-}" = exited ] || re="$re|@\?0x[0-9a-f]+"
	re="(^|;)($re)( [0-9]+\$|;)"
	bad=$(folded_sum "$f" -E "$re")
	if [ "$bad" -gt 0 ]; then
		grep -E "$re" "$f" | head -3 | cut -c1-3000 >&2
		fail "$1: $bad samples with garbage frames"
	fi
}

# record_svc NAME SECONDS [REPORT OPTION...]: $pid recorded for SECONDS
# into $W/NAME.luw; then the processes in $stop (default: $pid; the
# service and its load generator) are killed, the recording reported into
# $f with the options given, and $f checked for garbage frames.
record_svc() {
	local name=$1 secs=$2
	shift 2
	$CTL record -p "$pid" -o "$W/$name.luw" --duration "$secs" 2>"$W/$name.err" ||
		{ cat "$W/$name.err" >&2; fail "$name: record -p $pid"; }
	kill ${stop:-$pid} 2>/dev/null
	report "$W/$name.luw" "$@"
	no_garbage "$name"
}

# leaf_chain WHAT FN MIN FRAME CHAIN: of the samples in $f ($all), at
# least MIN are in the Lua function FN (FRAME: the extended regex of its
# frame), and >= 90% of those read CHAIN (the regex of the whole stack,
# from its root to FN's frame).  Both end at the end of a stack or at a
# ';'.  Sets all, nleaf and good.
leaf_chain() {
	local end='( [0-9]+$|;)'
	all=$(sum '')
	nleaf=$(sum -E ";$4$end")
	[ "$nleaf" -ge "$3" ] ||
		{ head -5 "$f" | cut -c1-600 >&2; fail "$1: only $nleaf of $all samples in $2()"; }
	good=$(sum -E "$5$end")
	need_most "$1" "$good" "$nleaf" "samples in $2() with the whole chain"
}

# need_most WHAT GOOD OF WHY: GOOD >= 90% of OF, and OF > 0.
need_most() {
	[ "$3" -gt 0 ] || fail "$1: no samples for: $4"
	most "$1" "" "$2" "$3" "$4"
}

# nginx_serves NW FILE: $master has NW workers (sets $workers) and
# answers /work (the reply in FILE).
nginx_serves() {
	workers=$(pgrep -P "$master" | tr '\n' ' ')
	[ "$(echo $workers | wc -w)" -eq "$1" ] &&
		curl -sf http://127.0.0.1:8080/work >"$2" 2>/dev/null
}

# start_nginx NW JIT: nginx (Debian's) with NW workers and the Lua module
# on OpenResty's LuaJIT, serving tests/kernel/svc/nginx_handler.lua at
# http://127.0.0.1:8080/work; JIT is Lua run by init_by_lua in the master
# (e.g. "require('jit').off()").  Sets $master and $workers.
start_nginx() {
	local nw=$1 jit=$2 d=$W/nginx
	mkdir -p "$d"
	sed -e "s|@W@|$d|g; s|@M@|$PWD/$NGXLUA|g; s|@T@|$PWD|g" \
	    -e "s|@NW@|$nw|; s|@PORT@|8080|; s|@JIT@|$jit|" \
	    tests/kernel/svc/nginx.conf.in >"$d/nginx.conf"
	LD_LIBRARY_PATH=$L2LIB nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" \
		>"$d/out" 2>&1 &
	master=$!
	kids="$kids $master"
	within 120 nginx_serves "$nw" "$d/first" || { cat "$d/error.log" "$d/out" >&2; fail "nginx did not serve"; }
	grep -Eq '^[0-9,]+ [0-9]+$' "$d/first" || { cat "$d/first" >&2; fail "nginx: bad reply"; }
}

stop_nginx() {
	kill -QUIT "$master" 2>/dev/null
	wait "$master" 2>/dev/null
	true
}

# start_svc NAME READY CMD...: runs CMD in the background (output in
# $W/NAME.out), waits for the line READY, sets $pid.
start_svc() {
	local name=$1 ready=$2 out=$W/$1.out
	shift 2
	"$@" >"$out" 2>&1 &
	pid=$!
	kids="$kids $pid"
	within 120 grep -q "$ready" "$out" || { cat "$out" >&2; fail "$name did not start"; }
}

# one_universe WHAT CHUNKRE: with $f reported --by-tid, fails when a
# thread's samples show Lua frames of chunks CHUNKRE (one per thread, the
# thread's number in its name) of two threads, or one chunk shows up
# under two threads: each LuaJIT state's chunks must stay in its thread.
one_universe() {
	awk -v re="$2" '{
		split($0, fr, ";"); tid = fr[1]
		for (i = 2; i in fr; i++) {
			s = fr[i]
			if (match(s, re)) {
				c = substr(s, RSTART, RLENGTH)
				if (!((tid, c) in seen)) {
					seen[tid, c] = 1; nt[tid]++; nc[c]++
					if (nt[tid] > 1) { print "thread " tid " runs two chunks, the second " c; bad = 1 }
					if (nc[c] > 1) { print "chunk " c " under two threads, the second " tid; bad = 1 }
				}
			}
		}
	} END { exit bad }' "$f" >"$W/universe.err" ||
		{ head -5 "$W/universe.err" >&2; fail "$1: Lua frames of another thread's state"; }
}
