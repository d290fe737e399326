#!/usr/bin/env bash
# Build the guest's base initramfs for one kernel release:
#   scripts/vm/initramfs.sh RELEASE OUTPUT.cpio.gz [MODULE_DIR]
# MODULE_DIR defaults to /lib/modules/RELEASE; kernels unpacked or built
# into the cache have theirs there (scripts/kver.sh --root).
# It holds busybox-static, scripts/vm/init, and the modules needed to mount
# the host's root over virtio-9p, decompressed (busybox insmod does not read
# .ko.xz) and listed in load order.  Which of them are modules differs by
# release (6.12 has virtio built in), so they are resolved from modules.dep.
set -euo pipefail
rel=$1 out=$2 mdir=${3:-/lib/modules/$1}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$mdir/modules.dep" ] || { echo "initramfs: $mdir/modules.dep missing (install linux-image-$rel)" >&2; exit 1; }
# busybox-static's binary: the initramfs has no libc.
bb=/bin/busybox
dpkg-query -W -f='${db:Status-Status}' busybox-static 2>/dev/null | grep -qx installed ||
	{ echo "initramfs: busybox-static is not installed (scripts/deps.sh kernel)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,modules,luw,newroot}
cp "$bb" "$tmp/bin/busybox"
cp "$here/init" "$tmp/init"
chmod 755 "$tmp/init"

declare -A seen=()
order=()
# path of a module (relative to $mdir) from its name; - and _ are the same.
modpath() {
	local n=${1//-/_}
	awk -F: -v n="$n" '{ p = $1; b = p; sub(/.*\//, "", b); sub(/\.ko(\..*)?$/, "", b);
		gsub(/-/, "_", b); if (b == n) { print p; exit } }' "$mdir/modules.dep"
}
add() {
	local p=$1 d
	[ -n "${seen[$p]:-}" ] && return
	seen[$p]=1
	for d in $(awk -F: -v p="$p" '$1 == p { print $2; exit }' "$mdir/modules.dep"); do
		add "$d"
	done
	order+=("$p")
}
for m in virtio_pci 9pnet_virtio 9p; do
	p=$(modpath "$m")
	if [ -z "$p" ]; then
		grep -qE "/$m\.ko" "$mdir/modules.builtin" 2>/dev/null ||
			{ echo "initramfs: module $m neither modular nor built in for $rel" >&2; exit 1; }
		continue
	fi
	add "$p"
done
: >"$tmp/modules/order"
for p in "${order[@]}"; do
	b=$(basename "$p")
	case "$b" in
	*.ko.xz) xz -dc "$mdir/$p" >"$tmp/modules/${b%.xz}"; b=${b%.xz} ;;
	*.ko.zst) zstd -qdc "$mdir/$p" >"$tmp/modules/${b%.zst}"; b=${b%.zst} ;;
	*.ko.gz) gzip -dc "$mdir/$p" >"$tmp/modules/${b%.gz}"; b=${b%.gz} ;;
	*) cp "$mdir/$p" "$tmp/modules/$b" ;;
	esac
	echo "$b" >>"$tmp/modules/order"
done
mkdir -p "$(dirname "$out")"
(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.$$.tmp"
mv "$out.$$.tmp" "$out"
