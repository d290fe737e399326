#!/usr/bin/env bash
# output/pprof.c against the real reader: Debian's `go tool pprof`
# (golang-go) must list the same stacks and counts as the folded input.
#
# usage: test_pprof.sh BIN_DIR FIXTURES_DIR
set -euo pipefail

bin=$1
fixtures=$2
out=$PWD/pprof_check
rm -rf "$out"
mkdir -p "$out"
export LC_ALL=C

command -v go >/dev/null || {
	echo "pprof check: go is not installed (scripts/deps.sh test)" >&2
	exit 1
}
# pprof keeps a cache and history under $HOME: keep them out of the way.
export HOME=$out/home GOFLAGS=-mod=mod GOCACHE=$out/gocache
mkdir -p "$HOME"
pprof() { go tool pprof "$@" 2>"$out/pprof.err"; }

# traces FILE.pb.gz [INDEX]: go tool pprof -traces of the sample type
# INDEX (default samples; values of a byte type in bytes: -unit=B, the
# B dropped) (one block per sample, leaf first, value on the first line;
# an empty frame name shows as <unknown>) rebuilt as sorted folded text:
# root first, count after a space.
traces() {
	pprof -traces -sample_index="${2:-samples}" -unit=B "$1" | awk '
		function flush(  i, s) {
			if (n == 0) return
			s = f[n]
			for (i = n - 1; i >= 1; i--) s = s ";" f[i]
			print s " " v
			n = 0
		}
		function frame(t) { return t == "<unknown>" ? "" : t }
		/^-----------\+/ { flush(); inblock = 1; next }
		!inblock { next }
		n == 0 { v = $1; sub(/B$/, "", v); sub(/^ *[0-9]+B? +/, ""); f[++n] = frame($0); next }
		{ sub(/^ +/, ""); f[++n] = frame($0) }
		END { flush() }' | sort
}

fail=0
check() {	# folded-file
	local in=$1 name
	name=$(basename "$in" .folded)
	# pprof shortens C++-looking names (drops <...> and (...)): those
	# stacks are left out here and checked through -raw below.
	grep -v '[<(]' "$in" >"$out/$name.in"
	"$bin/luaunwind-flamegraph" --no-svg --pprof "$out/$name.pb.gz" \
		--period-ns 1000000 --duration-ns 2000000000 "$out/$name.in"

	traces "$out/$name.pb.gz" >"$out/$name.got"

	# The input merged and sorted the same way (tab or space before the
	# count).
	awk '{ c = $NF; sub(/[ \t][0-9]+$/, ""); t[$0] += c }
	     END { for (k in t) print k " " t[k] }' "$out/$name.in" |
		sort >"$out/$name.want"
	if ! cmp -s "$out/$name.want" "$out/$name.got"; then
		echo "pprof check: $name: go tool pprof -traces differs:" >&2
		diff "$out/$name.want" "$out/$name.got" >&2 || true
		fail=1
	fi
	echo "$name: $(wc -l <"$out/$name.got") stacks equal in go tool pprof -traces"
}

check "$fixtures/sample.folded"
check "$fixtures/sysprof_callchain.expected.folded"

# A sysprof stream straight through luaunwind-report --pprof: the same
# stacks as its --folded output.
st=$fixtures/sysprof_callchain.bin
"$bin/luaunwind-report" --folded "$st" | sort >"$out/stream.want"
if "$bin/luaunwind-report" --pprof "$out/stream.pb.gz" "$st"; then
	traces "$out/stream.pb.gz" >"$out/stream.got"
	if ! cmp -s "$out/stream.want" "$out/stream.got"; then
		echo "pprof check: sysprof stream: go tool pprof -traces differs from --folded:" >&2
		diff "$out/stream.want" "$out/stream.got" >&2 || true
		fail=1
	fi
	echo "sysprof stream: $(wc -l <"$out/stream.got") stacks equal in go tool pprof -traces"
else
	echo "pprof check: luaunwind-report --pprof failed on $st" >&2
	fail=1
fi

