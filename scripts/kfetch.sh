#!/usr/bin/env bash
# Fetch and unpack the newest Debian kernel (image + headers) of another
# suite, without installing it into the system, and print its release:
#
#   scripts/kfetch.sh 5.10     bullseye's linux-image-amd64 (5.10)
#   scripts/kfetch.sh sid      sid's linux-image-amd64 (the newest mainline)
#
# The packages come through scripts/debsuite.sh and are unpacked with
# dpkg -x into
#
#   ${LUW_CACHE:-/var/cache/luaunwind}/kernels/<release>/root/
#
# (boot/vmlinuz-<release>, lib/modules/<release>/ with its modules.dep and a
# relative `build` link, usr/src/linux-headers-*, usr/lib/linux-kbuild-*).
# The cache lives outside the checkout on purpose: a fresh clone, and CI
# running `make check` from one, reuse it instead of downloading ~150 MB
# per run.  A tree is used only once complete (.complete); the suite's
# release is remembered in kernels/<series>.release for a day, then asked
# again so a new upload is picked up.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
series=${1:?usage: scripts/kfetch.sh 5.10|sid}
case "$series" in
5.10) suite=bullseye ;;
sid)  suite=sid ;;
*) echo "kfetch: unknown series '$series' (5.10 or sid)" >&2; exit 2 ;;
esac
cache=${LUW_CACHE:-/var/cache/luaunwind}/kernels
mkdir -p "$cache"
relfile=$cache/$series.release
if [ -s "$relfile" ] && [ -z "$(find "$relfile" -mmin +1440)" ]; then
	rel=$(cat "$relfile")
	[ -e "$cache/$rel/.complete" ] && { echo "$rel"; exit 0; }
fi

# One fetch at a time per cache (two kernel lanes may start together).
exec 9>"$cache/.lock"
flock 9

dl=$(mktemp -d "$cache/.dl.XXXXXX")
trap 'rm -rf "$dl"' EXIT
cd "$dl"
# Depends of a downloaded package, one name per line, versions dropped.
deps() { dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//; s/|.*//'; }
# pkg/suite: the system's own (installed, newer) version must not win.
get() { "$top/scripts/debsuite.sh" "$suite" download "${@/%//$suite}" 2>&1 |
	grep -v 'unsandboxed as root' >&2 || true; }
get linux-image-amd64 linux-headers-amd64
img=$(deps linux-image-amd64_*.deb | grep '^linux-image-')
hdr=$(deps linux-headers-amd64_*.deb | grep '^linux-headers-')
rel=${img#linux-image-}
rel=${rel%-unsigned}
[ -n "$rel" ] || { echo "kfetch: no image package in $suite's linux-image-amd64" >&2; exit 1; }
if [ -e "$cache/$rel/.complete" ]; then
	echo "$rel" >"$relfile"
	echo "$rel"
	exit 0
fi
get "$img" "$hdr"
# Newer images are split: the kernel, its modules, and its config and
# module lists are packages of their own.
split=$(deps "$img"_*.deb | grep -xF -e "linux-binary-$rel" -e "linux-modules-$rel" -e "linux-base-$rel" || true)
# shellcheck disable=SC2086
[ -n "$split" ] && get $split
# The arch headers need the common headers and the kbuild tools.
more=$(deps "$hdr"_*.deb | grep -E '^linux-(headers-.*-common|kbuild-)' || true)
# shellcheck disable=SC2086
[ -n "$more" ] && get $more
for p in "$img" "$hdr" $split $more; do
	ls "$p"_*.deb >/dev/null 2>&1 || { echo "kfetch: $p was not downloaded" >&2; exit 1; }
done

# The kernel's Kconfig recorded what its compiler can do (gcc-16 for sid);
# the headers carry no Kconfig to ask again, so each capability this
# kernel's headers or Makefiles act on is probed with the host's gcc and
# switched off in auto.conf and autoconf.h where the host's gcc lacks it.
# Only compiler features are touched, never a kernel option; the module's
# own BTF is not generated when pahole differs (auto.conf only: struct
# module keeps its BTF fields, or the kernel refuses the module).
retarget() {
	local h=$1 ac=$1/include/config/auto.conf ah=$1/include/generated/autoconf.h
	local hcc=gcc name kind probe ver
	grep -q '^override CROSS_COMPILE = x86_64-linux-gnu-' "$h/.kernelvariables" &&
		hcc=x86_64-linux-gnu-gcc
	# off NAME [make]: make only: the C side keeps it (struct layouts,
	# e.g. struct module's BTF fields, must stay the kernel's).
	off() {
		grep -q "^CONFIG_$1=" "$ac" || return 0
		sed -i "s/^CONFIG_$1=.*/# CONFIG_$1 is not set/" "$ac"
		[ "${2:-}" = make ] || sed -i "/^#define CONFIG_$1 /d" "$ah"
		echo "kfetch: $hcc lacks CONFIG_$1, switched off for module builds${2:+ (Makefiles only)}" >&2
	}
	works() {
		case "$1" in
		flag) echo 'int x;' | $hcc -Werror "$2" -x c -c -o /dev/null - 2>/dev/null ;;
		code) echo "$2" | $hcc -Werror -x c -c -o /dev/null - 2>/dev/null ;;
		esac
	}
	while IFS='|' read -r name kind probe; do
		grep -q "^CONFIG_$name=" "$ac" || continue
		[ "$kind" = flag ] && [ -z "$probe" ] && probe=$(sed -n "s/^CONFIG_$name=\"*\([^\"]*\)\"*/\1/p" "$ac")
		works "$kind" "$probe" || off "$name"
	done <<-'EOF'
	CC_HAS_SANE_FUNCTION_ALIGNMENT|flag|-fmin-function-alignment=8
	CC_HAS_MIN_FUNCTION_ALIGNMENT|flag|-fmin-function-alignment=8
	CC_OPT_INLINE_MEMSET|flag|
	CC_MS_EXTENSIONS|flag|
	CC_HAS_ASSUME|code|int f(int x) { __attribute__((assume(x > 0))); return x; }
	CC_HAS_COUNTED_BY|code|struct s { int n; int a[] __attribute__((__counted_by__(n))); };
	CC_HAS_COUNTED_BY_PTR|code|struct s { int n; int *a __attribute__((__counted_by__(n))); };
	CC_HAS_MULTIDIMENSIONAL_NONSTRING|code|char x[2][4] __attribute__((__nonstring__));
	CC_HAS_ASM_GOTO_TIED_OUTPUT|code|int f(int *x) { asm goto("" : "+m"(*x) : : : l); l: return *x; }
	EOF
	ver=$($hcc -dumpfullversion | awk -F. '{ printf "%d%02d%02d", $1, $2, $3 }')
	sed -i "s/^CONFIG_GCC_VERSION=.*/CONFIG_GCC_VERSION=$ver/" "$ac"
	sed -i "s/^#define CONFIG_GCC_VERSION .*/#define CONFIG_GCC_VERSION $ver/" "$ah"
	ver=$(pahole --version 2>/dev/null | tr -dc 0-9)
	if [ "${ver:-0}" != "$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$ac")" ]; then
		off DEBUG_INFO_BTF_MODULES make
		sed -i "s/^CONFIG_PAHOLE_VERSION=.*/CONFIG_PAHOLE_VERSION=${ver:-0}/" "$ac"
	fi
}

