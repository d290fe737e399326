# Sourced (after lib.sh) by the kernel tests that sample LuaJIT targets.
# The three targets of design section 6, run from the host's root:
#   luajit     Debian's /usr/bin/luajit (GC64, stripped, no frame pointers)
#   luajit2    OpenResty's, unpacked into build/luajit2 on the host
#   tarantool  Debian's tarantool 2.6 (its own non-GC64 LuaJIT)
WL=tests/fixtures/workloads
L2=build/luajit2
STACKS=$K/lwstacks

# matrix_bin CELL FLAVOUR: the binary of a tests/kernel/rec_matrix.cells
# line, as prep-t_rec_matrix links it for the guest (dwarf: the build with
# -g; stripped: its stripped copy; static: static_host.c around its
# libluajit.a).
matrix_bin() {
	case $2 in
	dwarf) echo "$K/ljmatrix/$1/luajit" ;;
	stripped) echo "$K/ljmatrix/$1/luajit.stripped" ;;
	static) echo "$K/ljmatrix/$1/host.static" ;;
	*) fail "$1: unknown flavour $2" ;;
	esac
}

# lua_cmd NAME: the command line that runs a Lua script on target NAME.
lua_cmd() {
	case $1 in
	luajit) echo luajit ;;
	luajit2) echo "env LD_LIBRARY_PATH=$L2/usr/lib/x86_64-linux-gnu $L2/usr/bin/luajit" ;;
	tarantool) echo tarantool ;;
	*) fail "unknown target $1" ;;
	esac
}

# start_lua NAME SCRIPT ARGS...: runs SCRIPT on target NAME in the
# background, waits for its "ready" line, sets $pid.
# payload_stock.lua's SECONDS are of its process CPU clock, which in a
# loaded guest also counts the sample handler's time and the time the host
# took the vCPU away: the tests pass an hour and end the target themselves
# (a bound of two minutes ran out mid-test on the debug kernel beside other
# guests).  Its lines are fixed: the tests name lua_payload's.
start_lua() {
	local name=$1 out
	shift
	out=$W/$name.out
	$(lua_cmd "$name") "$@" >"$out" 2>&1 &
	pid=$!
	kids="$kids $pid"
	within 120 grep -q ready "$out" || { cat "$out" >&2; fail "$name did not start"; }
}

# stop_lua: kill the target started last.
stop_lua() {
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	true
}

# record NAME SECONDS [attach options]: attach to $pid with the Lua walk,
# read SECONDS of samples into $W/NAME.stacks, detach.
record() {
	local name=$1 secs=$2
	shift 2
	$CTL attach "$pid" --freq 999 "$@" >"$W/$name.attach" 2>&1 ||
		{ cat "$W/$name.attach" >&2; fail "$name: attach"; }
	$STACKS read "$pid" "$secs" >"$W/$name.stacks" || fail "$name: lwstacks"
	$CTL status "$pid" >"$W/$name.status" || fail "$name: status"
	$CTL detach "$pid" || fail "$name: detach"
}

# The stack=... part of a lwstacks line.
stack_of() {
	sed 's/.* stack=//'
}
