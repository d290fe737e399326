#!/usr/bin/env bash
# What allocation sampling costs (issue 28), in a QEMU TCG guest on
# Debian's 6.1 kernel whose clock is its instruction count (LUW_VM_ICOUNT,
# as overhead.sh: times are instructions, a ratio is what carries over);
# figures only, nothing asserted.  One fixed allocation-heavy workload
# (alloc.lua: small tables and 64-byte strings, JIT on) run alone, with
# the allocator probed at the default interval (512 KiB) and at 64 KiB,
# without CPU sampling (record --alloc --no-cpu), and with the probe and
# a reader that keeps the raw records (attach --alloc --no-cpu, dump
# --raw: status then gives the probe's own counts); the kinds
# interleaved, 3 runs each.  The cost per allocator call is the extra
# target CPU time over the calls the probe saw (status, alloc calls): it
# holds the trap into the kernel, the single step uprobes make of the
# probed instruction and the handler's count (and its walk, once per
# record).  Then a real service: nginx with its Lua module under wrk,
# alone and while record --alloc --no-cpu probes its worker (at 512 KiB
# and at 4 KiB), the worker's CPU time per request.
#
# usage: tests/bench/alloc.sh            (host: boots the guest)
#        tests/bench/alloc.sh --guest    (inside it; run by the above)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
cd "$top"

if [ "${1:-}" != --guest ]; then
	bench_header() {
		echo '## What allocation sampling costs (tests/bench/alloc.sh)'
		echo
		echo "$when; host: $cpu,"
		echo "$ncpu cores; guest: Debian kernel $rel under qemu-system-x86_64 -accel tcg"
		echo '-icount shift=0 (one vCPU, 1 ns an instruction).'
		echo '**Instruction counts under TCG**: only the ratios mean something'
		echo 'beyond this machine, and they only roughly: a trap into the kernel'
		echo 'costs many more instructions under TCG than on a CPU.'
		echo "Load average (1, 5, 15 min) before: $load0; after: $load1 (the"
		echo 'figures do not depend on it).'
		echo
	}
	LUW_VM_ICOUNT=1 guest_bench alloc 3600
	exit
fi

# ---- in the guest ---------------------------------------------------------
guest_prelude alloc /tmp/luw-alloc

# work ROUNDS KIND: one run; prints "ELAPSED_NS CPU_S CALLS HANDLER_NS"
# (calls and the handler's mean time per call from status, raw kind only).
work() {
	local rounds=$1 kind=$2 pid calls=0 hns=0
	rm -f "$W/go"
	luajit tests/bench/alloc.lua "$W/go" "$rounds" >"$W/w.out" 2>"$W/w.err" &
	pid=$!
	for _ in $(seq 300); do grep -q ready "$W/w.out" && break; sleep 0.1; done
	grep -q ready "$W/w.out" || die "$kind: the workload did not start: $(cat "$W/w.out" "$W/w.err")"
	case $kind in
	record-512k | record-64k)
		"$CTL" record -p "$pid" -o "$W/rec.luw" --no-cpu \
			--alloc-interval $([ $kind = record-64k ] && echo 65536 || echo 524288) \
			>"$W/rec.out" 2>&1 &
		kids="$kids $!"
		;;
	raw-512k)
		"$CTL" attach "$pid" --alloc --no-cpu >"$W/rec.out" 2>&1 || die "attach: $(cat "$W/rec.out")"
		"$CTL" dump --raw >/dev/null 2>>"$W/rec.out" &
		kids="$kids $!"
		;;
	esac
	sleep 2
	touch "$W/go"
	while kill -0 "$pid" 2>/dev/null; do
		if [ $kind = raw-512k ]; then
			s=$("$CTL" status "$pid" 2>/dev/null | sed -n 's/^alloc calls=\([0-9]*\) .*handler_ns_mean=\([0-9]*\)/\1 \2/p')
			[ -n "$s" ] && set -- $s && calls=$1 hns=$2
		fi
		sleep 0.2
	done
	wait
	grep -q '^elapsed' "$W/w.out" || die "$kind: no result: $(cat "$W/w.out" "$W/w.err")"
	awk -v c="$calls" -v h="$hns" '/^elapsed/ { print $2, $4, c, h }' "$W/w.out"
}

