#!/usr/bin/env bash
# heap/: snapshots of live processes whose heap holds known things
# (fixtures/workloads/heap.lua), taken by luaunwind-ctl heap and read by
# luaunwind-report, on Debian's luajit (GC64, no DWARF: the lj_obj.h
# model) and tarantool 2.6 (32-bit references, DWARF), the latter also as
# a real server (box.cfg: its WAL and network threads, a space):
#   - each known holder at its path, with the bytes it must hold
#   - the snapshot's bytes against gc.total and collectgarbage("count")
#   - --diff of two snapshots names the growing module list first
#   - --live, --svg, --pprof (read back by go tool pprof)
#   - real services: an nginx worker whose module caches every request,
#     tarantool as a server, sysbench (a universe per thread)
#   - the target is never left stopped: luaunwind-ctl SIGKILLed mid-walk,
#     the target SIGKILLed mid-walk, the target exiting during a live walk
#
# usage: test_heap.sh BIN_DIR FIXTURES_DIR
set -u
bin=$1
fixtures=$2
. "$(dirname "$0")/../common/testlib.sh"
ctl=$bin/luaunwind-ctl
rep=$bin/luaunwind-report
work=$fixtures/workloads/heap.lua
export LC_ALL=C

. "$(dirname "$0")/heap_common.sh"

run() {
	local name=$1 count grown
	shift
	start "$name" "$@" || return
	count=$(sed -n 's/^count //p' "$tout" | tail -1)
	"$ctl" heap -p "$tp" -o "$tmp/$name.1" 2>"$tmp/err" ||
		{ echo "FAIL: $name: heap: $(cat "$tmp/err")"; fail=1; return; }
	check "$name: the target runs on after the snapshot" "$(stopped "$tp" && echo 1 || echo 0)"
	"$rep" --folded "$tmp/$name.1" >"$tmp/$name.folded"
	"$rep" --top 10 "$tmp/$name.1" >"$tmp/$name.top"
	known_paths "$name" "$tmp/$name.folded"
	totals "$name" "$tmp/$name.top" "$count"
	check "$name: nothing skipped, unsized or dangling: $(grep skipped "$tmp/$name.top")" \
		"$(grep -q 'skipped' "$tmp/$name.top" && echo 1 || echo 0)"

	say grow
	"$ctl" heap -p "$tp" -o "$tmp/$name.2" 2>"$tmp/err" || { echo "FAIL: $name: heap 2"; fail=1; }
	"$rep" --diff "$tmp/$name.1" "$tmp/$name.2" --top 3 >"$tmp/$name.diff"
	grown=$(sed -n '/^grew most/{n;n;p}' "$tmp/$name.diff")
	check "$name: --diff names the growing list first: $grown" \
		"$(echo "$grown" | grep -q 'package.loaded\["app.session"\].store\[\*\]$'; echo $?)"
	"$rep" --diff "$tmp/$name.1" "$tmp/$name.2" --folded >"$tmp/$name.gfolded"
	check "$name: the growth's widest path is the list" \
		"$(sort -k2 -n -t' ' "$tmp/$name.gfolded" | tail -1 | grep -q '^package.loaded;\["app.session"\];store;\[\*\];(string) '; echo $?)"

	echo "spin 4" >&7
	wait_line "$tout" '^spinning' "$tp"
	"$ctl" heap --live -p "$tp" -o "$tmp/$name.live" 2>"$tmp/err"
	check "$name: --live on a running target: $(cat "$tmp/err")" "$?"
	"$rep" --folded "$tmp/$name.live" >"$tmp/$name.lfolded"
	known_paths "$name --live" "$tmp/$name.lfolded"
	exec 7>&-
}

run luajit luajit "$work"
run tarantool tarantool "$work"
mkdir -p "$tmp/box"
LUW_HEAP_BOX=$tmp/box run tarantool-box tarantool "$work"

