#!/bin/sh
# Coroutines (design section 6, shape 3): a sample in work(), inside a
# coroutine, shows body() (marked as the coroutine's first frame),
# coroutine.resume and the resumer's frames below it, down to the main
# chunk -- on all three targets.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
load
msg=
for name in luajit luajit2 tarantool; do
	start_lua $name $WL/coro.lua
	record $name 3
	stop_lua
	f=$W/$name.stacks
	nw=$(stack_of <"$f" | grep -c '^lua:[^;]*coro\.lua:4:')
	good=$(stack_of <"$f" | grep -Ec '^lua:[^;]*coro\.lua:4:[0-9?]+;lua:[^;]*coro\.lua:9:[0-9?]+;ff:coroutine\.resume;lua:[^;]*coro\.lua:16:[0-9?]+;lua:[^;]*coro\.lua:0:[0-9?]+;')
	[ "$nw" -ge 100 ] || fail "$name: only $nw samples in work()"
	if [ $((100 * good)) -lt $((90 * nw)) ]; then
		stack_of <"$f" | grep '^lua:[^;]*coro\.lua:4:' | head -3 >&2
		fail "$name: $good of $nw samples in work() show body, resume, resumer, main"
	fi
	msg="$msg $name: $good/$nw;"
done
unload
pass "$msg"
