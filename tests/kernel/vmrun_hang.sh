#!/usr/bin/env bash
# scripts/vm-run's account of a guest that does not end by itself (what
# run.sh shows for a test that hung the guest's kernel): a guest whose
# command outlives --timeout exits 124, and both its saved console
# (--dmesg) and vm-run's message hold the panic that QEMU's NMI caused,
# with the interrupted vCPU's stack, and QEMU's registers of both vCPUs.
# The guest here is idle, not hung: the same path, and the vCPUs say
# HLT=1.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
fail() { echo "vmrun_hang: FAIL: $*" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/luw-vmrun-hang.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
LUW_VM_OUT=$out/vm scripts/vm-run --no-build --timeout 40 --dmesg "$out/console" \
	-- sleep 600 >"$out/msg" 2>&1
rc=$?
[ $rc -eq 124 ] || fail "exit $rc, not 124: $(tail -5 "$out/msg")"
for f in console msg; do
	grep -q 'Kernel panic - not syncing: NMI' "$out/$f" || fail "no NMI panic in the $f: $(tail -5 "$out/$f")"
	grep -Eq '(native_safe_halt|default_idle)' "$out/$f" || fail "no stack of the idle vCPU in the $f"
	[ "$(grep -c '^RIP=.* HLT=1$' "$out/$f")" -ge 2 ] || fail "no halted vCPUs in the $f: $(grep -A1 '^CPU#' "$out/$f")"
done
grep -q '^vm-run: timed out after 40s' "$out/msg" || fail "vm-run's message: $(head -3 "$out/msg")"
echo "vmrun_hang: ok"