# A real service: Debian's nginx with its Lua module (on OpenResty's
# LuaJIT, both unpacked privately), one worker whose module caches every
# request.  600 requests: its cache is a map of 600 strings of 500 bytes;
# 600 more: --diff names the map first.
nginx_heap() {
	local top d port w v grown
	top=$(cd "$fixtures/../.." && pwd)
	"$top/scripts/luajit2-fetch.sh" "$top/build/luajit2" >/dev/null &&
		"$top/scripts/nginx-lua-fetch.sh" "$top/build/nginx-lua" >/dev/null ||
		{ echo "FAIL: nginx: cannot fetch its Lua module"; fail=1; return; }
	d=$tmp/nginx
	port=$((20000 + RANDOM % 20000))
	mkdir -p "$d"
	cat >"$d/nginx.conf" <<-EOF
	daemon off;
	master_process on;
	worker_processes 1;
	pid $d/nginx.pid;
	error_log $d/error.log notice;
	load_module $top/build/nginx-lua/usr/lib/nginx/modules/ndk_http_module.so;
	load_module $top/build/nginx-lua/usr/lib/nginx/modules/ngx_http_lua_module.so;
	events { worker_connections 64; }
	http {
		access_log off;
		client_body_temp_path $d/body;
		proxy_temp_path $d/proxy;
		fastcgi_temp_path $d/fastcgi;
		uwsgi_temp_path $d/uwsgi;
		scgi_temp_path $d/scgi;
		lua_package_path "$fixtures/workloads/nginx/?.lua;$top/build/nginx-lua/usr/share/lua/5.1/?.lua;;";
		server {
			listen 127.0.0.1:$port;
			location = /work {
				content_by_lua_file $fixtures/workloads/nginx/nginx_heap.lua;
			}
		}
	}
	EOF
	LD_LIBRARY_PATH=$top/build/luajit2/usr/lib/x86_64-linux-gnu nginx -p "$d" \
		-c "$d/nginx.conf" -e "$d/error.log" >"$d/out" 2>&1 &
	pids+=($!)
	for _ in $(seq 200); do
		curl -sf "http://127.0.0.1:$port/work?id=0" >/dev/null 2>&1 && break
		sleep 0.1
	done
	w=$(pgrep -P "$!" | head -1)
	curl -sf "http://127.0.0.1:$port/work?id=[1-599]" >/dev/null ||
		{ echo "FAIL: nginx does not serve"; cat "$d/error.log"; fail=1; return; }
	"$ctl" heap -p "$w" -o "$tmp/ngx.1" 2>"$tmp/err" ||
		{ echo "FAIL: nginx worker: $(cat "$tmp/err")"; fail=1; return; }
	"$rep" --folded "$tmp/ngx.1" >"$tmp/ngx.folded"
	v=$(bytes "$tmp/ngx.folded" 'package.loaded;heapcache;entries;["*"];(string) ')
	check "nginx worker: package.loaded.heapcache.entries[\"*\"] holds 600 strings of 500 bytes ($v bytes)" \
		"$([ "$v" -ge 300000 ] && [ "$v" -le 400000 ]; echo $?)"
	curl -sf "http://127.0.0.1:$port/work?id=[600-1199]" >/dev/null
	"$ctl" heap -p "$w" -o "$tmp/ngx.2" 2>"$tmp/err"
	"$rep" --diff "$tmp/ngx.1" "$tmp/ngx.2" --top 3 >"$tmp/ngx.diff"
	grown=$(sed -n '/^grew most/{n;n;p}' "$tmp/ngx.diff")
	check "nginx worker: --diff names the cache first: $grown" \
		"$(echo "$grown" | grep -q 'package.loaded.heapcache.entries\["\*"\]$'; echo $?)"
	kill -QUIT "${pids[-1]}" 2>/dev/null
}
nginx_heap

