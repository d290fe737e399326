#!/bin/sh
# rmmod while targets are attached and sampling: refused (in use) while a
# reader holds the device open, clean once it is closed; the targets run
# on, and the module loads and works again; also right after a table
# replacement.
. tests/kernel/lib.sh
module_held() {
	[ "$(cat /sys/module/luaunwind/refcnt)" -gt 0 ]
}
for round in 1 2 3; do
	load
	bg $K/spin; a=$last
	bg $K/spin_threads 8 /nonexistent 1000; b=$last
	$CTL attach $a --freq 4999 --no-lua || fail "attach"
	$CTL attach $b --freq 4999 --no-lua || fail "attach 2"
	$CTL dump --duration 30 >/dev/null &
	reader=$!
	# The reader opens the device when it gets the CPU, which in a
	# loaded debug guest can take longer than any fixed wait: an open
	# file is what holds the module (attached targets do not).
	within 120 module_held || fail "the reader did not open the device"
	rmmod luaunwind 2>/dev/null && fail "rmmod succeeded with the device open"
	kill $reader; wait $reader
	sleep 0.5
	unload
	kill -0 $a && kill -0 $b || fail "a target died with the module"
	kill $a $b; wait $a $b 2>/dev/null
done
# rmmod right after a table replacement: the replaced table is freed by an
# RCU callback in module code, which unload waits for (6.12's lazy RCU
# can hold such a callback for seconds).
for round in 1 2 3 4 5; do
	load
	bg $K/spin 60; s=$last
	out=$($K/try_attach $s replace)
	[ "$out" = ok ] || fail "attach + table replacement: $out"
	unload
	kill $s; wait $s 2>/dev/null
done
pass
