#!/bin/sh
# Off-CPU time of a real service: Debian's nginx with its Lua module (as
# t_svc_nginx), one worker, a handler that blocks it
# (svc/nginx_block.lua: slow_lookup waits 50 ms in poll(2) per request,
# the classic OpenResty mistake), 40 requests one after another while
# record --off-cpu records the worker:
#  - the time blocked in poll under the handler's chain
#    (ngx_http_lua_run_thread; the chunk; slow_lookup) over the 40
#    requests is no more than the wall time of the 40 poll calls as
#    slow_lookup measured them (CLOCK_MONOTONIC, the clock of the
#    module's records: each stretch off the CPU lies within its call),
#    and no less than 40 x 50 ms, the timeouts it slept, less 1 ms a
#    call for the run from the timer's arming to the switch.  Exact
#    bounds, whatever the load: the test once compared wall less CPU time
#    within 5%, but a TCG guest's CPU time is counted by a sched_clock
#    that steps by jiffies, and at a host load of 8 it came out one
#    jiffy a request short (the report 9.8% over);
#  - the worker's wait for work (epoll_wait under
#    ngx_process_events_and_timers) is a box of its own, outside the
#    handler;
#  - under wrk (4 connections) the worker waits more in the handler's
#    poll than in epoll_wait: the recording render.sh draws for the
#    README.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
lo_up
start_nginx 1 ""
set -- $workers
w=$1
$CTL record -p "$w" -o "$W/b.luw" --off-cpu 2>"$W/b.err" &
rec=$!
within 60 grep -q 'attached' "$W/b.err" || { cat "$W/b.err" >&2; fail "record --off-cpu did not attach"; }
rm -f "$W/replies"
for _ in $(seq 40); do
	curl -sf http://127.0.0.1:8080/block >>"$W/replies" || fail "curl /block"
done
kill -TERM $rec
wait $rec || { cat "$W/b.err" >&2; fail "record --off-cpu of the worker"; }
[ "$(wc -l <"$W/replies")" -eq 40 ] || fail "$(wc -l <"$W/replies") replies of 40"
wall=$(awk '{ s += $1 } END { printf "%.0f", s }' "$W/replies")

report "$W/b.luw" --off-cpu=blocked
no_garbage "off-cpu"
H='@[^;]*nginx_block\.lua'
blk=$(sum -E ";ngx_http_lua_run_thread;main chunk $H:0;slow_lookup $H:[0-9]+;.*\[blocked: poll\]")
awk -v a="$blk" -v w="$wall" 'BEGIN { exit !(a <= w && a >= 40 * (50 - 1) * 1e6) }' ||
	fail "slow_lookup blocked in poll: $blk ns reported; its 40 poll calls took $wall ns and slept 40 x 50 ms"
idle=$(sum -E ";ngx_process_events_and_timers;.*\[blocked: epoll_wait\]")
[ "$idle" -gt 0 ] || fail "no wait in epoll_wait: $(sort -t' ' -k2 -n "$f" | tail -3 | cut -c1-300)"
inh=$(sum -E "ngx_http_lua_run_thread.*\[blocked: epoll_wait\]")
[ "$inh" -eq 0 ] || fail "epoll_wait time under the handler: $inh"
msg="slow_lookup blocked $blk ns (its poll calls took $wall) over 40 requests; the worker waited $idle ns in epoll_wait"

# Under wrk (4 connections, the worker never idle): its time off the CPU
# is the handler's poll, not epoll_wait.  The recording is kept for
# userspace/doc/render.sh (nginx_offcpu, the README's picture).
wrk -t1 -c4 -d300 http://127.0.0.1:8080/block >"$W/wrk.out" 2>&1 &
wrkpid=$!
kids="$kids $wrkpid"
$CTL record -p "$w" -o "$W/wrk.luw" --off-cpu --duration 5 2>"$W/wrk.err" ||
	{ cat "$W/wrk.err" >&2; fail "record --off-cpu under wrk"; }
kill "$wrkpid" 2>/dev/null
wait "$wrkpid" 2>/dev/null
report "$W/wrk.luw" --off-cpu=blocked
no_garbage "off-cpu under wrk"
wblk=$(sum -E ";slow_lookup $H:[0-9]+;.*\[blocked: poll\]")
widle=$(sum -E "\[blocked: epoll_wait\]")
[ "$wblk" -gt "$widle" ] ||
	fail "under wrk: $wblk ns blocked in slow_lookup's poll, $widle in epoll_wait"
stop_nginx
unload
pass "$msg; under wrk $wblk ns in slow_lookup's poll, $widle in epoll_wait"
