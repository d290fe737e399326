#!/bin/sh
# A raw capture -- attach, then `luaunwind-ctl dump --raw` (the records of
# the kept session, as read from /dev/luaunwind) -- is
# reported with `luaunwind-report --pid PID raw.bin`, named against the
# live process: the same merged lua_payload and c_payload stacks as a
# recorded file.  Garbage instead of records is refused with exit 2.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
load
start_lua luajit $WL/payload_stock.lua nojit 3600 $K
$CTL attach "$pid" --freq 999 >"$W/attach.out" 2>&1 ||
	{ cat "$W/attach.out" >&2; fail "attach"; }
$CTL dump --raw --duration 3 >"$W/raw.bin" || fail "dump --raw"
$CTL detach "$pid" || fail "detach"
[ -s "$W/raw.bin" ] || fail "dump --raw read nothing"
$REP --pid "$pid" "$W/raw.bin" >"$W/raw.folded" 2>"$W/raw.err" ||
	{ cat "$W/raw.err" >&2; fail "report --pid"; }
stop_lua
f=$W/raw.folded
total=$(sum '')
p='@[^;]*payload_stock\.lua'
lua=$(sum "lua_pcall;main chunk $p:0;lua_payload $p:8")
c=$(sum "lua_pcall;main chunk $p:0;ffi\.meta\.__call;.*;c_payload;c_payload")
# The loop's os.clock (a system call in clock(); 10% of the samples on the
# debug kernel) under the main chunk is as right a stack.
clk=$(sum "lua_pcall;main chunk $p:0;os\.clock;")
[ "$total" -ge 300 ] || fail "only $total samples"
[ $((100 * (lua + c + clk))) -ge $((90 * total)) ] ||
	fail "$lua + $c + $clk os.clock of $total samples have the payload shape"
head -c 1000 /dev/urandom >"$W/junk.bin"
$REP --pid $$ "$W/junk.bin" >/dev/null 2>"$W/junk.err"
rc=$?
[ $rc -eq 2 ] || fail "junk capture: exit $rc, want 2"
grep -q 'malformed record' "$W/junk.err" || fail "junk capture: $(cat "$W/junk.err")"
pass "$total samples: $lua lua_payload, $c c_payload"
