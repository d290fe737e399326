#!/usr/bin/env bash
# Run every tests/kernel/t_*.sh in its own guest boot, on each kernel, and
# fail a test whose guest kernel log has a BUG, Oops, WARNING, general
# protection fault or KASAN report.
#   tests/kernel/run.sh [-k "6.1 6.12"] [TEST...]     (TEST: t_abi, ...)
# Logs: out/ktest/<release>/<test>.{out,dmesg}.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
kernels="6.1 6.12"
if [ "${1:-}" = -k ]; then kernels=$2; shift 2; fi
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
	for f in tests/kernel/t_*.sh; do tests+=("$(basename "$f" .sh)"); done
fi

make -s -C tests/kernel >/dev/null || { echo "check-kernel: building test programs failed" >&2; exit 1; }
bad_log='BUG|Oops|WARNING|general protection|KASAN|UBSAN|lockdep|circular locking|stack-protector|refcount_t'
failed=()
for k in $kernels; do
	rel=$(scripts/kver.sh "$k") ||
		{ echo "check-kernel: no $k kernel installed" >&2; exit 1; }
	make -s -C kmod KVER="$rel" >"build/kmod/$rel.log" 2>&1 ||
		{ cat "build/kmod/$rel.log" >&2; echo "check-kernel: module build for $rel failed" >&2; exit 1; }
	logs=out/ktest/$rel
	mkdir -p "$logs"
	for t in "${tests[@]}"; do
		start=$SECONDS
		LUW_VM_OUT=$top/out/ktest/$rel/$t.files scripts/vm-run --kernel "$rel" \
			--no-build --timeout 600 --dmesg "$logs/$t.dmesg" \
			-- sh "tests/kernel/$t.sh" >"$logs/$t.out" 2>&1 </dev/null
		rc=$?
		verdict=ok
		if [ $rc -ne 0 ]; then
			verdict="FAIL (exit $rc)"
		elif grep -Eq "$bad_log" "$logs/$t.dmesg"; then
			verdict="FAIL (kernel log)"
			grep -E -m5 "$bad_log" "$logs/$t.dmesg" >>"$logs/$t.out"
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
