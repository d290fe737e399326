#!/bin/bash
# luaunwind-ctl's errors that need no module: usage (exit 1, usage text),
# a PID that does not exist (one of several -p too), a PID given twice,
# selections that contradict each other or name no file,
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
# Selections: one kind at a time, --children with -p, an executable that is.
expect 1 '^usage: luaunwind-ctl record' "$ctl" record --all
expect 1 '--children needs -p PID' "$ctl" record --children -o "$tmp/x.luw"
expect 1 '--children is for -p alone' "$ctl" record -p 1 --children --comm x -o "$tmp/x.luw"
expect 1 '-p names processes; --all, --exe and --comm select them' "$ctl" record -p 1 --comm luajit -o "$tmp/x.luw"
expect 1 '--all selects every LuaJIT process: not with --exe or --comm' "$ctl" record --all --comm x -o "$tmp/x.luw"
expect 1 '--exe /no/such/file: No such file or directory' "$ctl" record --exe /no/such/file -o "$tmp/x.luw"
[ ! -e "$tmp/x.luw" ] || { echo "FAIL: record left a file for a bad -p list"; fail=1; }
if [ ! -e /dev/luaunwind ]; then
	expect 1 'the module is not loaded: insmod [^ ]*luaunwind\.ko' "$ctl" attach $$
	expect 1 'the module is not loaded: insmod [^ ]*luaunwind\.ko' "$ctl" status
else
	echo "skip: /dev/luaunwind exists here, the not-loaded message is not reachable"
fi
exit $fail
