#!/usr/bin/env bash
# What one sample of luaunwind.ko's handler costs on this CPU, estimated
# from measurements (figures only, nothing asserted on time).
#
# luw-walkcost (tests/bench/walkcost.c) snapshots live targets with ptrace
# and replays the module's walkers (kmod/uwtable.c, kmod/ljwalk.c) over
# the snapshots, counting every read they ask for (in the module each is
# one user load where it is asked, kmod/uread.h) and timing the walk code
# without those reads; --copycost measures a kernel copy from user memory
# here, the price of the sample's first read (copy_from_user_nmi()).
# Targets:
#   payload: the RFC payload (payload_stock.lua + c_payload.c, Debian's
#            luajit, JIT off), the main thread;
#   threads: tests/kernel/lua_threads 32 3 8 (32 threads, a lua_State
#            each, Debian's libluajit), samples spread over the threads.
# Estimate per sample = walk code + one 8-byte kernel copy; the loads
# themselves are not measurable from userspace and are left out.  Slowdown
# at F Hz = estimate x F (the share of the sampled CPU).  Figures go to the walkcost section of
# tests/bench/RESULTS.md (between its marker comments).
#
# usage: tests/bench/walkcost.sh [BUILD_DIR]
#   LUW_WALKCOST_SAMPLES (default 200), LUW_WALKCOST_ITERS (default 1000)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/results.bash"
# Absolute: the programs below run with other working directories (make -C).
build=$(cd "${1:-$top/build}" 2>/dev/null && pwd) ||
	{ echo "walkcost.sh: no build directory ${1:-$top/build}" >&2; exit 1; }
wc=$build/userspace/tests/bench/luw-walkcost
work=$build/bench/walkcost
results=$top/tests/bench/RESULTS.md
nsamples=${LUW_WALKCOST_SAMPLES:-200}
iters=${LUW_WALKCOST_ITERS:-1000}
begin='<!-- walkcost-bench:begin -->'
end='<!-- walkcost-bench:end -->'

[ -x "$wc" ] || { echo "walkcost.sh: $wc not built (make userspace)" >&2; exit 1; }
command -v luajit >/dev/null || { echo "walkcost.sh: luajit missing (scripts/deps.sh)" >&2; exit 1; }
mkdir -p "$work"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

cc -O2 -fPIC -shared -o "$work/libc_payload.so" \
	"$top/tests/fixtures/workloads/c_payload.c"
make -s -C "$top/tests/kernel" OUT="$work" "$work/lua_threads"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# start NAME CMD...: runs CMD until killed, waits for "ready"; sets $pid.
start() {
	local name=$1
	shift
	"$@" >"$work/$name.out" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 200); do
		grep -q ready "$work/$name.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q ready "$work/$name.out" || { cat "$work/$name.out" >&2; exit 1; }
	sleep 0.5
}

start payload luajit "$top/tests/fixtures/workloads/payload_stock.lua" nojit 100000 "$work"
"$wc" -n "$nsamples" -i "$iters" "$pid" >"$work/payload.txt"
kill -9 "$pid"
start threads nice -n 19 "$work/lua_threads" 32 3 8 0
"$wc" -n "$nsamples" -i "$iters" -m 64 "$pid" >"$work/threads.txt"
kill -9 "$pid"

# The copy cost: median of 5 runs of each figure.
for _ in 1 2 3 4 5; do "$wc" --copycost; done >"$work/copy.txt"
read -r sys8 copy8 <<<"$(awk '
	{ for (i = 2; i < NF; i += 2) v[$i, ++n[$i]] = $(i + 1) }
	function med(k,   a, m, i, j, t) {
		m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((m + 1) / 2)] }
	END { printf "%s %s\n", med("syscall_ns"), med("copy8_ns") }' \
	"$work/copy.txt")"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# One row per target: medians and p99 of the per-sample figures.
