# Sourced (after lib.sh and lualib.sh) by the allocation sampling tests
# (t_alloc, t_alloc_targets), on tests/fixtures/workloads/alloc.lua.
REP=$K/luaunwind-report

# byte PID ADDR: the byte at ADDR in PID's memory, two hex digits.
byte() {
	dd if=/proc/$1/mem bs=1 skip=$(($2)) count=1 2>/dev/null | od -An -tx1 | tr -d ' \n'
}
# lib PID ADDR: the load bias (start - offset) and path of the executable
# mapping holding ADDR.
lib() {
	local range perm off rest
	while read -r range perm off _ _ rest; do
		case $perm in *x*) ;; *) continue ;; esac
		if [ $(($2)) -ge $((0x${range%-*})) ] && [ $(($2)) -lt $((0x${range#*-})) ]; then
			echo $((0x${range%-*} - 0x$off)) "$rest"
			return
		fi
	done </proc/$1/maps
}
# bias PID PATH: the load bias of PATH's executable mapping in PID.
bias() {
	local range perm off rest
	while read -r range perm off _ _ rest; do
		case $perm in *x*) ;; *) continue ;; esac
		[ "$rest" = "$2" ] && { echo $((0x${range%-*} - 0x$off)); return; }
	done </proc/$1/maps
}
# allocf ERRFILE: the allocator record printed as probed.
allocf() {
	sed -n 's/.*allocators probed \(0x[0-9a-f]*\).*/\1/p' "$1" | head -1
}
# probed ERRFILE: record printed the allocator it probed.
probed() {
	[ -n "$(allocf "$1")" ]
}
# rec_start TAG PID [OPTION...]: record -p PID -o $W/TAG.luw
# --alloc-interval 4096 OPTION... in the background (its stderr in
# $W/TAG.err), once it has probed: the breakpoint is at the allocator.
# Sets rec (record's pid) and pa (the allocator's address in PID).
rec_start() {
	local tag=$1 p=$2
	shift 2
	$CTL record -p "$p" -o "$W/$tag.luw" --alloc-interval 4096 "$@" \
		2>"$W/$tag.err" </dev/null &
	rec=$!
	within 60 probed "$W/$tag.err" || {
		cat "$W/$tag.err" >&2
		fail "$tag: record --alloc did not attach (pid $p: $(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null || echo gone), threads $(ls "/proc/$p/task" 2>/dev/null | tr '\n' ' '))"
	}
	pa=$(allocf "$W/$tag.err")
	[ "$(byte "$p" "$pa")" = cc ] || fail "$tag: no breakpoint at the allocator $pa: $(byte "$p" "$pa")"
}
# rec_whole TAG PID OUT GO: after rec_start TAG PID on alloc.lua waiting
# for the file GO (writing OUT): lets it run its rounds under the
# recording (rounds), then checks the report (share and whole).
rec_whole() {
	rounds "$2" "$rec" "$W/$1.err" "$3" "$4"
	share "$1" "$3"
	whole "$1"
}
# rounds PID REC ERR OUT GO: lets the workload PID (alloc.lua waiting
# for the file GO, writing OUT) run its rounds under the recording REC
# (its stderr in ERR), and once it printed "done" stops REC with SIGTERM:
# record drains what is waiting and names it while the process is still
# there to read the names from.  Then lets the process exit.
rounds() {
	touch "$5"
	within 900 grep -q done "$4" || fail "the workload did not end its rounds: $(tail -2 "$4")"
	kill -TERM "$2"
	wait "$2" || { cat "$3" >&2; fail "record --alloc of pid $1"; }
	rm -f "$5"
	wait "$1"
}
# in5se EST EXACT N: an estimate from N sampled records within five
# standard errors of the exact count, taken as EXACT / sqrt(N): each
# record stands for about one interval of bytes (less for larger
# allocations, so the bound is loose for them).
in5se() {
	awk -v e="$1" -v x="$2" -v n="$3" \
		'BEGIN { d = e - x; if (d < 0) d = -d; exit !(x > 0 && n > 0 && d * sqrt(n) <= 5 * x) }'
}

# share TAG OUT: the report of $W/TAG.luw (its record's stderr in
# $W/TAG.err) against the exact counts the workload printed into OUT:
# big_strings' share of the bytes, sampled and exact, in thousandths
# (got, want), within five standard errors.  At an interval of 4096
# bytes a record of either size stands for 4.6 to 5.8 KiB (luaunwind.h:
# nsize / (1 - e^(-nsize/interval))), close enough to equal weights that
# a share s of n records has a standard error of about
# sqrt(s (1 - s) / n).  The small interval keeps the records many on a
# slow kernel (KASAN under TCG).  Sets n, big, small, ebig, esmall.
share() {
	local tag=$1 all exact want margin d est cnt
	$REP --alloc "$W/$tag.luw" >"$W/$tag.folded" 2>"$W/$tag.rep" ||
		{ cat "$W/$tag.rep" >&2; fail "$tag: report --alloc"; }
	n=$(sed -n 's/.* \([0-9]*\) allocation samples.*/\1/p' "$W/$tag.err")
	big=$(folded_sum "$W/$tag.folded" 'big_strings')
	small=$(folded_sum "$W/$tag.folded" 'small_strings')
	all=$(folded_sum "$W/$tag.folded")
	exact=$(grep '^exact' "$2" | tail -1)
	set -- $exact
	ebig=$2 esmall=$3
	[ -n "$ebig" ] && [ "$esmall" -gt 0 ] || fail "$tag: the workload printed no exact counts"
	[ "$n" -ge 300 ] || fail "$tag: only $n allocation records"
	got=$((1000 * big / (big + small)))
	want=$((1000 * ebig / (ebig + esmall)))
	margin=$(awk -v s="$want" -v n="$n" 'BEGIN { s /= 1000; printf "%d", 5000 * sqrt(s * (1 - s) / n) + 1 }')
	d=$((got > want ? got - want : want - got))
	[ "$d" -le "$margin" ] ||
		fail "$tag: big_strings' share of the bytes: $got/1000 sampled, $want/1000 exact (margin $margin, $n records)"
	[ $((big + small)) -ge $((all * 9 / 10)) ] ||
		fail "$tag: only $((big + small)) of $all bytes under the two functions"
	# The total: the report's estimate of every byte allocated against
	# the probe's own count for the recording.
	est=$(sed -n 's/.* an estimated \([0-9]*\) bytes.*/\1/p' "$W/$tag.rep")
	cnt=$(sed -n 's/.* the probes counted \([0-9]*\) bytes.*/\1/p' "$W/$tag.rep")
	[ -n "$est" ] && [ -n "$cnt" ] || fail "$tag: no totals from report --alloc: $(cat "$W/$tag.rep")"
	in5se "$est" "$cnt" "$n" ||
		fail "$tag: an estimated $est bytes in all, the probe counted $cnt ($n records)"
	echo "$tag: $n records, big_strings $got/1000 of the bytes (exact $want/1000, margin $margin), $est bytes estimated of $cnt counted" >>"$W/shares"
}

# whole TAG: after share TAG on a recording of the workload's whole run
# (its last "exact" line written at its end): the bytes of big_strings and
# small_strings in the report against that line's total of them, within
# five standard errors (in5se).
whole() {
	in5se "$((big + small))" "$((ebig + esmall))" "$n" ||
		fail "$1: the two functions' bytes: $((big + small)) estimated, $((ebig + esmall)) exact ($n records)"
	echo "$1: the two functions' bytes $((big + small)) estimated, $((ebig + esmall)) exact" >>"$W/shares"
}
