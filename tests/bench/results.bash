# Sourced by the benchmarks that write a section of tests/bench/RESULTS.md.
#
# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# results_put NAME: the section read from stdin, from its line
# "<!-- NAME-bench:begin -->" to "<!-- NAME-bench:end -->", takes the
# place of that section in RESULTS.md, or is appended when there is none;
# every other section stays.  The section is read from a file, not passed
# to awk with -v, which would expand the backslashes in it.
results_put() {
	local results=${top:?}/tests/bench/RESULTS.md sec tmp
	local begin="<!-- $1-bench:begin -->" end="<!-- $1-bench:end -->"
	sec=$(mktemp)
	tmp=$(mktemp)
	cat >"$sec"
	touch "$results"
	if grep -qxF "$begin" "$results"; then
		awk -v b="$begin" -v e="$end" -v secfile="$sec" '
			$0 == b { while ((getline l < secfile) > 0) print l; skip = 1; next }
			$0 == e { skip = 0; next }
			!skip { print }' "$results" >"$tmp"
	else
		{ [ -s "$results" ] && cat "$results" && echo; cat "$sec"; } >"$tmp"
	fi
	mv "$tmp" "$results"
	chmod 644 "$results"
	rm -f "$sec"
}

# guest_bench NAME TIMEOUT: on the host, runs tests/bench/NAME.sh --guest
# in a QEMU TCG guest on Debian's 6.1 kernel (at most TIMEOUT s) and
# writes the "RESULT " lines it prints as section NAME, under the heading
# that the caller's function bench_header prints; it sees $when, $cpu,
# $ncpu, $rel (the guest's kernel), $load0 and $load1 (the load averages
# before and after).
guest_bench() {
	local name=$1 timeout=$2 log
	rel=$(scripts/kver.sh 6.1) ||
		{ echo "$name.sh: no 6.1 kernel installed (scripts/deps.sh kernel)" >&2; return 1; }
	make -s -C tests/kernel >/dev/null
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	when=$(date -u '+%Y-%m-%d %H:%M UTC')
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	ncpu=$(nproc)
	log=$(mktemp)
	LUW_VM_OUT=${LUW_VM_OUT:-$top/out/vm-$name} scripts/vm-run --kernel 6.1 \
		--timeout "$timeout" -- bash "tests/bench/$name.sh" --guest | tee "$log"
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	echo "load average (1, 5, 15 min) before: $load0; after: $load1"
	if ! grep -q '^RESULT ' "$log"; then
		rm -f "$log"
		echo "$name.sh: no figures from the guest" >&2
		return 1
	fi
	{
		echo "<!-- $name-bench:begin -->"
		bench_header
		sed -n 's/^RESULT //p' "$log"
		echo "<!-- $name-bench:end -->"
	} | results_put "$name"
	rm -f "$log"
	echo "$name.sh: figures written to tests/bench/RESULTS.md"
}

# guest_prelude NAME W: in the guest (tests/bench/NAME.sh --guest), what
# every guest part starts with: K and CTL (the programs of build/ktest),
# W (its scratch directory, in the guest's tmpfs: polling files over 9p
# would cost the guest CPU time during timed runs), kids (pids killed at
# exit), the module loaded; die MSG and R LINE (a line of figures for the
# host) defined.
guest_prelude() {
	bench_name=$1
	K=build/ktest
	CTL=$K/luaunwind-ctl
	W=$2
	mkdir -p "$W"
	kids=
	trap 'for p in $kids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null' EXIT
	insmod "build/kmod/$LUW_KVER/luaunwind.ko" || die "insmod"
}
die() { echo "${bench_name:-bench}.sh (guest): $*" >&2; exit 1; }
R() { echo "RESULT $*"; }
