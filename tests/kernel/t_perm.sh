#!/bin/sh
# Device permission: mode 0600, and without CAP_PERFMON/CAP_SYS_ADMIN
# open() is EPERM even when the file mode lets the caller in.  Attach asks
# what ptrace read access would: another user's process and a
# non-dumpable one are refused to a CAP_PERFMON user, allowed to root
# (CAP_SYS_PTRACE); a process with one thread of another user is refused
# to that user as well.  A descriptor passed between users (SCM_RIGHTS)
# gives neither more than both have.  And sessions are private: that user
# neither sees nor touches root's targets.
. tests/kernel/lib.sh
load
mode=$(stat -c '%a %U' /dev/luaunwind)
[ "$mode" = "600 root" ] || fail "/dev/luaunwind is '$mode', want '600 root'"
$CTL version >/dev/null || fail "root cannot open"

# nobody, mode 0600: the file mode stops it first.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $CTL version 2>&1) &&
	fail "nobody opened a 0600 device"
echo "$out" | grep -q "Permission denied" || fail "nobody on 0600: $out"

chmod 0666 /dev/luaunwind
# nobody, mode 0666: the module itself refuses.
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $CTL version 2>&1) &&
	fail "nobody opened the device"
echo "$out" | grep -q "Operation not permitted" || fail "nobody: $out"
# root without any capability: refused too.
out=$(setpriv --inh-caps=-all --bounding-set=-all $CTL version 2>&1) &&
	fail "capability-less root opened the device"
echo "$out" | grep -q "Operation not permitted" || fail "root without caps: $out"
# nobody with CAP_PERFMON alone: allowed.
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon"
$AS_NOBODY $CTL version >/dev/null || fail "nobody with CAP_PERFMON cannot open"

# ---- attach: ptrace read access ------------------------------------------
# Idle targets: the checks need none running, and CPU burners made this
# test take minutes on the debug kernel.
bg sleep 3600; rootpid=$last
touch /tmp/go_perm
setpriv --reuid=65534 --regid=65534 --clear-groups $K/spin_exec /tmp/go_perm --idle &
own=$!; kids="$kids $own"; execd $own $K/spin_exec
setpriv --reuid=65534 --regid=65534 --clear-groups $K/spin_exec /tmp/go_perm --nodump --idle &
nodump=$!; kids="$kids $nodump"; execd $nodump $K/spin_exec
out=$($AS_NOBODY $K/try_attach $own)
[ "$out" = ok ] || fail "nobody cannot attach to its own process: $out"
out=$($AS_NOBODY $K/try_attach $rootpid)
[ "$out" = EPERM ] || fail "nobody attached to root's process: $out"
out=$($AS_NOBODY $K/try_attach $nodump)
[ "$out" = EPERM ] || fail "nobody attached to its non-dumpable process: $out"
out=$($K/try_attach $nodump)
[ "$out" = ok ] || fail "root cannot attach to a non-dumpable process: $out"
# A same-user attach asks for CAP_SYS_PTRACE without an audit record: no
# capability denial in the kernel log.
! dmesg | grep -qi 'denied.*sys_ptrace' || fail "capability denial logged"

# Every thread's ids count, not the leader's alone: a process whose leader
# runs as nobody and whose second thread is still root.
rm -f /tmp/mixcred_ready
$K/mixcred 65534 /tmp/mixcred_ready &
mixed=$!; kids="$kids $mixed"
within 120 test -e /tmp/mixcred_ready || fail "mixcred did not start"
out=$($AS_NOBODY $K/try_attach $mixed)
[ "$out" = EPERM ] || fail "nobody attached to a process with a root thread: $out"

# ---- a descriptor handed over SCM_RIGHTS ---------------------------------
# Attach and the kept session take both the opener's and the caller's
# credentials: the fd lends neither side what it lacks.
# passfd_case OPENER RECEIVER WHAT: "OPENER" and "RECEIVER" are command
# prefixes (setpriv ... or nothing for root); prints what the receiver saw.
passfd_case() {
	local sock=/tmp/passfd.sock pid
	rm -f $sock
	$2 $K/passfd recv $sock "$3" >$W/passfd.out 2>&1 &
	pid=$!
	within 120 test -S $sock || { kill $pid; echo "no socket"; return; }
	$1 $K/passfd send $sock >>$W/passfd.out 2>&1 || { kill $pid; }
	wait $pid
	cat $W/passfd.out
}
AS_NOBODY_NOCAPS="setpriv --reuid=65534 --regid=65534 --clear-groups"
out=$(passfd_case "" "$AS_NOBODY_NOCAPS" $own)
[ "$out" = EPERM ] || fail "root's fd let capability-less nobody attach: $out"
out=$(passfd_case "$AS_NOBODY" "" $rootpid)
[ "$out" = EPERM ] || fail "nobody's fd let root attach root's process: $out"
out=$(passfd_case "$AS_NOBODY" "$AS_NOBODY" $own)
[ "$out" = ok ] || fail "nobody's fd, passed to nobody, cannot attach its process: $out"
out=$(passfd_case "$AS_NOBODY" "" join)
[ "$out" = EPERM ] || fail "nobody's fd joined root's kept session: $out"

# ---- sessions are private ------------------------------------------------
$CTL attach $rootpid --freq 99 --no-lua >/dev/null || fail "root attach"
out=$($AS_NOBODY $CTL status | head -1)
[ "$out" = "targets=0" ] || fail "nobody sees root's session: $out"
$AS_NOBODY $CTL detach $rootpid 2>/dev/null && fail "nobody detached root's target"
$AS_NOBODY $CTL dump --nonblock >/dev/null 2>&1 && fail "nobody read root's session"
$CTL status | grep -q "pids=$rootpid" || fail "root's target gone"
# ... while the module counts every session's targets (a number only).
v=$($AS_NOBODY $CTL version)
[ "$(field all_targets "$v")" -ge 1 ] || fail "version: $v"
$CTL detach $rootpid || fail "detach"
unload
pass
