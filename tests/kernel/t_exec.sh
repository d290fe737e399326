#!/bin/sh
# exec ends a target.  A process attached while it runs one program and
# then exec'ing another is not sampled any more: its session gets an END
# record (reason exec), no sample taken after it, the target leaves the
# session, and the new program runs on.  The same when the new program is
# setuid root and the attacher an ordinary user (CAP_PERFMON only), who
# then cannot attach to it at all.
. tests/kernel/lib.sh
load

# after_end DUMP PID: PID's samples timed after its end record; -1: none.
after_end() {
	awk -v pid="$2" '
	$1 == "end" && $2 == "pid=" pid { split($4, t, "="); end = t[2] }
	$1 == "sample" && $2 == "pid=" pid { split($5, t, "="); tm[NR] = t[2] }
	END {
		if (end == "") { print -1; exit }
		n = 0
		for (i in tm) if (tm[i] + 0 > end + 0) n++
		print n
	}' "$1"
}

# not_old DUMP PID MAPS: PID's samples whose pc lies in no executable
# mapping of MAPS, the old program's (taken before the exec; exec maps the
# new program, its loader, libraries and vdso elsewhere).
not_old() {
	grep "^sample pid=$2 " "$1" | awk -v maps="$3" '
	function hex(s,   i, v) {
		v = 0
		sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	BEGIN {
		n = 0
		while ((getline l < maps) > 0) {
			split(l, f, " ")
			if (f[2] ~ /x/) {
				split(f[1], r, "-")
				lo[n] = hex(r[1]); hi[n] = hex(r[2]); n++
			}
		}
	}
	{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^host=/) { split(substr($i, 6), pc, ","); break }
		p = hex(pc[1])
		for (k = 0; k < n; k++)
			if (p >= lo[k] && p < hi[k]) next
		bad++
	}
	END { print bad + 0 }'
}

# check NAME PID PROG: the dump of a target that exec'd PROG.
check() {
	grep -q "^end pid=$2 reason=exec " "$W/$1.dump" ||
		fail "$1: no exec end record: $(tail -3 "$W/$1.dump")"
	n=$(grep -c "^sample pid=$2 " "$W/$1.dump")
	[ "$n" -ge 50 ] || fail "$1: only $n samples before the exec"
	a=$(after_end "$W/$1.dump" "$2")
	[ "$a" -eq 0 ] || fail "$1: $a samples after the exec"
	kill -0 "$2" || fail "$1: the new program did not run on"
	grep -q " $3\$" /proc/$2/maps || fail "$1: $3 not mapped in $2"
	p=$(not_old "$W/$1.dump" "$2" "$W/$1.maps")
	[ "$p" -eq 0 ] || fail "$1: $p samples of the new program (pc outside the old one's code)"
}

# dumped FILE N: FILE holds at least N samples.
dumped() {
	[ "$(grep -c '^sample' "$1")" -ge "$2" ]
}

# dump_exec NAME GO [AS...]: dump the kept session (as AS, if given) until
# it ends; GO goes (the target execs) once the dump holds 50 samples, so a
# dump slow to start under load cannot miss the target.  After 40 s it
# goes anyway: check then says what the dump lacks.
dump_exec() {
	local name=$1 go=$2 d
	shift 2
	timeout 60 "$@" $CTL dump --duration 50 >"$W/$name.dump" 2>"$W/$name.err" &
	d=$!
	within 40 dumped "$W/$name.dump" 50 || true
	rm "$go"
	wait $d || fail "$name: dump: $(cat "$W/$name.err")"
}

# ---- plain exec, root ----------------------------------------------------
touch "$W/go"
bg $K/spin_exec "$W/go" $K/spin 60; pid=$last
$CTL attach $pid --freq 999 --no-lua >/dev/null || fail "attach"
cp /proc/$pid/maps "$W/plain.maps"
# dump ends by itself at end of file: no target left in the session.
dump_exec plain "$W/go"
check plain $pid "$(readlink -f $K/spin)"
grep -q 'targets=0 ended=1' "$W/plain.err" || fail "plain: $(cat "$W/plain.err")"
$CTL status | grep -q '^targets=0' || fail "plain: still attached after exec"
kill $pid

# ---- setuid exec, an ordinary user with CAP_PERFMON --------------------------
cp $K/spin /tmp/suid_spin
chown 0:0 /tmp/suid_spin
chmod 4755 /tmp/suid_spin
chmod 0666 /dev/luaunwind
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon"
touch /tmp/go_suid
setpriv --reuid=65534 --regid=65534 --clear-groups \
	$K/spin_exec /tmp/go_suid /tmp/suid_spin 60 &
pid=$!
kids="$kids $pid"
execd $pid $K/spin_exec
$AS_NOBODY $CTL attach $pid --freq 999 --no-lua >"$W/suid.attach" 2>&1 ||
	fail "nobody cannot attach to its own process: $(cat "$W/suid.attach")"
cp /proc/$pid/maps "$W/suid.maps"
dump_exec suid /tmp/go_suid $AS_NOBODY
check suid $pid /tmp/suid_spin
grep -q '^Uid:.*[[:space:]]0[[:space:]]' /proc/$pid/status ||
	fail "the setuid program does not run as root: $(grep Uid /proc/$pid/status)"
out=$($AS_NOBODY $K/try_attach $pid)
[ "$out" = EPERM ] || fail "nobody attached to a setuid-root process: $out"
kill $pid
unload
pass
