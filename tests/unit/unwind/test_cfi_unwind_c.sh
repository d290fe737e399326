#!/usr/bin/env bash
# Live C processes under luaunwind-hostunwind: deep recursion built
# -O2 -fomit-frame-pointer and -fno-omit-frame-pointer (PIE), main thread
# plus two threads.  Every probe of every thread must unwind completely:
# main's stack down to main, __libc_start_main and _start, each thread's
# down to thread_main, start_thread and clone3, with the recursion above.
# The frame-pointer fallback is checked on the -fno-omit-frame-pointer
# build with its table ignored, and, as a negative control, the same on
# the -fomit-frame-pointer build must fail most of the time.
#
# A third target spins in clock_gettime, i.e. in the [vdso].
#
# A fourth spins in a function gcc realigns through a DRAP register
# (CFA = *(rbp - N), rbp saved at rbp + 0) below rsp-based callers: every
# probe must give exactly the expected chain, with and without the
# frame-pointer fallback.
#
# usage: test_cfi_unwind_c.sh TOOL TARGET_OMITFP TARGET_FP TARGET_VDSO
#                             TARGET_REALIGN
set -euo pipefail
tool=$1 omitfp=$2 fp=$3 vdso=$4 realign=$5
. "$(dirname "$0")/../common/testlib.sh"

start() { # TARGET NAME -> sets $pid once the target is running its loops
	"$1" 2 >"$tmp/$2.ready" &
	pid=$!
	pids+=("$pid")
	wait_line "$tmp/$2.ready" ready "$pid" && return 0
	echo "FAIL: $1 did not start"
	exit 1
}

