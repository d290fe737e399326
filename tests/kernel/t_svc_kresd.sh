#!/bin/sh
# Debian's Knot Resolver (kresd 5, on Debian's libluajit-5.1) with
# svc/kresd.conf.in: the kresd_work module (svc/kres_modules/) works in
# every query's begin layer, then policy answers NXDOMAIN; kdig sends
# queries over loopback, 100 names per run, while kresd is recorded for
# 5 s, JIT off:
#  - samples in leaf() read, root first, _start; ...; uv_run (kresd's
#    event loop; its main is stripped); ...; lua_pcall (kresd's call of
#    the layer); kresd_work.query (the layer function, named by the
#    global kresd's modules.load stores the module in, read through the
#    sandbox kresd puts around its globals); mid; leaf, in >= 90% of them;
#  - >= 90% of all samples rooted at a thread's entry;
#  - no garbage frame.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
lo_up
# The run directory holds kresd's control socket and LMDB cache: neither
# works on the 9p share $W lives on, so a directory in the guest's /tmp.
run=$(mktemp -d /tmp/kresd.XXXXXX) || fail "mktemp"
sed "s|@T@|$PWD|g" tests/kernel/svc/kresd.conf.in >"$W/kresd.conf"
start_svc kresd ready kresd -n -a 127.0.0.1@5353 -c "$W/kresd.conf" "$run"
names=$(seq -f 'q%g.test' 1 100 | tr '\n' ' ')
kdig @127.0.0.1 -p 5353 +retry=0 +timeout=5 q0.test >"$W/kdig.first" 2>&1
grep -q 'status: NXDOMAIN' "$W/kdig.first" ||
	{ cat "$W/kdig.first" "$W/kresd.out" >&2; fail "kresd does not answer"; }
(while :; do kdig @127.0.0.1 -p 5353 +retry=0 +timeout=5 $names >/dev/null 2>&1; done) &
load_pid=$!
kids="$kids $load_pid"
stop="$load_pid $pid"
record_svc kresd 5

A='@[^;]*svc/kres_modules/kresd_work\.lua'
leaf_chain kresd leaf 100 "leaf $A:6" \
	"^_start;__libc_start_main;(.*;)?uv_run;(.*;)?lua_pcall;kresd_work\\.query $A:18;mid $A:14;leaf $A:6"
root=$(rooted "_start|clone3|clone|start_thread")
need_most kresd "$root" "$all" "samples rooted at a thread's entry"
unload
pass "$all samples, leaf chain $good/$nleaf, rooted $root/$all"
