#!/bin/bash
# Equality of luaunwind-report with the reference parsers' output on every
# fixture, through the installed program.
#   sysprof --compat: byte for byte after LC_ALL=C sort (as the fixtures are).
#   memprof default and --leak-only: byte for byte, except the order inside
#   runs of equal-count entries, which the reference itself randomises (see
#   common/report_canon.pl); our own order must still be by count, most first.
set -u
bin=$1/luaunwind-report
fix=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/testlib.sh"
n=0

for exp in "$fix"/*.expected.folded; do
	bin_file=${exp%.expected.folded}.bin
	n=$((n + 1))
	if ! "$bin" --compat "$bin_file" >"$tmp/out"; then
		echo "FAIL: $bin --compat $bin_file exited $?"
		fail=1
		continue
	fi
	if LC_ALL=C sort "$tmp/out" | cmp -s - "$exp"; then
		echo "ok: --compat $(basename "$bin_file") == $(basename "$exp")"
	else
		echo "FAIL: --compat $(basename "$bin_file") differs:"
		LC_ALL=C sort "$tmp/out" | diff - "$exp" | head -20
		fail=1
	fi
done

for exp in "$fix"/memprof_*.expected.txt "$fix"/memprof_*.expected.leak-only.txt; do
	[ -e "$exp" ] || continue
	case $exp in
	*.leak-only.txt) opt=--leak-only; bin_file=${exp%.expected.leak-only.txt}.bin ;;
	*) opt=; bin_file=${exp%.expected.txt}.bin ;;
	esac
	n=$((n + 1))
	if ! "$bin" $opt "$bin_file" >"$tmp/out"; then
		echo "FAIL: $bin $opt $bin_file exited with an error"
		fail=1
		continue
	fi
	if cmp -s "$tmp/out" "$exp"; then
		echo "ok: $opt $(basename "$bin_file") == $(basename "$exp") (exact)"
		continue
	fi
	perl "$here/../common/report_canon.pl" <"$tmp/out" >"$tmp/a"
	perl "$here/../common/report_canon.pl" <"$exp" >"$tmp/b"
	if cmp -s "$tmp/a" "$tmp/b"; then
		echo "ok: $opt $(basename "$bin_file") == $(basename "$exp") (up to the order of ties)"
	else
		echo "FAIL: $opt $(basename "$bin_file") differs from $(basename "$exp"):"
		diff "$tmp/a" "$tmp/b" | head -20
		fail=1
	fi
	# Our order is by count (or bytes), most first, in every section.
	if ! awk -F'\t' '
		/^[A-Z]+(ATIONS| SUMMARY:)$/ { prev = -1; next }
		/: [0-9]+ events\t/ { match($0, /: [0-9]+ events/); v = substr($0, RSTART + 2, RLENGTH - 9) + 0
			if (prev >= 0 && v > prev) bad = 1; prev = v }
		/ holds -?[0-9]+B: / { match($0, / holds -?[0-9]+B/); v = substr($0, RSTART + 7, RLENGTH - 8) + 0
			if (prev >= 0 && v > prev) bad = 1; prev = v }
		END { exit bad }' "$tmp/out"; then
		echo "FAIL: $opt $(basename "$bin_file"): entries not sorted by count"
		fail=1
	fi
done

[ "$n" -ge 7 ] || { echo "FAIL: only $n expected files found in $fix"; fail=1; }
exit $fail
