#!/usr/bin/env bash
# Where the sample handler's instructions go: guest kernel instructions
# per sample, by function, luaunwind against perf -g; figures only,
# nothing asserted.
#
# The workload and guest of overhead.sh (overhead.lua, JIT off: the
# interpreter's recursion and table.sort with a Lua comparator; Debian's
# 6.1 kernel under TCG with -icount shift=0, one vCPU, cpu-clock at
# 999 Hz), run under three kinds: alone, `luaunwind-ctl attach` with a
# reader writing the raw records nowhere (`dump --raw`), and
# `perf record -g`.  A TCG plugin (tests/bench/kcount.c) counts every
# kernel-space instruction the guest executes, by address; the guest's
# /proc/kallsyms (modules included) names them.  Each kind runs twice,
# R and 2R rounds: the difference between the two runs, less alone's
# difference, is the cost of the samples the second R rounds took --
# boot, attach, page faults and the workload's own kernel time cancel --
# and divided by how many more samples perf or the module counted, the
# cost per sample.  Exact counts (not times, not estimates), but of TCG's
# guest: a copy of N bytes with `rep movsb` counts N instructions here,
# a few cycles per 64 bytes on hardware.  So the bytes copied are given
# apart.
#
# usage: tests/bench/handlercost.sh                     (host)
#        LUW_HC_REUSE=1 tests/bench/handlercost.sh      (the last run's
#                                                        counts again)
#        tests/bench/handlercost.sh --guest KIND ROUNDS (in the guest)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
cd "$top"

if [ "${1:-}" = --guest ]; then
	kind=$2 rounds=$3
	CTL=build/ktest/luaunwind-ctl
	W=/tmp/luw-hc
	mkdir -p "$W"
	die() { echo "handlercost.sh (guest): $*" >&2; exit 1; }
	insmod "build/kmod/$LUW_KVER/luaunwind.ko" || die insmod
	cat /proc/kallsyms >"$LUW_OUT/kallsyms"
	# Without ASLR (setarch -R, which execs: the pid is the workload's):
	# where the libraries land moves which return addresses share a slot
	# of the module's step memo, and with it a sample's cost by a few
	# hundred instructions from boot to boot; without, runs repeat.
	lj=(setarch -R luajit tests/bench/overhead.lua "$W/go" "$rounds")
	case $kind in
	perf-g) perf record -e cpu-clock -F 999 -g -o "$W/perf.data" -- \
			"${lj[@]}" >"$W/w.out" 2>"$W/w.err" & ;;
	*) "${lj[@]}" >"$W/w.out" 2>"$W/w.err" & ;;
	esac
	for _ in $(seq 300); do grep -q ready "$W/w.out" && break; sleep 0.1; done
	grep -q ready "$W/w.out" || die "$kind: the workload did not start: $(cat "$W/w.out" "$W/w.err")"
	if [ "$kind" = luaunwind ]; then
		"$CTL" attach "$(pgrep -f overhead.lua | head -1)" --freq 999 >"$W/a.out" 2>&1 ||
			die "attach: $(cat "$W/a.out")"
		"$CTL" dump --raw >/dev/null 2>"$W/d.err" &
	fi
	sleep 1
	touch "$W/go"
	wait
	grep -q '^elapsed' "$W/w.out" || die "$kind: no result: $(cat "$W/w.out" "$W/w.err")"
	case $kind in
	luaunwind) n=$(sed -n 's/.*dump: samples=\([0-9]*\).*/\1/p' "$W/d.err") ;;
	perf-g) n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$W/w.err") ;;
	*) n=0 ;;
	esac
	[ -n "$n" ] || die "$kind: no sample count"
	echo "samples $n"
	exit 0
fi

# ---- on the host ------------------------------------------------------------
die() { echo "handlercost.sh: $*" >&2; exit 1; }
command -v qemu-system-x86_64 >/dev/null || die "no qemu (scripts/deps.sh kernel)"
rel=$(scripts/kver.sh 6.1) || die "no 6.1 kernel installed (scripts/deps.sh kernel)"
work=$top/build/bench/handlercost
mkdir -p "$work"

