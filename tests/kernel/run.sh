#!/usr/bin/env bash
# Run every tests/kernel/t_*.sh in QEMU guests on each kernel, and fail a
# test whose guest kernel log has a BUG, Oops, WARNING, general protection
# fault or KASAN report; with -m, the debug kernel's boots turn kmemleak
# on and end with a check of their own, kmemleak: memory the tests left
# allocated from the module's code (tests/kernel/group.sh).
#   tests/kernel/run.sh [-k "6.1 6.12"] [-s "5.10 sid"] [-c debug] [-j N] [-1] [-m] [TEST...]
#     -k KERNELS  run TESTs (default: all t_*.sh) on each (6.1, 6.12, 5.10,
#                 sid, debug or a release: scripts/kver.sh)
#     -s KERNELS  run only the representative subset below on these, unless
#                 TESTs are named (then those run on every kernel)
#     -c KERNELS  the same with the checked subset below
#     -j N        N guests at once (default 1).  Each kernel's tests (a lane)
#                 are a queue; a guest boots the first lane with tests left,
#                 in the order -k, -c, -s (longest first), and takes its
#                 tests one after the other (tests/kernel/group.sh) until
#                 none is left, beside the other guests, which may be on the
#                 same lane.  Each test's verdict prints when it ends.
#     -1          one boot per test (default: a boot takes tests while any
#                 are left; one that dies or hangs fails the test it was
#                 running, and a new boot takes the tests after it)
#     -m          kmemleak on in the debug kernel's boots (kmemleak=on;
#                 about twice as slow), checked at the end of each boot
# Logs: out/ktest/<release>/<test>.{out,dmesg}, each boot's in bootN/.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernels="6.1 6.12" subset_kernels= checked_kernels= grouped=1 jobs=1 kmemleak=0
# One of each kind: the ABI, permissions, raw Lua walks with and without
# traces' frames, record + report, threads, a target exiting while attached,
# a service (ts_lua: a Lua state per thread, JIT on, empty globals), and
# allocation sampling (uprobes), off-CPU time (the context-switch hook).
subset=(t_abi t_perm t_lua_payload t_rec_payload t_threads t_exit t_svc_trafficserver
	t_alloc t_offcpu)
# For the debug kernel (KASAN, lockdep, ...): the tests that drive the
# module's object lifetimes and locking -- sessions, attach/detach/reap
# races, a thousand attach/detach cycles and 300 more with off-CPU events,
# targets exiting and exec'ing while sampled, a killed reader, unload after
# a table replacement, per-thread events, every ioctl with random
# arguments, attach from a chroot, the per-user caps, a large session's
# close beside another session, readers woken and rings freed at end of
# file, allocation probes put in and taken out, the walk run from the
# scheduler at every switch of a target -- and its walkers over a real and
# over a hostile stack.
checked=(t_abi t_perm t_chroot t_ucaps t_closestall t_race t_cycles t_exit
	 t_rmmod t_exec t_rec_exit t_pertask t_fuzz t_hostile t_lua_payload
	 t_readpoll t_alloc t_offcpu)
while [ $# -gt 0 ]; do
	case "$1" in
	-k) kernels=$2; shift 2 ;;
	-s) subset_kernels=$2; shift 2 ;;
	-c) checked_kernels=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-1) grouped=0; shift ;;
	-m) kmemleak=1; shift ;;
	*) break ;;
	esac
