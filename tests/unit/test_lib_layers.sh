#!/bin/bash
# The library's folders depend on each other only as their CMakeLists.txt
# say: a header of folder B included from folder A ("B/x.h") needs luw_B
# on luw_A's target_link_libraries line.  Static libraries link without
# checking that, so this test is what keeps the layering honest
# (streams/ never reaching into process/, output/ into anything but util/).
set -u
lib=$1
fail=0
for dir in "$lib"/*/; do
	a=$(basename "$dir")
	[ -f "$dir/CMakeLists.txt" ] || { echo "FAIL: $a/ has no CMakeLists.txt"; fail=1; continue; }
	links=$(tr '\n' ' ' <"$dir/CMakeLists.txt" |
		grep -o "target_link_libraries(luw_$a [^)]*)" | grep -o 'luw_[a-z]*' |
		sed 's/^luw_//' | sort -u)
	for f in "$dir"*.[ch]; do
		for b in $(sed -n 's/^#include "\([a-z]*\)\/[^"]*".*/\1/p' "$f" | sort -u); do
			[ "$b" = "$a" ] && continue
			if ! grep -qx "$b" <<<"$links"; then
				echo "FAIL: $a/$(basename "$f") includes $b/ but luw_$a does not link luw_$b"
				fail=1
			fi
		done
	done
	# A bare include of a library header hides which folder it reaches into.
	if grep -n '^#include "[a-z_]*\.h"' "$dir"*.[ch] | grep -v '"luaunwind[a-z_]*\.h"'; then
		echo "FAIL: $a/: include library headers by folder"
		fail=1
	fi
done
[ $fail = 0 ] && echo "ok: every folder includes only what it links"
exit $fail
