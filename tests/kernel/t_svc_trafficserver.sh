#!/bin/sh
# Debian's Apache Traffic Server with its ts_lua plugin (tslua.so, on
# Debian's libluajit-5.1), a remap rule that runs
# svc/trafficserver_handler.lua for every request: do_remap intercepts
# it and send_response answers it from Lua (render, fib), JIT on as
# ts_lua leaves it.  wrk sends requests over loopback while the
# traffic_server process is recorded for 5 s.  ts_lua makes a Lua state
# per thread and leaves each main thread's globals empty (the shape
# whose layout check used to refuse it):
#  - samples in fib() read, root first, a thread's entry; ...;
#    INKContInternal::handle_event (ATS calling the plugin); ...;
#    the handler's send_response; render; fib (and a trace of it, when
#    one runs), in >= 90% of them;
#  - >= 90% of all samples rooted at a thread's entry;
#  - no garbage frame.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
lo_up
# The cache and the runtime files cannot live on the 9p share $W is on.
run=$(mktemp -d /tmp/ts.XXXXXX) || fail "mktemp"
mkdir -p "$run/etc" "$run/cache" "$run/var" "$run/run" "$run/log"
cp -r /etc/trafficserver/. "$run/etc/" || fail "no /etc/trafficserver (scripts/deps.sh test)"
cat >"$run/runroot.yaml" <<EOT
prefix: $run
exec_prefix: /usr
bindir: /usr/bin
sbindir: /usr/sbin
sysconfdir: $run/etc
datadir: $run/cache
includedir: /usr/include
libdir: /usr/lib/trafficserver
libexecdir: /usr/lib/trafficserver/modules
localstatedir: $run/var
runtimedir: $run/run
logdir: $run/log
cachedir: $run/cache
EOT
sed -i -e 's/^CONFIG proxy.config.http.server_ports STRING .*/CONFIG proxy.config.http.server_ports STRING 8081/' \
	-e 's/^CONFIG proxy.config.admin.user_id STRING .*/CONFIG proxy.config.admin.user_id STRING #-1/' \
	-e 's/^CONFIG proxy.config.http.cache.http INT .*/CONFIG proxy.config.http.cache.http INT 0/' \
	"$run/etc/records.config"
echo 'CONFIG proxy.config.crash_log_helper STRING /bin/true' >>"$run/etc/records.config"
echo "$run/cache 64M" >"$run/etc/storage.config"
echo "map http://127.0.0.1:8081/ http://127.0.0.1:9/ @plugin=tslua.so @pparam=$PWD/tests/kernel/svc/trafficserver_handler.lua" \
	>"$run/etc/remap.config"
traffic_server --run-root="$run/runroot.yaml" >"$W/ts.out" 2>&1 &
pid=$!
kids="$kids $pid"
ts_serves() { curl -sf -m 5 http://127.0.0.1:8081/work >"$W/first" 2>/dev/null; }
within 120 ts_serves || { cat "$W/ts.out" "$run/log/diags.log" >&2; fail "traffic_server did not serve"; }
[ "$(cat "$W/first")" = 6765 ] || { cat "$W/first" >&2; fail "traffic_server: bad reply"; }
wrk -t1 -c8 -d300 http://127.0.0.1:8081/work >"$W/wrk.out" 2>&1 &
wrkpid=$!
kids="$kids $wrkpid"
sleep 1
stop="$wrkpid $pid"
record_svc trafficserver 5

H='@[^;]*svc/trafficserver_handler\.lua'
# send_response is a global of the handler chunk's environment, which is
# not the main thread's globals: unnamed, its chunk and line only.
leaf_chain trafficserver fib 50 "fib $H:4" \
	"^(_start|clone3|clone|start_thread);(.*;)?INKContInternal::handle_event\\(int, void\\*\\);(.*;)?(send_response )?$H:11;render $H:8;(fib $H:4;)*fib $H:4(;TRACE_[0-9]+ $H:[0-9]+)?"
root=$(rooted "_start|clone3|clone|start_thread")
need_most trafficserver "$root" "$all" "samples rooted at a thread's entry"
unload
pass "$all samples, fib chain $good/$nleaf, rooted $root/$all"
