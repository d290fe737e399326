#!/usr/bin/env bash
# Debian's luajit (stripped, GC64, no frame pointers), interpreter only,
# calling a C Fibonacci (-O2 -fomit-frame-pointer, -fPIC) through the FFI
# in a loop.  50 probes with luaunwind-hostunwind; >= 95% of them must
# unwind completely, at least half land inside c_payload, and >= 95% of
# those go in order through the C recursion, then luajit's
# VM (a frame inside the VM's one big fixed-frame FDE), lua_pcall, main,
# __libc_start_main and _start as the last frame.
#
# usage: test_cfi_unwind_luajit.sh TOOL C_PAYLOAD_SO
set -euo pipefail
tool=$1 so=$2
luajit=${LUAJIT:-/usr/bin/luajit}
. "$(dirname "$0")/../common/testlib.sh"

# The VM's FDE: an FDE (it follows a gap) whose first rule, rsp-based,
# holds for more than 8 KiB: the interpreter's fixed CFRAME_SIZE frame,
# but for the exact rows of its entry and exit sequences (vmseq).
read -r vm_lo vm_hi < <("$tool" --table "$luajit" | awk '
	/^  [0-9a-f]+ / {
		rule = $0; sub(/^  [0-9a-f]+ /, "", rule)
		if (lo != "" && rule != body && rule !~ / vmseq$/) { print lo, $1; lo = "" }
		if (lo == "" && prule == "none" && rule ~ /^rsp/) { lo = $1; body = rule }
		prule = rule
	}' |
	while read -r lo hi _; do
		[ $((16#$hi - 16#$lo)) -gt 8192 ] && { echo "$((16#$lo)) $((16#$hi))"; break; }
	done)
if [ -z "${vm_lo:-}" ]; then
	echo "FAIL: no VM FDE found in $luajit's table"
	exit 1
fi
printf 'VM FDE at file offsets 0x%x..0x%x\n' "$vm_lo" "$vm_hi"

cat >"$tmp/ffi.lua" <<'LUA'
local ffi = require'ffi'
ffi.cdef'double c_payload(double n);'
local c = ffi.load(arg[1])
io.write('ready\n') io.flush()
while true do c.c_payload(25) end
LUA
"$luajit" -joff "$tmp/ffi.lua" "$so" >"$tmp/ready" &
pid=$!
pids+=("$pid")
wait_line "$tmp/ready" ready "$pid"
"$tool" -n 50 -i 20 "$pid" >"$tmp/out"

read -r n full inc good < <(awk -v vm_lo="$vm_lo" -v vm_hi="$vm_hi" -v lj="$(basename "$luajit")" '
	function hex(s,   i, c, v) {
		v = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	function done_block(   ok, i, state) {
		if (!inb) return
		n++
		# c_payload frames first, then luajit; VM, lua_pcall, main in order.
		full = (end == "complete") && nf > 1 &&
		       names[nf-1] == "_start" && names[nf-2] == "__libc_start_main"
		if (full) nfull++
		if (nf == 0 || names[0] != "c_payload") {
			if (!full && bad++ < 3) print "bad sample:\n" blk > "/dev/stderr"
			inb = 0
			return
		}
		inc++
		ok = full
		state = 0
		for (i = 0; i < nf && ok; i++) {
			if (state == 0 && names[i] != "c_payload") state = 1
			if (state >= 1 && names[i] == "c_payload") ok = 0
			if (state == 1 && invm[i]) state = 2
			if (state == 2 && names[i] == "lua_pcall") state = 3
			if (state == 3 && names[i] == "main") state = 4
		}
		ok = ok && state == 4
		if (ok) good++
		else if (bad++ < 3) print "bad sample:\n" blk > "/dev/stderr"
		inb = 0
	}
	/^probe / { done_block(); inb = 1; nf = 0; split($0, w, " end "); end = w[2]; blk = $0; next }
	/^#/ && inb {
		nm = $4; sub(/\+0x[0-9a-f]+$/, "", nm)
		split($3, m, "[+]0x"); off = hex(m[2])
		invm[nf] = (m[1] == lj && off >= vm_lo && off < vm_hi)
		names[nf++] = nm; blk = blk "\n" $0
	}
	END { done_block(); print n + 0, nfull + 0, inc + 0, good + 0 }' "$tmp/out")
echo "luajit FFI: $n samples, $full complete to _start; $inc inside c_payload, $good of them complete through the VM to _start"
# Where a ptrace stop lands depends on the machine's load: the share
# inside c_payload is not the point, completeness is.
if [ "$n" -lt 50 ] || [ $((full * 100)) -lt $((n * 95)) ] ||
   [ $((inc * 2)) -lt "$n" ] || [ $((good * 100)) -lt $((inc * 95)) ]; then
	echo "FAIL: want >= 50 samples, >= 95% complete, half inside c_payload, >= 95% of those through the VM"
	sed -n '1,40p' "$tmp/out"
	exit 1
fi
