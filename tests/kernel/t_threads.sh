#!/bin/sh
# 32 threads created after the attach are all sampled; two processes
# attached at once are both sampled.
. tests/kernel/lib.sh
load
$K/spin_threads 32 "$W/go" 4 &
pid=$!
kids="$kids $pid"
execd $pid $K/spin_threads
bg $K/spin; other=$last
$CTL attach $pid --freq 999 --no-lua || fail "attach"
$CTL attach $other --freq 999 --no-lua || fail "attach second"
touch "$W/go"
$CTL dump --duration 4 >"$W/dump" || fail "dump"
tids=$(grep "^sample pid=$pid " "$W/dump" | sed 's/.* tid=\([0-9]*\) .*/\1/' | sort -u | grep -vx "$pid" | wc -l)
n=$(grep -c "^sample pid=$pid " "$W/dump")
m=$(grep -c "^sample pid=$other " "$W/dump")
# 32 threads share 2 CPUs for 4 s at 999 Hz: thousands of samples, so
# every thread is expected; allow a few to be unlucky.
[ "$tids" -ge 28 ] || fail "samples from only $tids of 32 threads ($n samples)"
[ "$m" -ge 50 ] || fail "only $m samples of the second target"
bad=$(grep '^sample' "$W/dump" | grep -cv -e "pid=$pid " -e "pid=$other ")
[ "$bad" -eq 0 ] || fail "$bad samples of processes not attached"
wait $pid
unload
pass "$tids threads in $n samples; second target $m samples"
