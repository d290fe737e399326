#!/usr/bin/env bash
# Kernel releases to build and test against, and where their trees are.
#
#   scripts/kver.sh               the default release for `make`: the running
#                                 kernel when /lib/modules/$(uname -r)/build
#                                 exists, else Debian's linux-headers-amd64
#   scripts/kver.sh SERIES        the release of a test kernel:
#       6.1, 6.12                 newest installed linux-headers-SERIES.*
#       5.10, sid                 fetched and unpacked by scripts/kfetch.sh
#       debug                     built by scripts/debug-kernel.sh
#       RELEASE                   itself, when it is known (below)
#   scripts/kver.sh --root REL    the directory holding boot/vmlinuz-REL and
#                                 lib/modules/REL/: / for the system's own,
#                                 else a tree under the cache
#   scripts/kver.sh --kdir REL    the tree to build modules against:
#                                 lib/modules/REL/build under that root
#                                 (/usr/src/linux-headers-REL as a fallback)
#
# The cache is ${LUW_CACHE:-/var/cache/luaunwind}, outside the checkout so
# that fresh clones (and CI) reuse what was fetched or built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${LUW_CACHE:-/var/cache/luaunwind}

# root REL: print the root holding lib/modules/REL, or fail.
root() {
	local d
	if [ -d "/lib/modules/$1" ] || [ -d "/usr/src/linux-headers-$1" ]; then
		echo /
		return 0
	fi
	for d in "$cache/kernels/$1/root" "$cache"/debug-kernel/*/root; do
		[ -e "$d/.complete" ] || [ -e "$d/../.complete" ] || continue
		[ -d "$d/lib/modules/$1" ] && { echo "$d"; return 0; }
	done
	return 1
}

case "${1:-}" in
"")
	r=$(uname -r)
	if [ -d "/lib/modules/$r/build" ]; then
		echo "$r"
		exit 0
	fi
	dep=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null) || exit 1
	dep=${dep%% *}
	echo "${dep#linux-headers-}"
	;;
--root)
	root "${2:?usage: kver.sh --root RELEASE}"
	;;
--kdir)
	rel=${2:?usage: kver.sh --kdir RELEASE}
	r=$(root "$rel") || exit 1
	if [ -d "$r/lib/modules/$rel/build" ]; then
		echo "${r%/}/lib/modules/$rel/build"
	elif [ -d "$r/usr/src/linux-headers-$rel" ]; then
		echo "${r%/}/usr/src/linux-headers-$rel"
	else
		exit 1
	fi
	;;
5.10|sid)
	exec "$here/kfetch.sh" "$1"
	;;
debug)
	exec "$here/debug-kernel.sh"
	;;
*)
	# A full release, or a series of the installed Debian kernels.
	if root "$1" >/dev/null; then
		echo "$1"
		exit 0
	fi
	for d in $(ls -d /usr/src/linux-headers-"$1".*-amd64 2>/dev/null | sort -rV); do
		echo "${d#/usr/src/linux-headers-}"
		exit 0
	done
	exit 1
	;;
esac
