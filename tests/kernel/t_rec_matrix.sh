#!/bin/sh
# Cells of the LuaJIT build matrix (tests/kernel/rec_matrix.cells, built on
# the host by scripts/ljmatrix.sh) recorded through the module: for each,
# luaunwind-ctl record of two processes running
# tests/fixtures/workloads/matrix.lua (phase mix: Lua recursion,
# math.floor, string.rep, an FFI call, a coroutine; phase trace: a loop
# the JIT compiles, when the build has a JIT), then luaunwind-report
# --by-pid; and lwstacks (tests/kernel/lwstacks.c) for a second of the
# mix process's samples with their current lines.  A cell is profiled
# right when
#  - its DWARF flavour was attached with the layout from DWARF (not a
#    fallback), its stripped flavour with one from the machine code or a
#    validated family, its static flavour (a stripped host that links
#    libluajit.a and exports nothing) with one from the machine code of
#    lua_close and lua_gettop found by what their code does;
#  - in EVERY sample, every Lua frame is one of the workload's functions
#    named as defined, with its first line (main chunk :0, driver, rec,
#    floorloop, ...; the coroutine's anonymous body unnamed), every
#    caller -> callee pair of Lua frames is one the workload makes, and
#    the fast function a Lua frame calls is the one its code calls
#    (floorloop -> math.floor, never math.ceil: LUA52COMPAT shifts the
#    ffids), a trace runs on tloop's frame or one it returns to (driver,
#    main chunk: a side trace of the loop's exit) -- one exception fails
#    the cell: silently wrong;
#  - >= 90% of the samples are the workload's whole stacks, host frames
#    _start, __libc_start_main, main, lua_cpcall, pmain, docall (or their
#    addresses when stripped), lua_pcall below the main chunk (static:
#    _start, __libc_start_main, then two unnamed frames, main and
#    lua_pcall), and
#    each phase has its leaf: rec^n, math.floor, string.rep's C code,
#    c_payload under ffi.meta.__call, work() in the coroutine, a trace;
#  - in every lwstacks sample, each caller stands on its call's line and
#    the innermost Lua frame on a line of its function (or "?" at entry).
# No buildable cell of the matrix is refused today (tests/matrix/
# ljmatrix.expect lists none), so a refusal here fails the test as well.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
wl=$WL/matrix.lua
load

# The workload's lines, from its "-- @NAME" markers.
mark() { grep -n -- "-- @$1\$" "$wl" | cut -d: -f1; }
L_driver=$(mark driver) L_rec=$(mark rec) L_floor=$(mark floorloop)
L_rep=$(mark reploop) L_ffi=$(mark ffiloop) L_res=$(mark resumer)
L_body=$(mark body) L_work=$(mark work) L_tloop=$(mark tloop)
# The lines a caller stands on while its callee runs.
calls="0=$(mark maincall) $L_driver=$(mark drivercall) $L_rec=$(mark reccall)"
calls="$calls $L_floor=$(mark floorcall) $L_rep=$(mark repcall) $L_ffi=$(mark fficall)"
calls="$calls $L_res=$(mark resumecall) $L_body=$(mark workcall),$(mark yieldcall)"

# launch BIN PHASE TAG: runs the workload in the background, sets $pid.
launch() {
	"$1" "$wl" "$2" "$K" </dev/null >"$W/$3-$2.out" 2>&1 &
	pid=$!
	kids="$kids $pid"
}

# ready PID PHASE TAG: waits for the workload's "ready" line; returns 1
# when it printed "nojit" instead (the trace phase on a build without a
# JIT) and exited.
ready() {
	within 120 grep -q 'ready\|nojit' "$W/$3-$2.out"
	if grep -q nojit "$W/$3-$2.out"; then wait "$1"; return 1; fi
	grep -q ready "$W/$3-$2.out" || { cat "$W/$3-$2.out" >&2; fail "$3 $2: the workload did not start"; }
}