# About 1 s of work alone (virtual: instructions).
cal=$(work 10 alone | cut -d' ' -f1)
[ -n "$cal" ] || die "calibration failed"
rounds=$(awk -v ns="$cal" 'BEGIN { n = int(10 * 1e9 / ns); print n < 10 ? 10 : n }')
kinds="alone record-512k record-64k raw-512k"
for i in 1 2 3; do
	for k in $kinds; do
		work "$rounds" "$k" >>"$W/res.$k" || die "$k"
		echo "  run $i $k: $(tail -1 "$W/res.$k")" >&2
	done
done
base=$(cut -d' ' -f2 "$W/res.alone" | median)
calls=$(cut -d' ' -f3 "$W/res.raw-512k" | median)
hns=$(cut -d' ' -f4 "$W/res.raw-512k" | median)
R "alloc.lua, $rounds rounds (about 1 s alone; 2000 allocations a round,"
R "and as many frees); 3 runs of each kind, interleaved; medians.  Target"
R "CPU: the workload's own CPU time, which holds the probe's trap and"
R "handler (they run in the allocating thread); its ratio to running"
R "alone is what allocation sampling costs the target."
R ""
R "| kind | target CPU s | target slowdown | runs (s) |"
R "| --- | ---: | ---: | --- |"
for k in $kinds; do
	m=$(cut -d' ' -f2 "$W/res.$k" | median)
	runs=$(cut -d' ' -f2 "$W/res.$k" | awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $1 }')
	R "$(awk -v k="$k" -v m="$m" -v b="$base" -v runs="$runs" \
		'BEGIN { printf "| %s | %.3f | %+.1f%% | %s |", k, m, (m / b - 1) * 100, runs }')"
done
R ""
m=$(cut -d' ' -f2 "$W/res.raw-512k" | median)
R "$(awk -v m="$m" -v b="$base" -v c="$calls" -v h="$hns" 'BEGIN {
	printf "Probe at 512 KiB: %d allocator calls (allocations and frees), ", c
	if (c > 0)
		printf "%.0f ns (instructions) of target CPU more per call, of which the handler itself %d ns (status).", (m - b) * 1e9 / c, h
}')"
R ""

# ---- nginx under wrk ------------------------------------------------------
# Debian's nginx with its Lua module on OpenResty's luajit2 (as
# t_svc_nginx, tests/kernel/svc/), one worker, the JIT on; wrk on the same
# vCPU, one thread, 8 connections, 5 s (virtual) a run.  Per run: the
# requests served, the worker's CPU time (utime + stime: the trap and the
# handler run in it) and, recording, the probe's calls (report --alloc's
# totals).  What the probe costs nginx is its CPU time per request,
# recorded against alone; wrk's requests a second hold wrk's own CPU too.
ip link set lo up || die "no loopback"
d=$W/nginx
mkdir -p "$d"
sed -e "s|@W@|$d|g; s|@M@|$PWD/build/nginx-lua|g; s|@T@|$PWD|g" \
    -e "s|@NW@|1|; s|@PORT@|8080|; s|@JIT@|require('jit').on()|" \
    tests/kernel/svc/nginx.conf.in >"$d/nginx.conf"
LD_LIBRARY_PATH=build/luajit2/usr/lib/x86_64-linux-gnu \
	nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" >"$d/out" 2>&1 &
master=$!
kids="$kids $master"
for _ in $(seq 300); do curl -sf http://127.0.0.1:8080/work >/dev/null 2>&1 && break; sleep 0.2; done
worker=$(pgrep -P "$master")
[ -n "$worker" ] && curl -sf http://127.0.0.1:8080/work >/dev/null ||
	die "nginx did not serve: $(cat "$d/error.log" "$d/out")"
