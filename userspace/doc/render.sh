#!/usr/bin/env bash
# Re-make the README's flame graph from a fixture: the SVG written by
# luaunwind-report --svg, and a PNG of it rendered by headless Chromium
# (the window is the SVG's own size, so the picture has no margin).
#
# usage: userspace/doc/render.sh [BIN_DIR]     (default: build/bin)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$top/build/bin}
doc=$top/userspace/doc
fixture=tests/fixtures/sysprof_callchain.bin

command -v chromium >/dev/null ||
	{ echo "render.sh: chromium is not installed (scripts/deps.sh test)" >&2; exit 1; }
# Run from the top so the graph's subtitle is the fixture's relative path.
cd "$top"
"$bin/luaunwind-report" --svg "$doc/sysprof_callchain.svg" "$fixture"
read -r width height < <(sed -n 's/^<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' \
	"$doc/sysprof_callchain.svg")

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--no-first-run --disable-background-networking --disable-component-update \
	--disable-sync --user-data-dir="$profile" \
	--window-size="$width,$height" --screenshot="$doc/sysprof_callchain.png" \
	"file://$doc/sysprof_callchain.svg" 2>"$profile/chromium.log" ||
	{ cat "$profile/chromium.log" >&2; exit 1; }
echo "render.sh: $doc/sysprof_callchain.svg, $doc/sysprof_callchain.png (${width}x$height)"
