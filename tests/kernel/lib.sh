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

# Start a program in the background and remember it for cleanup.
bg() {
	"$@" &
	kids="$kids $!"
	last=$!
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