wrk -t1 -c8 -d2s http://127.0.0.1:8080/work >/dev/null 2>&1 # warm: traces made
cputicks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# ngx KIND: one run; prints "REQUESTS WORKER_CPU_S REQ_PER_S CALLS".
ngx() {
	local kind=$1 rec= c0 c1 calls=0
	case $kind in
	record-*)
		"$CTL" record -p "$worker" -o "$W/ngx.luw" --no-cpu \
			--alloc-interval $([ $kind = record-4k ] && echo 4096 || echo 524288) \
			>"$W/ngx.rec" 2>&1 &
		rec=$!
		for _ in $(seq 300); do grep -q 'allocators probed' "$W/ngx.rec" && break; sleep 0.1; done
		grep -q 'allocators probed' "$W/ngx.rec" || die "$kind: record did not attach: $(cat "$W/ngx.rec")"
		;;
	esac
	c0=$(cputicks "$worker")
	wrk -t1 -c8 -d5s http://127.0.0.1:8080/work >"$W/wrk.out" 2>&1 || die "wrk: $(cat "$W/wrk.out")"
	c1=$(cputicks "$worker")
	if [ -n "$rec" ]; then
		kill -TERM "$rec"
		wait "$rec" || die "$kind: record: $(cat "$W/ngx.rec")"
		"$K/luaunwind-report" --alloc "$W/ngx.luw" >/dev/null 2>"$W/ngx.rep" ||
			die "$kind: report: $(cat "$W/ngx.rep")"
		calls=$(sed -n 's/.* the probes counted [0-9]* bytes in \([0-9]*\) calls.*/\1/p' "$W/ngx.rep")
	fi
	awk -v c="$(( c1 - c0 ))" -v hz="$(getconf CLK_TCK)" -v calls="${calls:-0}" '
		/ requests in / { n = $1 }
		/^Requests\/sec:/ { rps = $2 }
		END { if (n) printf "%d %.2f %.1f %d\n", n, c / hz, rps, calls }' "$W/wrk.out"
}
nkinds="alone record-512k record-4k"
for i in 1 2 3; do
	for k in $nkinds; do
		ngx "$k" >>"$W/ngx.$k" || die "nginx $k"
		[ -s "$W/ngx.$k" ] || die "nginx $k: no figures: $(cat "$W/wrk.out")"
		echo "  nginx run $i $k: $(tail -1 "$W/ngx.$k")" >&2
	done
done
# Per kind: medians of the requests, of the worker's CPU per request (us)
# and of the probe's calls per request.
perreq() { awk '{ print $2 * 1e6 / $1 }' "$W/ngx.$1" | median; }
nbase=$(perreq alone)
R "nginx (Debian's, its Lua module on OpenResty's luajit2, one worker, JIT"
R "on) serving tests/kernel/svc/nginx_handler.lua to wrk (one thread, 8"
R "connections, 5 s a run, on the same vCPU); 3 runs of each kind,"
R "interleaved; medians.  Worker CPU per request: the worker's utime +"
R "stime over the requests served (the probe's trap and handler run in"
R "it); its ratio to running alone is what the probe costs nginx.  Probe"
R "calls: the allocator calls the probe counted, per request."
R ""
R "| kind | requests/s | worker CPU per request (us) | slowdown | probe calls per request | cost per call (ns) |"
R "| --- | ---: | ---: | ---: | ---: | ---: |"
for k in $nkinds; do
	m=$(perreq "$k")
	rps=$(cut -d' ' -f3 "$W/ngx.$k" | median)
	cpr=$(awk '{ print $4 / $1 }' "$W/ngx.$k" | median)
	R "$(awk -v k="$k" -v m="$m" -v b="$nbase" -v rps="$rps" -v cpr="$cpr" 'BEGIN {
		c = "-"; pc = "-"
		if (cpr > 0) {
			c = sprintf("%.1f", cpr)
			pc = sprintf("%.0f", (m - b) * 1000 / cpr)
		}
		printf "| %s | %.0f | %.1f | %+.1f%% | %s | %s |", k, rps, m, (m / b - 1) * 100, c, pc
	}')"
done
R ""
