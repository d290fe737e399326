#!/bin/sh
# Debian's tarantool 2.6 running 4 fibers of Lua work
# (svc/tarantool.lua, svc/tarantool_app.lua), JIT off, recorded for 6 s:
#  - samples in leaf() read, root first, coro_init (the entry of a
#    fiber's stack); fiber_loop; fiber_cxx_invoke (demangled);
#    lua_fiber_run_f; luaT_call; lua_pcall; tarantool_app.worker (the
#    fiber function, named by the module field that holds it); mid; leaf,
#    in >= 90% of them;
#  - >= 90% of all samples rooted at a thread's or a fiber's entry;
#  - no garbage frame.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
start_svc tarantool ready tarantool tests/kernel/svc/tarantool.lua
$CTL record -p "$pid" -o "$W/tt.luw" --duration 6 2>"$W/tt.err" ||
	{ cat "$W/tt.err" >&2; fail "record -p $pid"; }
kill "$pid"
report "$W/tt.luw"
no_garbage tarantool

A='@[^;]*svc/tarantool_app\.lua'
all=$(sum '')
nleaf=$(sum -E ";leaf $A:9( [0-9]+\$|;)")
[ "$nleaf" -ge 100 ] || fail "only $nleaf of $all samples in leaf()"
good=$(sum -E "^coro_init;fiber_loop;fiber_cxx_invoke[^;]*;lua_fiber_run_f;luaT_call;lua_pcall;tarantool_app\\.worker $A:21;mid $A:17;leaf $A:9( [0-9]+\$|;)")
need_most tarantool "$good" "$nleaf" "samples in leaf() with the whole chain"
root=$(rooted "coro_init|_start|clone3|clone|start_thread")
need_most tarantool "$root" "$all" "samples rooted at a thread's or fiber's entry"
unload
pass "$all samples, leaf chain $good/$nleaf, rooted $root/$all"
