#!/usr/bin/env bash
# The LuaJIT build matrix (scripts/ljmatrix.sh) probed from userspace.
# Each cell's luajit, with DWARF and stripped, and its static host (a
# stripped program linking libluajit.a that exports none of it), runs each phase of
# tests/fixtures/workloads/matrix.lua and is sampled with
# luaunwind-ljprobe.  A binary is either
#   ok       every phase's samples have the workload's stack: its shape,
#            the Lua functions' first lines and the callers' current lines,
#            the fast function it is running (math.floor, string.rep,
#            coroutine.resume, the FFI call), a trace when the JIT is on;
#   refused  the probe declined it, with its reason;
#   WRONG    anything else: a wrong fast-function name, a broken stack.
# WRONG always fails the test; so does a refusal of a binary that
# tests/matrix/ljmatrix.expect does not list as refused.  A cell that does
# not build is reported and fails only if the expect file says it builds;
# a run in which no binary was probed (no cell built) fails.
#
# usage: test_ljmatrix.sh BINDIR FIXTURES [CELL...]
#   no CELL: the subset `make check` runs (LUW_LJMATRIX_ALL=1: every cell)
#   LUW_LJMATRIX_TABLE=FILE: also write "cell flavour result" lines there
set -uo pipefail
bin=$1
fix=$2
shift 2
. "$(dirname "$0")/matrix_common.sh"
wl=$fix/workloads/matrix.lua
expect=$top/tests/matrix/ljmatrix.expect
default_cells=(bookworm-luajit-default bookworm-luajit-lua52 bookworm-luajit-nojit
	       sid-luajit-default bookworm-tarantool-gc64)
matrix_cells "${LUW_LJMATRIX_ALL:-0}" "$@"
cc -O2 -fPIC -shared -o "$tmp/libc_payload.so" "$fix/workloads/c_payload.c" || exit 1

# Expected lines, from the workload's "-- @NAME" markers.
ln() { grep -n -- "-- @$1\$" "$wl" | cut -d: -f1; }
F='lua:[^;]*matrix\.lua'
root="^stack [0-9]+ (c:0x[0-9a-f]+;)?$F:0:$(ln maincall);$F:$(ln driver):$(ln drivercall)"
# Between two calls of the phase: main alone, or driver innermost.  The
# innermost Lua frame, caught at its function's entry, has no line yet
# ("?"): unknown, not wrong; or PC is on its FUNCF, whose line is the
# function's first (floorloop on its own line: 1 sample in 100 once), or
# on any other line of its body (floorloop's return: 1 in 100 once);
# callers' lines are always checked.
re_between="^stack [0-9]+ (c:0x[0-9a-f]+;)?$F:0:$(ln maincall)(;$F:$(ln driver):([0-9]+|\\?))?\$"
declare -A re_all re_need want any
re_all[rec]="$root(;$F:$(ln rec):$(ln reccall))*;$F:$(ln rec):([0-9]+|\\?)\$"
re_need[rec]="$root(;$F:$(ln rec):$(ln reccall))*;$F:$(ln rec):[0-9]+\$"
# body FIRST LAST: the lines FIRST..LAST of a function as an alternation.
body() { seq -s '|' "$(ln "$1")" "$(ln "$2")"; }
re_all[floor]="$root;$F:$(ln floorloop):($(ln floorcall);ff:math\\.floor|$(body floorloop floorret)|\\?)\$"
re_need[floor]="ff:math\\.floor\$"
re_all[rep]="$root;$F:$(ln reploop):$(ln repcall);ff:string\\.rep\$"
re_need[rep]=${re_all[rep]}
any[rep]=--any
re_all[ffi]="$root;$F:$(ln ffiloop):($(ln fficall);ff:ffi\\.(meta\\.__call|clib\\.__index)|$(body ffiloop ffiret)|\\?)\$"
re_need[ffi]="ff:ffi\\.meta\\.__call\$"
any[ffi]=--any
# In the coroutine: in work(), or yielding (a moment, but it happens); or
# coroutine.resume itself before it switches to the coroutine or after it
# is back (a moment too: the running thread is still the resumer's).
re_all[coro]="$root;$F:$(ln resumer):$(ln resumecall);ff:coroutine\\.resume(;$F:$(ln body):($(ln workcall);$F:$(ln work):([0-9]+|\\?)|$(ln yieldcall);ff:coroutine\\.yield))?\$"
re_need[coro]="$F:$(ln work):[0-9]+\$"
re_all[trace]="$root(;$F:$(ln tloop):[0-9]+)?;trace:[0-9]+:[^;]*matrix\\.lua:[0-9]+\$"
re_need[trace]=${re_all[trace]}
want[trace]="--want TRACE"
phases=(rec floor rep ffi coro trace)