dest=$cache/$rel
rm -rf "$dest"
mkdir -p "$dest/root"
for d in *.deb; do
	[ "${d#linux-image-amd64_}" != "$d" ] || [ "${d#linux-headers-amd64_}" != "$d" ] && continue
	dpkg -x "$d" "$dest/root"
done
r=$dest/root
# Merged /usr (sid): modules in usr/lib/modules; depmod -b and the
# initramfs builder look in lib/modules.
[ -e "$r/lib" ] || ln -s usr/lib "$r/lib"
mkdir -p "$r/boot"
# Newer packages keep vmlinuz and config in lib/modules/<release>/.
for f in vmlinuz config; do
	p=$r/lib/modules/$rel/$f
	[ -e "$r/boot/$f-$rel" ] || [ ! -e "$p" ] ||
		ln -s "../lib/modules/$rel/$f" "$r/boot/$f-$rel"
done
# Debian's headers point at /usr/src/... and /usr/lib/linux-kbuild-X with
# absolute links and an absolute include: make them relative to the tree.
hd=$r/usr/src/linux-headers-$rel
[ -d "$hd" ] || { echo "kfetch: $hd missing after unpacking" >&2; exit 1; }
find "$r" -type l | while read -r l; do
	t=$(readlink "$l")
	case "$t" in
	/*) [ -e "$r$t" ] || [ -L "$r$t" ] || continue
	    ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$r$t")" "$l" ;;
	esac
done
sed -i "s|/usr/src/|$r/usr/src/|g" "$hd/Makefile"
# The compiler Debian built this kernel with (gcc-10 for 5.10) may not be
# installed here; the host's gcc builds modules for it (the version check
# is already off in Debian's headers).
kv=$hd/.kernelvariables
cc=$(sed -n 's/^CC = .*)\(gcc-[0-9]*\)$/\1/p' "$kv" 2>/dev/null || true)
if [ -n "$cc" ] && ! command -v "$cc" >/dev/null; then
	sed -i "s/^CC = \(.*)\)$cc\$/# kfetch.sh: $cc is not installed\nCC = \1gcc/" "$kv"
	retarget "$hd"
fi
# Kbuild's host programs (modpost, objtool, ...) come built against the
# suite's glibc; those that need a newer one than this system's run
# through the suite's own loader and libc, unpacked beside the tree.
hv=$(getconf GNU_LIBC_VERSION | awk '{ print $2 }')
newer=()
while read -r f; do
	file -b "$f" | grep -q '^ELF.*dynamically linked' || continue
	need=$(objdump -T "$f" | grep -o 'GLIBC_2\.[0-9]*' | sort -Vu | tail -1)
	need=${need#GLIBC_}
	[ -n "$need" ] && [ "$(printf '%s\n' "$need" "$hv" | sort -V | tail -1)" != "$hv" ] &&
		newer+=("$f")
done < <(find "$r/usr/lib" -path '*/linux-kbuild-*' -type f -perm -u+x)
if [ ${#newer[@]} -gt 0 ]; then
	get libc6
	dpkg -x libc6_*.deb "$dest/libc"
	ld=$(find "$dest/libc" -name 'ld-linux-x86-64.so.2' -print -quit)
	lib=$(dirname "$(find "$dest/libc" -name 'libc.so.6' -print -quit)")
	for f in "${newer[@]}"; do
		mv "$f" "$f.bin"
		printf '#!/bin/sh\n# kfetch.sh: needs a newer glibc than the system has\nexec %s --library-path %s:/usr/lib/x86_64-linux-gnu "$0.bin" "$@"\n' \
			"$ld" "$lib" >"$f"
		chmod 755 "$f"
	done
fi
md=$(realpath "$r/lib/modules/$rel")
ln -sfn "$(realpath --relative-to="$md" "$hd")" "$md/build"
# modules.dep is written by the package's postinst, which never ran.
depmod -b "$r" "$rel"
[ -r "$r/boot/vmlinuz-$rel" ] || { echo "kfetch: no vmlinuz-$rel in $img" >&2; exit 1; }
touch "$dest/.complete"
echo "$rel" >"$relfile"
echo "$rel"
