#!/bin/sh
# Debian's sysbench (one LuaJIT state per thread, Debian's libluajit)
# running svc/sysbench.lua on 3 threads, JIT off, recorded for 6 s:
#  - samples in leaf() read, root first, clone3; start_thread ... lua_pcall;
#    thread_run (sysbench's own Lua loop); pcall; event (the entry point
#    sysbench calls; both named by the global that holds them, their
#    chunks having finished); run; mid; leaf (named by their call sites),
#    in >= 90% of them;
#  - >= 90% of all samples rooted at the thread's entry (clone3 or
#    start_thread; _start for the main thread);
#  - every thread's Lua frames are its own state's (@sbwork<tid>.lua):
#    no thread shows another's chunk; no garbage frame.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
start_svc sysbench 'Threads started' \
	sysbench tests/kernel/svc/sysbench.lua --threads=3 --time=120 --events=0 run
record_svc sysbench 6 --by-tid
one_universe sysbench 'sbwork[0-9]+\.lua'

S='@[^;]*svc/sysbench\.lua'
B='@sbwork[0-9]+\.lua'
I='@\[string "sysbench\.lua"\]'
leaf_chain sysbench leaf 100 "leaf $B:3" \
	"^[^;]*;(clone3;)?start_thread;(.*;)?lua_pcall;thread_run $I:[0-9]+;pcall;event $S:38;run $B:15;mid $B:11;leaf $B:3"
nt=$(grep -E ";leaf $B:3( [0-9]+\$|;)" "$f" | cut -d';' -f1 | sort -u | wc -l)
[ "$nt" -ge 3 ] || fail "leaf() sampled in $nt threads, not 3"
root=$(rooted '_start|clone3|clone|start_thread' 1)
need_most sysbench "$root" "$all" "samples rooted at the thread's entry"
unload
pass "$all samples, leaf chain $good/$nleaf in $nt threads, rooted $root/$all"
