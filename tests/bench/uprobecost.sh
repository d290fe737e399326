#!/usr/bin/env bash
# What a probe on the allocator costs per call on this CPU (figures only,
# nothing asserted on time).  luaunwind.ko puts a uprobe on a LuaJIT
# process's allocator (G->allocf, lj_alloc_f in stock LuaJIT); the
# alloc section measures it under TCG only, in instructions.  Here the
# same trap runs on this machine's CPU, with the kernel's own counting
# uprobe (the uprobe PMU through perf_event_open, luw-uprobecost,
# tests/bench/uprobecost.c) in place of the module, which this kernel
# need not be able to load.
#
# Workload: alloc.lua under an unstripped LuaJIT (the symbol lj_alloc_f:
# scripts/ljmatrix.sh's bookworm-luajit-default cell), ROUNDS for about
# 2 s alone (fewer when a probed run would take longer than
# LUW_UPROBECOST_MAX_S); runs without (--none) and with the probe,
# interleaved, pinned to CPU 0.  Per call = (median CPU with - without) /
# the probe's count.  Figures go to the uprobecost section of
# tests/bench/RESULTS.md (between its marker comments).  Without a uprobe
# PMU, the right to use it or the LuaJIT build, it says so and exits 0.
#
# usage: tests/bench/uprobecost.sh [BUILD_DIR]
#   LUW_UPROBECOST_RUNS (default 5), LUW_UPROBECOST_MAX_S (default 60),
#   LUW_UPROBECOST_LUAJIT (default: the ljmatrix cell's luajit)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
build=$(cd "${1:-$top/build}" 2>/dev/null && pwd) ||
	{ echo "uprobecost.sh: no build directory ${1:-$top/build}" >&2; exit 1; }
upc=$build/userspace/tests/bench/luw-uprobecost
work=$build/bench/uprobecost
results=$top/tests/bench/RESULTS.md
runs=${LUW_UPROBECOST_RUNS:-5}
max_s=${LUW_UPROBECOST_MAX_S:-60}
cell=bookworm-luajit-default
lj=${LUW_UPROBECOST_LUAJIT:-$("$top/scripts/ljmatrix.sh" path $cell)/luajit}
sym=lj_alloc_f
begin='<!-- uprobecost-bench:begin -->'
end='<!-- uprobecost-bench:end -->'

skip() { echo "uprobecost.sh: $* -- not measured, RESULTS.md left as it is" >&2; exit 0; }

[ -x "$upc" ] || { echo "uprobecost.sh: $upc not built (make userspace)" >&2; exit 1; }
for t in nm readelf objdump taskset; do
	command -v $t >/dev/null || { echo "uprobecost.sh: $t missing (scripts/deps.sh)" >&2; exit 1; }
done
[ -r /sys/bus/event_source/devices/uprobe/type ] ||
	skip "this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe/type)"
[ -x "$lj" ] ||
	skip "no unstripped LuaJIT at $lj; make it with: scripts/ljmatrix.sh build $cell (fetches Debian's luajit source, builds it with -g; a few minutes)"

