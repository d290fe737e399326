# Sourced by the matrix tests (test_ljmatrix.sh, test_ljattach.sh) once
# $bin (the programs) and $fix (tests/fixtures) are set.  It gives them
# what tests/unit/common/testlib.sh gives every shell test ($tmp, pids[]
# killed on exit, wait_line) and
#   top, probe    the checkout, luaunwind-ljprobe
#   pid           a process killed on exit too
#   fails, ran    the failures counted, the binaries tested
#   matrix_cells ALL CELL...   cells=(): the CELLs given to the test; none:
#                 every cell of the matrix when ALL is 1, else the test's
#                 default_cells
#   matrix_build CELL          builds the cell (once: scripts/ljmatrix.sh
#                 caches it), its directory in $d.  0 built; 1 the build
#                 script failed (a FAIL counted); 2 the source does not
#                 build with the cell's defines (build.failed)
#   matrix_verdict WHAT        "ok", or the failures and exit 1.  A run
#                 that tested nothing fails: no cell it asked for built.
top=$(cd "$fix/../.." && pwd)
. "$top/tests/unit/common/testlib.sh"
probe=$bin/luaunwind-ljprobe
pid=
fails=0
ran=0

matrix_cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	testlib_cleanup
}
trap matrix_cleanup EXIT

matrix_cells() {
	local all=$1

	shift
	if [ $# -gt 0 ]; then
		cells=("$@")
	elif [ "$all" = 1 ]; then
		mapfile -t cells < <("$top/scripts/ljmatrix.sh" list)
	else
		cells=("${default_cells[@]}")
	fi
}

matrix_build() {
	if ! "$top/scripts/ljmatrix.sh" build "$1" >&2; then
		echo "FAIL: $1: cannot build"
		fails=$((fails + 1))
		return 1
	fi
	d=$("$top/scripts/ljmatrix.sh" path "$1")
	[ -e "$d/build.failed" ] && return 2
	return 0
}

matrix_verdict() {
	if [ "$ran" -eq 0 ]; then
		echo "FAIL: nothing tested: none of the ${#cells[@]} cell(s) asked for built"
		fails=$((fails + 1))
	fi
	if [ "$fails" -ne 0 ]; then
		echo "$fails failure(s)"
		exit 1
	fi
	echo "ok ($ran $1)"
}
