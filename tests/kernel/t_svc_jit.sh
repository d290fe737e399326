#!/bin/sh
# The services of t_svc_nginx and t_svc_sysbench with the JIT on: their
# hot loops (fib, leaf) run as traces.
#  - sysbench, 3 threads (one LuaJIT state each), recorded 6 s: >= 50
#    samples in traces; >= 90% of them read, root first, the thread's
#    entry ... lua_pcall; thread_run; pcall; event; [run; [mid; [leaf;]]]
#    TRACE_n @sbwork<k>.lua:line (or thread_run; TRACE_n of sysbench's own
#    loop) -- the trace's function and its callers,
#    and the host stack beyond the trace; no thread shows a trace or
#    chunk of another thread's state; >= 90% of all samples rooted at the
#    thread's entry; no garbage frame;
#  - nginx, one worker under wrk, recorded 5 s: >= 50 samples in traces;
#    >= 90% of them read _start ... ngx_http_lua_run_thread; the handler
#    chunk; its Lua callees; TRACE_n @chunk:line; >= 90% of all samples
#    rooted at _start; no garbage frame.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
msg=

start_svc sysbench 'Threads started' env SVC_JIT=on \
	sysbench tests/kernel/svc/sysbench.lua --threads=3 --time=120 --events=0 run
record_svc sysbench_jit 6 --by-tid
$REP --vmstates "$W/sysbench_jit.luw" >"$W/sb.vmstates" || fail "sysbench: --vmstates"
one_universe "sysbench jit" 'sbwork[0-9]+\.lua'
S='@[^;]*svc/sysbench\.lua'
B='@sbwork[0-9]+\.lua'
I='@\[string "sysbench\.lua"\]'
all=$(sum '')
ntr=$(sum -E ';TRACE_[0-9]+ ')
[ "$ntr" -ge 50 ] || fail "sysbench jit: only $ntr of $all samples in traces"
good=$(sum -E "^[^;]*;(clone3;)?start_thread;(.*;)?lua_pcall;thread_run $I:28;(pcall;event $S:38;(run $B:15;(mid $B:11;(leaf $B:3;)?)?)?TRACE_[0-9]+ $B|TRACE_[0-9]+ $I):[0-9]+( [0-9]+\$|;)")
need_most "sysbench jit" "$good" "$ntr" "trace samples with the callers of the trace"
root=$(rooted '_start|clone3|clone|start_thread' 1)
need_most "sysbench jit" "$root" "$all" "samples rooted at the thread's entry"
msg="sysbench: $all samples, traces $good/$ntr, rooted $root/$all;"

lo_up
start_nginx 1 "-- JIT on"
wrk -t1 -c4 -d300 http://127.0.0.1:8080/work >"$W/wrk.out" 2>&1 &
wrkpid=$!
kids="$kids $wrkpid"
sleep 1
set -- $workers
$CTL record -p "$1" -o "$W/ng.luw" --duration 5 2>"$W/ng.err" ||
	{ cat "$W/ng.err" >&2; fail "nginx: record -p $1"; }
kill "$wrkpid" 2>/dev/null
wait "$wrkpid" 2>/dev/null
stop_nginx
report "$W/ng.luw"
no_garbage "nginx jit"
H='@[^;]*nginx_handler\.lua'
all=$(sum '')
ntr=$(sum -E ';TRACE_[0-9]+ ')
[ "$ntr" -ge 50 ] || fail "nginx jit: only $ntr of $all samples in traces"
good=$(sum -E "^_start;(.*;)?ngx_http_lua_run_thread;main chunk $H:0;([^;]+ $H:[0-9]+;)*TRACE_[0-9]+ @[^;]+:[0-9]+( [0-9]+\$|;)")
need_most "nginx jit" "$good" "$ntr" "trace samples with the callers of the trace"
root=$(rooted _start)
need_most "nginx jit" "$root" "$all" "samples rooted at _start"
msg="$msg nginx: $all samples, traces $good/$ntr, rooted $root/$all"
unload
pass "$msg"
