#!/usr/bin/env bash
# Heap snapshots on the LuaJIT build matrix (scripts/ljmatrix.sh): for
# each cell, its luajit with DWARF (the lj_obj.h model checked against it
# field by field) and stripped (the model alone, and global_State's
# offsets proven live), each running tests/fixtures/workloads/heap.lua:
# every known holder at its path with its bytes, and the snapshot's total
# against gc.total and collectgarbage("count") (tests/unit/heap).
#
# usage: test_heapmatrix.sh BINDIR FIXTURES [CELL...]
#   no CELL: one cell of each kind of build `make check` builds anyway;
#   LUW_HEAPMATRIX_ALL=1 (make check-matrix): every cell.
set -uo pipefail
bin=$1
fix=$2
shift 2
. "$(dirname "$0")/matrix_common.sh"
. "$top/tests/unit/heap/heap_common.sh"
work=$fix/workloads/heap.lua
default_cells=(bullseye-luajit-default bookworm-luajit-default bookworm-luajit-nojit
	       bookworm-luajit-lua52 bookworm-luajit2-lua52 trixie-luajit-assert
	       sid-luajit-default)
matrix_cells "${LUW_HEAPMATRIX_ALL:-0}" "$@"

for cell in "${cells[@]}"; do
	matrix_build "$cell"
	case $? in 1) continue ;; 2) echo "skip: $cell does not build"; continue ;; esac
	for b in luajit luajit.stripped; do
		name=$cell/$b
		fail=0
		start "${name//\//_}" "$d/$b" "$work" || { fails=$((fails + 1)); continue; }
		count=$(sed -n 's/^count //p' "$tout" | tail -1)
		if ! "$bin/luaunwind-ctl" heap -p "$tp" -o "$tmp/snap" 2>"$tmp/err"; then
			echo "FAIL: $name: $(tail -1 "$tmp/err")"
			fail=1
		else
			"$bin/luaunwind-report" --folded "$tmp/snap" >"$tmp/folded"
			"$bin/luaunwind-report" --top 3 "$tmp/snap" >"$tmp/top"
			known_paths "$name" "$tmp/folded"
			totals "$name" "$tmp/top" "$count"
		fi
		exec 7>&-
		ran=$((ran + 1))
		[ "$fail" = 0 ] || fails=$((fails + 1))
	done
done
matrix_verdict "binaries"
