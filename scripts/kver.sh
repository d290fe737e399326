#!/usr/bin/env bash
# Print the kernel release to build and test against.
#   scripts/kver.sh          the default: Debian's linux-image-amd64 (6.1)
#   scripts/kver.sh 6.12     the newest installed release of that series
set -euo pipefail
series=${1:-}
if [ -z "$series" ]; then
	dep=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null) || exit 1
	dep=${dep%% *}
	echo "${dep#linux-headers-}"
	exit 0
fi
for d in $(ls -d /usr/src/linux-headers-"$series".*-amd64 2>/dev/null | sort -rV); do
	echo "${d#/usr/src/linux-headers-}"
	exit 0
done
exit 1
