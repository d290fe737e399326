#!/usr/bin/env bash
# The luaunwind-dkms package's source tree builds under DKMS for two
# kernels from their unpacked header trees (5.10 and sid, scripts/kfetch.sh),
# each module's vermagic is that kernel's, and `dkms remove --all` leaves
# nothing behind.  DKMS runs on private trees; the system's is not touched.
# (dkms install runs depmod on the system's /lib/modules/<release>, which
# these kernels do not have: installing is checked in the guest instead.)
#   tests/pkg/dkms.sh DKMS_DEB
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
deb=$(realpath "${1:?usage: tests/pkg/dkms.sh luaunwind-dkms_VER_all.deb}")
command -v dkms >/dev/null || { echo "dkms.sh: dkms missing (scripts/deps.sh kernel)" >&2; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
dpkg -x "$deb" "$t/root"
ver=$(dpkg-deb -f "$deb" Version)
mkdir -p "$t/tree" "$t/inst"
D=(dkms --dkmstree "$t/tree" --sourcetree "$t/root/usr/src" --installtree "$t/inst")
fail() { echo "dkms.sh: FAIL: $*" >&2; exit 1; }
"${D[@]}" add -m luaunwind -v "$ver" >"$t/log" 2>&1 || { cat "$t/log"; fail "dkms add"; }
for k in 5.10 sid; do
	rel=$("$top/scripts/kver.sh" "$k")
	kdir=$("$top/scripts/kver.sh" --kdir "$rel")
	"${D[@]}" build -m luaunwind -v "$ver" -k "$rel" --kernelsourcedir "$kdir" >"$t/log" 2>&1 ||
		{ cat "$t/log"; cat "$t/tree/luaunwind/$ver/build/make.log" 2>/dev/null; fail "dkms build for $rel"; }
	ko=$t/tree/luaunwind/$ver/$rel/x86_64/module/luaunwind.ko
	[ -f "$ko" ] || ko=$(ls "$ko".* 2>/dev/null | head -1)
	[ -f "$ko" ] || fail "no luaunwind.ko for $rel in the DKMS tree"
	vm=$(modinfo -F vermagic "$ko")
	[ "${vm%% *}" = "$rel" ] || fail "$rel: vermagic '$vm'"
	# grep -q could exit before dkms (a bash script, writing a line at a
	# time) is done, and SIGPIPE + pipefail would fail the check.
	"${D[@]}" status -m luaunwind -v "$ver" -k "$rel" | grep ': built' >/dev/null ||
		fail "dkms status for $rel: $("${D[@]}" status -m luaunwind -v "$ver" -k "$rel")"
	echo "dkms.sh: built for $rel ($vm)"
done
"${D[@]}" remove -m luaunwind -v "$ver" --all >"$t/log" 2>&1 || { cat "$t/log"; fail "dkms remove"; }
left=$(find "$t/tree" -mindepth 1 | head -5)
[ -z "$left" ] || fail "left in the DKMS tree after remove: $left"
echo "dkms.sh: ok"
