#!/usr/bin/env bash
# The main job, end to end, on what exists today: decode a real sysprof
# stream written by Tarantool's LuaJIT (the sysprof RFC payload: Lua and C
# Fibonacci through the FFI), write the merged stacks as folded text, an
# interactive SVG flame graph and a pprof profile into out/, and print the
# heaviest merged stacks.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
in=tests/fixtures/sysprof_callchain.bin
mkdir -p out
"$bin/luaunwind-report" --folded "$in" > out/profile.folded
"$bin/luaunwind-report" --svg out/flame.svg "$in"
"$bin/luaunwind-report" --vmstates "$in" > out/vmstates.txt
echo "decoded $in:"
sed 's/^/  /' out/vmstates.txt | paste -sd' ' | sed 's/\t/=/g'
echo
echo "heaviest merged stacks (root first, count last):"
awk '{ print $NF "\t" $0 }' out/profile.folded | sort -t"$(printf '\t')" -k1,1nr |
	head -10 | cut -f2- | sed 's/^/  /'
echo
echo "wrote out/profile.folded and out/flame.svg (open it in a browser)"
