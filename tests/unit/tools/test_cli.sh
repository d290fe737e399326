#!/bin/bash
# Every program's command line: --help prints the usage on stdout and
# exits 0; an unknown option, a missing argument or a number that is not
# a whole one (trailing characters, overflow, out of range) exits 1 with
# the usage or the bad value named, before any work is done.
set -u
bin=$1
. "$(dirname "$0")/../common/testlib.sh"

for p in luaunwind-ctl luaunwind-report luaunwind-flamegraph \
	 luaunwind-hostunwind luaunwind-ljprobe; do
	"$bin/$p" --help >"$tmp/out" 2>"$tmp/err"
	if [ $? -ne 0 ] || ! grep -q "usage: $p" "$tmp/out" || [ -s "$tmp/err" ]; then
		echo "FAIL: $p --help"; cat "$tmp/err"; fail=1
	else
		echo "ok: $p --help -> 0"
	fi
	expect 1 . "$bin/$p" --no-such-option 1
done
ctl=$bin/luaunwind-ctl
# Each command's --help is its own usage: its synopsis, no other's.
for c in version attach detach start stop status record dump heap; do
	if "$ctl" $c --help >"$tmp/out" 2>&1 && grep -q "^usage: luaunwind-ctl $c" "$tmp/out" &&
	   [ "$(grep -c 'luaunwind-ctl [a-z]' "$tmp/out")" = "$(grep -c "luaunwind-ctl $c" "$tmp/out")" ]; then
		echo "ok: luaunwind-ctl $c --help"
	else
		echo "FAIL: luaunwind-ctl $c --help:"; cat "$tmp/out"; fail=1
	fi
done
grep -q -- '--comm NAME' <("$ctl" record --help) || { echo "FAIL: record --help names no --comm"; fail=1; }
expect 1 "bad pid '12x'" "$ctl" attach 12x
expect 1 "bad pid '99999999999999999999'" "$ctl" detach 99999999999999999999
expect 1 "bad frame count '70000'" "$ctl" attach 1 --max-host 70000
expect 1 "bad frequency '-5'" "$ctl" attach 1 --freq=-5
expect 1 '^usage: luaunwind-ctl' "$ctl" attach 1 --freq
expect 1 "bad count '3.5'" "$ctl" dump --count 3.5
expect 1 "bad duration '1s'" "$ctl" record -p 1 -o "$tmp/x.luw" --duration 1s
expect 1 '^usage: luaunwind-ctl' "$ctl" status 1 2
expect 1 '^usage: luaunwind-ctl' "$ctl" version --bogus

rep=$bin/luaunwind-report
expect 1 "bad number '0x10'" "$rep" --top 0x10 x
expect 1 "bad number '0'" "$rep" --pid 0 x
expect 1 "^luaunwind-report: --svg needs an argument" "$rep" x --svg

fg=$bin/luaunwind-flamegraph
expect 1 "bad width '12px'" "$fg" -w 12px
expect 1 "bad min-width 'nan'" "$fg" --min-width nan
expect 1 . "$fg" --title

hu=$bin/luaunwind-hostunwind
expect 1 "bad probe count '2x'" "$hu" -n 2x 1
expect 1 "bad frame count '0'" "$hu" -m 0 1
expect 1 "bad PID '1 '" "$hu" "1 "
expect 1 . "$hu" 1 2

lp=$bin/luaunwind-ljprobe
expect 1 "bad sample count '-1'" "$lp" -n -1 1
expect 1 "bad try count '9999999999'" "$lp" --tries 9999999999 1
expect 1 "bad PID 'abc'" "$lp" abc
expect 1 usage "$lp" 1 2
exit $fail
