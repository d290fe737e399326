#!/usr/bin/env bash
# Unpack Debian's Lua module for nginx (libnginx-mod-http-lua, with the
# NDK module it needs and the lua-resty-core/lrucache libraries it loads
# at start) into a private directory.  Never install it with apt: it
# depends on libluajit2-5.1-2, which conflicts with Debian's luajit, and
# apt would remove luajit.  nginx loads it with
#   load_module DIR/usr/lib/nginx/modules/ndk_http_module.so;
#   load_module DIR/usr/lib/nginx/modules/ngx_http_lua_module.so;
#   lua_package_path "DIR/usr/share/lua/5.1/?.lua;;";
# and runs it on OpenResty's LuaJIT from scripts/luajit2-fetch.sh
# (LD_LIBRARY_PATH=build/luajit2/usr/lib/x86_64-linux-gnu).
# usage: scripts/nginx-lua-fetch.sh [DIR]   (default: build/nginx-lua)
set -euo pipefail
dir=${1:-build/nginx-lua}
mod=usr/lib/nginx/modules/ngx_http_lua_module.so
[ -f "$dir/$mod" ] && [ -f "$dir/usr/share/lua/5.1/resty/core.lua" ] && exit 0
pkgs=(libnginx-mod-http-lua libnginx-mod-http-ndk lua-resty-core lua-resty-lrucache)
mkdir -p "$dir/debs"
dir=$(cd "$dir" && pwd)
cd "$dir/debs"
have() {
	for p in "${pkgs[@]}"; do
		ls "${p}"_*.deb >/dev/null 2>&1 || return 1
	done
}
if ! have; then
	apt-get download "${pkgs[@]}" >/dev/null 2>&1 || {
		[ "$(id -u)" -eq 0 ] && apt-get update -qq >/dev/null
		apt-get download "${pkgs[@]}" >/dev/null
	}
fi
for p in "${pkgs[@]}"; do
	dpkg -x "${p}"_*.deb "$dir"
done
[ -f "$dir/$mod" ] || { echo "nginx-lua-fetch: no $mod in $dir" >&2; exit 1; }
