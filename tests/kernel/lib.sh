# Sourced by every tests/kernel/t_*.sh; they run inside the guest
# (scripts/vm-run), as root, from the checkout root.
set -u
K=build/ktest
CTL=$K/luaunwind-ctl
KO=build/kmod/${LUW_KVER:?run me through scripts/vm-run}/luaunwind.ko
T=$(basename "$0" .sh)
W=${LUW_OUT:-/tmp}/$T
mkdir -p "$W"
kids=

fail() {
	echo "$T: FAIL: $*" >&2
	exit 1
}

pass() {
	echo "$T: ok${1:+: $*}"
}

# execd PID PROG: wait (10 s at most) until PID runs PROG rather than the
# shell that forked it.  The module ends a target that execs, so an attach
# in between would see the program's own exec and end it.  Reads comm with
# the shell's own read: a fork per poll is slow under TCG beside a spinner.
execd() {
	want=$(basename "$2" | cut -c1-15)
	for i in $(seq 200); do
		comm=
		read -r comm <"/proc/$1/comm" 2>/dev/null
		[ "$comm" = "$want" ] && return 0
		sleep 0.05
	done
	fail "$2 (pid $1) did not start"
}

# Start a program in the background, remember it for cleanup, and wait
# until it runs.
bg() {
	"$@" &
	kids="$kids $!"
	last=$!
	execd "$last" "$1"
}

cleanup() {
	for p in $kids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap cleanup EXIT

load() {
	insmod "$KO" "$@" || fail "insmod $KO $*"
	[ -c /dev/luaunwind ] || fail "/dev/luaunwind missing after insmod"
}

unload() {
	rmmod luaunwind || fail "rmmod"
	[ ! -e /dev/luaunwind ] || fail "/dev/luaunwind still there after rmmod"
}

# field NAME LINE: the value of NAME=... in a status/dump line.
field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