row() {
	awk -v name="$1" -v c8="$copy8" '
	function pct(a, n, p,   i, j, t, k) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		k = int((n * p + 99) / 100); if (k < 1) k = 1
		return a[k] }
	$1 == "sample" {
		for (i = 3; i < NF; i += 2) f[$i] = $(i + 1)
		n++
		host[n] = f["host"]; lua[n] = f["lua"]
		rd[n] = f["reads"]; by[n] = f["bytes"]
		code[n] = f["walk_ns"] > f["read_ns"] ? f["walk_ns"] - f["read_ns"] : 0
		est[n] = code[n] + c8
	}
	$1 == "summary" && $2 == "samples" { thr = $5 }
	END {
		for (i = 1; i <= n; i++) e2[i] = est[i]
		em = pct(e2, n, 50)
		printf "%s|%d|%d|%d/%d|%d/%d|%d/%d|%d/%d|%d/%d|%d/%d|%.3f%%|%.2f%%|%.2f%%\n",
			name, n, thr, pct(host, n, 50), pct(host, n, 99),
			pct(lua, n, 50), pct(lua, n, 99), pct(rd, n, 50), pct(rd, n, 99),
			pct(by, n, 50), pct(by, n, 99), pct(code, n, 50), pct(code, n, 99),
			em, pct(est, n, 99), em * 99 / 1e7, em * 999 / 1e7, em * 4999 / 1e7
	}' "$work/$1.txt"
}
rows=("$(row payload)" "$(row threads)")
for r in "${rows[@]}"; do echo "$r"; done
# Median reads per sample of each row ("payload 60, threads 45").
nreads=$(for r in "${rows[@]}"; do
	IFS='|' read -r name _ _ _ _ reads _ <<<"$r"
	printf '%s %s\n' "$name" "${reads%%/*}"
done | paste -sd, - | sed 's/,/, /g')

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
verdict() {
	local r=$1
	IFS='|' read -r name _ _ _ _ reads _ _ est _ s999 _ <<<"$r"
	awk -v n="$name" -v r="${reads%%/*}" -v r99="${reads#*/}" -v e="${est%%/*}" -v s="${s999%\%}" 'BEGIN {
		printf "- %s: %d reads per sample (median; p99 %d), each a load in the module; estimate %.1f us (target <= 5 us: %s); %.2f%% at 999 Hz (target <= 0.5%%: %s)\n",
			n, r, r99, e / 1000, e <= 5000 ? "met" : "missed",
			s, s <= 0.5 ? "met" : "missed" }'
}
section=$(
	echo "$begin"
	echo "## The handler's cost per sample on this CPU (tests/bench/walkcost.sh)"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $cpu, $(nproc) cores, Linux $(uname -r)."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after"
	echo "(above 0 means other programs shared the cores during the run)."
	echo
	echo "\`luw-walkcost\` (tests/bench/walkcost.c) stops a live target with ptrace,"
	echo "runs one sample's merged walk on it -- the host CFA walk of"
	echo "kmod/uwtable.c over the .eh_frame tables luaunwind-ctl would"
	echo "upload, the Lua walk of kmod/ljwalk.c, glued as"
	echo "kmod/mergewalk.c glues them -- with every read the walkers ask for"
	echo "counted as one request against the module's budget (1024 reads, 16"
	echo "failed ones) and served exactly from a snapshot (a page is copied out"
	echo "of the target on first touch), lets the target run on, and then"
	echo "replays the walk over the snapshot $iters times per sample in 15 batches"
	echo "(the median batch, timed in the thread's CPU time so that time spent"
	echo "descheduled does not count), checking that each replay finds the frames"
	echo "the capture walk found.  In the module (kmod/uread.h) each of those"
	echo "reads is one user load made where the walker asks for it (stac, the load"
	echo "under the exception table, clac; page faults disabled for the sample);"
	echo "only the sample's first read, the 8 bytes at the interrupted sp, is a"
	echo "kernel copy (copy_from_user_nmi(), for its check of the loaded mm)."
	echo
	echo "- **Counted** (exact, CPU-independent): reads per sample (the module's"
	echo "  loads, each a word or a block of at most 64 bytes) and the bytes they"
	echo "  ask for."
	echo "- **Measured on this CPU** (userspace): the walk code's time per sample"
	echo "  (walkers and glue): the replay's time minus that of the same reads"
	echo "  served alone from the snapshot (a copy each, standing for the load);"
	echo "  the replay calls the reader through the walkers' callbacks, which the"
	echo "  module inlines, so this overstates it a little.  A kernel copy from"
	echo "  user memory: rt_sigprocmask with a new mask minus without one = one"
	echo "  8-byte copy_from_user (plus the signal-lock work: an upper bound) ="
	echo "  **${copy8} ns** (syscall entry and exit, excluded, ${sys8} ns)."
	echo "- **Estimated**: handler per sample = walk code + one kernel copy"
	echo "  (${copy8} ns, the sample's first read); slowdown at F Hz = estimate x F,"
	echo "  the share of the sampled CPU.  Not included: the loads themselves, a"
	echo "  stac/clac pair and a load per read, as many as the reads column counts"
	echo "  (at the median: $nreads), which are not"
	echo "  measurable from userspace; the timer interrupt and perf's overflow path"
	echo "  around the handler; writing the record into the ring."
	echo "- **Under TCG** (the handlercost, overhead and kernel sections:"
	echo "  tests/bench/handlercost.sh, overhead.sh, kernel.sh): the real handler,"
	echo "  loads included, in a 6.1 guest; its instructions are counted there, but"
	echo "  its times say little about hardware: TCG emulates every instruction."
	echo
	echo "Figures per sample are median/p99 over the samples; slowdowns from the"
	echo "median estimate."
	echo
	echo "| target | samples | threads seen | host frames | Lua frames | reads | bytes | walk code ns | estimate ns | 99 Hz | 999 Hz | 4999 Hz |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
	echo
	echo "payload: payload_stock.lua nojit + c_payload.c under Debian's luajit (the"
	echo "main thread); threads: lua_threads 32 3 8 (Debian's libluajit, samples"
	echo "spread over its threads).  Read sizes seen (payload, bytes x count):"
	echo "$(awk '$1 == "readsize" { printf "%s%s x %s", s, $2, $4; s = ", " }' "$work/payload.txt")."
	echo
	echo "### Against the targets"
	echo
	for r in "${rows[@]}"; do verdict "$r"; done
	echo
	echo "The walkers ask for a word, a field or an object's few fields at a time"
	echo "(a frame's two slots, a function's type, id and proto, a proto's type"
	echo "and size: ~4 reads per Lua frame, fewer when the walk has checked the"
	echo "function before, plus 1-3 per host frame).  Every read counts against"
	echo "the sample's budget of 1024 in the module, and a failed one against its"
	echo "16 faults."
	echo "$end"
)

results_put walkcost <<<"$section"
echo "walkcost.sh: figures written to $results"
