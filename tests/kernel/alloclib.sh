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
probed() {
	[ -n "$(allocf "$1")" ]
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
	# the probe's own count for the recording, within five standard
	# errors (about the total / sqrt(n) when each record stands for
	# about one interval of bytes, less for larger allocations).
	est=$(sed -n 's/.* an estimated \([0-9]*\) bytes.*/\1/p' "$W/$tag.rep")
	cnt=$(sed -n 's/.* the probes counted \([0-9]*\) bytes.*/\1/p' "$W/$tag.rep")
	[ -n "$est" ] && [ -n "$cnt" ] || fail "$tag: no totals from report --alloc: $(cat "$W/$tag.rep")"
	awk -v e="$est" -v c="$cnt" -v n="$n" 'BEGIN { d = e - c; if (d < 0) d = -d; exit !(c > 0 && d * sqrt(n) <= 5 * c) }' ||
		fail "$tag: an estimated $est bytes in all, the probe counted $cnt ($n records)"
	echo "$tag: $n records, big_strings $got/1000 of the bytes (exact $want/1000, margin $margin), $est bytes estimated of $cnt counted" >>"$W/shares"
}

# whole TAG: after share TAG on a recording of the workload's whole run
# (its last "exact" line written at its end): the bytes of big_strings and
# small_strings in the report against that line's total of them, within
# five standard errors (the total / sqrt(n), n records under them).
whole() {
	awk -v e="$((big + small))" -v x="$((ebig + esmall))" -v n="$n" \
		'BEGIN { d = e - x; if (d < 0) d = -d; exit !(x > 0 && d * sqrt(n) <= 5 * x) }' ||
		fail "$1: the two functions' bytes: $((big + small)) estimated, $((ebig + esmall)) exact ($n records)"
	echo "$1: the two functions' bytes $((big + small)) estimated, $((ebig + esmall)) exact" >>"$W/shares"
}
