#!/bin/sh
# GC steps called from traces in a process with several universes (issue
# 9): tests/kernel/lua_threads.c in "gc" mode, 4 threads, each its own
# lua_State (so its own global_State) with the JIT on, running a trace
# that allocates and calls lj_gc_step_jit (alloc_<i> in @thread<i>.lua).
# With several global_States there is no fallback G: the walk needs the
# sampled thread's own DISPATCH, which the GC's C functions may have saved
# and reused (r14); the host walk recovers it through their CFI.  Of the
# samples with vmstate=GC, told apart by thread (lwstacks' tid):
#  - >= 60% read, innermost first: host frames (the GC's C code), the
#    trace (trace:N:@thread<i>.lua), alloc_<i> (@thread<i>.lua:3), the
#    main chunk (@thread<i>.lua:0), then host frames only through
#    lua_pcall;thread_main;start_thread -- i the sampled thread's;
#  - >= 90% are that, or the same without the trace frame (GC steps the
#    trace exit handler runs);
#  - no sample of thread i names another thread's chunk;
#  - GC samples from a trace whole in >= 3 of the 4 threads.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
nice -n 19 $K/lua_threads 4 1 1 0 gc >"$W/lt.out" 2>&1 &
pid=$!
kids="$kids $pid"
within 120 grep -q ready "$W/lt.out" || { cat "$W/lt.out" >&2; fail "lua_threads gc did not start"; }
sleep 1		# let the traces be recorded
record gc 6
grep -q ' 4 global_State' "$W/gc.attach" ||
	{ cat "$W/gc.attach" >&2; fail "attach did not find the 4 global_States"; }
kill "$pid"
wait "$pid" 2>/dev/null
f=$W/gc.stacks
awk -v tidsfile="$W/lt.out" '
BEGIN { while ((getline l < tidsfile) > 0) { split(l, w, " "); if (w[1] == "thread") th[w[4]] = w[2] } }
/^vmstate=GC / {
	tid = $0; sub(/.* tid=/, "", tid); sub(/ .*/, "", tid)
	s = $0; sub(/.* stack=/, "", s)
	ng++
	if (!(tid in th)) { stranger++; next }
	i = th[tid]
	t = s
	while (match(t, /thread[0-9]+\.lua/)) {
		c = substr(t, RSTART + 6, RLENGTH - 10)
		if (c != i) { alien++; print "thread " i ": " s > "/dev/stderr"; next }
		t = substr(t, RSTART + RLENGTH)
	}
	n = split(s, fr, ";")
	k = 1
	while (k <= n && fr[k] !~ /^(lua|trace|ff|c):/) k++
	if (k == 1) next
	tr = fr[k] ~ ("^trace:[0-9]+:@?thread" i "\\.lua:")
	if (tr) k++
	if (fr[k] !~ ("^lua:@?thread" i "\\.lua:3:")) next
	k++
	if (fr[k] !~ ("^lua:@?thread" i "\\.lua:0:")) next
	for (j = k + 1; j <= n; j++) if (fr[j] ~ /^(lua|trace|ff|c):/) next
	if (s !~ /;lua_pcall;thread_main;start_thread;/) next
	whole++
	if (tr) { ok++; okth[i] = 1 }
}
END {
	nt = 0
	for (x in okth) nt++
	print ok + 0, whole + 0, ng + 0, alien + 0, stranger + 0, nt
}' "$f" >"$W/count" 2>"$W/alien" || fail "awk"
read good whole ng alien stranger nt <"$W/count"
echo "GC samples: $ng, whole from a trace $good, whole $whole, threads $nt"
[ "$ng" -ge 20 ] || { head -5 "$f" >&2; fail "only $ng GC samples"; }
[ "$stranger" -eq 0 ] || fail "$stranger GC samples from tids that run no lua_State"
[ "$alien" -eq 0 ] || { head -3 "$W/alien" >&2; fail "$alien GC samples name another thread's chunk"; }
if [ $((100 * good)) -lt $((60 * ng)) ]; then
	grep '^vmstate=GC ' "$f" | head -5 >&2
	fail "$good of $ng GC samples are C -> trace -> alloc_i -> main -> lua_pcall of their thread"
fi
if [ $((100 * whole)) -lt $((90 * ng)) ]; then
	grep '^vmstate=GC ' "$f" | grep -v 'trace:' | head -5 >&2
	fail "$whole of $ng GC samples are C [-> trace] -> alloc_i -> main -> lua_pcall of their thread"
fi
[ "$nt" -ge 3 ] || fail "whole GC samples from a trace in only $nt of 4 threads"
unload
pass "$good/$ng GC samples whole from a trace, $whole whole, in $nt threads, none alien"
