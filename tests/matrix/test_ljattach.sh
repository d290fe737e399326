#!/usr/bin/env bash
# Attaching to stripped builds while the target writes what the layout
# checks read (userspace/lib/target/layout.c, "Reading a running
# target").  For each stripped cell of the build matrix
# (scripts/ljmatrix.sh), with tests/fixtures/workloads/attach.lua:
#   firstgc  one process per point of the first GC cycle (the GC stepped
#            0..300 times and stopped): every attach must succeed with
#            the DWARF twin's layout, and one of the points must have
#            G->strempty gray (mark 0, read from the process) -- the state
#            in which the scan for G->strempty found nothing and the right
#            candidate was refused ("G->strempty's gct = 171");
#   churn    the target allocating, growing and shrinking its stack,
#            adding and removing globals, beside a busy sibling (the DWARF
#            twin running the same): N attaches (LUW_LJATTACH_N, 40), each
#            must succeed with the DWARF twin's layout, field for field.
# A refusal or a layout other than DWARF's fails; so does a run whose
# sweep never reached the gray state, and one where no cell built.
#
# usage: test_ljattach.sh BINDIR FIXTURES [CELL...]
#   no CELL: the cells `make check` builds anyway (test_ljmatrix's and
#   t_rec_matrix's); LUW_LJATTACH_ALL=1: every cell of the matrix.
set -uo pipefail
bin=$1
fix=$2
shift 2
. "$(dirname "$0")/matrix_common.sh"
wl=$fix/workloads/attach.lua
nattach=${LUW_LJATTACH_N:-40}
default_cells=(bullseye-luajit-default bookworm-luajit2-lua52 trixie-luajit-assert
	       bookworm-luajit-default bookworm-luajit-lua52 bookworm-luajit-nojit
	       sid-luajit-default)
matrix_cells "${LUW_LJATTACH_ALL:-0}" "$@"

# start BIN MODE [N]: runs attach.lua, prints its pid once it is ready.
start() {
	local out=$tmp/run.$RANDOM p
	: >"$out"
	"$1" "$wl" "$2" "${3:-}" >"$out" 2>&1 &
	p=$!
	wait_line "$out" ready "$p" || { cat "$out" >&2; kill -9 "$p" 2>/dev/null; return 1; }
	echo "$p"
}
stop() { kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# The byte at ADDR of PID, two hex digits.
peek() {
	dd if="/proc/$1/mem" bs=1 count=1 skip="$2" iflag=skip_bytes 2>/dev/null |
		od -An -tx1 | tr -d ' \n'
}

for cell in "${cells[@]}"; do
	matrix_build "$cell"
	case $? in
	1) continue ;;
	2) echo "$cell: not built (the source does not build so), skipped"; continue ;;
	esac
	# The reference: the DWARF twin's layout, for the same workload.
	p=$(start "$d/luajit" churn) || { echo "FAIL: $cell: workload did not start"; fails=$((fails + 1)); continue; }
	pids+=("$p")
	"$probe" -n 0 --layout "$p" >"$tmp/ref.out" 2>&1
	stop "$p"
	# GCtrace.spadjust: from DWARF only (unproven_trace_frame, target/layout.c)
	lyof() { grep '^layout\.' "$1" | grep -v '^layout\.tr_spadjust '; }
	lyof "$tmp/ref.out" >"$tmp/ref"
	grep -q '^layout: DWARF' "$tmp/ref.out" || {
		echo "FAIL: $cell: the DWARF twin, churning, not attached with its DWARF layout: $(grep -m1 'ljprobe\|^layout:' "$tmp/ref.out" | cut -c1-2500)"
		fails=$((fails + 1)); continue; }
	refused=0 differ=0 gray=0 rounds=0 n_at=0
	first_bad=

	# attach_one PID TAG: one attach of the stripped build; counts.
	attach_one() {
		"$probe" -n 0 --layout "$1" >"$tmp/a.out" 2>&1
		local st=$?
		n_at=$((n_at + 1))
		if [ $st -ne 0 ]; then
			refused=$((refused + 1))
			[ -n "$first_bad" ] || first_bad="$2: $(grep -m1 'ljprobe' "$tmp/a.out" | cut -c1-2500)"
			return 1
		fi
		if ! grep -q '^checks: passed in round 1$' "$tmp/a.out"; then
			rounds=$((rounds + 1))
			grep -m1 '^checks:' "$tmp/a.out" | cut -c1-300 >>"$tmp/rechecks"
		fi
		if ! lyof "$tmp/a.out" | cmp -s - "$tmp/ref"; then
			differ=$((differ + 1))
			[ -n "$first_bad" ] || first_bad="$2: layout differs from DWARF's: $(lyof "$tmp/a.out" | diff "$tmp/ref" - | grep '^>' | head -5 | tr '\n' ' ')"
			return 1
		fi
		return 0
	}

	# The first GC cycle, point by point.
	for n in 0 100 150 200 225 300; do
		p=$(start "$d/luajit.stripped" firstgc "$n") || { echo "FAIL: $cell: firstgc $n did not start"; fails=$((fails + 1)); continue; }
		pids+=("$p")
		if attach_one "$p" "firstgc $n"; then
			g=$(sed -n 's/^state: G=//p' "$tmp/a.out" | head -1)
			se=$(sed -n 's/^layout.g_strempty = //p' "$tmp/a.out")
			gg=$(sed -n 's/^layout.gc_gct = //p' "$tmp/a.out")
			[ "$(peek "$p" $((g + se + gg - 1)))" = 00 ] && gray=$((gray + 1))
		fi
		stop "$p"
	done

	# A target that writes all the time, a busy sibling beside it.
	sib=$(start "$d/luajit" churn) && pids+=("$sib")
	p=$(start "$d/luajit.stripped" churn) || { echo "FAIL: $cell: churn did not start"; fails=$((fails + 1)); continue; }
	pids+=("$p")
	for _ in $(seq "$nattach"); do
		attach_one "$p" churn
	done
	stop "$p"
	[ -n "${sib:-}" ] && stop "$sib"

	ran=$((ran + 1))
	line="$cell stripped: $n_at attaches, $refused refused, $differ not DWARF's layout, $rounds passed after a recheck, $gray with G->strempty gray"
	if [ $refused -gt 0 ] || [ $differ -gt 0 ]; then
		echo "FAIL: $line"
		echo "  first: $first_bad"
		fails=$((fails + 1))
	elif [ $gray -eq 0 ]; then
		echo "FAIL: $line (the sweep never reached the gray state: nothing tested)"
		fails=$((fails + 1))
	else
		echo "$line"
	fi
	# What the rechecks were for (passes, not failures).
	[ -s "$tmp/rechecks" ] && sort "$tmp/rechecks" | uniq -c | sed 's/^/  /'
	rm -f "$tmp/rechecks"
done
matrix_verdict "stripped cell(s) attached"
