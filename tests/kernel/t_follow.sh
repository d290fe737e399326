#!/bin/sh
# record selecting processes instead of naming them (issue 30), each
# recording reported --by-pid (stacks rooted at comm-PID):
#  - first, a second attach of one process says it is attached already;
#  - --comm luajit: a luajit running coro.lua before the recording and
#    two started during it are attached and their samples named
#    (work @coro.lua:4) under luajit-PID, one of them killed while the
#    recording goes on; a tarantool running the same script is not
#    recorded, and nothing stays attached after the recording;
#  - -p SH --children: a shell (not LuaJIT) whose two luajit children are
#    recorded; the recording ends by itself once the shell and its
#    children have exited;
#  - record -- luajit launch.lua, and the same through a shell script
#    that execs luajit and through a host that dlopens libluajit later:
#    attached before its first Lua, so its first function is in the
#    recording, which ends with it;
#  - --exe nginx during a reload (SIGHUP to the master): the new workers
#    are attached as they appear and their samples hold the handler's
#    chain, named (render, fib), under load from wrk; no new worker's
#    stack has a garbage frame, nor an old one's but an unnamed function
#    (it exited during the recording); the old workers, gone, keep their
#    names.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
H='@[^;]*coro\.lua'

# attached PID FILE: record's stderr FILE says it attached PID.
attached() {
	grep -q "attached pid $1: " "$2"
}

# named_in PID MIN: $f has at least MIN samples of PID in work(), rooted
# at luajit-PID (its comm kept, though it may have exited).
named_in() {
	local n
	n=$(sum -E "^luajit-$1;.*;work $H:4( [0-9]+\$|;)")
	[ "$n" -ge "$2" ] || fail "$3: pid $1 has $n samples in work() (want >= $2): $(grep -E "^[^;]*-$1;" "$f" | sort -t' ' -k2 -n | tail -2 | cut -c1-300)"
	echo "$n"
}

# ---- --comm luajit ---------------------------------------------------------
start_lua luajit $WL/coro.lua
p0=$pid
start_lua tarantool $WL/coro.lua
tt=$pid
# An attach of a process attached already says so.
$CTL attach "$tt" >"$W/a1.err" 2>&1 || { cat "$W/a1.err" >&2; fail "attach $tt"; }
$CTL attach "$tt" >"$W/a2.err" 2>&1 && fail "a second attach of $tt succeeded"
grep -q "pid $tt is attached already, in this session (luaunwind-ctl detach $tt ends it)" "$W/a2.err" ||
	fail "a second attach of $tt: $(cat "$W/a2.err")"
$CTL detach "$tt" || fail "detach $tt"
$CTL record --comm luajit -o "$W/c.luw" 2>"$W/c.err" &
rec=$!
kids="$kids $rec"
within 60 attached "$p0" "$W/c.err" || { cat "$W/c.err" >&2; fail "--comm: the first luajit not attached"; }
luajit $WL/coro.lua >"$W/c1.out" 2>&1 &
p1=$!
luajit $WL/coro.lua >"$W/c2.out" 2>&1 &
p2=$!
kids="$kids $p1 $p2"
within 120 attached "$p1" "$W/c.err" || { cat "$W/c.err" >&2; fail "--comm: luajit $p1, started later, not attached"; }
within 120 attached "$p2" "$W/c.err" || { cat "$W/c.err" >&2; fail "--comm: luajit $p2, started later, not attached"; }
sleep 3
# One exits while the recording goes on: its samples keep its name.
kill -9 $p1
wait $p1 2>/dev/null
sleep 2
kill -TERM $rec
wait $rec || { cat "$W/c.err" >&2; fail "record --comm luajit"; }
grep -q "attached pid $tt:" "$W/c.err" && fail "--comm luajit attached tarantool $tt"
v=$($CTL version)
[ "$(field all_targets "$v")" = 0 ] || fail "targets left attached after record --comm: $v"
report "$W/c.luw" --by-pid
no_garbage "--comm"
n0=$(named_in "$p0" 20 "--comm")
n1=$(named_in "$p1" 20 "--comm")
n2=$(named_in "$p2" 20 "--comm")
ntt=$(sum -E "^tarantool-")
[ "$ntt" -eq 0 ] || fail "--comm luajit: $ntt samples of tarantool"
kill -9 $p1 $p2 $tt 2>/dev/null
stop_lua
msg="--comm: work() $n0, $n1 (later), $n2 (later) samples"

# ---- -p SH --children ------------------------------------------------------
sh -c "luajit $WL/coro.lua & luajit $WL/coro.lua & wait" >"$W/k.out" 2>&1 &
sh=$!
kids="$kids $sh"
within 120 sh -c "[ \$(grep -c ready '$W/k.out') -eq 2 ]" || fail "--children: the children did not start"
ch=$(pgrep -P $sh | tr '\n' ' ')
$CTL record -p $sh --children -o "$W/k.luw" 2>"$W/k.err" &
rec=$!
kids="$kids $rec"
for c in $ch; do
	within 60 attached "$c" "$W/k.err" || { cat "$W/k.err" >&2; fail "--children: child $c not attached"; }
done
attached "$sh" "$W/k.err" && fail "--children attached the shell $sh"
sleep 3
kill -9 $ch
within 60 sh -c "! kill -0 $rec 2>/dev/null" || fail "--children: record did not end with the shell and its children"
wait $rec || { cat "$W/k.err" >&2; fail "record -p $sh --children"; }
grep -q 'every target exited' "$W/k.err" || fail "--children: record did not say why it ended: $(cat "$W/k.err")"
report "$W/k.luw" --by-pid
no_garbage "--children"
for c in $ch; do
	n=$(named_in "$c" 20 "--children")
	msg="$msg; --children: $c $n"
