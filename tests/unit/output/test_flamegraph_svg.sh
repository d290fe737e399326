#!/usr/bin/env bash
# output/flamegraph.c's SVG in a real browser: Debian's headless Chromium loads
# flame graphs made by luaunwind-flamegraph from folded fixtures, and
# common/svg_check.js compares the rendered DOM with the folded input and drives
# the viewer.  Screenshots are kept next to the test output.
#
# usage: test_flamegraph_svg.sh BIN_DIR FIXTURES_DIR
set -euo pipefail

bin=$1
fixtures=$2
here=$(cd "$(dirname "$0")" && pwd)
out=$PWD/test_flamegraph_svg
rm -rf "$out"
mkdir -p "$out"

chromium=$(command -v chromium || true)
if [ -z "$chromium" ]; then
	echo "test_flamegraph_svg: chromium is not installed (scripts/deps.sh test)" >&2
	exit 1
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
browser() {
	# --allow-file-access-from-files lets the test page read the SVG
	# documents inside its <object>s (all file:// URLs).
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu \
		--disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync \
		--user-data-dir="$profile" --allow-file-access-from-files "$@" \
		2>>"$out/chromium.log"
}

fg=$bin/luaunwind-flamegraph
# Every box drawn (--min-width 0), so the DOM must hold every prefix.
"$fg" --min-width 0 --subtitle "tests/fixtures/sample.folded" \
	-o "$out/sample.svg" "$fixtures/sample.folded"
"$fg" --min-width 0 -o "$out/sysprof.svg" \
	"$fixtures/sysprof_callchain.expected.folded"
"$fg" -o "$out/flame.svg" --title "luaunwind: sample.folded" \
	"$fixtures/sample.folded"

# Determinism: the same input gives the same bytes.
"$fg" -o "$out/flame2.svg" --title "luaunwind: sample.folded" \
	"$fixtures/sample.folded"
cmp "$out/flame.svg" "$out/flame2.svg"

# A well-formed document (xmllint when present: libxml2-utils).
if command -v xmllint >/dev/null; then
	xmllint --noout "$out/sample.svg" "$out/sysprof.svg"
fi

run_start=$(grep -o 'data-name="run @sw.lua:20"[^>]*data-start="[0-9]*"' \
	"$out/sample.svg" | sed 's/.*data-start="//; s/"$//')
[ -n "$run_start" ] || { echo "test_flamegraph_svg: no 'run @sw.lua:20' box" >&2; exit 1; }

case_obj() {	# label mode svg folded
	printf '<object class="case" data-label="%s" data-mode="%s" type="image/svg+xml" width="1200" height="400" data="%s" data-folded="%s"></object>\n' \
		"$1" "$2" "$3" "$(base64 -w0 "$4")"
}
{
	echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>svg check</title></head><body>'
	echo '<pre id="result">NOT RUN</pre>'
	case_obj sample interact "sample.svg" "$fixtures/sample.folded"
	case_obj sample-url url "sample.svg?z=6,$run_start&s=%5Ec_payload%24" "$fixtures/sample.folded"
	case_obj sysprof plain "sysprof.svg" "$fixtures/sysprof_callchain.expected.folded"
	echo "<script src=\"file://$here/../common/svg_check.js\"></script>"
	echo '</body></html>'
} >"$out/check.html"

browser --virtual-time-budget=10000 --dump-dom "file://$out/check.html" \
	>"$out/dom.html"
result=$(sed -n '/<pre id="result">/,/<\/pre>/p' "$out/dom.html")
echo "$result" | sed 's/<[^>]*>//g'
# Not echo | grep -q: bash writes echo's output a line at a time, grep -q
# exits on the first, the next write dies of SIGPIPE, and pipefail fails
# a passing run (a CI run beside a guest did).
[[ $result == '<pre id="result">PASS'* ]] || {
	echo "test_flamegraph_svg: the checks in the browser failed (DOM in $out/dom.html)" >&2
	exit 1
}

# Pictures: the plain graph, and one opened zoomed with a search on.
browser --screenshot="$out/flamegraph.png" --window-size=1200,800 \
	"file://$out/flame.svg" >/dev/null
browser --screenshot="$out/flamegraph-zoom-search.png" \
	--window-size=1200,800 --virtual-time-budget=5000 \
	"file://$out/sample.svg?z=6,$run_start&s=payload" >/dev/null
for png in "$out/flamegraph.png" "$out/flamegraph-zoom-search.png"; do
	# A PNG of 1200x800: signature, then the IHDR width and height.
	[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		{ echo "test_flamegraph_svg: $png is not a PNG" >&2; exit 1; }
	[ "$(od -An -tu1 -j16 -N8 "$png" | tr -s ' ')" = " 0 0 4 176 0 0 3 32" ] ||
		{ echo "test_flamegraph_svg: $png is not 1200x800" >&2; exit 1; }
	echo "screenshot: $png"
done
