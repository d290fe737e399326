#!/usr/bin/env bash
# Run every tests/kernel/t_*.sh in a QEMU guest (one boot per kernel, see -1), on each kernel, and
# fail a test whose guest kernel log has a BUG, Oops, WARNING, general
# protection fault or KASAN report.
#   tests/kernel/run.sh [-k "6.1 6.12"] [-s "5.10 sid"] [-c debug] [-j N] [TEST...]
#     -k KERNELS  run TESTs (default: all t_*.sh) on each (6.1, 6.12, 5.10,
#                 sid, debug or a release: scripts/kver.sh)
#     -s KERNELS  run only the representative subset below on these, unless
#                 TESTs are named (then those run on every kernel)
#     -c KERNELS  the same with the checked subset below
#     -j N        up to N lanes (kernels) at once, each in its guest; a
#                 lane's results print when it ends (default 1)
#     -1          one boot per test (default: one boot runs a lane's tests
#                 one after the other, tests/kernel/group.sh; a boot that
#                 dies or hangs fails the test it was running, and the
#                 tests after it get a new boot)
# Logs: out/ktest/<release>/<test>.{out,dmesg}.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernels="6.1 6.12" subset_kernels= checked_kernels= grouped=1 jobs=1
# One of each kind: the ABI, permissions, raw Lua walks with and without
# traces' frames, record + report, threads, a target exiting while attached.
subset=(t_abi t_perm t_lua_payload t_rec_payload t_threads t_exit)
# For the debug kernel (KASAN, lockdep, ...): the tests that drive the
# module's object lifetimes and locking -- sessions, attach/detach/reap
# races, exec, a killed reader, unload after a table replacement, per-thread
# events, every ioctl with random arguments -- and its walkers over a real
# and over a hostile stack.
checked=(t_abi t_perm t_race t_rmmod t_exec t_rec_exit t_pertask t_fuzz
	 t_hostile t_lua_payload)
while [ $# -gt 0 ]; do
	case "$1" in
	-k) kernels=$2; shift 2 ;;
	-s) subset_kernels=$2; shift 2 ;;
	-c) checked_kernels=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-1) grouped=0; shift ;;
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
# than the subset on a plain one): with -j, the longest start first.
lanes=($kernels $checked_kernels $subset_kernels)
# Every lane's module first: lanes may then run side by side.
declare -A rels=()
for k in "${lanes[@]}"; do
	rel=$(scripts/kver.sh "$k") ||
		{ echo "check-kernel: no $k kernel (installed, fetched or built)" >&2; exit 1; }
	mkdir -p build/kmod
	make -s -C kmod KVER="$rel" >"build/kmod/$rel.log" 2>&1 ||
		{ cat "build/kmod/$rel.log" >&2; echo "check-kernel: module build for $rel failed" >&2; exit 1; }
	rels[$k]=$rel
done

# lane K: K's tests in its guest boots; prints its results, and one line
# "FAILED K/TEST" per failure on fd 3.
lane() {
	local k=$1 rel=${rels[$1]} t r g n done_ start rc secs verdict
	local these=("${tests[@]}")
	if [ "$named" = 0 ] && [ "${full/ $k /}" = "$full" ]; then
		if [ "${sub/ $k /}" != "$sub" ]; then
			these=("${subset[@]}")
		else
			these=("${checked[@]}")
		fi
	fi
	local logs=out/ktest/$rel
	mkdir -p "$logs"
	# Boots run group.sh over the tests left; a boot that dies or hangs
	# fails the test it was running (its kernel log is the boot's from
	# that test's marker) and the next boot starts after it.  With -1,
	# one boot per test.
	local left=("${these[@]}") batch
	n=0
	local -A res=()
	while [ ${#left[@]} -gt 0 ]; do
		batch=("${left[@]}")
		[ "$grouped" = 1 ] || batch=("${left[0]}")
		n=$((n + 1))
		g=$top/$logs/boot$n
		rm -rf "$g"
		mkdir -p "$g"
		start=$SECONDS
		LUW_VM_OUT=$g scripts/vm-run --kernel "$rel" --no-build \
			--timeout $((300 + 620 * ${#batch[@]})) --dmesg "$g.dmesg" \
			-- sh tests/kernel/group.sh "${batch[@]}" >"$g.out" 2>&1 </dev/null
		done_=0
		for t in "${batch[@]}"; do
			r=$(grep -s "^$t " "$g/results" | tail -1)
			rm -rf "$logs/$t.files"
			mkdir -p "$logs/$t.files"
			[ -d "$g/$t" ] && mv "$g/$t" "$logs/$t.files/"
			if [ -n "$r" ]; then
				res[$t]=${r#* }
				cp "$g/$t.out" "$logs/$t.out"
				cp "$g/$t.dmesg" "$logs/$t.dmesg"
				done_=$((done_ + 1))
				continue
			fi
			# The test the boot did not get through.
			res[$t]="125 $((SECONDS - start))"
			{ cat "$g/$t.out" 2>/dev/null; echo "run.sh: the guest died or hung during $t:"; tail -5 "$g.out"; } >"$logs/$t.out"
			sed -n "/luw-test: $t\$/,\$p" "$g.dmesg" >"$logs/$t.dmesg"
			[ -s "$logs/$t.dmesg" ] || cp "$g.dmesg" "$logs/$t.dmesg"
			done_=$((done_ + 1))
			break
		done
		left=("${left[@]:$done_}")
	done
	for t in "${these[@]}"; do
		set -- ${res[$t]}
		rc=$1
		secs=$2
		verdict=ok
		if [ $rc -ne 0 ]; then
			verdict="FAIL (exit $rc)"
		elif [ ! -s "$logs/$t.dmesg" ]; then
			verdict="FAIL (no kernel log)"
		elif grep -Ev "$benign" "$logs/$t.dmesg" | grep -Eq "$bad_log"; then
			verdict="FAIL (kernel log)"
			grep -Ev "$benign" "$logs/$t.dmesg" | grep -E -m5 "$bad_log" >>"$logs/$t.out"
		fi
		printf '%-8s %-12s %-18s %4ds %6s pids\n' "$k" "$t" "$verdict" "$secs" "${3:-?}"
		if [ "$verdict" != ok ]; then
			echo "FAILED $k/$t" >&3
			sed 's/^/    | /' "$logs/$t.out" | tail -20
		fi
	done
}

# Up to $jobs lanes at once, in the order given (longest first is the
# caller's choice); each lane's block prints whole when it ends.
mkdir -p out/ktest
ld=$(mktemp -d out/ktest/.lanes.XXXXXX)
running=0
for k in "${lanes[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	{ lane "$k" >"$ld/$k.res" 3>"$ld/$k.failed" 2>&1; cat "$ld/$k.res"; } &
	running=$((running + 1))
done
wait
failed=()
for k in "${lanes[@]}"; do
	while read -r _ f; do failed+=("$f"); done <"$ld/$k.failed"
done
rm -rf "$ld"
if [ ${#failed[@]} -gt 0 ]; then
	echo "check-kernel: ${#failed[@]} failed: ${failed[*]} (logs in out/ktest/)" >&2
	exit 1
fi
echo "check-kernel: all passed"