done

# ---- record -- CMD ---------------------------------------------------------
# Stopped before its first Lua: first_fn, the payload's first function,
# is in the recording, which ends with the program.  luajit itself; a
# shell script that execs luajit (no LuaJIT at the shell's entry: traced
# on to the exec); a host that dlopens libluajit after 200 ms (traced on
# to the mapping).
LH='@[^;]*launch\.lua'
printf '#!/bin/sh\nexec luajit "$@"\n' >"$W/run.sh"
chmod +x "$W/run.sh"
for cmd in luajit "$W/run.sh" $K/lua_dlopen; do
	c=${cmd##*/}
	$CTL record -o "$W/$c.luw" -- $cmd $WL/launch.lua 3000000 2>"$W/$c.err" ||
		{ cat "$W/$c.err" >&2; fail "record -- $c"; }
	grep -q 'before its first Lua, at lua_' "$W/$c.err" || fail "record -- $c: not attached before its first Lua: $(cat "$W/$c.err")"
	grep -q 'every target exited' "$W/$c.err" || fail "record -- $c did not end with it: $(cat "$W/$c.err")"
	report "$W/$c.luw"
	no_garbage "record -- $c"
	n1=$(sum -E ";first_fn $LH:5( [0-9]+\$|;)")
	n2=$(sum -E ";then_fn $LH:10( [0-9]+\$|;)")
	[ "$n1" -ge 20 ] && [ "$n2" -ge 20 ] || fail "record -- $c: $n1 samples in first_fn, $n2 in then_fn: $(sort -t' ' -k2 -n "$f" | tail -3 | cut -c1-300)"
	msg="$msg; -- $c: first_fn $n1, then_fn $n2"
done
v=$($CTL version)
[ "$(field all_targets "$v")" = 0 ] || fail "targets left attached after record --: $v"

# ---- --exe nginx, reloaded -------------------------------------------------
lo_up
start_nginx 2 "require('jit').off()"
old=$workers
wrk -t1 -c8 -d300 http://127.0.0.1:8080/work >"$W/wrk.out" 2>&1 &
wrkpid=$!
kids="$kids $wrkpid"
$CTL record --exe "$(command -v nginx)" -o "$W/n.luw" 2>"$W/n.err" &
rec=$!
kids="$kids $rec"
for p in $master $old; do
	within 60 attached "$p" "$W/n.err" || { cat "$W/n.err" >&2; fail "--exe: nginx $p not attached"; }
done
kill -HUP "$master"
renewed() {
	new=$(pgrep -P "$master" | grep -Fvx -e "$(echo $old | tr ' ' '\n')" | tr '\n' ' ')
	[ "$(echo $new | wc -w)" -eq 2 ]
}
within 120 renewed || fail "nginx did not start new workers on SIGHUP: $(pgrep -P "$master" | tr '\n' ' ') (old: $old)"
for p in $new; do
	within 60 attached "$p" "$W/n.err" || { cat "$W/n.err" >&2; fail "--exe: new worker $p not attached"; }
done
sleep 4
kill -TERM $rec
wait $rec || { cat "$W/n.err" >&2; fail "record --exe nginx"; }
kill "$wrkpid" 2>/dev/null
stop_nginx
report "$W/n.luw" --by-pid
# The old workers exited during the recording: their samples are still
# rooted at nginx-PID, as every process's are.
for p in $old; do
	grep -q "^nginx-$p;" "$f" || fail "--exe: no samples rooted at nginx-$p (an old worker, exited): $(cut -d';' -f1 "$f" | sort | uniq -c | tr '\n' ' ')"
done
grep -q '^?-' "$f" && fail "--exe: samples of a process with no name: $(cut -d';' -f1 "$f" | sort | uniq -c | tr '\n' ' ')"
# The workers' stacks.  Not the master's: a reload runs init_by_lua in a
# new Lua state of the master's, whose short-lived init code may be
# freed before record reads its names (@?0x..., offcpu.md's and
# README's "short-lived" case).
# The old workers exited during it: a function they ran first just before
# their exit may be unnamed (no_garbage's "exited").
grep -E "^nginx-($(echo $old | tr ' ' '|'));" "$f" >"$W/n.old.folded"
grep -E "^nginx-($(echo $new | tr ' ' '|'));" "$f" >"$W/n.new.folded"
f=$W/n.old.folded
no_garbage "--exe nginx, the old workers" exited
msg="$msg; --exe: old workers"
for p in $old; do
	msg="$msg $p ($(sum -E "^nginx-$p;") samples)"
done
msg="$msg, $(sum -E '(^|;)@\?0x') of $(sum '') unnamed"
f=$W/n.new.folded
no_garbage "--exe nginx, the new workers"
NH='@[^;]*nginx_handler\.lua'
for p in $new; do
	n=$(sum -E "^nginx-$p;.*;ngx_http_lua_run_thread;main chunk $NH:0;render $NH:10;(fib $NH:5;)*fib $NH:5( [0-9]+\$|;)")
	[ "$n" -ge 20 ] || fail "--exe: new worker $p has $n samples in the handler's chain: $(grep -E "^nginx-$p;" "$f" | sort -t' ' -k2 -n | tail -2 | cut -c1-300)"
	msg="$msg; --exe: new worker $p $n in fib"
done
unload
pass "$msg"