# A real allocation recording (make demo's: alloc.lua under Debian's
# luajit in a 6.1 guest, record --alloc --no-cpu) through luaunwind-report
# --alloc --pprof: alloc_objects and alloc_space, the latter's stacks and
# bytes those of --alloc --folded, the period its interval in bytes.
al=$fixtures/alloc_demo.luw
"$bin/luaunwind-report" --alloc --folded "$al" 2>/dev/null | sort >"$out/alloc.want"
if "$bin/luaunwind-report" --alloc --pprof "$out/alloc.pb.gz" "$al" 2>/dev/null; then
	traces "$out/alloc.pb.gz" alloc_space >"$out/alloc.got"
	if ! [ -s "$out/alloc.want" ] || ! cmp -s "$out/alloc.want" "$out/alloc.got"; then
		echo "pprof check: allocations: go tool pprof -traces differs from --alloc --folded:" >&2
		diff "$out/alloc.want" "$out/alloc.got" >&2 || true
		fail=1
	fi
	# The sample types, and the period as Go's heap profiles give it:
	# the sampling interval in bytes (the recording's, 64 KiB).
	raw=$(pprof -raw "$out/alloc.pb.gz")
	grep -q '^alloc_objects/count alloc_space/bytes$' <<<"$raw" &&
		grep -q '^PeriodType: alloc_space bytes$' <<<"$raw" &&
		grep -q '^Period: 65536$' <<<"$raw" || {
		echo "pprof check: allocations: sample types or period in -raw:" >&2
		head -6 <<<"$raw" >&2
		fail=1
	}
	echo "allocations: $(wc -l <"$out/alloc.got") stacks equal in go tool pprof -traces"
else
	echo "pprof check: luaunwind-report --alloc --pprof failed on $al" >&2
	fail=1
fi

p=$out/sample-full.pb.gz
"$bin/luaunwind-flamegraph" --no-svg --pprof "$p" --period-ns 1000000 \
	--duration-ns 2000000000 "$fixtures/sample.folded"
raw=$(pprof -raw "$p")
# Full names survive in the profile: -raw shows them as system names.
for name in 'std::vector<int>::push_back(int&&)' \
	    "check \"a<b\" && 'c'>d @esc.lua:1"; do
	grep -qF "($name)" <<<"$raw" || {
		echo "pprof check: -raw lacks '$name'" >&2
		fail=1
	}
done
grep -q '^PeriodType: cpu nanoseconds$' <<<"$raw" &&
	grep -q '^Period: 1000000$' <<<"$raw" &&
	grep -q '^Duration: 2s$' <<<"$raw" || {
	echo "pprof check: period or duration missing from -raw" >&2
	fail=1
}
# Values: count and count * period, c_leaf's sample (412) leaf first.
grep -Eq '^ +412 +412000000: [0-9]' <<<"$raw" || {
	echo "pprof check: no sample '412 412000000' in -raw" >&2
	fail=1
}
# Lua frames carry file and line.
grep -Eq ' outer @sw.lua:3 sw.lua:3 ' <<<"$raw" || {
	echo "pprof check: Lua location without file:line" >&2
	fail=1
}

# -top: self and inclusive counts of c_leaf (412 self, 469 with memcpy),
# and the total.
top=$(pprof -top -sample_index=samples "$p")
grep -q 'Total samples = 1500' <<<"$top" &&
	grep -Eq '^ +412 +27\.47% +[0-9.]+% +469 +31\.27%  c_leaf$' <<<"$top" || {
	echo "pprof check: -top:" >&2
	echo "$top" >&2
	fail=1
}
# Our own --top agrees with pprof's -top on self and total per frame.
# pprof: flat flat% sum% cum cum% name; ours: self self% total total% name.
cols() { awk -v t="$1" -v k="$2" '{ s = $1 " " $t
	for (i = 0; i < k; i++) sub(/^ *[^ ]+/, ""); sub(/^ +/, ""); print s, $0 }'; }
# Five rows taken by awk itself: `| head` would kill awk's writes with
# SIGPIPE, which pipefail turns into a failure.
theirs=$(awk '/^ +flat/ { on = 1; next } on && n++ < 5' <<<"$top" | cols 4 5)
ours=$("$bin/luaunwind-flamegraph" --no-svg --top 5 "$fixtures/sample.folded" |
	awk '/^ +self/ { on = 1; next } on' | cols 3 4)
[ "$(wc -l <<<"$theirs")" -eq 5 ] && [ "$theirs" = "$ours" ] || {
	echo "pprof check: --top differs from pprof -top:" >&2
	diff <(echo "$theirs") <(echo "$ours") >&2 || true
	fail=1
}
# cpu time is the default sample index: 1500 samples of 1 ms.
grep -q 'Total samples = 1500ms' <<<"$(pprof -top "$p")" || {
	echo "pprof check: cpu total is not 1500ms" >&2
	fail=1
}
[ $fail -eq 0 ] && echo "pprof check: go tool pprof agrees with the folded input"
exit $fail
