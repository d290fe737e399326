#!/bin/sh
# Design section 6, shapes 3 and 4, through record + report on the three
# targets (Debian's luajit, OpenResty's luajit2, tarantool 2.6): the rules
# of the raw-record tests t_lua_shapes and t_lua_coro read as the
# report's merged frame text.  t_rec_jitsw_targets does shapes 5 and 2.
#  - shape 4, all three: a sample in leaf() reads, root first, the main
#    chunk; pcall; prot (24); the handler mt.__index (19); va (11, not
#    tail: the tail call reused tail()'s frame and return position, and
#    names come from the definitions, not the call sites); leaf (6) --
#    all named by their definitions -- and no frame for tail()
#    (15) anywhere; string.rep called from rep() (31) is named as the
#    fast function;
#  - shape 3, luajit2 and tarantool (t_rec_shapes does Debian's luajit):
#    a sample in work(), inside a coroutine, reads main chunk; resumer;
#    coroutine.resume; body (unnamed: a coroutine's first function has
#    no calling instruction); work.
# Every target's stacks run from its host's lua_pcall (luajit's main
# through lua_cpcall, tarantool's luaT_call).
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
load
msg=
for name in luajit luajit2 tarantool; do
	s='@[^;]*shapes\.lua'
	rec $name shapes 3 $WL/shapes.lua
	nleaf=$(sum -E "$s:6 [0-9]+\$")
	[ "$nleaf" -ge 50 ] || fail "$name shapes: only $nleaf samples in leaf()"
	good=$(sum -E "lua_pcall;main chunk $s:0;pcall;prot $s:24;mt\.__index $s:19;va $s:11;leaf $s:6 [0-9]+\$")
	most $name shapes "$good" "$nleaf" "samples in leaf() have the whole chain"
	! grep -q "$s:15;" "$f" || fail "$name shapes: the tail-called frame is shown below its callee"
	nrep=$(sum -E "lua_pcall;main chunk $s:0;rep $s:31;string\\.rep[; ]")
	[ "$nrep" -ge 1 ] || fail "$name shapes: no sample in string.rep called from rep()"
	msg="$msg $name: shapes $good/$nleaf, string.rep $nrep;"
	[ $name = luajit ] && continue

	c='@[^;]*coro\.lua'
	rec $name coro 3 $WL/coro.lua
	nw=$(sum "work $c:4 [0-9]*\$")
	[ "$nw" -ge 100 ] || fail "$name coro: only $nw samples in work()"
	good=$(sum "lua_pcall;main chunk $c:0;resumer $c:16;coroutine\.resume;body $c:9;work $c:4 [0-9]*\$")
	most $name coro "$good" "$nw" "samples in work() have the full shape"
	msg="$msg coro $good/$nw;"
done
unload
pass "$msg"
