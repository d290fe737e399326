#!/bin/bash
# luaunwind-ctl's errors that need no module: usage (exit 1, usage text),
# a PID that does not exist, and -- where /dev/luaunwind is absent, as on
# a machine that cannot load modules -- the insmod to run.  The errors
# that need the module (permission, not LuaJIT, unknown layout) are
# checked in the guest (tests/kernel/t_perm.sh, t_lua_badlayout.sh).
set -u
ctl=$1/luaunwind-ctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect STATUS REGEX(stderr) ARGS...
expect() {
	local want=$1 re=$2 got
	shift 2
	"$ctl" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" != "$want" ] || ! grep -Eq -- "$re" "$tmp/err"; then
		echo "FAIL: luaunwind-ctl $* -> exit $got (want $want), stderr:"
		cat "$tmp/err"
		fail=1
	else
		echo "ok: luaunwind-ctl $* -> $got: $(head -1 "$tmp/err")"
	fi
}

expect 1 '^usage: luaunwind-ctl' attach
expect 1 "^usage: luaunwind-ctl" bogus
expect 1 "^usage: luaunwind-ctl" detach
expect 1 "mode" attach 1 --mode sideways
expect 1 '^usage: luaunwind-ctl' record
# A pid above pid_max: no such process, before the device is opened.
expect 1 'no process 2147483647' record -p 2147483647 -o "$tmp/x.luw"
[ ! -e "$tmp/x.luw" ] || { echo "FAIL: record left a file for a missing process"; fail=1; }
if [ ! -e /dev/luaunwind ]; then
	expect 1 'the module is not loaded: insmod [^ ]*luaunwind\.ko' attach $$
	expect 1 'the module is not loaded: insmod [^ ]*luaunwind\.ko' status
else
	echo "skip: /dev/luaunwind exists here, the not-loaded message is not reachable"
fi
exit $fail