# start BIN PHASE: runs the workload, sets $pid; 1 = not started,
# 2 = the build has no JIT (trace phase only).
start() {
	local out=$tmp/run.out
	: >"$out"
	"$1" "$wl" "$2" "$tmp" >"$out" 2>&1 &
	pid=$!
	wait_line "$out" 'ready|nojit' "$pid"
	grep -q nojit "$out" && { wait "$pid" 2>/dev/null; pid=; return 2; }
	grep -q ready "$out" || { cat "$out" >&2; return 1; }
	sleep 0.2
}
stop() { [ -n "$pid" ] && { kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; pid=; }

# probe_bin BIN: prints "ok", "refused: WHY" or "WRONG: WHAT".
probe_bin() {
	local b=$1 ph out n total good need badff st
	for ph in "${phases[@]}"; do
		start "$b" "$ph"
		st=$?
		[ $st -eq 2 ] && continue
		[ $st -eq 0 ] || { echo "WRONG: workload $ph did not start"; return; }
		out=$tmp/$ph.probe
		n=30
		# floor: enough samples to catch fast functions' returns
		# (lj_fff_res*, ~3-5% of them), which must keep the caller.
		[ "$ph" = floor ] && n=100
		# shellcheck disable=SC2086
		"$probe" -n $n ${any[$ph]:-} ${want[$ph]:-} --tries 6000 "$pid" >"$out" 2>&1
		st=$?
		stop
		if [ $st -eq 2 ] && ! grep -q '^sample ' "$out"; then
			echo "refused: $(grep -m1 'luaunwind-ljprobe' "$out" | sed 's/^luaunwind-ljprobe: //')"
			return
		fi
		[ $st -eq 0 ] || { echo "WRONG: $ph: probe exit $st: $(tail -1 "$out")"; return; }
		[ "$ph" = rec ] && layout=$(sed -n 's/^layout: //p' "$out")
		total=$(grep -c '^stack ' "$out")
		good=$(grep '^stack ' "$out" | grep -Ec "${re_all[$ph]}|$re_between")
		need=$(grep '^stack ' "$out" | grep -Ec "${re_need[$ph]}")
		# A fast-function name other than the phase's own is wrong, always.
		badff=$(grep '^stack ' "$out" | grep -Ev "${re_all[$ph]}|$re_between" | grep -o 'ff:[^;]*$' | sort -u | head -3 | tr '\n' ' ')
		cp "$out" "$tmp/last-$ph.probe"
		if [ -n "$badff" ]; then
			echo "WRONG: $ph: fast function $badff"
			grep '^stack ' "$out" | grep -Ev "${re_all[$ph]}|$re_between" | grep 'ff:[^;]*$' | head -3 | sed 's#lua:[^;]*matrix#lua:matrix#g' >&2
			return
		fi
		# 90% whole stacks: a sample can catch a frame being built.
		# floor: all of them.  At a fast function's return
		# (lj_fff_res*: PC already the caller's return pc, BASE still
		# the fast function's, its slots overwritten by the result)
		# the walk must still give floorloop on its call's line; the
		# walker before issue 9 lost it in 4-10% of these samples.
		local pct=90 lost
		[ "$ph" = floor ] && pct=100
		# A lost floorloop left driver (or main) innermost at an
		# unknown line, which the between-calls shape would accept.
		lost=$(grep '^stack ' "$out" | grep -Ec "$F:($(ln driver)|0):\\?\$")
		if [ "$ph" = floor ] && [ "$lost" -gt 0 ]; then
			echo "WRONG: floor: $lost of $total stacks lost floorloop (driver or main innermost at '?')"
			grep '^stack ' "$out" | grep -E "$F:($(ln driver)|0):\\?\$" | head -3 | sed 's#lua:[^;]*matrix#lua:matrix#g' >&2
			return
		fi
		if [ $((100 * good)) -lt $((pct * total)) ] || [ "$need" -lt 1 ]; then
			echo "WRONG: $ph: $good of $total stacks as expected, $need with the phase's leaf"
			grep '^stack ' "$out" | grep -Ev "${re_all[$ph]}|$re_between" | head -3 | sed 's#lua:[^;]*matrix#lua:matrix#g' >&2
			return
		fi
		echo "  $(basename "$(dirname "$b")") $(basename "$b") $ph: $good of $total stacks as expected, $need with the phase's leaf" >&2
	done
	echo "ok [$layout]"
}

# tables_vs_dwarf BIN: the names read from the live library tables (and
# the gaps they leave filled from the list) against the ones DWARF's FF_*
# give for the same build: prints the disagreements, nothing when none.
tables_vs_dwarf() {
	start "$1" rec || { echo "workload did not start"; return; }
	"$probe" -n 0 --ffnames "$pid" 2>&1 | grep '^ff ' | cut -d' ' -f2- | sort >"$tmp/ff.dwarf"
	"$probe" -n 0 --ffnames --ff-from-tables "$pid" >"$tmp/ff.tab.out" 2>&1
	stop
	grep '^ff ' "$tmp/ff.tab.out" | cut -d' ' -f2- | sort >"$tmp/ff.tables"
	[ -s "$tmp/ff.tables" ] || { echo "no names from the tables: $(tail -1 "$tmp/ff.tab.out")"; return; }
	join "$tmp/ff.dwarf" "$tmp/ff.tables" | awk '$2 != $3 { printf "ffid %s: DWARF %s, tables %s; ", $1, $2, $3 }'
	echo "  tables named $(wc -l <"$tmp/ff.tables") ids, DWARF $(wc -l <"$tmp/ff.dwarf")" >&2
}

# layout_of BIN FILE: the layout the probe uses for BIN, field by field.
# (GCtrace.spadjust only from DWARF: no walk reads it and nothing else
# proves it, unproven_trace_frame in target/layout.c)
layout_of() {
	start "$1" rec || return
	"$probe" -n 0 --layout "$pid" 2>/dev/null | grep '^layout\.' |
		grep -v '^layout\.tr_spadjust ' >"$2"
	stop
}

# code_vs_dwarf STRIPPED DWARF-LAYOUT-FILE: every field the stripped
# binary's machine code gave (target/recover.c) against DWARF's value for the
# same build; prints the disagreements and "N fields" to stderr.
code_vs_dwarf() {
	local f v want n=0 g2disp g2j
	start "$1" rec || { echo "workload did not start"; return; }
	"$probe" --recovered "$pid" >"$tmp/rec.out" 2>&1
	stop
	grep -q '^recovered: ref_size' "$tmp/rec.out" || { echo "nothing recovered: $(head -1 "$tmp/rec.out")"; return; }
	dw() { sed -n "s/^layout\.$1 = //p" "$2"; }
	g2disp=$(dw gg_g2disp "$2")
	g2j=$(dw gg_g2j "$2")
	while read -r f _ v; do
		f=${f#rec.}
		case $f in
		disp.vmstate) want=$(dw g_vmstate "$2"); v=$((v + g2disp)) ;;
		disp.jtrace) want=$(dw j_trace "$2"); v=$((v + g2disp - g2j)) ;;
		disp.jitbase) want=$(dw g_jit_base "$2"); v=$((v + g2disp)) ;;
		disp.tmpbufl) want=$(dw g_tmpbuf_l "$2"); v=$((v + g2disp)) ;;
		disp.arg1) continue ;;
		g.j_sizetrace) want=$(dw j_sizetrace "$2"); v=$((v - g2j)) ;;
		g.j_trace) want=$(dw j_trace "$2"); v=$((v - g2j)) ;;
		# A role's raw state index: DWARF's map must give that role
		# there (enum luw_vmstate: INTERP 0, CFUNC 3, EXIT 5).
		vmst.interp) want=0; v=$(dw "vmst_map\\[$v\\]" "$2") ;;
		vmst.c) want=3; v=$(dw "vmst_map\\[$v\\]" "$2") ;;
		vmst.exit) want=5; v=$(dw "vmst_map\\[$v\\]" "$2") ;;
		*) want=$(dw "$f" "$2") ;;
		esac
		n=$((n + 1))
		[ "$v" = "$want" ] || printf '%s: code %s, DWARF %s; ' "$f" "$v" "$want"
	done < <(grep '^rec\.' "$tmp/rec.out")
	# The interpreter's calls take &G (-gg_g2disp) and, with the JIT, &J.
	grep -q "^rec.disp.arg1 = -$g2disp " "$tmp/rec.out" || printf 'no lea of G in the VM; '
	if [ "$g2j" != 0 ]; then
		grep -q "^rec.disp.arg1 = $((g2j - g2disp)) " "$tmp/rec.out" || printf 'no lea of J in the VM; '
	fi
	echo "  machine code gave $n fields, all checked against DWARF" >&2
}

