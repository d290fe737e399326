#!/bin/bash
# luaunwind-ctl's errors that need no module: usage (exit 1, usage text),
# a PID that does not exist (one of several -p too), a PID given twice,
# and -- where /dev/luaunwind is absent, as on
# a machine that cannot load modules -- the insmod to run.  The errors
# that need the module (permission, not LuaJIT, unknown layout) are
# checked in the guest (tests/kernel/t_perm.sh, t_lua_badlayout.sh).
set -u
ctl=$1/luaunwind-ctl
. "$(dirname "$0")/../common/testlib.sh"

expect 1 '^usage: luaunwind-ctl' "$ctl" attach
expect 1 '^usage: luaunwind-ctl' "$ctl" bogus
expect 1 '^usage: luaunwind-ctl' "$ctl" detach
expect 1 'mode' "$ctl" attach 1 --mode sideways
expect 1 '^usage: luaunwind-ctl' "$ctl" record
# A pid above pid_max: no such process, before the device is opened.
expect 1 'no process 2147483647' "$ctl" record -p 2147483647 -o "$tmp/x.luw"
[ ! -e "$tmp/x.luw" ] || { echo "FAIL: record left a file for a missing process"; fail=1; }
# Several -p: each one must exist, none twice.
expect 1 'no process 2147483647' "$ctl" record -p $$ -p 2147483647 -o "$tmp/x.luw"
expect 1 'pid 1 given twice' "$ctl" record -p 1 -p 1 -o "$tmp/x.luw"
[ ! -e "$tmp/x.luw" ] || { echo "FAIL: record left a file for a bad -p list"; fail=1; }
if [ ! -e /dev/luaunwind ]; then
	expect 1 'the module is not loaded: insmod [^ ]*luaunwind\.ko' "$ctl" attach $$
	expect 1 'the module is not loaded: insmod [^ ]*luaunwind\.ko' "$ctl" status
else
	echo "skip: /dev/luaunwind exists here, the not-loaded message is not reachable"
fi
exit $fail
