# Sourced by the command-line tests (tools/test_*_cli.sh): a
# scratch directory $tmp, a verdict $fail, and
#   expect STATUS REGEX(stderr) CMD...
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

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
