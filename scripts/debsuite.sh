#!/usr/bin/env bash
# Fetch packages or sources from another Debian suite of the archive this
# machine already uses, through a private apt configuration: the system's
# own sources are never touched.
#
#   scripts/debsuite.sh SUITE download PKG...   .debs into the current dir
#   scripts/debsuite.sh SUITE source [--download-only] PKG...
#                                               apt-get source in the cwd
#   scripts/debsuite.sh SUITE policy PKG...     versions the suite offers
#
# SUITE: bullseye, bookworm, trixie, sid (any suite the archive serves).
# The archive's address is read from the system's apt configuration, so
# it is written nowhere here.  Lists live in $LUW_APT_DIR/SUITE (default
# build/apt/SUITE under the checkout) and are refreshed when older than a
# day.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { sed -n '2,16s/^# \{0,1\}//p' "$0" >&2; exit 2; }
suite=$1 verb=$2
shift 2

# The system's Debian archive URI (deb822 or one-line format).
uri=
for f in /etc/apt/sources.list.d/*.sources; do
	[ -r "$f" ] || continue
	uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++)
		if ($i ~ /\/debian\/?$/) { print $i; exit } }' "$f")
	[ -n "$uri" ] && break
done
if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
	uri=$(awk '$1 == "deb" && $0 !~ /security/ {
		for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
		/etc/apt/sources.list)
fi
[ -n "$uri" ] || { echo "debsuite: no Debian archive in the system's apt sources" >&2; exit 1; }

dir=${LUW_APT_DIR:-$top/build/apt}/$suite
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
cat >"$dir/sources.list" <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main
EOF
opts=(-o "Dir::Etc::SourceList=$dir/sources.list"
      -o "Dir::Etc::SourceParts=/dev/null"
      -o "Dir::State::Lists=$dir/lists"
      -o "Dir::Cache=$dir/cache"
      -o "Dir::State::status=/var/lib/dpkg/status"
      -o "APT::Get::List-Cleanup=0"
      -o "Acquire::Languages=none")

stamp=$dir/lists/.updated
if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440)" ]; then
	apt-get "${opts[@]}" -qq update >/dev/null
	touch "$stamp"
fi

case "$verb" in
download) apt-get "${opts[@]}" -qq download "$@" ;;
source)   apt-get "${opts[@]}" -qq source "$@" ;;
policy)   apt-cache "${opts[@]}" policy "$@" ;;
*) echo "debsuite: unknown verb '$verb'" >&2; exit 2 ;;
esac