# The allocator's file offset: its address (nm) in the PT_LOAD that holds
# it, minus that segment's address, plus its offset in the file.
# (awk reads to the end: an early exit would SIGPIPE nm under pipefail.)
addr=$(nm "$lj" | awk -v s=$sym '$3 == s && !n++ { print $1 }')
[ -n "$addr" ] || skip "no symbol $sym in $lj (stripped?)"
a=$((16#$addr))
off=
while read -r type poff vaddr _ filesz _; do
	[ "$type" = LOAD ] || continue
	if ((a >= vaddr && a < vaddr + filesz)); then
		off=$(printf '0x%x' $((a - vaddr + poff)))
		break
	fi
done < <(readelf -lW "$lj")
[ -n "$off" ] || { echo "uprobecost.sh: 0x$addr ($sym) in no PT_LOAD of $lj" >&2; exit 1; }
insn=$(objdump -d --no-show-raw-insn --start-address=$((a)) --stop-address=$((a + 16)) "$lj" |
	awk -F'\t' '/^ *[0-9a-f]+:/ && !n++ { gsub(/ +/, " ", $2); print $2 }')

mkdir -p "$work"
touch "$work/go"	# alloc.lua starts at once

# run KIND ROUNDS: one run of alloc.lua on CPU 0, KIND none or probe;
# sets res to "USER SYS COUNT" (not a command substitution: skip must end
# the script, not a subshell).
run() {
	local probe=(--none) rc=0
	[ "$1" = none ] || probe=("$lj" "$off")
	taskset -c 0 "$upc" "${probe[@]}" -- "$lj" "$top/tests/bench/alloc.lua" "$work/go" "$2" \
		>"$work/run.out" 2>"$work/run.err" || rc=$?
	if [ $rc = 77 ]; then
		skip "the uprobe cannot be had here: $(cat "$work/run.err")"
	fi
	if [ $rc != 0 ] || ! grep -q '^elapsed' "$work/run.out"; then
		echo "uprobecost.sh: $1 run failed: $(cat "$work/run.out" "$work/run.err")" >&2
		exit 1
	fi
	res=$(awk '$1 == "user" { print $2, $4, $6 }' "$work/run.out")
}
cpu_of() { awk '{ print $1 + $2 }' <<<"$1"; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# About 2 s alone; fewer rounds when a probed run would pass max_s.
run none 500
cal=$(cpu_of "$res")
rounds=$(awk -v c="$cal" 'BEGIN { n = int(500 * 2 / c); print n < 10 ? 10 : n }')
run probe 20
trial=$res
[ "$(cut -d' ' -f3 <<<"$trial")" -gt 0 ] ||
	{ echo "uprobecost.sh: the probe on $lj at $off never fired" >&2; exit 1; }
capped=$(awk -v r="$rounds" -v c="$(cpu_of "$trial")" -v m="$max_s" 'BEGIN {
	n = int(m * 20 / c); print n < r ? (n < 10 ? 10 : n) : r }')
echo "uprobecost.sh: $rounds rounds alone ~2 s; $capped rounds used (a probed run <= ~${max_s} s)"
sized="$rounds rounds (about 2 s alone)"
[ "$capped" = "$rounds" ] ||
	sized="$capped rounds (about $(awk -v c="$cal" -v r="$capped" 'BEGIN { printf "%.2f", c * r / 500 }') s alone: fewer than
the $rounds of 2 s, so that a probed run stays within about ${max_s} s)"
rounds=$capped

: >"$work/none.txt"
: >"$work/probe.txt"
for i in $(seq "$runs"); do
	for k in none probe; do
		run $k "$rounds"
		echo "$res" >>"$work/$k.txt"
		echo "  run $i $k: user sys count = $res"
	done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# med KIND FIELD: the median of FIELD (user, sys, cpu = user + sys, count)
# over KIND's runs.
med() {
	awk -v f="$2" '{ print f == "cpu" ? $1 + $2 : f == "user" ? $1 : f == "sys" ? $2 : $3 }' \
		"$work/$1.txt" | median
}
n_cpu=$(med none cpu)
p_cpu=$(med probe cpu)
n_sys=$(med none sys)
p_sys=$(med probe sys)
calls=$(med probe count)
row() {
	local m=$1 u s list
	u=$(med "$2" user)
	s=$(med "$2" sys)
	list=$(awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $1 + $2 }' "$work/$2.txt")
	awk -v k="$3" -v m="$m" -v b="$n_cpu" -v u="$u" -v s="$s" -v l="$list" 'BEGIN {
		printf "| %s | %.3f | %.3f | %.3f | %+.1f%% | %s |\n", k, m, u, s, (m / b - 1) * 100, l }'
}
perline=$(awk -v c="$calls" -v p="$p_cpu" -v n="$n_cpu" -v ps="$p_sys" -v ns="$n_sys" 'BEGIN {
	printf "%d allocator calls (allocations and frees) a run; **%.0f ns** of CPU more per call (median with probe minus median without, over the count), of which system time %.0f ns.",
		c, (p - n) * 1e9 / c, (ps - ns) * 1e9 / c }')
echo "$perline"

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
# A virtual CPU: say so, with a syscall's cost for scale.
virt=
if grep -qw hypervisor /proc/cpuinfo; then
	hv=$(dmesg 2>/dev/null | sed -n 's/.*Hypervisor detected: //p' | head -1) || true
	virt="The CPU is a virtual machine's (the hypervisor flag in /proc/cpuinfo${hv:+;
the kernel detected $hv}): its traps may pass through the hypervisor and
cost much more than on bare metal."
	wc=$build/userspace/tests/bench/luw-walkcost
	if [ -x "$wc" ]; then
		sys=$(for _ in 1 2 3; do taskset -c 0 "$wc" --copycost; done |
			awk '{ print $3 }' | median)
		virt="$virt  For scale, a syscall's entry and exit costs
${sys} ns here (luw-walkcost --copycost, median of 3)."
	fi
fi
section=$(
	echo "$begin"
	echo "## What a probe on the allocator costs on this CPU (tests/bench/uprobecost.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $cpu, $(nproc) cores, Linux $(uname -r)."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after"
	echo "(above 0 means other programs shared the cores during the run)."
	[ -z "$virt" ] || { echo; echo "$virt"; }
	echo
	echo "luaunwind.ko counts allocator calls with a uprobe on G->allocf; the alloc"
	echo "section measures that under TCG, in instructions.  Here the same trap"
	echo "runs on this CPU: \`luw-uprobecost\` (tests/bench/uprobecost.c) runs the"
	echo "workload with a counting uprobe of the kernel's own (the uprobe PMU,"
	echo "perf_event_open on the child, no sampling) on \`$sym\` of"
	echo "\`$lj\`"
	echo "(address $(printf '0x%x' "$a"), file offset $off, first instruction \`$insn\`),"
	echo "and without it."
	echo
	echo "Workload: alloc.lua (JIT on), $sized,"
	echo "$runs runs of each kind, interleaved, pinned with \`taskset -c 0\`;"
	echo "CPU = the workload's user + system time (wait4); medians."
	echo
	echo "| kind | CPU s | user s | sys s | slowdown | runs (CPU s) |"
	echo "| --- | ---: | ---: | ---: | ---: | --- |"
	row "$n_cpu" none "without probe"
	row "$p_cpu" probe "uprobe (perf count)"
	echo
	echo "$perline"
	echo
	echo "Included: the int3 trap and the kernel's lookup of the probe, perf's"
	echo "counting handler (uprobe_perf_func: a small trace record filled and"
	echo "counted), the single step of the displaced instruction out of line (a"
	echo "second trap; x86 emulates some instructions, branches and pushes,"
	echo "instead) and the return to the workload.  Not included: luaunwind.ko's"
	echo "handler in place of perf's -- its count path is a few dozen"
	echo "instructions; its walk, once per sampled record, is in the walkcost"
	echo "section.  Estimate per allocator call with luaunwind = this figure +"
	echo "walk cost x records / calls."
	echo "$end"
)

results_put uprobecost <<<"$section"
echo "uprobecost.sh: figures written to $results"
