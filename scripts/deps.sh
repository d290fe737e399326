#!/usr/bin/env bash
# Install, with apt-get, every Debian package the build and the tests need
# that is not installed yet.  Idempotent and quiet when nothing is missing.
#
# usage: scripts/deps.sh [GROUP...]   groups: build test kernel debug bench all
#        (default: all; debug: what the debug kernel's build needs)
set -euo pipefail

build=(build-essential cmake pkg-config clang libclang-rt-14-dev libcapstone-dev
       libelf-dev libdw-dev zlib1g-dev libmicrohttpd-dev)
test=(luajit libluajit-5.1-dev tarantool chromium golang-go procps
      libc6-dbg binutils nginx sysbench wrk curl iproute2
      neovim knot-resolver knot-dnsutils trafficserver rspamd)
# Not libnginx-mod-http-lua: it needs libluajit2-5.1-2, which conflicts with
# (and apt would remove) luajit and libluajit-5.1-dev; it is fetched and
# unpacked privately (scripts/nginx-lua-fetch.sh), NDK module included.

kernel=(qemu-system-x86 busybox-static cpio xz-utils kmod sparse util-linux
        linux-image-amd64 linux-headers-amd64
        linux-image-6.12-amd64 linux-headers-6.12-amd64
        dpkg-dev zstd dkms)
# scripts/debug-kernel.sh: building Debian's 6.1 source.
debugk=(flex bison bc libelf-dev libssl-dev dpkg-dev)
bench=(time valgrind linux-perf)

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(all)
want=()
for g in "${groups[@]}"; do
	case "$g" in
	build)  want+=("${build[@]}") ;;
	test)   want+=("${test[@]}") ;;
	kernel) want+=("${kernel[@]}") ;;
	debug)  want+=("${debugk[@]}") ;;
	bench)  want+=("${bench[@]}") ;;
	all)    want+=("${build[@]}" "${test[@]}" "${kernel[@]}" "${debugk[@]}" "${bench[@]}") ;;
	*) echo "deps.sh: unknown group '$g'" >&2; exit 1 ;;
	esac
done

missing=()
for p in "${want[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
