#!/usr/bin/env bash
# Put the kernel's checkpatch.pl (and the data files it reads) into
# build/checkpatch/, taken from Debian's linux-source package of the same
# series as the default kernel.  Nothing of it is committed.
#   scripts/vm/checkpatch.sh        prints the path of checkpatch.pl
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dst=$top/build/checkpatch
if [ ! -x "$dst/checkpatch.pl" ]; then
	rel=$("$top/scripts/kver.sh")
	series=$(echo "$rel" | cut -d. -f1,2)
	pkg=linux-source-$series
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "checkpatch: fetching $pkg (once)" >&2
	chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
		{ echo "checkpatch: apt-get download $pkg failed" >&2; exit 1; }
	deb=$(ls "$tmp"/*.deb)
	mkdir -p "$dst.tmp"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO --wildcards "*usr/src/$pkg.tar.*" |
		tar -xJ -C "$dst.tmp" --strip-components=2 --wildcards \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch'
	rm -rf "$dst"
	mv "$dst.tmp" "$dst"
	# checkpatch looks for its data files next to itself.
	chmod +x "$dst/checkpatch.pl"
fi
echo "$dst/checkpatch.pl"
