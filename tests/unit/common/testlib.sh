# testlib.sh: what the shell tests share, as testlib.h is for the C ones.
# Sourced: . "$(dirname "$0")/../common/testlib.sh".  It gives
#   $tmp          a scratch directory, removed on exit
#   pids+=(PID)   processes killed (and reaped) on exit
#   $fail         the verdict, 0 until a test sets it to 1
#   expect STATUS REGEX CMD...
#                 runs CMD: its exit status must be STATUS and its stderr
#                 match the ERE; prints "ok: ..." or "FAIL: ..." (fail=1)
#   wait_line FILE REGEX [PID]
#                 0 as soon as FILE has a line matching the ERE; 1 when
#                 none came within 60 s, or PID exited first
tmp=$(mktemp -d)
pids=()
fail=0

testlib_cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap testlib_cleanup EXIT

expect() {
	local want=$1 re=$2 got
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" != "$want" ] || ! grep -Eq -- "$re" "$tmp/err"; then
		echo "FAIL: $* -> exit $got (want $want), stderr:"
		cat "$tmp/err"
		fail=1
	else
		echo "ok: $* -> $got: $(head -1 "$tmp/err")"
	fi
}

wait_line() {
	local i

	for i in $(seq 1200); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && break
		sleep 0.05
	done
	grep -Eq -- "$2" "$1" 2>/dev/null && return 0
	return 1
}
