#!/bin/bash
# Every name a library file exports carries the file's name: a function
# of target/layout.c is luw_layout_*, of elf/symbols.c luw_symbols_*, so
# the name alone says where it is defined.  Reads the symbols each object
# of the static libraries given defines (nm).
# usage: test_lib_prefixes.sh LIB.a...
set -u
fail=0
for lib in "$@"; do
	while read -r obj sym; do
		base=${obj%.c.o}
		case "$sym" in
		"luw_$base" | "luw_${base}_"*) ;;
		__*) ;;	# the compiler's own (ASan's __odr_asan.*)
		*)
			echo "FAIL: $(basename "$lib") $base.c exports $sym, not luw_${base}_*"
			fail=1
			;;
		esac
	done < <(nm -A --defined-only -g "$lib" | awk '{ n = split($1, p, ":"); print p[n - 1], $3 }')
done
[ $fail = 0 ] && echo "ok: every exported name carries its file's name ($# libraries)"
exit $fail
