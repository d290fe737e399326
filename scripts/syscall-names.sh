#!/bin/sh
# The x86-64 system call names by number, as C initializers
# ("[0] = \"read\",") for userspace/lib/record/syscalls.c, from every
# "#define __NR_name number" line of the kernel's <asm/unistd_64.h>.
# Used by userspace/lib/record/CMakeLists.txt and tests/kernel/Makefile.
#   scripts/syscall-names.sh OUT
set -e
for h in /usr/include/x86_64-linux-gnu/asm/unistd_64.h /usr/include/asm/unistd_64.h; do
	[ -r "$h" ] && break
done
[ -r "$h" ] || { echo "syscall-names.sh: no asm/unistd_64.h (linux-libc-dev)" >&2; exit 1; }
sed -n 's/^#define __NR_\([a-z0-9_]*\) \([0-9]*\)$/[\2] = "\1",/p' "$h" >"$1.tmp"
[ -s "$1.tmp" ] || { echo "syscall-names.sh: no __NR_ lines in $h" >&2; exit 1; }
mv "$1.tmp" "$1"