expected() {	# CELL FLAVOUR -> ok|refused|nobuild
	local e
	e=$(awk -v c="$1" -v f="$2" '$1 == c && ($2 == f || $2 == "*") { print $3; exit }' "$expect" 2>/dev/null)
	echo "${e:-ok}"
}

for cell in "${cells[@]}"; do
	matrix_build "$cell"
	[ $? = 1 ] && continue
	for fl in dwarf stripped static; do
		b=$d/luajit
		[ $fl = stripped ] && b=$d/luajit.stripped
		[ $fl = static ] && b=$d/host.static
		exp=$(expected "$cell" "$fl")
		if [ -e "$d/build.failed" ]; then
			res="not built: $(grep -m1 -i 'error' "$d/build.log" | cut -c1-120)"
			[ "$exp" = nobuild ] || { echo "FAIL: $cell: build failed"; fails=$((fails + 1)); }
		elif [ $fl = static ] && ! "$top/scripts/ljmatrix.sh" host "$cell" >&2; then
			echo "FAIL: $cell: cannot build its static host"; fails=$((fails + 1))
			continue
		elif [ $fl = static ] && [ ! -e "$b" ]; then
			res="not built: $(grep -m1 -i 'error' "$d/host.log" 2>/dev/null | cut -c1-120)"
			[ "$exp" = nobuild ] || { echo "FAIL: $cell: static host failed"; fails=$((fails + 1)); }
		else
			res=$(probe_bin "$b")
			ran=$((ran + 1))
			if [ $fl = dwarf ] && [ "${res%% *}" = ok ] && grep -q 'DWARF' <<<"$res"; then
				bad=$(tables_vs_dwarf "$b")
				[ -n "$bad" ] && res="WRONG: names from the library tables: $bad"
			fi
			case "$res" in
			ok*) [ "$exp" = ok ] || echo "note: $cell $fl is now $res, expected $exp" ;;
			refused:*) [ "$exp" = refused ] || { echo "FAIL: $cell $fl refused"; fails=$((fails + 1)); } ;;
			*) echo "FAIL: $cell $fl"; fails=$((fails + 1))
			   for f in "$tmp"/last-*.probe; do [ -e "$f" ] && head -6 "$f"; done ;;
			esac
			rm -f "$tmp"/last-*.probe
		fi
		if [ $fl = stripped ] && [ ! -e "$d/build.failed" ] &&
		   grep -q '^ok.*DWARF' <<<"$dwarf_res"; then
			layout_of "$d/luajit" "$tmp/ly.dwarf"
			bad=$(code_vs_dwarf "$b" "$tmp/ly.dwarf")
			if [ -n "$bad" ]; then
				res="WRONG: machine code disagrees with DWARF: $bad"
				echo "FAIL: $cell stripped"; fails=$((fails + 1))
			fi
		fi
		[ $fl = dwarf ] && dwarf_res=$res
		if [ $fl != dwarf ] && [ "${dwarf_res%% *}" = ok ] && [ "${res%% *}" = ok ]; then
			# Without DWARF (a family, the machine code, the process)
			# the layout must be DWARF's, field for field; in the
			# static host too, which exports nothing.
			layout_of "$d/luajit" "$tmp/ly.dwarf"
			layout_of "$b" "$tmp/ly.$fl"
			if [ ! -s "$tmp/ly.dwarf" ] || ! cmp -s "$tmp/ly.dwarf" "$tmp/ly.$fl"; then
				res="WRONG: layout differs from DWARF's: $(diff "$tmp/ly.dwarf" "$tmp/ly.$fl" | grep '^>' | head -5 | tr '\n' ' ')"
				echo "FAIL: $cell $fl"; fails=$((fails + 1))
			fi
		fi
		echo "$cell $fl $res"
		[ -n "${LUW_LJMATRIX_TABLE:-}" ] && echo "$cell $fl $res" >>"$LUW_LJMATRIX_TABLE"
	done
