#!/usr/bin/env bash
# make check-pkg: the packages of `make deb` under DKMS on two kernels'
# unpacked headers (tests/pkg/dkms.sh), then installed, used and removed in
# a 6.1 guest (tests/pkg/guest.sh).  DKMS compiles the module inside the
# TCG guest: that alone took 14 minutes on a loaded 2-CPU machine, so this
# is not part of make check.
#   tests/pkg/run.sh VERSION DEBDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
ver=${1:?usage: tests/pkg/run.sh VERSION DEBDIR} debs=$(realpath "${2:?}")
tests/pkg/dkms.sh "$debs/luaunwind-dkms_${ver}_all.deb"
LUW_VM_OUT=$top/out/pkg scripts/vm-run --kernel 6.1 --no-build --timeout 2400 \
	--dmesg "$top/out/pkg.dmesg" -- sh tests/pkg/guest.sh "$debs" "$ver"
