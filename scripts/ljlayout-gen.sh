#!/usr/bin/env bash
# Regenerate the known-layouts table of userspace/lib/target/layout.c from the
# exact Debian sources of each target: fetch them with `apt-get source`
# (needs a deb-src line for the archive) into a scratch directory outside
# the checkout, generate each tree's headers with its own buildvm, compile
# scripts/ljlayout-gen.c against them with the defines the package build
# uses, and print one initializer per target.  Compare with the table by
# hand; nothing is rewritten.
# usage: scripts/ljlayout-gen.sh [SCRATCH]   (default: /tmp/luw-ljsrc)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-/tmp/luw-ljsrc}
mkdir -p "$src"
cd "$src"
ls -d luajit-2.1.0*/ >/dev/null 2>&1 || apt-get source -qq luajit >/dev/null
ls -d luajit2-*/ >/dev/null 2>&1 || apt-get source -qq luajit2 >/dev/null
ls -d tarantool-*/ >/dev/null 2>&1 || apt-get source -qq tarantool >/dev/null
gen() {
	local name=$1 dir=$2
	shift 2
	make -s -C "$dir" lj_ffdef.h lj_bcdef.h lj_libdef.h lj_recdef.h \
		lj_folddef.h >/dev/null
	cc "$@" -I"$dir" -I"$top/include" -o "$src/gen-$name" \
		"$top/scripts/ljlayout-gen.c"
	echo "/* $name */"
	"$src/gen-$name"
}
# debian/rules of luajit and luajit2 build with upstream defaults (GC64 on
# x86-64); tarantool's cmake/luajit.cmake adds LUAJIT_SMART_STRINGS and
# leaves GC64 off.
gen luajit "$(ls -d "$src"/luajit-2.1.0*/ | head -1)src"
gen luajit2 "$(ls -d "$src"/luajit2-*/ | head -1)src"
gen tarantool "$(ls -d "$src"/tarantool-*/ | head -1)third_party/luajit/src" \
	-DLUAJIT_SMART_STRINGS=1
