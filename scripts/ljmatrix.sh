#!/usr/bin/env bash
# The LuaJIT build matrix: LuaJIT sources from several Debian suites, each
# built with its own default flags and with one build define at a time,
# every build kept with DWARF (-g) and as a stripped copy.
#
#   scripts/ljmatrix.sh list              the cells: SOURCE-VARIANT per line
#   scripts/ljmatrix.sh build [CELL...]   fetch and build (default: all)
#   scripts/ljmatrix.sh host CELL...      build, with the static host
#   scripts/ljmatrix.sh path CELL         the cell's directory
#   scripts/ljmatrix.sh fetch SOURCE      fetch a source; print its tarball
#
# A cell built also gets host.static: tests/fixtures/workloads/static_host.c
# linked with the build's libluajit.a and stripped, a host that exports
# nothing of LuaJIT's (host.failed and host.log when it does not link);
# `host` gives one to a cell cached before, by building its libluajit.a.
#
# Builds are cached OUTSIDE the checkout, in
#   ${LUW_CACHE:-/var/cache/luaunwind}/ljmatrix/SOURCE-VARIANT/
# (luajit with DWARF, luajit.stripped, host.static, build.log, a stamp), so fresh clones
# and CI runs on the same machine reuse them: a cell is built once.
# Sources come from the Debian archive via scripts/debsuite.sh (the
# upstream tarball of the suite's package, without Debian's patches: the
# LuaJIT of that release as its authors ship it).  Builds run under
# nice -n 10 with -j2; a failed build is recorded (build.failed) with its
# log and not retried unless LUW_LJMATRIX_REBUILD=1.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${LUW_CACHE:-/var/cache/luaunwind}/ljmatrix

# SOURCE SUITE PACKAGE REFS [DIR]: the releases tried, oldest first.
# REFS is the reference size the source builds by default (gc64 or ref32);
# its ref-size variant is the other one.  DIR is where LuaJIT sits in the
# tarball when another project bundles it (tarantool 2.6 carries its fork
# in third_party/luajit, still built by the original Makefile).
sources=(
	"bullseye-luajit bullseye luajit ref32"
	"bookworm-luajit bookworm luajit gc64"
	"bookworm-luajit2 bookworm luajit2 gc64"
	"bookworm-tarantool bookworm tarantool ref32 third_party/luajit"
	"trixie-luajit trixie luajit gc64"
	"sid-luajit sid luajit gc64"
)
# VARIANT XCFLAGS; "refs" is nogc64 or gc64, whichever the source's
# default is not.
variants=(
	"default "
	"refs "
	"lua52 -DLUAJIT_ENABLE_LUA52COMPAT"
	"nojit -DLUAJIT_DISABLE_JIT"
	"assert -DLUA_USE_ASSERT"
)
refvariant=(
	"nogc64 -DLUAJIT_DISABLE_GC64"
	"gc64 -DLUAJIT_ENABLE_GC64"
)

cells() {
	local s v refs
	for s in "${sources[@]}"; do
		read -r _ _ _ refs _ <<<"$s"
		for v in "${variants[@]}"; do
			v=${v%% *}
			if [ "$v" = refs ]; then
				v=${refvariant[0]%% *}
				[ "$refs" = ref32 ] && v=${refvariant[1]%% *}
			fi
			echo "${s%% *}-$v"
		done
	done
}

src_of() {	# CELL -> "SOURCE SUITE PACKAGE REFS [DIR]"
	local s
	for s in "${sources[@]}"; do
		case "$1" in "${s%% *}"-*) echo "$s"; return 0 ;; esac
	done
	return 1
}

flags_of() {	# CELL -> XCFLAGS
	local v
	for v in "${variants[@]}" "${refvariant[@]}"; do
		case "$1" in *-"${v%% *}") echo "${v#* }"; return 0 ;; esac
	done
	return 1
}

