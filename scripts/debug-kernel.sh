#!/usr/bin/env bash
# Build (once) the debug test kernel and print its release:
#
#   scripts/debug-kernel.sh
#
# Debian's 6.1 kernel source (bookworm, through scripts/debsuite.sh),
# allnoconfig + scripts/vm/debug.config: the guest's few drivers built in,
# and KASAN, KFENCE, lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP and
# DEBUG_OBJECTS_RCU_HEAD, which Debian's own kernels lack.  Everything lives
# under ${LUW_CACHE:-/var/cache/luaunwind}/debug-kernel/, outside the
# checkout, so fresh clones and CI reuse it:
#
#   src/linux-<version>/         the unpacked source (shared)
#   <hash>/build/                the build tree: KDIR for luaunwind.ko
#   <hash>/root/boot/vmlinuz-<release>, <hash>/root/lib/modules/<release>/
#
# <hash> covers debug.config and the source version, so a changed config
# builds a new kernel (release <version>-luwdbg-<hash>) and an unchanged one
# is never rebuilt.  The build runs under nice -n 10 with -j${LUW_DEBUG_JOBS:-2};
# its log and duration (one line per run, for a resumed build) are kept in
# <hash>/build.log and <hash>/build-seconds.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
frag=$top/scripts/vm/debug.config
cache=${LUW_CACHE:-/var/cache/luaunwind}/debug-kernel
jobs=${LUW_DEBUG_JOBS:-2}
src=$cache/src
mkdir -p "$src"

exec 9>"$cache/.lock"
flock 9

# The source, once: the newest bookworm linux the archive serves.
dsc=$(ls "$src"/linux_*.dsc 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$dsc" ]; then
	echo "debug-kernel: fetching Debian's linux source (bookworm)" >&2
	(cd "$src" && "$top/scripts/debsuite.sh" bookworm source --download-only linux 2>&1 |
		grep -v 'unsandboxed as root' >&2 || true)
	dsc=$(ls "$src"/linux_*.dsc 2>/dev/null | sort -V | tail -1 || true)
	[ -n "$dsc" ] || { echo "debug-kernel: the source download failed" >&2; exit 1; }
fi
ver=$(basename "$dsc" .dsc)
ver=${ver#linux_}
ver=${ver%-*}
tree=$src/linux-$ver
if [ ! -e "$tree/.unpacked" ]; then
	rm -rf "$tree"
	(cd "$src" && dpkg-source -x "$dsc" "linux-$ver" >/dev/null 2>&1) ||
		{ echo "debug-kernel: dpkg-source -x $dsc failed" >&2; exit 1; }
	touch "$tree/.unpacked"
fi

hash=$( { cat "$frag"; echo "$ver"; } | sha256sum | cut -c1-12)
dir=$cache/$hash
lv=-luwdbg-${hash:0:8}
rel=$ver$lv
if [ -e "$dir/.complete" ]; then
	echo "$rel"
	exit 0
fi

# An interrupted build resumes: the directory is this config's alone, and
# make picks up where it stopped.
echo "debug-kernel: building $rel (tens of minutes on 2 CPUs; log: $dir/build.log)" >&2
mkdir -p "$dir/build"
b=$dir/build
log=$dir/build.log
t0=$SECONDS
km() { nice -n 10 make -C "$tree" O="$b" LOCALVERSION="$lv" "$@" >>"$log" 2>&1; }
if [ ! -e "$dir/.configured" ]; then
	km allnoconfig
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$b" "$b/.config" "$frag" >>"$log" 2>&1
	km olddefconfig
	# Kconfig drops an option whose dependencies are not met without a
	# word: every line of the fragment must have survived.
	miss=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$frag" | while read -r l; do
		grep -qx "$l" "$b/.config" || echo "$l"
	done)
	[ -z "$miss" ] || { echo "debug-kernel: options lost by Kconfig:" $miss >&2; exit 1; }
	touch "$dir/.configured"
fi
km -j"$jobs" bzImage modules ||
	{ tail -30 "$log" >&2; echo "debug-kernel: build failed (log: $log)" >&2; exit 1; }
km INSTALL_MOD_PATH="$dir/root" modules_install
[ "$(cat "$b/include/config/kernel.release")" = "$rel" ] ||
	{ echo "debug-kernel: built $(cat "$b/include/config/kernel.release"), expected $rel" >&2; exit 1; }
mkdir -p "$dir/root/boot"
cp "$b/arch/x86/boot/bzImage" "$dir/root/boot/vmlinuz-$rel"
cp "$b/.config" "$dir/root/boot/config-$rel"
# Relative, so kver.sh --kdir finds the build tree wherever the cache is.
ln -sfn ../../../../build "$dir/root/lib/modules/$rel/build"
ln -sfn "$(realpath --relative-to="$dir/root/lib/modules/$rel" "$tree")" \
	"$dir/root/lib/modules/$rel/source"
echo $((SECONDS - t0)) >>"$dir/build-seconds"
touch "$dir/.complete"
echo "debug-kernel: built $rel in $((SECONDS - t0)) s" >&2
echo "$rel"