done
# A binary deleted on disk after start (an upgrade replaced it): read
# through /proc/PID/map_files, profiled as before.
d=$("$top/scripts/ljmatrix.sh" path bookworm-luajit-default)
[ -x "$d/luajit" ] ||
	echo "skip: the deleted-binary and debuglink checks (bookworm-luajit-default not built)"
if [ -x "$d/luajit" ]; then
	cp "$d/luajit" "$tmp/luajit-deleted"
	start "$tmp/luajit-deleted" floor && rm -f "$tmp/luajit-deleted" &&
		"$probe" -n 20 --tries 6000 "$pid" >"$tmp/deleted.probe" 2>&1
	st=$?
	stop
	if [ $st -ne 0 ] || ! grep -q '^target: .*luajit-deleted (deleted)' "$tmp/deleted.probe" ||
	   ! grep -q 'ff:math\.floor$' "$tmp/deleted.probe"; then
		echo "FAIL: deleted binary: $(head -3 "$tmp/deleted.probe" | tr '\n' ' ')"
		fails=$((fails + 1))
	else
		echo "deleted binary: $(grep '^layout:' "$tmp/deleted.probe"), $(grep -c 'ff:math\.floor$' "$tmp/deleted.probe") math.floor samples"
	fi
fi
# DWARF in a separate file named by .gnu_debuglink, next to the binary.
if [ -x "$d/luajit" ]; then
	mkdir -p "$tmp/dl"
	objcopy --only-keep-debug "$d/luajit" "$tmp/dl/luajit.debug" &&
		strip -o "$tmp/dl/luajit" "$d/luajit" &&
		(cd "$tmp/dl" && objcopy --add-gnu-debuglink=luajit.debug luajit)
	start "$tmp/dl/luajit" floor && "$probe" -n 10 --tries 6000 "$pid" >"$tmp/dl.probe" 2>&1
	st=$?
	stop
	if [ $st -ne 0 ] || ! grep -q '^layout: DWARF of .*/dl/luajit\.debug' "$tmp/dl.probe" ||
	   ! grep -q '^ffnames: .* from DWARF' "$tmp/dl.probe"; then
		echo "FAIL: debuglink: $(head -3 "$tmp/dl.probe" | tr '\n' ' ')"
		fails=$((fails + 1))
	else
		echo "debuglink: $(grep '^layout:' "$tmp/dl.probe")"
	fi
fi
matrix_verdict "binaries probed"