# Per sample: complete, the right roots in the right order, deep recursion.
# With EDGES (a file of func+0xOFF, one a line), a sample whose innermost
# frame is at one of them is only counted, not judged.
judge() { # OUTPUT [EDGES] -> prints "samples good deep edge"
	awk -v edgefile="${2:-}" '
	BEGIN { if (edgefile != "") while ((getline l < edgefile) > 0) edges[l] = 1 }
	function done_block() {
		if (!inb) return
		if (atedge) { nedge++; inb = 0; return }
		n++
		ok = (end == "complete")
		if (names[nf-1] == "_start")
			ok = ok && names[nf-2] == "__libc_start_main" && seen["main"]
		else
			ok = ok && names[nf-1] ~ /^clone3?$/ && names[nf-2] == "start_thread" && seen["thread_main"]
		if (ok) good++
		else if (bad++ < 3) print "bad sample:\n" blk > "/dev/stderr"
		bad += 0
		if (seen["rec_a"] >= 20) deep++
		inb = 0
	}
	/^probe / { done_block(); inb = 1; nf = 0; atedge = 0; delete seen
		    split($0, w, " end "); end = w[2]; blk = $0; next }
	/^#/ && inb { if (nf == 0 && ($4 in edges)) atedge = 1
		      nm = $4; sub(/\+0x[0-9a-f]+$/, "", nm); names[nf++] = nm; seen[nm]++
		      if (nf <= 4 || /^#[0-9]+ .*(main|_start|start_thread|clone)/) blk = blk "\n" $0 }
	END { done_block(); print n + 0, good + 0, deep + 0, nedge + 0 }' "$1"
}

# The instructions of TARGET where a frame-pointer step from the sampled pc
# cannot be right, whatever the unwinder, in each function that sets up a
# frame record: from its first instruction until its mov %rsp,%rbp (gcc
# schedules others in between; rbp is still the caller's there, so
# rbp + 8 skips the caller) and every ret (the record is popped).  Without
# CFI nothing tells them from the body: perf's frame-pointer unwinder is
# wrong there too.  (A function without a record, leaf_spin, skips its
# caller throughout, never one of the roots judged.)
fp_edges() { # TARGET -> func+0xOFF lines
	objdump -d --no-show-raw-insn "$1" | perl -ne '
		sub flush { print @edge if $framed; @edge = (); $framed = 0 }
		if (/^([0-9a-f]+) <([^>]+)>:$/) { flush(); ($base, $fn, $pro) = (hex $1, $2, 1); next }
		next unless defined $fn && /^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$/;
		my ($at, $op, $args) = (hex $1, $2, $3);
		push @edge, sprintf("%s+0x%x\n", $fn, $at - $base) if $pro || $op =~ /^ret/;
		($pro, $framed) = (0, 1) if $pro && $op eq "mov" && $args =~ /^%rsp,%rbp/;
		END { flush() }'
}

run() { # NAME TARGET MIN_GOOD_PERCENT MIN_DEEP_PERCENT EXPECT(pass|fail) TOOL_OPTS...
	local name=$1 target=$2 min=$3 mindeep=$4 expect=$5 edges=
	shift 5
	# Frame pointers and no table: the function edges are not judged.
	if [ "${1:-}" = --fp-for ] && [ "$expect" = pass ]; then
		edges=$tmp/$name.edges
		fp_edges "$target" >"$edges"
		[ -s "$edges" ] || { echo "FAIL $name: no function edges found in $target"; fail=1; return; }
	fi
	start "$target" "$name"
	"$tool" -n 50 -i 10 "$@" "$pid" >"$tmp/$name.out" 2>"$tmp/$name.err" || {
		echo "FAIL $name: tool exited $?"; cat "$tmp/$name.err"; fail=1; return; }
	kill "$pid"
	read -r n good deep nedge < <(judge "$tmp/$name.out" "$edges" 2>"$tmp/$name.bad")
	echo "$name: $n samples, $good complete with the right roots, $deep deep" \
	     "(and $nedge at a function's edge, not judged)"
	[ -s "$tmp/$name.err" ] && sed 's/^/  stderr: /' "$tmp/$name.err"
	if [ "$expect" = pass ]; then
		if [ "$n" -lt 50 ] || [ $((good * 100)) -lt $((n * min)) ] ||
		   [ $((deep * 100)) -lt $((n * mindeep)) ]; then
			echo "FAIL $name: want >= $min% complete and >= $mindeep% deep (>= 20 rec_a frames) of >= 50"
			cat "$tmp/$name.bad"
			fail=1
		fi
	elif [ $((good * 2)) -ge "$n" ]; then
		echo "FAIL $name: negative control unwound $good of $n without tables"
		fail=1
	fi
}

run omitfp "$omitfp" 100 50 pass
run omitfp-no-fp "$omitfp" 100 50 pass --no-fp
run fp "$fp" 100 50 pass
run fp-fallback "$fp" 100 50 pass --fp-for "$(basename "$fp")"
run omitfp-without-table "$omitfp" 0 0 fail --fp-for "$(basename "$omitfp")"
# Code with no file: the [vdso] table is built from the image in memory.
run vdso "$vdso" 100 0 pass --no-fp
invdso=$(grep -c '^#0 .* \[vdso\]+0x' "$tmp/vdso.out" || true)
echo "vdso: $invdso of 50 probes stopped inside the [vdso]"
if [ "$invdso" -lt 25 ]; then
	echo "FAIL vdso: want >= 25 probes inside the [vdso]"
	fail=1
fi

# The realigned frame: first that gcc still built it as this test needs,
# a CFA expression "breg6 (rbp) -N; deref" with N > 8 over the body of
# realigned(), else the test would prove nothing.
lo=$(nm "$realign" | awk '$3 == "realigned" { print $1 }')
if ! LC_ALL=C readelf --debug-dump=frames "$realign" |
	awk -v lo="$lo" '
	/ FDE / { split($NF, pc, /[=.]+/); infde = (pc[2] == lo) }
	infde && /DW_CFA_def_cfa_expression \(DW_OP_breg6 \(rbp\): -[0-9]+; DW_OP_deref\)/ {
		n = $0; sub(/.*\(rbp\): -/, "", n); sub(/;.*/, "", n)
		if (n + 0 > 8) found = 1 }
	END { exit !found }'; then
	echo "FAIL realign: realigned() at 0x$lo has no CFA expression breg6 -N; deref (N > 8)"
	LC_ALL=C readelf --debug-dump=frames "$realign" | grep -A20 "pc=$lo" || true
	exit 1
fi

# Per sample: complete, and exactly the expected chain, nothing else.
judge_exact() { # OUTPUT -> prints "samples good in_realigned in_leaf"
	awk '
	function done_block() {
		if (!inb) return
		n++
		ok = (end == "complete") &&
		     (chain ~ /^ (leaf_spin )?realigned outer_b outer_a main (__libc_start_call_main )?__libc_start_main _start$/ ||
		      chain ~ /^ (leaf_spin )?realigned outer_b outer_a thread_main start_thread clone3?$/)
		if (ok) good++
		else if (bad++ < 3) print "bad sample:\n" blk > "/dev/stderr"
		if (first == "realigned") inr++
		if (first == "leaf_spin") inleaf++
		inb = 0
	}
	/^probe / { done_block(); inb = 1; nf = 0; chain = ""
		    split($0, w, " end "); end = w[2]; blk = $0; next }
	/^#/ && inb { nm = $4; sub(/\+0x[0-9a-f]+$/, "", nm)
		      if (!nf++) first = nm
		      chain = chain " " nm; blk = blk "\n" $0 }
	END { done_block(); print n + 0, good + 0, inr + 0, inleaf + 0 }' "$1"
}

for mode in realign realign-no-fp; do
	opts=()
	[ "$mode" = realign-no-fp ] && opts=(--no-fp)
	start "$realign" "$mode"
	"$tool" -n 50 -i 10 "${opts[@]}" "$pid" >"$tmp/$mode.out" 2>"$tmp/$mode.err" || {
		echo "FAIL $mode: tool exited $?"; cat "$tmp/$mode.err"; fail=1; continue; }
	kill "$pid"
	read -r n good inr inleaf < <(judge_exact "$tmp/$mode.out" 2>"$tmp/$mode.bad")
	echo "$mode: $n samples, $good exactly right; $inr stopped in realigned(), $inleaf in its leaf"
	[ -s "$tmp/$mode.err" ] && sed 's/^/  stderr: /' "$tmp/$mode.err"
	if [ "$n" -lt 50 ] || [ "$good" -ne "$n" ] || [ $((inr * 10)) -lt "$n" ]; then
		echo "FAIL $mode: want all of >= 50 samples exactly right, >= 10% of them in realigned()"
		cat "$tmp/$mode.bad"
		fail=1
	fi
done
exit $fail
