#!/bin/sh
# Attaching or closing a large session stalls no other session (issue 24,
# item 3).  A session attaches a target of 4000 threads (4001 perf events)
# or closes after it, while another session issues LUW_IOC_STATS back to
# back, timing each call.  The attach's event creation runs under its own
# session's lock and the close's teardown (perf's, and the RCU grace
# period after it) under none, so the slowest call is a scheduling tick or
# two, far less than the attach or the close.  With those under the
# module's global lock, the calls waited for most of it: before the fixes
# the slowest was 0.5 to 1.0 of a close in each of 5 rounds, and of an
# attach likewise (0.1 or less after, on 6.1).  A loaded host stretches a
# call now and then (a vCPU descheduled: 6 to 600 ms seen, on closes of
# 40 ms), which no timing from inside the guest tells from a wait on a
# lock.  So rounds go on until three are under two fifths, ten at most: a
# lock held across the operation keeps every round at half or more and
# fails, while a round the host stretched only costs another (two fifths,
# not half, so that more rounds give a stall no more chances; closes on
# 6.1 came to 0.06-0.28 in CI's runs).
. tests/kernel/lib.sh
load
$K/ucaps threads 4000 >"$W/threads" &
big=$!; kids="$kids $big"; execd $big $K/ucaps
# 4000 threads start in seconds on 6.1; the debug kernel beside three
# other guests on two host cores got 3000 of them in 120 s.
within 500 test -s "$W/threads" && [ "$(cat "$W/threads")" = "4000 ok" ] ||
	fail "the target did not start its threads: $(cat "$W/threads")"
for op in attach close; do
	good=0 rounds=0
	while [ "$good" -lt 3 ] && [ "$rounds" -lt 10 ]; do
		rounds=$((rounds + 1))
		out=$($K/closestall $op $big) || fail "closestall $op: $out"
		echo "t_closestall: $op $out"
		c=$(field op_us "$out")
		m=$(field max_stats_us "$out")
		[ $((m * 5)) -lt $((c * 2)) ] && good=$((good + 1))
	done
	[ "$good" -ge 3 ] ||
		fail "another session's ioctl waited two fifths of the $op or more in $((rounds - good)) of $rounds"
	eval "good_$op=$good rounds_$op=$rounds"
done
unload
pass "another session's ioctls under two fifths of the time of $good_attach of $rounds_attach attaches and $good_close of $rounds_close closes"
