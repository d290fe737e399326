#!/usr/bin/env bash
# Re-make the flame graphs of the documentation, each an SVG written by
# luaunwind-report --svg and a PNG of it rendered by headless Chromium (the
# window is the SVG's own size, so the picture has no margin):
#   sysprof_callchain  from the fixture tests/fixtures/sysprof_callchain.bin
#                      (userspace/doc/streams.md)
#   demo_flame         from out/profile.luw, which `make demo` leaves
#                      (README.md)
#   demo_alloc         from out/alloc.luw, which `make demo` leaves too:
#                      luaunwind-report --alloc (README.md)
#   nginx_alloc        from the allocation recording of the nginx workers
#                      under wrk that tests/kernel/t_svc_nginx.sh keeps
#                      (out/ktest/<release>/t_svc_nginx.files/...), or
#                      the file named by NGINX_LUW
#   nginx_offcpu       from the off-CPU recording of an nginx worker whose
#                      handler blocks, under wrk, that
#                      tests/kernel/t_offcpu_nginx.sh keeps, or the file
#                      named by NGINX_OFFCPU_LUW: luaunwind-report
#                      --off-cpu (README.md)
#
# usage: userspace/doc/render.sh [BIN_DIR [NGINX_LUW [NGINX_OFFCPU_LUW]]]
#        (default: build/bin)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$top/build/bin}
doc=$top/userspace/doc

command -v chromium >/dev/null ||
	{ echo "render.sh: chromium is not installed (scripts/deps.sh test)" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

# png NAME: userspace/doc/NAME.svg -> userspace/doc/NAME.png
png() {
	local svg=$doc/$1.svg width height
	read -r width height < <(sed -n 's/^<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' "$svg")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$profile" \
		--window-size="$width,$height" --screenshot="$doc/$1.png" \
		"file://$svg" 2>"$profile/chromium.log" ||
		{ cat "$profile/chromium.log" >&2; exit 1; }
	echo "render.sh: $svg, $doc/$1.png (${width}x$height)"
}

# Run from the top so each graph's subtitle is a relative path.
cd "$top"
"$bin/luaunwind-report" --svg "$doc/sysprof_callchain.svg" tests/fixtures/sysprof_callchain.bin
png sysprof_callchain
if [ -f out/profile.luw ]; then
	"$bin/luaunwind-report" --svg "$doc/demo_flame.svg" out/profile.luw
	png demo_flame
else
	echo "render.sh: no out/profile.luw (make demo), demo_flame left as it is" >&2
fi
if [ -f out/alloc.luw ]; then
	"$bin/luaunwind-report" --alloc --svg "$doc/demo_alloc.svg" out/alloc.luw
	png demo_alloc
else
	echo "render.sh: no out/alloc.luw (make demo), demo_alloc left as it is" >&2
fi
# (|| true: no match is no recording, not an error under pipefail)
nginx=${2:-$(ls out/ktest/*/t_svc_nginx.files/t_svc_nginx/alloc.luw 2>/dev/null | head -1 || true)}
if [ -n "$nginx" ]; then
	"$bin/luaunwind-report" --alloc --svg "$doc/nginx_alloc.svg" "$nginx"
	png nginx_alloc
else
	echo "render.sh: no t_svc_nginx allocation recording (tests/kernel/run.sh -k 6.1 t_svc_nginx), nginx_alloc left as it is" >&2
fi
offcpu=${3:-$(ls out/ktest/*/t_offcpu_nginx.files/t_offcpu_nginx/wrk.luw 2>/dev/null | head -1 || true)}
if [ -n "$offcpu" ]; then
	"$bin/luaunwind-report" --off-cpu --svg "$doc/nginx_offcpu.svg" "$offcpu"
	png nginx_offcpu
else
	echo "render.sh: no t_offcpu_nginx recording (tests/kernel/run.sh -k 6.1 t_offcpu_nginx), nginx_offcpu left as it is" >&2
fi
