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

# within SECONDS CMD...: runs CMD every 0.1 s until it succeeds (true)
# or SECONDS of the guest's uptime have passed (false).  The limit only
# bounds a hang, as group.sh's does a test: a loaded host stretches a
# program's start in the guest far beyond a quiet run's (a luajit took over
# 15 s to print its first line beside two other guests).  The last try
# decides, so what a caller reports after a false is what CMD saw.
within() {
	local up end
	read -r up _ </proc/uptime
	end=$((${up%.*} + $1))
	shift
	until "$@"; do
		read -r up _ </proc/uptime
		[ "${up%.*}" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# folded_sum FILE [GREP ARGS...]: the samples of the folded stacks in FILE
# (a count ends each line) that grep selects; all of them without GREP ARGS.
folded_sum() {
	local file=$1
	shift
	grep "${@:-}" "$file" | awk '{ n += $NF } END { printf "%.0f\n", n }'
}

# runs PID COMM: PID's comm is COMM.  The shell's own read: a fork per
# poll is slow under TCG beside a spinner.
runs() {
	local comm=
	read -r comm <"/proc/$1/comm" 2>/dev/null
	[ "$comm" = "$2" ]
}

# execd PID PROG: wait until PID runs PROG rather than the shell that
# forked it.  The module ends a target that execs, so an attach in between
# would see the program's own exec and end it.
execd() {
	within 120 runs "$1" "$(basename "$2" | cut -c1-15)" ||
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

# sampled PID N: the module has taken at least N samples of target PID.
sampled() {
	local st
	st=$($CTL status "$1" 2>/dev/null | sed -n 1p)
	[ "$(field samples "$st")" -ge "$2" ] 2>/dev/null
}

# KILL, not TERM: a tarantool in a busy Lua loop shuts down on TERM only
# at its next yield, and a test that failed with it running waited for
# that until group.sh's limit (t_vmentry, 600 s).
cleanup() {
	for p in $kids; do kill -9 "$p" 2>/dev/null; done
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