# check TAG PID COMM PHASE CLASSES: the samples of PID in $f (folded
# --by-pid), in one awk (a fork costs much in the guest).  Each Lua frame
# against the workload's functions, each Lua caller -> callee pair, each
# fast function against its caller: the first wrong sample fails.  Then
# >= 90% whole stacks, and >= 10 samples of each of CLASSES.  Writes the
# PID's stacks to $W/TAG-PHASE.folded (chunk paths as @M) and prints
# "ok SUMMARY" or "FAIL WHY".
check() {
	awk -v pre="$3-$2;" -v classes="$5" -v d="driver @M:$L_driver" \
	    -v rec="rec @M:$L_rec" -v fl="floorloop @M:$L_floor" \
	    -v rp="reploop @M:$L_rep" -v ff="ffiloop @M:$L_ffi" \
	    -v rs="resumer @M:$L_res" -v body="@M:$L_body" \
	    -v wk="work @M:$L_work" -v tl="tloop @M:$L_tloop" \
	    -v out="$W/$1-$4.folded" -v hostre="$hostre" '
	function islua(x) { return x ~ /@M:[0-9]+$/ }
	function wrong(why) { print "FAIL WRONG: " why ": " substr($0, 1, 300); bad = 1; exit }
	BEGIN {
		known["main chunk @M:0"]; known[d]; known[rec]; known[fl]
		known[rp]; known[ff]; known[rs]; known[body]; known[wk]; known[tl]
		edge["main chunk @M:0>" d]; edge[d ">" rec]; edge[rec ">" rec]
		edge[d ">" fl]; edge[d ">" rp]; edge[d ">" ff]; edge[d ">" rs]
		edge[rs ">" body]; edge[body ">" wk]; edge[d ">" tl]
		ffok[fl ">math.floor"]; ffok[rp ">string.rep"]
		ffok[ff ">ffi.meta.__call"]; ffok[ff ">ffi.clib.__index"]
		ffok[rs ">coroutine.resume"]; ffok[body ">coroutine.yield"]
		ffok["main chunk @M:0>os.clock"]
	}
	index($0, pre) != 1 { next }
	{
		gsub(/@[^;]*\/matrix\.lua/, "@M")
		print > out
		n = $NF
		sub(/ [0-9]+$/, "")
		k = split($0, fr, ";")
		last = ""; whole = 0
		for (i = 2; i <= k; i++) {
			x = fr[i]
			if (x ~ /^TRACE_[0-9]+ @M:[0-9]+$/) {
				# A trace runs where the loop of tloop is, or lower: a
				# side trace from the loop exit returns through driver
				# to the main chunk (IR RETF stores each lower BASE in
				# G->jit_base), still named by where it started.
				if (last != tl && last != d && last != "main chunk @M:0")
					wrong("trace under " last)
				last = "TRACE"; continue
			}
			if (islua(x)) {
				if (!(x in known)) wrong("Lua frame " x)
				if (last == "" && x != "main chunk @M:0") wrong("outermost Lua frame " x)
				if (last != "" && !((last ">" x) in edge)) wrong("call " last " -> " x)
				if (last == "") {
					hp = fr[2]
					for (j = 3; j < i; j++) hp = hp ";" fr[j]
					whole = hp ~ hostre
				}
				last = x; continue
			}
			if (x ~ /^\[ffid / || x ~ /^\[lua kind /) wrong("frame " x)
			# A fast function: lib.name right after a Lua frame.
			if (i > 2 && islua(fr[i - 1]) && x ~ /^[a-z]+\.[A-Za-z_.]+$/ &&
			    !((fr[i - 1] ">" x) in ffok)) wrong("fast function " x " called by " fr[i - 1])
		}
		all += n
		if (!whole) next
		good += n
		if ($0 ~ /;rec @M:[0-9]+$/) cls["rec"] += n
		else if ($0 ~ /;floorloop @M:[0-9]+;math\.floor$/) cls["floor"] += n
		else if ($0 ~ /;reploop @M:[0-9]+;string\.rep;.*memset/) cls["rep"] += n
		else if ($0 ~ /;ffiloop @M:[0-9]+;ffi\.meta\.__call;.*;c_payload$/) cls["ffi"] += n
		else if ($0 ~ /;@M:[0-9]+;work @M:[0-9]+$/) cls["coro"] += n
		else if ($0 ~ /;tloop @M:[0-9]+;TRACE_[0-9]+ @M:[0-9]+(;[^;@]+)*$/) cls["trace"] += n
	}
	END {
		if (bad) exit
		if (all < 300) { print "FAIL only " all " samples"; exit }
		if (100 * good < 90 * all) { print "FAIL " (good + 0) " of " all " samples are whole stacks from _start to the workload"; exit }
		sum = good " of " all " whole;"
		nc = split(classes, c, " ")
		for (i = 1; i <= nc; i++) {
			if (cls[c[i]] < 10) { print "FAIL " (cls[c[i]] + 0) " samples of " c[i] "'"'"'s whole stack"; exit }
			sum = sum " " c[i] " " cls[c[i]]
		}
		print "ok " sum
	}' "$f" >"$W/$1-$4.check"
	read -r verdict <"$W/$1-$4.check"
	case $verdict in
	ok*) echo "$1 $4: ${verdict#ok }" ;;
	*) [ -s "$W/$1-$4.folded" ] && awk '{ print $NF, $0 }' "$W/$1-$4.folded" | sort -rn | head -3 | cut -c1-300 >&2
	   fail "$1 $4: ${verdict#FAIL }" ;;
	esac
}

# lines TAG PID: the current lines in $W/TAG.stacks (lwstacks read of PID,
# innermost frame first, Lua frames as lua:CHUNK:FIRSTLINE:LINE): a Lua
# frame with a Lua frame, fast function or trace above it stands on its
# call's line ($calls; tloop, whose loop a trace runs, anywhere in it);
# the innermost one anywhere in its function (the workload's are at most
# 8 lines long) or not yet known ("?": caught at the function's entry).
# One line off fails: the pc the module read for the frame is wrong.
lines() {
	awk -v calls="$calls" -v maincall="${calls#0=}" '
	BEGIN {
		n = split(calls, c, " ")
		for (i = 1; i <= n; i++) { split(c[i], kv, "="); call[kv[1]] = "," kv[2] "," }
		sub(/ .*/, "", maincall)
	}
	{
		st = $0
		sub(/.* stack=/, "", st)
		k = split(st, fr, ";")
		inner = 0
		for (i = 1; i <= k; i++) {
			if (fr[i] ~ /^(ff|trace):/) { inner = 1; continue }
			if (fr[i] !~ /^lua:.*\/matrix\.lua:[0-9]+:/) continue
			m = split(fr[i], f, ":")
			first = f[m - 1]; ln = f[m]
			if (inner && first in call) {
				if (index(call[first], "," ln ",") == 0) {
					print "FAIL caller " fr[i] " is not on its call line (" call[first] "): " substr(st, 1, 300); exit
				}
			} else if (ln == "?" && !inner) {
				unknown++
			} else if (first == 0 ? ln != maincall : (ln < first || ln > first + 8)) {
				print "FAIL " fr[i] " is not in its function: " substr(st, 1, 300); exit
			}
			inner = 1
			seen++
		}
		all++
	}
	END { if (all < 100) print "FAIL only " all + 0 " samples"; else print "ok " all " samples, " seen + 0 " Lua frames, " unknown + 0 " at entry" }' "$W/$1.stacks" >"$W/$1.lines"
	read -r verdict <"$W/$1.lines"
	case $verdict in
	ok*) echo "$1 lines: ${verdict#ok }" ;;
	*) fail "$1 lines: ${verdict#FAIL }" ;;
	esac
}

