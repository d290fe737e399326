#!/usr/bin/env bash
# The main job, end to end: sample a running, unmodified LuaJIT process
# with luaunwind.ko and turn the recording into merged host + Lua stacks.
#
#   scripts/demo.sh            in a QEMU guest (scripts/vm-run): make demo
#   scripts/demo.sh --local    on this machine's own kernel: make demo LOCAL=1
#   scripts/demo.sh record KO OUTDIR LIBDIR
#                              the part that needs the module, run inside
#                              the guest or, with --local, right here
#
# The RFC payload (tests/fixtures/workloads/payload_stock.lua: Lua and C
# Fibonacci through the FFI, JIT off) runs under Debian's luajit;
# luaunwind-ctl records it for 5 s at 999 Hz into a .luw file.  Then the
# allocation payload (tests/fixtures/workloads/alloc.lua: two functions
# making strings, JIT on) is recorded with --alloc for 5 s, a sample
# about every 64 KiB allocated.  The reports are made on the host from
# those files alone: out/profile.folded, out/flame.svg, out/profile.pb.gz
# and the 10 heaviest stacks printed; out/alloc.folded, out/alloc.svg,
# out/alloc.pb.gz and the 3 stacks that allocated most.
#
# LUW_BIN: where the programs are (default build/bin).  LUW_VM_OUT: the
# guest's output directory (vm-run's default: out/vm).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
bin=${LUW_BIN:-build/bin}
case $bin in /*) ;; *) bin=$top/$bin ;; esac
secs=5 freq=999

say() { echo "demo: $*"; }
die() { echo "demo: $*" >&2; exit 1; }

# ---- inside: load the module, run the payload, record it -----------------
record() {
	local ko=$1 out=$2 lib=$3 loaded=0 pid
	[ "$(id -u)" -eq 0 ] || die "needs root (insmod, /dev/luaunwind)"
	if [ ! -e /sys/module/luaunwind ]; then
		insmod "$ko" 2>"$out/insmod.err" ||
			die "insmod $ko failed, so this kernel cannot run the demo here ('make demo' uses a QEMU guest): $(cat "$out/insmod.err")"
		loaded=1
	fi
	# An hour of its CPU clock, and stopped by us: in a loaded guest that
	# clock can run ahead of the wall clock, and a payload given 60 s was
	# once gone before record began (as tests/kernel/lualib.sh says).
	luajit tests/fixtures/workloads/payload_stock.lua nojit 3600 "$lib" \
		>"$out/payload.out" 2>&1 &
	pid=$!
	# Stopped by us below: no "Killed" notice from the shell.
	disown "$pid"
	# The payloads are ours to stop; the module too, if we loaded it.
	payloads=$pid
	trap 'kill -9 $payloads 2>/dev/null
	      for p in $payloads; do
		      while kill -0 $p 2>/dev/null; do sleep 0.05; done
	      done
	      [ '"$loaded"' = 0 ] || rmmod luaunwind' EXIT
	ready "$out/payload.out"
	say "running the RFC payload: $(command -v luajit) payload_stock.lua (pid $pid, kernel $(uname -r))"
	say "luaunwind-ctl record -p $pid -o profile.luw --duration $secs --freq $freq"
	"$bin/luaunwind-ctl" record -p "$pid" -o "$out/profile.luw" \
		--duration "$secs" --freq "$freq" 2>&1 | sed 's/^luaunwind-ctl: /demo: /'
	luajit tests/fixtures/workloads/alloc.lua 1000000 >"$out/alloc.out" 2>&1 &
	pid=$!
	disown "$pid"
	payloads="$payloads $pid"
	ready "$out/alloc.out"
	say "running the allocation payload: alloc.lua (pid $pid)"
	say "luaunwind-ctl record -p $pid -o alloc.luw --alloc --alloc-interval 65536 --no-cpu --duration $secs"
	"$bin/luaunwind-ctl" record -p "$pid" -o "$out/alloc.luw" --alloc \
		--alloc-interval 65536 --no-cpu --duration "$secs" 2>&1 |
		sed 's/^luaunwind-ctl: /demo: /'
}

# ready OUT: the payload writing OUT printed its "ready" line.
ready() {
	for _ in $(seq 100); do
		grep -q ready "$1" && return
		sleep 0.1
	done
	die "the payload did not start: $(cat "$1")"
}

if [ "${1:-}" = record ]; then
	shift
	[ $# -eq 3 ] || die "usage: $0 record KO OUTDIR LIBDIR"
	record "$@"
	exit
fi

local_run=0
case "${1:-}" in
--local) local_run=1 ;;
"") ;;
*) die "usage: $0 [--local]" ;;
esac
for p in luaunwind-ctl luaunwind-report; do
	[ -x "$bin/$p" ] || die "$bin/$p missing (make userspace)"
done
command -v luajit >/dev/null || die "luajit missing (scripts/deps.sh test)"
t0=$SECONDS
mkdir -p out build/demo

# The payload's C half, as the RFC builds it.
lib=$top/build/demo
cc -O2 -fPIC -shared -o "$lib/libc_payload.so" tests/fixtures/workloads/c_payload.c

if [ $local_run = 1 ]; then
	rel=$(uname -r)
	[ "$(id -u)" -eq 0 ] || die "LOCAL=1 needs root (insmod, /dev/luaunwind)"
	# Without /proc/modules the kernel was built without module support.
	[ -e /proc/modules ] ||
		die "LOCAL=1: this kernel ($rel) cannot load modules (no /proc/modules: built without CONFIG_MODULES); run 'make demo' for the QEMU guest instead"
	[ "$(cat /proc/sys/kernel/modules_disabled 2>/dev/null || echo 0)" = 0 ] ||
		die "LOCAL=1: module loading is disabled (kernel.modules_disabled=1); run 'make demo' for the QEMU guest instead"
	kdir=/lib/modules/$rel/build
	[ -d "$kdir" ] || kdir=/usr/src/linux-headers-$rel
	[ -d "$kdir" ] ||
		die "LOCAL=1: no headers for the running kernel $rel (apt-get install linux-headers-$rel)"
	say "building luaunwind.ko for $rel"
	make -s -C kmod KVER="$rel" KDIR="$kdir" >"build/demo/kmod.log" 2>&1 ||
		{ cat build/demo/kmod.log >&2; die "building the module failed"; }
	luw=out/profile.luw aluw=out/alloc.luw
	"$0" record "$top/build/kmod/$rel/luaunwind.ko" "$top/out" "$lib"
else
	rel=$(scripts/kver.sh 6.1) || die "no Debian 6.1 kernel installed (scripts/deps.sh kernel)"
	say "building luaunwind.ko for $rel"
	mkdir -p build/kmod
	make -s -C kmod KVER="$rel" >"build/kmod/$rel.log" 2>&1 ||
		{ cat "build/kmod/$rel.log" >&2; die "building the module failed"; }
	vmout=${LUW_VM_OUT:-$top/out/vm}
	say "booting $rel under QEMU (TCG; scripts/vm-run)"
	LUW_VM_OUT=$vmout scripts/vm-run --kernel "$rel" --no-build --timeout 300 \
		-- env LUW_BIN="$bin" scripts/demo.sh record \
		"$top/build/kmod/$rel/luaunwind.ko" "$vmout" "$lib" ||
		die "the guest run failed (above)"
	cp "$vmout/profile.luw" out/profile.luw
	cp "$vmout/alloc.luw" out/alloc.luw
	luw=out/profile.luw aluw=out/alloc.luw
fi

# ---- report, on the host, from the file alone --------------------------
rep=$bin/luaunwind-report
"$rep" "$luw" >out/profile.folded
"$rep" --svg out/flame.svg "$luw"
"$rep" --pprof out/profile.pb.gz "$luw"
echo
# Recursion makes long runs of one frame: show them once, with a count.
"$rep" --top 10 "$luw" | awk '
/^ *[0-9]+ +[0-9.]+%  / && index($0, ";") {
	match($0, /^ *[0-9]+ +[0-9.]+%  /)
	head = substr($0, 1, RLENGTH)
	n = split(substr($0, RLENGTH + 1), f, ";")
	out = ""
	for (i = 1; i <= n; i = j) {
		for (j = i + 1; j <= n && f[j] == f[i]; j++)
			;
		out = out (out == "" ? "" : ";") f[i] (j - i > 1 ? " (x" (j - i) ")" : "")
	}
	print head out
	next
}
{ print }'
echo
say "wrote out/flame.svg (open it in a browser), out/profile.folded, out/profile.pb.gz (go tool pprof), out/profile.luw"
echo
"$rep" --alloc "$aluw" >out/alloc.folded
"$rep" --alloc --svg out/alloc.svg "$aluw" 2>/dev/null
"$rep" --alloc --pprof out/alloc.pb.gz "$aluw" 2>/dev/null
"$rep" --alloc --top 3 "$aluw" 2>/dev/null | sed -n '1,4p'
echo
say "wrote out/alloc.svg, out/alloc.folded, out/alloc.pb.gz (alloc_space, alloc_objects), out/alloc.luw"
say "done in $((SECONDS - t0)) s"
