#!/bin/sh
# Attach from a chroot whose /proc/sys/kernel/perf_event_max_sample_rate
# is not the sysctl (issue 24, item 1).  The module once read that path
# from the caller's root while holding its global lock: a device node of
# /dev/luaunwind there re-entered the lock (the caller hung in D state, and
# with it every user of the module); a FIFO blocked everyone until a writer
# came; a regular file let the caller pick the admin's limit.  Now attach
# reads no file, so each returns at once and other users go on; and the
# admin's limit is perf's own throttle, which a file in a chroot cannot
# change: at 4000 Hz asked, a spinner gets no more samples per CPU second
# than perf_event_max_sample_rate allows.
. tests/kernel/lib.sh
load
# Device nodes need a file system of the guest's own (the shared one
# refuses them).
root=$W/root
mkdir -p "$root"
mount -t tmpfs tmpfs "$root" || fail "cannot mount a tmpfs on $root"
mkdir -p "$root/proc/sys/kernel" "$root/dev"
cp $K/try_attach.static "$root/try_attach"
devno=$(cat /sys/class/misc/luaunwind/dev)
mknod "$root/dev/luaunwind" c "${devno%:*}" "${devno#*:}"
knob=$root/proc/sys/kernel/perf_event_max_sample_rate
bg $K/spin
target=$last

# run_chroot WHAT ARGS...: try_attach in the chroot, in the background;
# its output in $W/WHAT.out, its status returned, or 124 if it has not
# returned after 300 s of guest uptime ($stuck is then its pid).  A call
# stuck on the module's lock or on the FIFO never returns; the margin is
# for a slow guest: beside three other guests and a build on the two
# cores, a debug-kernel guest took over 30 s to run `luaunwind-ctl
# version` (others, below), with the module not stalled (the tests after
# it in that boot passed).
run_chroot() {
	local what=$1 pid
	shift
	chroot "$root" /try_attach "$@" >"$W/$what.out" 2>&1 &
	pid=$!
	if ! within 300 eval "! kill -0 $pid 2>/dev/null"; then
		stuck=$pid
		return 124
	fi
	wait $pid
}

# others: whether another process's ioctl still returns (within 300 s,
# as run_chroot).
others() {
	local pid
	$CTL version >/dev/null 2>&1 &
	pid=$!
	if within 300 eval "! kill -0 $pid 2>/dev/null"; then
		echo "others go on"
	else
		echo "another process's ioctl hangs too"
	fi
}

# A device node of the module itself at the sysctl's path.  Stuck, the
# caller cannot be woken: the guest is lost for the tests after this one.
mknod "$knob" c "${devno%:*}" "${devno#*:}"
run_chroot node $target
rc=$?
[ $rc -ne 124 ] || fail "node: attach from the chroot did not return in 300 s ($(others))"
[ $rc -eq 0 ] && [ "$(cat "$W/node.out")" = ok ] || fail "node: $(cat "$W/node.out")"
[ "$(others)" = "others go on" ] || fail "node: the module stalls other users"

# A FIFO nobody writes to (on failure, written to, so the caller returns).
rm -f "$knob"
mkfifo "$knob"
run_chroot fifo $target
rc=$?
if [ $rc -eq 124 ]; then
	msg=$(others)
	echo 1000 >"$knob"
	wait "$stuck"
	fail "fifo: attach from the chroot waited on the FIFO ($msg)"
fi
[ $rc -eq 0 ] && [ "$(cat "$W/fifo.out")" = ok ] || fail "fifo: $(cat "$W/fifo.out")"

# A regular file that raises the limit, while the real one is 250: perf
# allows ceil(250 / HZ) interrupts per tick and event, 250 a second at
# Debian's HZ=250 (the guest delivers 600-700 a second unthrottled).
rm -f "$knob"
echo 100000 >"$knob"
kdir=$(scripts/kver.sh --kdir "$LUW_KVER") || fail "no build tree for $LUW_KVER"
HZ=$(sed -n 's/^CONFIG_HZ=//p' "$kdir/include/config/auto.conf")
[ -n "$HZ" ] || fail "no CONFIG_HZ in $kdir"
admin=250
cap=$(((admin + HZ - 1) / HZ * HZ))
rate=/proc/sys/kernel/perf_event_max_sample_rate
rate0=$(cat $rate)
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$target/stat"
}
# hold WHAT: samples per CPU second of the target at 4000 Hz asked, from
# the chroot; the CPU time spans a little more than the sampling (the
# chroot's start and end), which only lowers the figure.
hold() {
	local c0 c1 out
	c0=$(cpu_ticks)
	run_chroot "$1" $target hold 4000 5 || fail "$1: $(cat "$W/$1.out")"
	c1=$(cpu_ticks)
	out=$(cat "$W/$1.out")
	case $out in
	"ok samples="*) ;;
	*) fail "$1: $out" ;;
	esac
	awk -v n="${out#ok samples=}" -v t=$((c1 - c0)) \
	    -v tck="$(getconf CLK_TCK)" 'BEGIN {
		if (t < tck / 2)
			exit 1
		printf "%d\n", n / (t / tck)
	}' || fail "$1: the target ran $((c1 - c0)) ticks in 5 s"
}
echo $admin >$rate || fail "cannot set $rate"
got=$(hold file)
# luaunwind-ctl refuses such a rate itself, as perf record does.
out=$($CTL attach $target --freq 999 --no-lua 2>&1) &&
	fail "luaunwind-ctl attached at 999 Hz over the admin's $admin"
case $out in
*"999 Hz is above /proc/sys/kernel/perf_event_max_sample_rate ($admin Hz)"*) ;;
*) fail "luaunwind-ctl at 999 Hz over $admin: $out" ;;
esac
echo $rate0 >$rate
# For the record: what the guest gives at the boot's limit.
free=$(hold free)
echo "t_chroot: $got samples per CPU second at 4000 Hz asked, admin's limit $admin (cap $cap at HZ=$HZ); $free at the boot's limit $rate0"
[ "$got" -gt 0 ] && [ "$got" -le $((cap * 11 / 10 + 10)) ] ||
	fail "file: $got samples per CPU second, more than the admin's $admin allows (or none)"
umount "$root"
unload
pass