n=0
while read -r cell fl; do
	case $cell in '#'* | '') continue ;; esac
	b=$(matrix_bin "$cell" "$fl")
	[ -x "$b" ] || fail "$cell: no $b (make -C tests/kernel prep-t_rec_matrix on the host)"
	tag=$cell-$fl
	launch "$b" mix "$tag"
	pmix=$pid
	launch "$b" trace "$tag"
	ptr=$pid
	ready "$pmix" mix "$tag"
	ready "$ptr" trace "$tag" || ptr=
	comm=$(cat "/proc/$pmix/comm")
	# Both attached once, in the kept session: lwstacks reads the mix's
	# samples with their lines (the report has functions, not lines),
	# then record takes the session as it is.
	for p in $pmix $ptr; do
		$CTL attach "$p" --freq 999 >>"$W/$tag.err" 2>&1 ||
			{ cat "$W/$tag.err" >&2; fail "$tag: attach"; }
	done
	$STACKS read "$pmix" 1 >"$W/$tag.stacks" || fail "$tag: lwstacks"
	$CTL record -p "$pmix" ${ptr:+-p "$ptr"} -o "$W/$tag.luw" --duration 2 \
		2>>"$W/$tag.err" || { cat "$W/$tag.err" >&2; fail "$tag: record"; }
	for p in $pmix $ptr; do $CTL detach "$p" || fail "$tag: detach"; done
	# The file is self-contained: the report needs no live target, and
	# the guest's two CPUs are the report's again.
	kill -9 "$pmix" $ptr
	wait 2>/dev/null
	f=$W/$tag.folded
	$REP --by-pid "$W/$tag.luw" >"$f" || fail "$tag: report"
	case $fl in
	dwarf) grep -q "^attached pid $pmix: .*, layout DWARF of [^ ]*/$cell/luajit " "$W/$tag.err" ||
		{ cat "$W/$tag.err" >&2; fail "$tag: not attached with its DWARF layout"; } ;;
	stripped) ! grep -q "layout DWARF" "$W/$tag.err" || fail "$tag: a stripped binary with a DWARF layout" ;;
	static) grep -q "^attached pid $pmix: .*lua_close and lua_gettop found by their code" "$W/$tag.err" ||
		{ cat "$W/$tag.err" >&2; fail "$tag: not attached with a layout from the code of lua_close and lua_gettop"; } ;;
	esac
	# The host frames below the main chunk.  luajit.c: main ->
	# lua_cpcall -> pmain -> docall -> lua_pcall; static_host.c: main ->
	# lua_pcall, both unnamed (no symbol is left).
	case $fl in
	static) hostre='^_start;__libc_start_main;(__libc_start_call_main;)?host[.]static[+]0x[0-9a-f]+;host[.]static[+]0x[0-9a-f]+$' ;;
	*) hostre='^_start;__libc_start_main;(__libc_start_call_main;)?main;lua_cpcall;[^;]+;[^;]+;lua_pcall$' ;;
	esac
	echo "$tag: $(sed -n "s/^attached pid $pmix: .*), \(layout .*\), vm .*/\1/p" "$W/$tag.err")"
	check "$tag" "$pmix" "$comm" mix "rec floor rep ffi coro"
	lines "$tag"
	if [ -n "$ptr" ]; then
		check "$tag" "$ptr" "$comm" trace trace
	else
		# No JIT: the build must say so (jit.status() false).
		case $cell in *-nojit) ;; *) fail "$tag: no JIT in a build with one" ;; esac
	fi
	n=$((n + 1))
done <tests/kernel/rec_matrix.cells
[ "$n" -ge 5 ] || fail "only $n cells in rec_matrix.cells"
pass "$n binaries profiled right"
