#!/usr/bin/env bash
# Unpack OpenResty's luajit2 (Debian packages luajit2 and libluajit2-5.1-2)
# into a private directory: they conflict with Debian's luajit as installed
# packages, and the tests need both.  Run it as
#   LD_LIBRARY_PATH=DIR/usr/lib/x86_64-linux-gnu DIR/usr/bin/luajit
# usage: scripts/luajit2-fetch.sh [DIR]   (default: build/luajit2)
set -euo pipefail
dir=${1:-build/luajit2}
[ -x "$dir/usr/bin/luajit" ] && exit 0
mkdir -p "$dir/debs"
dir=$(cd "$dir" && pwd)
cd "$dir/debs"
if ! ls luajit2_*.deb libluajit2-5.1-2_*.deb >/dev/null 2>&1; then
	apt-get download luajit2 libluajit2-5.1-2 >/dev/null 2>&1 || {
		[ "$(id -u)" -eq 0 ] && apt-get update -qq >/dev/null
		apt-get download luajit2 libluajit2-5.1-2 >/dev/null
	}
fi
for d in luajit2_*.deb libluajit2-5.1-2_*.deb; do
	dpkg -x "$d" "$dir"
done
[ -x "$dir/usr/bin/luajit" ] || { echo "luajit2-fetch: no luajit in $dir" >&2; exit 1; }
