#!/bin/sh
# A target that exits while being recorded is detached by the module
# itself, its samples stay readable, and so does a process whose leader
# leaves first (pthread_exit) while its threads run on.
. tests/kernel/lib.sh
load
# spin_exec spins until its go file goes, then exits.
touch "$W/go1"
$K/spin_exec "$W/go1" &
pid=$!
execd $pid $K/spin_exec
$CTL attach $pid --freq 999 --no-lua || fail "attach"
$CTL dump --duration 30 >"$W/dump" 2>"$W/dump.err" &
dumper=$!
# The samples to find after the exit, taken first: a loaded debug guest
# gives the spinner little CPU in a fixed wait (0 samples in 1.5 s once).
within 120 sampled $pid 100 || fail "fewer than 100 samples of $pid before its exit: $($CTL status $pid)"
rm "$W/go1"
wait $pid
# The exit probe wakes the reaper as the last thread exits (nothing polls:
# without the probe the target would stay); in a loaded guest its work
# item may wait long for the CPU.
detached() {
	$CTL status >"$W/status" && grep -q '^targets=0' "$W/status"
}
within 60 detached || fail "target $pid still attached after it exited: $(cat "$W/status")"
wait $dumper
n=$(grep -c "^sample pid=$pid " "$W/dump")
[ "$n" -ge 100 ] || fail "only $n samples of the exited target"
grep -q "^end pid=$pid reason=exit " "$W/dump" || fail "no end record for $pid"
# The session's own totals, printed by dump as it ends.
s=$(field samples "$(cat "$W/dump.err")")
[ "${s:-0}" -ge "$n" ] || fail "stats samples ${s:-none} < $n read: $(cat "$W/dump.err")"

# Leader exits at once; its 4 threads spin until the go file goes away
# (600 s at most: with 60, a debug guest beside two others may take that
# long to get from here to the dump, and the target ends by itself).
touch "$W/go"
$K/spin_threads 4 "$W/go" 600 leader-exit &
pid=$!
execd $pid $K/spin_threads
$CTL attach $pid --freq 999 --no-lua --no-tables || fail "attach threaded"
sleep 1
$CTL status | grep -q "pids=$pid" || fail "detached while its threads still run"
$CTL dump --nonblock >"$W/dump2"
grep "^sample pid=$pid " "$W/dump2" | grep -qv "tid=$pid " || fail "no samples from the threads"
rm "$W/go"
wait $pid
within 60 detached || fail "threaded target not detached after exit"
unload
pass "$n samples before exit"
