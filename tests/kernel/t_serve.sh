#!/bin/sh
# luaunwind-ctl serve (issue 30), read by Go's own pprof client:
#  - go tool pprof -raw of /debug/pprof/profile?seconds=3&pid=P, of the
#    same with exe=, and of /debug/pprof/offcpu: each parses, holds the
#    workload's Lua function by name under its process (comm-PID), and
#    the off-CPU one is in off_cpu/nanoseconds; /debug/pprof/heap?pid=P in
#    inuse_objects and inuse_space; the samples labelled
#    with the host's name, the pid, comm, executable and its build-id;
#  - curl for the errors: a pid that does not exist (404), seconds past
#    the cap (400), two requests at once (the second 429, with
#    Retry-After);
#  - a client that goes away mid-profile (the first of those two): its
#    recording ends, nothing stays attached;
#  - a listener on a non-loopback address: refused without a token file;
#    with one, a request without the token is 401 and one with it 200.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
lo_up
H='work @[^;]*coro\.lua:4'
PP="env HOME=/tmp GOCACHE=/tmp/gocache go tool pprof"
U=http://127.0.0.1:6060/debug/pprof

start_lua luajit $WL/coro.lua
lp=$pid
$CTL serve --max-seconds 20 >"$W/serve.log" 2>&1 &
sp=$!
kids="$kids $sp"
within 60 grep -q 'listening on' "$W/serve.log" || fail "serve did not start: $(cat "$W/serve.log")"

# raw NAME URL: go tool pprof -raw of URL into $W/NAME.raw.  pprof waits
# 1.5 times seconds= by default; attaching in a TCG guest takes longer
# than the rest.
raw() {
	$PP -timeout 300 -raw "$2" >"$W/$1.raw" 2>"$W/$1.err" ||
		{ cat "$W/$1.err" "$W/serve.log" >&2; fail "go tool pprof $2"; }
}

raw cpu "$U/profile?seconds=3&pid=$lp"
grep -q '^samples/count cpu/nanoseconds$' "$W/cpu.raw" || fail "the CPU profile's sample types: $(head -8 "$W/cpu.raw")"
grep -qE "$H" "$W/cpu.raw" || fail "the CPU profile lacks work(): $(grep -c . "$W/cpu.raw") lines"
grep -q "luajit-$lp" "$W/cpu.raw" || fail "the CPU profile's stacks are not rooted at luajit-$lp"
# The labels of its samples (go tool pprof -tags: each label's values).
curl -s -o "$W/lab.pb.gz" "$U/profile?seconds=2&pid=$lp" || fail "curl of a profile"
$PP -tags "$W/lab.pb.gz" >"$W/lab.tags" 2>"$W/lab.err" || { cat "$W/lab.err" >&2; fail "pprof -tags"; }
# label KEY VALUE: the -tags block of KEY has exactly VALUE.
label() {
	grep -A1 "^ *$1: Total" "$W/lab.tags" | grep -q "): $2\$" ||
		fail "no label $1=$2: $(cat "$W/lab.tags")"
}
label hostname "$(hostname)"
label pid "$lp"
label comm luajit
label executable "$(readlink -f "$(command -v luajit)")"
label build_id "$(readelf -n "$(readlink -f "$(command -v luajit)")" | sed -n 's/.*Build ID: //p')"
raw exe "$U/profile?seconds=3&exe=$(command -v luajit)"
grep -qE "$H" "$W/exe.raw" || fail "exe=: no work()"
raw off "$U/offcpu?seconds=3&pid=$lp"
raw heap "$U/heap?pid=$lp"
grep -q '^inuse_objects/count inuse_space/bytes$' "$W/heap.raw" || fail "the heap profile's sample types: $(head -8 "$W/heap.raw")"
grep -q 'string' "$W/heap.raw" || fail "the heap profile has no strings: $(grep -c . "$W/heap.raw") lines"
grep -q '^off_cpu/nanoseconds$' "$W/off.raw" || fail "the off-CPU profile's sample types: $(head -8 "$W/off.raw")"

# code URL: the HTTP status of a GET of URL.
code() {
	curl -s -o "$W/body" -w '%{http_code}' "$@"
}
c=$(code "$U/profile?seconds=1&pid=999999")
[ "$c" = 404 ] || fail "a pid that does not exist: $c $(cat "$W/body")"
c=$(code "$U/profile?seconds=21&pid=$lp")
[ "$c" = 400 ] || fail "seconds past --max-seconds: $c $(cat "$W/body")"
c=$(code "$U/heap")
[ "$c" = 400 ] || fail "a heap of no pid: $c $(cat "$W/body")"
c=$(code "$U/profile?seconds=zz")
[ "$c" = 400 ] || fail "seconds=zz: $c $(cat "$W/body")"

# Two at once: the second waits for nothing, 429.  The first asks for
# 20 s, so that it is still going however long a loaded guest takes to
# start the second (one failure with 6 s: the second came after it); then
# its client goes away, and its recording ends.
curl -s -o /dev/null "$U/profile?seconds=20&pid=$lp" &
first=$!
# The first is recording once its process is attached.
recording() {
	[ "$(field all_targets "$($CTL version)")" = 1 ]
}
within 60 recording || fail "the first request did not start recording"
c=$(curl -s -o "$W/body" -D "$W/hdr" -w '%{http_code}' "$U/profile?seconds=1&pid=$lp")
[ "$c" = 429 ] || fail "a second request during the first: $c $(head -c 300 "$W/body")"
grep -qi '^Retry-After: ' "$W/hdr" || fail "429 without Retry-After: $(cat "$W/hdr")"
kill $first
wait $first 2>/dev/null
gone() {
	grep -q '408 the client went away' "$W/serve.log"
}
within 30 gone || fail "the recording of a client gone did not end: $(tail -3 "$W/serve.log")"
v=$($CTL version)
[ "$(field all_targets "$v")" = 0 ] || fail "attached after the client went away: $v"
kill -TERM $sp
wait $sp || fail "serve did not end well on SIGTERM"

# Anywhere but loopback: a token or nothing.
$CTL serve --listen 0.0.0.0:6061 >"$W/open.log" 2>&1 && fail "serve on 0.0.0.0 started without a token"
grep -q 'give --token-file' "$W/open.log" || fail "serve on 0.0.0.0: $(cat "$W/open.log")"
echo 's3cret-token' >"$W/token"
$CTL serve --listen 0.0.0.0:6061 --token-file "$W/token" >"$W/tok.log" 2>&1 &
sp=$!
kids="$kids $sp"
within 60 grep -q 'listening on' "$W/tok.log" || fail "serve with a token: $(cat "$W/tok.log")"
T6=http://127.0.0.1:6061/debug/pprof
c=$(code "$T6/profile?seconds=1&pid=$lp")
[ "$c" = 401 ] || fail "no token: $c"
c=$(code -H 'Authorization: Bearer s3cret-tokeN' "$T6/profile?seconds=1&pid=$lp")
[ "$c" = 401 ] || fail "a wrong token: $c"
c=$(code -H 'Authorization: Bearer s3cret-token' "$T6/profile?seconds=1&pid=$lp")
[ "$c" = 200 ] || fail "the token: $c $(cat "$W/body")"
kill -TERM $sp
wait $sp || fail "serve (token) did not end well"
v=$($CTL version)
[ "$(field all_targets "$v")" = 0 ] || fail "attached after serve: $v"
pass "CPU, exe= and off-CPU profiles read by go tool pprof; 404, 400, 429, a client gone, 401"