# fetch SOURCE SUITE PACKAGE: the upstream tarball in $cache/src/SOURCE.
fetch() {
	local d=$cache/src/$1
	ls "$d"/*.orig.tar.* >/dev/null 2>&1 && return 0
	mkdir -p "$d"
	# apt-get source also asks for Debian's own tarball, which a partial
	# mirror may lack; the upstream tarball is all the build needs.
	(cd "$d" && "$top/scripts/debsuite.sh" "$2" source --download-only "$3" >/dev/null 2>&1) || true
	ls "$d"/*.orig.tar.* >/dev/null 2>&1 || { echo "ljmatrix: no source for $1 ($3 in $2)" >&2; return 1; }
}

# built CELL-DIR [host]: nothing left to build (with host: the static
# host tried too).
built() {
	[ -e "$1/luajit.stripped" ] &&
		{ [ -z "${2:-}" ] || [ -e "$1/host.static" ] || [ -e "$1/host.failed" ]; }
}

# host CELL-DIR TREE: host.static from TREE's libluajit.a, or host.failed.
host() {
	# -lm -ldl: what LuaJIT's own Makefile links luajit with.
	if cc -O2 -o "$1/host.static" "$top/tests/fixtures/workloads/static_host.c" \
		-I"$2/src" "$2/src/libluajit.a" -lm -ldl >>"$1/host.log" 2>&1 &&
	   strip "$1/host.static" >>"$1/host.log" 2>&1; then
		rm -f "$1/host.log"
	else
		echo "ljmatrix: $(basename "$1")'s static host failed, see $1/host.log" >&2
		rm -f "$1/host.static"
		touch "$1/host.failed"
	fi
}

build_cell() {	# CELL [host]
	local cell=$1 want=${2:-} s suite pkg sub flags d tree lk
	read -r s suite pkg _ sub < <(src_of "$cell") || { echo "ljmatrix: unknown cell $cell" >&2; return 1; }
	flags=$(flags_of "$cell") || { echo "ljmatrix: unknown cell $cell" >&2; return 1; }
	d=$cache/$cell
	if built "$d" $want; then return 0; fi
	# Two runs (a test and `make check-matrix`) may want the same cell.
	exec {lk}>"$cache/.$cell.lock"
	flock "$lk"
	if built "$d" $want; then exec {lk}>&-; return 0; fi
	if [ -e "$d/build.failed" ] && [ "${LUW_LJMATRIX_REBUILD:-0}" != 1 ]; then exec {lk}>&-; return 0; fi
	fetch "$s" "$suite" "$pkg" || return 1
	local only_host=0
	if [ -e "$d/luajit.stripped" ]; then
		only_host=1
		rm -rf "$d/tree" "$d/host.log"
	else
		rm -rf "$d"
	fi
	mkdir -p "$d"
	tree=$d/tree
	mkdir -p "$tree"
	# Some tarballs hold one top directory, Debian's dfsg ones do not.
	tar -xf "$cache/src/$s"/*.orig.tar.* -C "$tree"
	local top1
	top1=$(find "$tree" -mindepth 1 -maxdepth 1 -type d)
	[ "$(wc -l <<<"$top1")" = 1 ] && [ ! -d "$tree/src" ] && tree=$top1
	[ -z "$sub" ] || tree=$tree/$sub
	if [ ! -f "$tree/src/luajit.c" ]; then
		echo "ljmatrix: no LuaJIT in the $s tarball${sub:+ under $sub}" >&2
		[ $only_host = 1 ] && rm -rf "$d/tree" || rm -rf "$d"
		exec {lk}>&-
		return 1
	fi
	if [ $only_host = 1 ]; then
		echo "ljmatrix: building $cell's libluajit.a for its static host" >&2
		if nice -n 10 make -C "$tree/src" -j2 CCDEBUG=-g XCFLAGS="$flags" \
			Q= libluajit.a >"$d/host.log" 2>&1; then
			host "$d" "$tree"
		else
			echo "ljmatrix: $cell's libluajit.a failed, see $d/host.log" >&2
			touch "$d/host.failed"
		fi
		rm -rf "$d/tree"
		exec {lk}>&-
		return 0
	fi
	echo "ljmatrix: building $cell (XCFLAGS='$flags')" >&2
	if nice -n 10 make -C "$tree/src" -j2 CCDEBUG=-g XCFLAGS="$flags" \
		Q= >"$d/build.log" 2>&1; then
		cp "$tree/src/luajit" "$d/luajit"
		strip -o "$d/luajit.stripped" "$d/luajit"
		host "$d" "$tree"
		# jit.* modules (-jv, -jdump) for the cell's own version.
		mkdir -p "$d/share"
		cp -r "$tree/src/jit" "$d/share/" 2>/dev/null || true
		echo "$flags" >"$d/xcflags"
		rm -rf "$d/tree"
	else
		echo "ljmatrix: $cell failed to build, see $d/build.log" >&2
		touch "$d/build.failed"
		rm -rf "$d/tree"
	fi
	exec {lk}>&-
}

case "${1:-}" in
list) cells ;;
path) echo "$cache/$2" ;;
fetch)
	for s in "${sources[@]}"; do
		read -r name suite pkg _ <<<"$s"
		[ "$name" = "${2:-}" ] || continue
		fetch "$name" "$suite" "$pkg"
		ls "$cache/src/$name"/*.orig.tar.*
		exit 0
	done
	echo "ljmatrix: unknown source ${2:-}" >&2
	exit 1
	;;
build)
	shift
	[ $# -gt 0 ] || set -- $(cells)
	mkdir -p "$cache"
	for c in "$@"; do build_cell "$c"; done
	;;
host)
	shift
	mkdir -p "$cache"
	for c in "$@"; do build_cell "$c" host; done
	;;
*) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
