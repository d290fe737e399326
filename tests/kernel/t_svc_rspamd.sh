#!/bin/sh
# Debian's rspamd (on Debian's libluajit-5.1) with its stock configuration
# and a rule of our own (svc/rspamd/rspamd.local.lua: weigh, fib) run for
# every message; wrk POSTs svc/rspamd/msg.eml to the scanner's /checkv2
# over loopback while the scanner process is recorded for 5 s.  rspamd's
# C code realigns its stack in places (a CFA given as a DWARF expression,
# *(rbp - N)), which the walk must step exactly or end, never guess:
#  - samples in fib() read, root first, the process's entry; ...;
#    rspamd's symbol cache (rspamd_symcache_...); ...; lua_pcall; the
#    rule's callback; weigh; fib (the rule runs interpreted: the
#    file says why), in >= 90% of them;
#  - >= 90% of all samples rooted at the process's entry;
#  - no garbage frame.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
. tests/kernel/reclib.sh
. tests/kernel/svclib.sh
load
lo_up
# The database, pid and log directories cannot live on the read-only root.
run=$(mktemp -d /tmp/rspamd.XXXXXX) || fail "mktemp"
[ -r /etc/rspamd/rspamd.conf ] || fail "no /etc/rspamd (scripts/deps.sh test)"
S=$PWD/tests/kernel/svc/rspamd
rspamd -f -i -u root -g root -c /etc/rspamd/rspamd.conf \
	--var=CONFDIR=/etc/rspamd --var=LOCAL_CONFDIR="$S" \
	--var=DBDIR="$run" --var=RUNDIR="$run" --var=LOGDIR="$run" \
	>"$W/rspamd.out" 2>&1 &
main=$!
kids="$kids $main"
# A process's command line, read within 5 s: reading it takes the
# process's mmap lock, which a process stuck in the kernel may hold.
cmdline() {
	timeout -s KILL 5 cat "/proc/$1/cmdline" 2>/dev/null | tr '\0' ' '
}
# The scanner is the main process's child titled "normal process".
scanner() {
	local p
	for p in $(pgrep -P "$main"); do
		cmdline "$p" | grep -q 'normal process' && { echo "$p"; return 0; }
	done
	return 1
}
rspamd_scans() {
	pid=$(scanner) &&
		curl -sf -m 10 --data-binary @"$S/msg.eml" http://127.0.0.1:11333/checkv2 >"$W/first" 2>/dev/null
}
# A start that never serves (twice in about 17 runs under load, cause
# not yet known) leaves what it was doing: rspamd's log, each of its
# processes' state, kernel stack and command line, and what the
# scanner's port answers.
stuck() {
	local p
	tail -20 "$run/rspamd.log" "$W/rspamd.out"
	for p in $main $(pgrep -P "$main"); do
		echo "== $p $(cut -d' ' -f3 /proc/$p/stat 2>/dev/null) $(cat /proc/$p/wchan 2>/dev/null): $(cmdline "$p")"
		cat /proc/$p/stack 2>/dev/null
	done
	curl -sS -m 10 --data-binary @"$S/msg.eml" http://127.0.0.1:11333/checkv2 2>&1 | head -c 300
}
within 300 rspamd_scans || { stuck >&2; fail "rspamd did not scan"; }
grep -q LUW_WEIGH "$W/first" || { cat "$W/first" >&2; fail "rspamd: our rule did not run"; }
MSG=$S/msg.eml wrk -t1 -c4 -d300 -s "$S/post.lua" http://127.0.0.1:11333/checkv2 >"$W/wrk.out" 2>&1 &
wrkpid=$!
kids="$kids $wrkpid"
sleep 1
stop="$wrkpid $main"
record_svc rspamd 5

H='@[^;]*svc/rspamd/rspamd\.local\.lua'
leaf_chain rspamd fib 50 "fib $H:10" \
	"^_start;(.*;)?rspamd_symcache_[a-z_]*;(.*;)?lua_pcall;$H:27;weigh $H:16;(fib $H:10;)*fib $H:10"
root=$(rooted _start)
need_most rspamd "$root" "$all" "samples rooted at the process's entry"
unload
pass "$all samples, fib chain $good/$nleaf, rooted $root/$all"
