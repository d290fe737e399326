#!/bin/sh
# Device permission: mode 0600, and without CAP_PERFMON/CAP_SYS_ADMIN
# open() is EPERM even when the file mode lets the caller in.
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
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon \
	--ambient-caps=+perfmon $CTL version >/dev/null ||
	fail "nobody with CAP_PERFMON cannot open"
unload
pass