# The plugin API's header ships only in QEMU's source: that of the
# installed version, whose API the plugin must match.
qver=$(dpkg-query -W -f '${source:Version}' qemu-system-x86 2>/dev/null) || die "qemu-system-x86 not installed"
hdr=$work/qemu-${qver#*:}/qemu-plugin.h
if [ ! -s "$hdr" ]; then
	mkdir -p "$work/src" "$(dirname "$hdr")"
	(cd "$work/src" && "$top/scripts/debsuite.sh" bookworm source --download-only "qemu=$qver") ||
		die "cannot fetch QEMU $qver's source"
	orig=$(ls "$work"/src/qemu_*.orig.tar.* | head -1)
	tar -xf "$orig" -C "$work/src" --wildcards '*/include/qemu/qemu-plugin.h' ||
		die "no qemu-plugin.h in $orig"
	cp "$(find "$work/src" -name qemu-plugin.h | head -1)" "$hdr"
	rm -rf "$work/src"
fi
cc -O2 -Wall -Wextra -Werror -shared -fPIC -I"$(dirname "$hdr")" \
	-o "$work/libkcount.so" tests/bench/kcount.c || die "plugin build failed"
make -s -C tests/kernel >/dev/null || die "tests/kernel build failed"
make -s -C kmod KVER="$rel" >/dev/null || die "module build failed"

load0=$(cut -d' ' -f1-3 /proc/loadavg)
when=$(date -u '+%Y-%m-%d %H:%M UTC')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
rounds=${LUW_HC_ROUNDS:-60}

# boot KIND ROUNDS: one guest; its counts in $work/KIND-ROUNDS.{kc,syms},
# its sample count in $work/KIND-ROUNDS.n.
boot() {
	local kind=$1 r=$2 t=$work/$1-$2
	rm -rf "$t.out"
	mkdir -p "$t.out"
	LUW_VM_ICOUNT=1 LUW_VM_OUT=$t.out \
	LUW_VM_QEMU_ARGS="-plugin $work/libkcount.so,out=$t.kc" \
		scripts/vm-run --no-build --kernel 6.1 --timeout 1200 -- \
		bash tests/bench/handlercost.sh --guest "$kind" "$r" >"$t.log" 2>&1 ||
		{ echo "handlercost.sh: $kind $r failed:" >&2; cat "$t.log" >&2; return 1; }
	sed -n 's/^samples //p' "$t.log" >"$t.n"
	cp "$t.out/kallsyms" "$t.syms"
}
pids=()
if [ -z "${LUW_HC_REUSE:-}" ]; then
	for k in alone luaunwind perf-g; do
		for r in "$rounds" $((2 * rounds)); do
			boot "$k" "$r" &
			pids+=($!)
		done
	done
fi
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" = 0 ] || die "a guest failed"
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# persym KIND-ROUNDS: "FUNCTION COUNT" for every function that ran, named
# by that boot's kallsyms (text symbols), "[module]" appended for modules.
persym() {
	{
		awk '$2 ~ /^[tTwW]$/ { n = $3; if (NF > 3) n = n " " $4; print $1, "S", n }' "$work/$1.syms"
		grep -v '^#' "$work/$1.kc" | awk '{ print $1, "C", $2 }'
	} | LC_ALL=C sort -k1,1 -k2,2r | awk '
		$2 == "S" { $1 = ""; $2 = ""; sub(/^  /, ""); f = $0; next }
		{ c[f == "" ? "?" : f] += $3 }
		END { for (k in c) print k "\t" c[k] }'
}
# cost KIND: per extra sample, "FUNCTION<TAB>INSTRUCTIONS", most first.
cost() {
	local k=$1 n1 n2
	n1=$(cat "$work/$k-$rounds.n") n2=$(cat "$work/$k-$((2 * rounds)).n")
	{
		persym "$k-$((2 * rounds))" | sed 's/^/a\t/'
		persym "$k-$rounds" | sed 's/^/b\t/'
		persym "alone-$((2 * rounds))" | sed 's/^/c\t/'
		persym "alone-$rounds" | sed 's/^/d\t/'
	} | awk -F'\t' -v n=$((n2 - n1)) '
		{ s = ($1 == "a" || $1 == "d") ? 1 : -1; v[$2] += s * $3 }
		END { for (f in v) printf "%s\t%.1f\n", f, v[f] / n }' |
		sort -t$'\t' -k2,2 -g -r
}
cost luaunwind >"$work/luaunwind.cost"
cost perf-g >"$work/perf-g.cost"
nl=$(($(cat "$work/luaunwind-$((2 * rounds)).n") - $(cat "$work/luaunwind-$rounds.n")))
np=$(($(cat "$work/perf-g-$((2 * rounds)).n") - $(cat "$work/perf-g-$rounds.n")))

# The sample's path in the kernel, by function names: the module's code;
# perf's own path from the timer (both kinds run it: cpu-clock's hrtimer,
# the overflow; perf -g adds the callchain and the record's output); the
# reads of user memory (copy_from_user_nmi and what it calls; perf -g
# reads frame records with __get_user); and the data copies, which also
# hold the recorder's read(2) (luaunwind) or write(2) (perf) of each
# record.  Everything else the samples changed (the recorder's syscalls,
# page faults, pages zeroed, scheduling) is left out, as are functions
# that differ by boot alone (calibration loops: a few hundred per sample
# either way).
copies='^(copy_user_enhanced_fast_string|copy_user_generic_string|copy_user_generic_unrolled|copy_user_short_string|rep_movs_alternative|memcpy_erms|memcpy_orig|__memcpy|memcpy)$'
uread='^(copy_from_user_nmi|__copy_from_user_nmi|nmi_uaccess_okay|copy_stack_frame|__get_user_nocheck_[1248]|__get_user_[1248])$'
perfp='^(perf_swevent_hrtimer|__perf_event_overflow|perf_event_overflow|__perf_event_account_interrupt|perf_exclude_event|perf_callchain|perf_callchain_user|perf_callchain_kernel|get_perf_callchain|get_callchain_entry|put_callchain_entry|perf_prepare_sample|perf_output_sample|perf_output_begin_forward|perf_output_end|perf_output_put_handle|perf_output_copy|perf_event_output_forward|perf_event_pid_type|perf_event_tid|__perf_event_header__init_id)$'
total() { awk -F'\t' -v re="$2" '$1 ~ re { s += $2 } END { printf "%.0f", s }' "$work/$1.cost"; }
path() { echo $(($(total "$1" '\[luaunwind\]$') + $(total "$1" "$perfp") + $(total "$1" "$uread") + $(total "$1" "$copies"))); }
{
	R "overhead.lua, R = $rounds and 2R rounds per kind (about 1 and 2 s"
	R "alone); per sample = (2R run - R run - alone's 2R - R) / the extra"
	R "samples ($nl for luaunwind, $np for perf -g).  Guest instructions: a"
	R "byte the string routines copy counts one."
	R ""
	R "| per sample | luaunwind | perf -g |"
	R "| --- | ---: | ---: |"
	R "| luaunwind.ko's code | $(total luaunwind '\[luaunwind\]$') | - |"
	R "| perf's path (timer, overflow; -g: callchain, output) | $(total luaunwind "$perfp") | $(total perf-g "$perfp") |"
	R "| reads of user memory (copy_from_user_nmi and co.) | $(total luaunwind "$uread") | $(total perf-g "$uread") |"
	R "| data copies (the reads' bytes; the recorder's read/write) | $(total luaunwind "$copies") | $(total perf-g "$copies") |"
	R "| the sample's path | $(path luaunwind) | $(path perf-g) |"
	R ""
	R "The module's functions, and the kernel's on that path, at 20 or more"
	R "instructions per sample:"
	R ""
	R "| function | luaunwind | perf -g |"
	R "| --- | ---: | ---: |"
	join -t$'\t' -a1 -a2 -e - -o 0,1.2,2.2 \
		<(LC_ALL=C sort -t$'\t' -k1,1 "$work/luaunwind.cost") \
		<(LC_ALL=C sort -t$'\t' -k1,1 "$work/perf-g.cost") |
		awk -F'\t' -v re="\\[luaunwind\\]\$|$perfp|$uread|$copies" '
			$1 ~ re && ($2 >= 20 || $3 >= 20) {
				printf "%s\t%s\t%s\n", $1, $2, $3 }' |
		sort -t$'\t' -k2,2 -g -r |
		awk -F'\t' '{ printf "RESULT | %s | %s | %s |\n", $1,
			$2 == "-" ? "-" : sprintf("%.0f", $2),
			$3 == "-" ? "-" : sprintf("%.0f", $3) }'
} >"$work/results.txt"
cat "$work/results.txt"
{
	echo '<!-- handlercost-bench:begin -->'
	echo '## Where the handler'"'"'s instructions go (tests/bench/handlercost.sh)'
	echo
	echo "$when; host: $cpu; guest: Debian kernel $rel under"
	echo 'qemu-system-x86_64 -accel tcg -icount shift=0 (one vCPU), a TCG plugin'
	echo '(tests/bench/kcount.c) counting kernel instructions by address.'
	echo "Load average (1, 5, 15 min) before: $load0; after: $load1 (the"
	echo 'counts do not depend on it).'
	echo
	sed -n 's/^RESULT //p' "$work/results.txt"
	echo '<!-- handlercost-bench:end -->'
} | results_put handlercost
echo "handlercost.sh: figures written to tests/bench/RESULTS.md"
