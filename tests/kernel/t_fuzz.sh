#!/bin/sh
# Our ioctl fuzzer for LUW_FUZZ_SECONDS (default 60) with live targets
# (one of them LuaJIT, for random layout descriptors),
# then the module must still work and unload.
. tests/kernel/lib.sh
load
bg $K/spin; p1=$last
bg $K/spin_threads 4 /nonexistent 1000; p2=$last
# A LuaJIT target (JIT on: traces too): random layout descriptors are
# derived from its real one.
bg luajit tests/fixtures/workloads/payload_stock.lua jit 1000 $K; p3=$last
sleep 1
seed=${LUW_FUZZ_SEED:-$(date +%s)}
$K/ioctl_fuzz "${LUW_FUZZ_SECONDS:-60}" "$seed" $p1 $p2 L$p3 $$ 1 ||
	fail "ioctl_fuzz (seed $seed)"
kill -0 $p1 && kill -0 $p2 && kill -0 $p3 || fail "a fuzzing target died"
unload
pass "seed $seed"