done
tests=("$@")
named=${#tests[@]}
if [ ${#tests[@]} -eq 0 ]; then
	for f in tests/kernel/t_*.sh; do tests+=("$(basename "$f" .sh)"); done
fi

make -s -C tests/kernel >/dev/null || { echo "check-kernel: building test programs failed" >&2; exit 1; }
# What a test needs built on the host beyond the programs (the guest has
# no network and is slow): tests/kernel/Makefile's prep-TEST, when it has one.
for t in "${tests[@]}"; do
	grep -q "^prep-$t:" tests/kernel/Makefile || continue
	make -s -C tests/kernel "prep-$t" >/dev/null ||
		{ echo "check-kernel: preparing $t on the host failed" >&2; exit 1; }
done
bad_log='BUG|Oops|WARNING|general protection|KASAN|UBSAN|lockdep|circular locking|stack-protector|refcount_t'
# Boot banners of the debug kernel that name a checker without a report.
benign='RCU lockdep checking is enabled'
full=" $kernels " sub=" $subset_kernels "
# Lanes in this order (the checked subset on a debug kernel costs more
# than the subset on a plain one): the longest first.
lanes=($kernels $checked_kernels $subset_kernels)
# Every lane's module first: guests of several lanes may then run side by side.
declare -A rels=()
for k in "${lanes[@]}"; do
	rel=$(scripts/kver.sh "$k") ||
		{ echo "check-kernel: no $k kernel (installed, fetched or built)" >&2; exit 1; }
	mkdir -p build/kmod
	make -s -C kmod KVER="$rel" >"build/kmod/$rel.log" 2>&1 ||
		{ cat "build/kmod/$rel.log" >&2; echo "check-kernel: module build for $rel failed" >&2; exit 1; }
	rels[$k]=$rel
done

# Each lane's tests are a queue (tests/kernel/group.sh): QUEUE/order, and
# QUEUE/claim/TEST once a guest has taken TEST.  $ld/K is lane K's.
mkdir -p out/ktest
ld=$(mktemp -d "$top/out/ktest/.lanes.XXXXXX")
for k in "${lanes[@]}"; do
	these=("${tests[@]}")
	if [ "$named" = 0 ] && [ "${full/ $k /}" = "$full" ]; then
		if [ "${sub/ $k /}" != "$sub" ]; then
			these=("${subset[@]}")
		else
			these=("${checked[@]}")
		fi
	fi
	# Workaround, sid (7.2) under TCG only: one run of t_offcpu of four
	# panicked with "Oops: int3" at a static-branch site in __schedule,
	# in the idle task of both vCPUs, as the context-switch event's
	# static key was patched (text_poke's int3 still in code a vCPU ran
	# after the patch was done); no module frame, never on 6.1, 6.12,
	# 5.10 or the debug kernel (issue 29).  Named, it still runs there.
	if [ "$named" = 0 ] && [ "$k" = sid ]; then
		mapfile -t these < <(printf '%s\n' "${these[@]}" | grep -vx t_offcpu)
	fi
	mkdir -p "$ld/$k/claim"
	printf '%s\n' "${these[@]}" >"$ld/$k/order"
	rm -rf "out/ktest/${rels[$k]}"
	mkdir -p "out/ktest/${rels[$k]}"
done

# unclaimed K: how many of lane K's tests no guest has taken yet.
unclaimed() {
	local t n=0
	while read -r t; do
		[ -d "$ld/$1/claim/$t" ] || n=$((n + 1))
	done <"$ld/$1/order"
	echo $n
}

# report K TEST RC SECS PIDS: TEST's verdict on lane K, printed whole; its
# logs are in out/ktest/<release>/.
report() {
	local k=$1 t=$2 rc=$3 secs=$4 pids=$5 logs=out/ktest/${rels[$1]} verdict=ok
	if [ "$rc" -ne 0 ]; then
		verdict="FAIL (exit $rc)"
	elif [ ! -s "$logs/$t.dmesg" ]; then
		verdict="FAIL (no kernel log)"
	# grep without -q reads to the end: with -q it may exit before the
	# first grep has written all, which then dies of SIGPIPE, and
	# pipefail would take a bad log for a clean one.
	elif grep -Ev "$benign" "$logs/$t.dmesg" | grep -E "$bad_log" >/dev/null; then
		verdict="FAIL (kernel log)"
		grep -Ev "$benign" "$logs/$t.dmesg" | grep -E -m5 "$bad_log" >>"$logs/$t.out"
	fi
	echo "$k $t $rc $secs $pids" >>"$ld/$k/results"
	{
		flock 9
		printf '%-8s %-18s %-18s %4ds %6s pids\n' "$k" "$t" "$verdict" "$secs" "$pids"
		if [ "$verdict" != ok ]; then
			echo "FAILED $k/$t" >>"$ld/failed"
			sed 's/^/    | /' "$logs/$t.out" | tail -n 40
		fi
	} 9>>"$ld/lock"
}

# keep G T LOGS: move test T's logs from boot directory G into LOGS
# (out/ktest/<release>/).
keep() {
	local g=$1 t=$2 logs=$3
	rm -rf "$logs/$t.files"
	mkdir -p "$logs/$t.files"
	[ -d "$g/$t" ] && mv "$g/$t" "$logs/$t.files/"
	cp "$g/$t.out" "$logs/$t.out" 2>/dev/null
	cp "$g/$t.dmesg" "$logs/$t.dmesg" 2>/dev/null
}

# limit K: the seconds one test may take in lane K before it counts as
# hung.  The debug kernel (KASAN, lockdep; its releases end -luwdbg-HASH,
# scripts/debug-kernel.sh) runs tests 2-10 times slower than 6.1:
# t_rec_matrix, 170 s on 6.1, ran past 600 s there beside other guests.
limit() {
	case ${rels[$1]} in
	*-luwdbg-*) echo 1800 ;;
	*) echo 600 ;;
	esac
}

# boot K: one guest of lane K's kernel taking tests from its queue; reports
# each test as its results line appears.  A boot that took none and failed
# fails the next test in the queue, so a kernel that does not boot cannot
# loop.
boot() {
	local k=$1 rel=${rels[$1]} logs=out/ktest/${rels[$1]} n=1 g t rc start
	local left vm done_=0 lines lim took=0 since
	left=$(unclaimed "$k")
	[ "$left" -gt 0 ] || return 0
	while ! mkdir "$logs/boot$n" 2>/dev/null; do n=$((n + 1)); done
	g=$top/$logs/boot$n
	start=$SECONDS
	lim=$(limit "$k")
	local append=
	[ $kmemleak = 1 ] && [[ $rel == *-luwdbg-* ]] && append=kmemleak=on
	LUW_VM_OUT=$g LUW_VM_SHARE=$ld/$k LUW_VM_APPEND=$append \
		scripts/vm-run --kernel "$rel" --no-build \
		--timeout $((300 + (lim + 20) * (grouped ? left : 1))) --dmesg "$g.dmesg" \
		-- sh tests/kernel/group.sh "$ld/$k" $((grouped ? 0 : 1)) "$lim" \
		>"$g.out" 2>&1 </dev/null &
	vm=$!
	since=$SECONDS
	# Each results line as it comes (the guest writes a test's logs before it).
	while :; do
		kill -0 $vm 2>/dev/null
		rc=$?
		# The guest kills a test at lim; one still there two minutes
		# later hangs in the kernel (or the kernel does): end the boot
		# now, not at vm-run's timeout, hours on (its test fails below).
		mapfile -t lines < <(cat "$g/started" 2>/dev/null)
		if [ ${#lines[@]} -ne $took ]; then
			took=${#lines[@]}
			since=$SECONDS
		elif [ $rc -eq 0 ] && [ $((SECONDS - since)) -gt $((lim + 120)) ]; then
			kill $vm 2>/dev/null
		fi
		mapfile -t lines < <(cat "$g/results" 2>/dev/null)
		while [ $done_ -lt ${#lines[@]} ]; do
			set -- ${lines[$done_]}
			keep "$g" "$1" "$logs"
			report "$k" "$@"
			done_=$((done_ + 1))
		done
		[ $rc -eq 0 ] || break
		sleep 2
	done
	wait $vm
	rc=$?
	if [ ! -s "$g/started" ] && [ $rc -ne 0 ]; then
		while read -r t; do
			mkdir "$ld/$k/claim/$t" 2>/dev/null || continue
			echo "$t" >"$g/started"
			break
		done <"$ld/$k/order"
	fi
	# The test the boot did not get through.
	while read -r t; do
		grep -qs "^$t " "$g/results" && continue
		keep "$g" "$t" "$logs"
		{ cat "$g/$t.out" 2>/dev/null; echo "run.sh: the guest died or hung during $t (boot $n, exit $rc):"
		  # vm-run's account of it: the guest's last console lines, or
		  # the stack its kernel printed when made to panic (a hang).
		  sed -n '/^vm-run: /,$p' "$g.out" | tail -n 40; } >"$logs/$t.out"
		sed -n "/luw-test: $t\$/,\$p" "$g.dmesg" >"$logs/$t.dmesg" 2>/dev/null
		[ -s "$logs/$t.dmesg" ] || cp "$g.dmesg" "$logs/$t.dmesg" 2>/dev/null
		report "$k" "$t" 125 $((SECONDS - start)) "?"
	done < <(cat "$g/started" 2>/dev/null)
}

# slot: one guest at a time, each from the first lane (in the order given,
# longest first) that has tests left: with -j N, N slots share a lane's
# queue until it runs dry and then move on, so no guest idles while tests
# are left.
slot() {
	local k busy
	while :; do
		busy=
		for k in "${lanes[@]}"; do
			[ "$(unclaimed "$k")" -gt 0 ] || continue
			busy=$k
			break
		done
		[ -n "$busy" ] || return 0
		boot "$busy"
	done
}

: >"$ld/failed"
for i in $(seq "$jobs"); do
	slot &
done
wait
# Each lane: its tests' time in guests (the boots' kmemleak checks
# apart) and its boots.
for k in "${lanes[@]}"; do
	logs=out/ktest/${rels[$k]}
	awk -v k="$k" -v boots="$(ls -d "$logs"/boot*/ 2>/dev/null | wc -l)" \
		'$2 == "kmemleak" { m += $4; next } { n++; s += $4 }
		 END { printf "lane %-8s %d tests, %d s in tests, %d boots%s\n", k, n, s, boots,
		       m ? sprintf(", %d s in kmemleak", m) : "" }' \
		"$ld/$k/results" 2>/dev/null
done
mapfile -t failed <"$ld/failed"
rm -rf "$ld"
if [ ${#failed[@]} -gt 0 ]; then
	# Each failure's last words again, last: a log's tail (CI's) may
	# hold nothing older than the lanes' summaries.
	for t in "${failed[@]#FAILED }"; do
		tail -n 3 "out/ktest/${rels[${t%%/*}]}/${t#*/}.out" 2>/dev/null |
			cut -c1-600 | sed "s|^|$t: |"
	done >&2
	echo "check-kernel: ${#failed[@]} failed: ${failed[*]#FAILED } (logs in out/ktest/)" >&2
	exit 1
fi
echo "check-kernel: all passed"