# Several universes in one process: sysbench, a Lua state per worker
# thread and one of its own.  Each worker's _G.keep under its universe.
sysbench "$fixtures/workloads/heap_sysbench.lua" --threads=3 --time=60 run >"$tmp/sb.out" 2>&1 &
sb=$!
pids+=("$sb")
for _ in $(seq 100); do grep -q 'Threads started' "$tmp/sb.out" && break; sleep 0.1; done
sleep 0.5
if "$ctl" heap -p "$sb" -o "$tmp/sb" 2>"$tmp/err"; then
	"$rep" --folded "$tmp/sb" >"$tmp/sb.folded"
	n=$(grep -c '^universe [0-9]*;_G;keep;\[\*\];(string) ' "$tmp/sb.folded")
	v=$(awk '/^universe [0-9]+;_G;keep;\[\*\];\(string\) / { s += $NF } END { print s + 0 }' "$tmp/sb.folded")
	check "sysbench: $(grep -o '[0-9]* universes' "$tmp/err" | head -1), three workers' _G.keep ($n, $v bytes)" \
		"$(grep -q ' 4 universes' "$tmp/err" && [ "$n" = 3 ] && [ "$v" -ge 330000 ]; echo $?)"
else
	echo "FAIL: sysbench: $(cat "$tmp/err")"
	fail=1
fi
kill "$sb" 2>/dev/null

# Outputs: an SVG flame graph and pprof's inuse_objects and inuse_space.
"$rep" --svg "$tmp/h.svg" "$tmp/luajit.1"
check "--svg writes a flame graph of the paths" \
	"$(grep -q 'cache' "$tmp/h.svg" && grep -q '</svg>' "$tmp/h.svg"; echo $?)"
"$rep" --pprof "$tmp/h.pb.gz" "$tmp/luajit.1"
if command -v go >/dev/null; then
	export HOME=$tmp/home GOCACHE=$tmp/gocache
	mkdir -p "$HOME"
	go tool pprof -raw "$tmp/h.pb.gz" >"$tmp/raw" 2>"$tmp/err"
	want=$(awk '{ s += $NF } END { print s }' "$tmp/luajit.folded")
	got=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ +[0-9]+:/ { s += $2 } END { print s + 0 }' "$tmp/raw")
	check "--pprof: go tool pprof reads inuse_objects/inuse_space, $got of $want bytes" \
		"$(grep -q 'inuse_objects/count inuse_space/bytes' "$tmp/raw" && [ "$got" = "$want" ]; echo $?)"
else
	check "--pprof: go tool pprof is installed (scripts/deps.sh test)" 1
fi

# A cut file: what was read is reported, and where it stopped.
head -c 300 "$tmp/luajit.1" >"$tmp/cut"
expect 2 'cut short at byte|does not parse' "$rep" --top 5 "$tmp/cut"

# The target is never left stopped.  A heap of 100 MiB of strings and
# 100 MiB of small tables (1.3 million objects) keeps the walk going long
# enough to be caught in it (catch_walk).
start big luajit "$work" 100 100 || exit 1
catch_walk ctl "$tmp/big"
check "luaunwind-ctl SIGKILLed mid-walk (its target caught stopped)" "$caught"
sleep 0.2
check "... the target runs on" "$(stopped "$tp" && echo 1 || echo 0)"
say count
check "... and answers" "$?"

catch_walk target "$tmp/big"
check "the target SIGKILLed mid-walk (caught stopped): luaunwind-ctl ends ($st): $(tail -1 "$tmp/err" | head -c 200)" \
	"$([ $caught = 0 ] && [ $st = 1 ] && grep -q 'exited during the walk' "$tmp/err"; echo $?)"

start big2 luajit "$work" 100 100 || exit 1
echo "spin 30" >&7
wait_line "$tout" '^spinning' "$tp"
"$ctl" heap --live -p "$tp" -o "$tmp/big2" 2>"$tmp/err" &
cp=$!
wait_line "$tmp/err" 'walking' "$cp"
kill -TERM "$tp"
wait "$cp"
st=$?
check "the target exiting during a live walk: luaunwind-ctl ends ($st): $(head -c 200 "$tmp/err")" \
	"$([ $st -le 1 ]; echo $?)"
exit $fail
