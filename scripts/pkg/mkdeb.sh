#!/usr/bin/env bash
# Build the two Debian packages (run by `make deb`, after `make userspace`):
#
#   scripts/pkg/mkdeb.sh VERSION BINDIR OUTDIR
#
#   luaunwind-dkms_VERSION_all.deb   /usr/src/luaunwind-VERSION/ (kmod/,
#                                    include/, dkms.conf); its postinst
#                                    builds and installs the module for
#                                    every installed kernel through DKMS,
#                                    its prerm removes it again
#   luaunwind_VERSION_amd64.deb      the programs in /usr/bin and their man
#                                    pages, luaunwind-report's .luw reader
#                                    in /usr/libexec/luaunwind; Depends from
#                                    the libraries they link (dpkg -S of each)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
ver=${1:?usage: mkdeb.sh VERSION BINDIR OUTDIR} bin=${2:?} out=${3:?}
progs=(luaunwind-ctl luaunwind-report luaunwind-flamegraph)
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# --- luaunwind-dkms
d=$stage/dkms
src=$d/usr/src/luaunwind-$ver
mkdir -p "$src/kmod" "$src/include" "$d/DEBIAN"
cp "$top"/kmod/*.c "$top"/kmod/*.h "$top/kmod/Kbuild" "$src/kmod/"
cp "$top"/include/*.h "$src/include/"
sed "s/@VERSION@/$ver/" "$top/scripts/pkg/dkms.conf" >"$src/dkms.conf"
cat >"$d/DEBIAN/control" <<EOF
Package: luaunwind-dkms
Version: $ver
Architecture: all
Maintainer: luaunwind developers <luaunwind@localhost>
Depends: dkms
Section: kernel
Priority: optional
Description: luaunwind kernel module (DKMS source)
 luaunwind.ko samples running LuaJIT processes (Debian luajit, OpenResty
 luajit2, Tarantool) and records merged host and Lua stacks. DKMS builds
 it for every installed kernel that has its headers.
EOF
cat >"$d/DEBIAN/postinst" <<EOF
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
	dkms add -m luaunwind -v $ver >/dev/null 2>&1 || true
	# Every kernel with headers; one without is skipped, not fatal.
	for k in \$(ls /lib/modules 2>/dev/null); do
		[ -d "/lib/modules/\$k/build" ] || continue
		dkms install -m luaunwind -v $ver -k "\$k" ||
			echo "luaunwind-dkms: building for \$k failed" >&2
	done
fi
EOF
cat >"$d/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
dkms remove -m luaunwind -v $ver --all >/dev/null 2>&1 || true
EOF
chmod 755 "$d/DEBIAN/postinst" "$d/DEBIAN/prerm"
dpkg-deb --root-owner-group -Zxz --build "$d" "$out/luaunwind-dkms_${ver}_all.deb" >/dev/null

# --- luaunwind
p=$stage/progs
mkdir -p "$p/usr/bin" "$p/usr/share/man/man1" "$p/usr/share/doc/luaunwind" "$p/DEBIAN"
for b in "${progs[@]}"; do
	[ -x "$bin/$b" ] || { echo "mkdeb: $bin/$b missing (make userspace)" >&2; exit 1; }
	install -m 755 -s "$bin/$b" "$p/usr/bin/$b"
	gzip -9n <"$top/userspace/doc/man/$b.1" >"$p/usr/share/man/man1/$b.1.gz"
done
# luaunwind-report hands .luw records to this one (its ../libexec/luaunwind/).
[ -x "$bin/luaunwind-report-luw" ] || { echo "mkdeb: $bin/luaunwind-report-luw missing (make userspace)" >&2; exit 1; }
install -D -m 755 -s "$bin/luaunwind-report-luw" "$p/usr/libexec/luaunwind/luaunwind-report-luw"
cp "$top/README.md" "$p/usr/share/doc/luaunwind/"
# The pages README.md links to, at the same relative place.
mkdir -p "$p/usr/share/doc/luaunwind/userspace/doc"
cp "$top"/userspace/doc/*.md "$p/usr/share/doc/luaunwind/userspace/doc/"
# The packages of the shared libraries the programs link.
deps=$(for b in "${progs[@]/#/usr/bin/}" usr/libexec/luaunwind/luaunwind-report-luw; do ldd "$p/$b"; done |
	awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
	while read -r l; do
		dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "$l" 2>/dev/null || true
	done | sed 's/:.*//; s/^\([^,]*\),.*/\1/' | sort -u | paste -sd, | sed 's/,/, /g')
cat >"$p/DEBIAN/control" <<EOF
Package: luaunwind
Version: $ver
Architecture: $(dpkg --print-architecture)
Maintainer: luaunwind developers <luaunwind@localhost>
Depends: $deps
Recommends: luaunwind-dkms (= $ver)
Section: devel
Priority: optional
Description: profiler for running LuaJIT processes (merged C and Lua stacks)
 luaunwind-ctl attaches luaunwind.ko to a running LuaJIT process and records
 merged host and Lua stacks; luaunwind-report turns records and Tarantool
 sysprof/memprof streams into folded stacks, flame graphs and pprof
 profiles; luaunwind-flamegraph draws folded stacks.
EOF
dpkg-deb --root-owner-group -Zxz --build "$p" "$out/luaunwind_${ver}_$(dpkg --print-architecture).deb" >/dev/null
ls "$out"/*"_${ver}_"*.deb
