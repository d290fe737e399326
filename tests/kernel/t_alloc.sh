#!/bin/sh
# Allocation sampling (luaunwind-ctl record --alloc, LUW_IOC_ALLOC):
#  - two functions of tests/fixtures/workloads/alloc.lua allocate strings
#    in a ratio the workload measures itself (gc.total around each, the GC
#    stopped): the report's estimate of their bytes has the same ratio,
#    within sampling error (at least 600 records; the margin is five
#    standard errors of the share at that count), with the JIT on;
#  - the breakpoint is in the target while it records (the first byte of
#    the allocator reads 0xcc through /proc/PID/mem), never in a second
#    process running the same library, and gone when record ends: after
#    --duration, and after record is SIGKILLed;
#  - --no-cpu: allocation records alone.
. tests/kernel/lib.sh
. tests/kernel/lualib.sh
REP=$K/luaunwind-report
load

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
probed() {
	[ -n "$(allocf "$1")" ]
}

start_lua luajit $WL/alloc.lua 1000000
tp=$pid
luajit $WL/alloc.lua 1000000 >"$W/other.out" 2>&1 &
other=$!
kids="$kids $other"
within 120 grep -q ready "$W/other.out" || fail "the second luajit did not start"
$CTL record -p "$tp" -o "$W/a.luw" --alloc-interval 65536 --duration 20 \
	2>"$W/a.err" &
rec=$!
within 60 probed "$W/a.err" || { cat "$W/a.err" >&2; fail "record --alloc did not attach"; }
a=$(allocf "$W/a.err")
set -- $(lib "$tp" "$a")
[ $# = 2 ] || fail "the allocator $a is in no executable mapping of the target"
base=$1 path=$2
ob=$(bias "$other" "$path")
[ -n "$ob" ] || fail "the second luajit does not map $path"
oa=$((ob + a - base))
sleep 2
[ "$(byte "$tp" "$a")" = cc ] || fail "no breakpoint at the allocator $a of $path in the target: $(byte "$tp" "$a")"
ob=$(byte "$other" "$oa")
[ -n "$ob" ] && [ "$ob" != cc ] || fail "a breakpoint in another process mapping $path: '$ob'"
wait $rec || { cat "$W/a.err" >&2; fail "record --alloc"; }
[ "$(byte "$tp" "$a")" != cc ] || fail "the breakpoint stayed after record ended"
$REP --alloc "$W/a.luw" >"$W/a.folded" 2>"$W/a.rep" || { cat "$W/a.rep" >&2; fail "report --alloc"; }
n=$(sed -n 's/.* \([0-9]*\) allocation samples.*/\1/p' "$W/a.err")
big=$(folded_sum "$W/a.folded" 'big_strings')
small=$(folded_sum "$W/a.folded" 'small_strings')
all=$(folded_sum "$W/a.folded")
exact=$(grep '^exact' "$W/luajit.out" | tail -1)
set -- $exact
ebig=$2 esmall=$3
[ -n "$ebig" ] && [ "$esmall" -gt 0 ] || fail "the workload printed no exact counts"
[ "$n" -ge 600 ] || fail "only $n allocation records in 20 s"
# The shares of big_strings' bytes: sampled (thousandths) and exact.
got=$((1000 * big / (big + small)))
want=$((1000 * ebig / (ebig + esmall)))
# One record stands for about the interval: a share s of n records has a
# standard error of sqrt(s (1 - s) / n); five of them.
margin=$(awk -v s="$want" -v n="$n" 'BEGIN { s /= 1000; printf "%d", 5000 * sqrt(s * (1 - s) / n) + 1 }')
d=$((got > want ? got - want : want - got))
[ "$d" -le "$margin" ] ||
	fail "big_strings' share of the bytes: $got/1000 sampled, $want/1000 exact (margin $margin, $n records)"
[ $((big + small)) -ge $((all * 9 / 10)) ] ||
	fail "only $((big + small)) of $all bytes under the two functions"

# SIGKILL of record takes the breakpoint away too (the session ends).
$CTL record -p "$tp" -o "$W/k.luw" --alloc --no-cpu --duration 60 2>"$W/k.err" &
rec=$!
within 60 probed "$W/k.err" || { cat "$W/k.err" >&2; fail "record --alloc --no-cpu did not attach"; }
sleep 1
[ "$(byte "$tp" "$a")" = cc ] || fail "no breakpoint in the second record"
kill -KILL $rec
wait $rec 2>/dev/null
within 10 sh -c "[ \"\$(dd if=/proc/$tp/mem bs=1 skip=$((a)) count=1 2>/dev/null | od -An -tx1 | tr -d ' \n')\" != cc ]" ||
	fail "the breakpoint stayed after record was SIGKILLed"

# --no-cpu: only allocation records.
$CTL record -p "$tp" -o "$W/n.luw" --alloc --no-cpu --duration 5 2>"$W/n.err" ||
	{ cat "$W/n.err" >&2; fail "record --alloc --no-cpu"; }
grep -q ': 0 samples, [1-9][0-9]* allocation samples' "$W/n.err" ||
	fail "--no-cpu: $(cat "$W/n.err")"
pass "$n records, big_strings $got/1000 of the bytes (exact $want/1000, margin $margin); no breakpoint elsewhere or after"
