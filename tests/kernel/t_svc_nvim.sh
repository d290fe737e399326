#!/bin/sh
# Debian's Neovim (0.7, on Debian's libluajit-5.1) headless with -u NONE,
# running svc/nvim.lua: a vim.loop (luv) timer calls nvim_work.tick from C
# every millisecond (svc/nvim_work.lua), JIT off; recorded for 5 s:
#  - samples in leaf() read, root first, _start; main; ...; the luv
#    callback's lua_pcall; nvim_work.tick (the entry point, named by the
#    module field that holds it); mid; leaf, in >= 90% of them;
#  - >= 90% of all samples rooted at a thread's entry;
#  - no garbage frame.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
start_svc nvim ready nvim --headless -u NONE -i NONE -n \
	-c 'luafile tests/kernel/svc/nvim.lua'
record_svc nvim 5

A='@[^;]*svc/nvim_work\.lua'
leaf_chain nvim leaf 100 "leaf $A:6" \
	"^_start;__libc_start_main;(.*;)?main;(.*;)?lua_pcall;nvim_work\\.tick $A:18;mid $A:14;leaf $A:6"
root=$(rooted "_start|clone3|clone|start_thread")
need_most nvim "$root" "$all" "samples rooted at a thread's entry"
unload
pass "$all samples, leaf chain $good/$nleaf, rooted $root/$all"
