#!/usr/bin/env bash
# Run every tests/kernel/t_*.sh in its own guest boot, on each kernel, and
# fail a test whose guest kernel log has a BUG, Oops, WARNING, general
# protection fault or KASAN report.
#   tests/kernel/run.sh [-k "6.1 6.12"] [-s "5.10 sid"] [TEST...]
#     -k KERNELS  run TESTs (default: all t_*.sh) on each (6.1, 6.12, 5.10,
#                 sid, debug or a release: scripts/kver.sh)
#     -s KERNELS  run only the representative subset below on these, unless
#                 TESTs are named (then those run on every kernel)
# Logs: out/ktest/<release>/<test>.{out,dmesg}.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernels="6.1 6.12" subset_kernels=
# One of each kind: the ABI, permissions, raw Lua walks with and without
# traces' frames, record + report, threads, a target exiting while attached.
subset=(t_abi t_perm t_lua_payload t_rec_payload t_threads t_exit)
while [ $# -gt 0 ]; do
	case "$1" in
	-k) kernels=$2; shift 2 ;;
	-s) subset_kernels=$2; shift 2 ;;
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
failed=()
full=" $kernels "
for k in $kernels $subset_kernels; do
	these=("${tests[@]}")
	if [ "$named" = 0 ] && [ "${full/ $k /}" = "$full" ]; then
		these=("${subset[@]}")
	fi
	rel=$(scripts/kver.sh "$k") ||
		{ echo "check-kernel: no $k kernel (installed, fetched or built)" >&2; exit 1; }
	mkdir -p build/kmod
	make -s -C kmod KVER="$rel" >"build/kmod/$rel.log" 2>&1 ||
		{ cat "build/kmod/$rel.log" >&2; echo "check-kernel: module build for $rel failed" >&2; exit 1; }
	logs=out/ktest/$rel
	mkdir -p "$logs"
	for t in "${these[@]}"; do
		start=$SECONDS
		LUW_VM_OUT=$top/out/ktest/$rel/$t.files scripts/vm-run --kernel "$rel" \
			--no-build --timeout 600 --dmesg "$logs/$t.dmesg" \
			-- sh "tests/kernel/$t.sh" >"$logs/$t.out" 2>&1 </dev/null
		rc=$?
		verdict=ok
		if [ $rc -ne 0 ]; then
			verdict="FAIL (exit $rc)"
		elif [ ! -s "$logs/$t.dmesg" ]; then
			verdict="FAIL (no kernel log)"
		elif grep -Ev "$benign" "$logs/$t.dmesg" | grep -Eq "$bad_log"; then
			verdict="FAIL (kernel log)"
			grep -Ev "$benign" "$logs/$t.dmesg" | grep -E -m5 "$bad_log" >>"$logs/$t.out"
		fi
		printf '%-8s %-12s %-18s %4ds\n' "$k" "$t" "$verdict" $((SECONDS - start))
		if [ "$verdict" != ok ]; then
			failed+=("$k/$t")
			sed 's/^/    | /' "$logs/$t.out" | tail -20
		fi
	done
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "check-kernel: ${#failed[@]} failed: ${failed[*]} (logs in out/ktest/)" >&2
	exit 1
fi
echo "check-kernel: all passed"
