#!/bin/sh
# Design section 6, shapes 5 and 2, through record + report on OpenResty's
# luajit2 and tarantool 2.6 (t_rec_shapes and t_rec_sandwich do Debian's
# luajit); t_rec_shapes_targets does shapes 3 and 4.
#  - shape 5, the RFC payload with the JIT on: as t_lua_jit wants of the
#    raw records, a sample taken in a trace (vmstate TRACE) reads, root
#    first, the host's lua_pcall; the main chunk; only lua_payload frames;
#    TRACE_n @payload_stock.lua:line; then nothing but c_payload (a
#    compiled FFI call);
#  - shape 2, the sandwich of t_rec_sandwich: main chunk; outer;
#    sw_call_back, once; lua_call where the target's build gave it a
#    frame of its own; inner (unnamed: called from C); the FFI chain up
#    to c_leaf.  rec_sandwich.so is built against Debian's headers: the
#    lua_* ABI is the same in the three, and each target's executable or
#    libluajit provides the symbols.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
cc -O2 -fPIC -shared -fomit-frame-pointer -I/usr/include/luajit-2.1 \
	-o "$W/rec_sandwich.so" tests/kernel/rec_sandwich.c ||
	fail "building rec_sandwich.so"
load
msg=
for name in luajit2 tarantool; do
	p='@[^;]*payload_stock\.lua'
	rec $name jit 4 $WL/payload_stock.lua jit 3600 $K
	$REP --vmstates "$W/$name-jit.luw" >"$W/$name-jit.vmstates" ||
		fail "$name jit: --vmstates"
	ntr=$(sed -n 's/^TRACE	//p' "$W/$name-jit.vmstates")
	[ "${ntr:-0}" -ge 50 ] || fail "$name jit: only ${ntr:-0} TRACE samples"
	good=$(sum -E "lua_pcall;main chunk $p:0;(lua_payload $p:8;)*TRACE_[0-9]+ $p:[0-9]+(;c_payload)* [0-9]+\$")
	most $name jit "$good" "$ntr" "TRACE samples are main -> lua_payload* -> trace -> c_payload*"
	msg="$msg $name: jit $good/$ntr;"

	r='@[^;]*rec_sandwich\.lua'
	rec $name sw 4 tests/kernel/rec_sandwich.lua "$W"
	total=$(sum '')
	good=$(sum -E "lua_pcall;main chunk $r:0;outer $r:17;sw_call_back;(lua_call;)?inner $r:13;[^@]*c_leaf;c_leaf")
	most $name sw "$good" "$total" "samples have the full sandwich"
	[ "$(grep -c 'sw_call_back;.*sw_call_back' "$f")" -eq 0 ] ||
		fail "$name sw: the C function appears twice"
	msg="$msg sandwich $good/$total;"
done
unload
pass "$msg"
