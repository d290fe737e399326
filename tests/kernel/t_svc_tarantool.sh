#!/bin/sh
# Debian's tarantool 2.6 running 4 fibers of Lua work
# (svc/tarantool.lua, svc/tarantool_app.lua), JIT off, recorded for 6 s:
#  - samples in leaf() read, root first, coro_init (the entry of a
#    fiber's stack); fiber_loop; fiber_cxx_invoke (demangled);
#    lua_fiber_run_f; luaT_call; lua_pcall; tarantool_app.worker (the
#    fiber function, named by the module field that holds it); mid; leaf,
#    in >= 90% of them;
#  - >= 95% of all samples rooted at a thread's or a fiber's entry;
#  - no garbage frame.
# Then svc/tarantool_box.lua, JIT on: 4 fibers of box work on a memtx
# space, their loop leaving its trace every other iteration, so that the
# trace exit handler runs GC steps that finalize tuples
# (lj_trace_exit;lj_gc_step;...;gc_call_finalizer;lbox_tuple_gc), recorded
# for 6 s:
#  - >= 95% of all samples rooted at a thread's or a fiber's entry (91%
#    before the walk went through the exit handler's frame to the trace's
#    activation: the finalizer's and trace_exit_cp's VM activations come
#    first); no garbage frame.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
start_svc tarantool ready tarantool tests/kernel/svc/tarantool.lua
record_svc tarantool 6

A='@[^;]*svc/tarantool_app\.lua'
leaf_chain tarantool leaf 100 "leaf $A:9" \
	"^coro_init;fiber_loop;fiber_cxx_invoke[^;]*;lua_fiber_run_f;luaT_call;lua_pcall;tarantool_app\\.worker $A:21;mid $A:17;leaf $A:9"
root=$(rooted "coro_init|_start|clone3|clone|start_thread")
# rooted_95 WHAT: >= 95% of $all samples rooted ($root).
rooted_95() {
	[ $((100 * root)) -ge $((95 * all)) ] || {
		grep -Ev '^(coro_init|_start|clone3|clone|start_thread);' "$f" |
			sort -t' ' -k2 -rn | head -5 | cut -c1-300 >&2
		fail "$1: $root of $all samples rooted at a thread's or fiber's entry"
	}
}
rooted_95 tarantool
msg="$all samples, leaf chain $good/$nleaf, rooted $root/$all;"

# Box work, JIT on.  box needs a writable directory off the 9p share.
run=$(mktemp -d /tmp/tt.XXXXXX) || fail "mktemp"
start_svc tarantool_box ready env TT_DIR="$run" tarantool tests/kernel/svc/tarantool_box.lua
record_svc tarantool_box 6
all=$(sum '')
nexit=$(sum -E '(^|;)lj_trace_exit;')
[ "$nexit" -ge 50 ] || fail "tarantool box: only $nexit of $all samples under lj_trace_exit"
root=$(rooted "coro_init|_start|clone3|clone|start_thread")
rooted_95 "tarantool box"
msg="$msg box (JIT): $all samples, $nexit under lj_trace_exit, rooted $root/$all"
unload
pass "$msg"
