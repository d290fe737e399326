#!/bin/sh
# Inside the guest (scripts/vm-run, run by tests/pkg/run.sh): install both
# packages into a writable view of the system (an overlay over the host's
# read-only root), let DKMS build and install the module for the running
# kernel, load it, attach and record a LuaJIT process with the installed
# programs, then remove both packages and check nothing is left.
#   tests/pkg/guest.sh DEBDIR VERSION
set -eu
debs=$1 ver=$2
fail() { echo "pkg: FAIL: $*" >&2; exit 1; }
# Progress goes to the output share too: it is readable on the host while
# the guest runs (stdout is shown only at the end).
step() { echo "pkg: $*"; echo "$(date +%T) $*" >>"$LUW_OUT/progress"; }
rel=$(uname -r)
modprobe overlay 2>/dev/null || true
o=/tmp/ov
mkdir -p $o/up $o/work $o/root
mount -t overlay overlay -o lowerdir=/,upperdir=$o/up,workdir=$o/work $o/root ||
	fail "cannot mount an overlay over /"
R=$o/root
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
# udev's links, which dkms's process substitutions need.
ln -sf /proc/self/fd $R/dev/fd
mount -t tmpfs tmpfs $R/tmp
step "overlay mounted"
cp "$debs/luaunwind-dkms_${ver}_all.deb" "$debs/luaunwind_${ver}_amd64.deb" $R/tmp/
# DKMS builds for every kernel that has headers; under TCG one is enough:
# the others are hidden under empty tmpfs (rm -rf would write a whiteout
# per file).
for d in $R/lib/modules/*; do
	[ "${d##*/}" = "$rel" ] || mount -t tmpfs -o ro tmpfs "$d"
done
mkdir -p "$R$LUW_OUT"
mount --bind "$LUW_OUT" "$R$LUW_OUT"
cat >$R/tmp/t.sh <<EOS
set -eu
fail() { echo "pkg: FAIL: \$*" >&2; exit 1; }
step() { echo "pkg: \$*"; echo "\$(date +%T) \$*" >>"$LUW_OUT/progress"; }
step "dpkg -i (DKMS builds the module for $rel)"
[ ! -e /usr/bin/luaunwind-ctl ] || fail "luaunwind-ctl already in /usr/bin"
dpkg -i /tmp/luaunwind-dkms_${ver}_all.deb /tmp/luaunwind_${ver}_amd64.deb >/tmp/dpkg.log 2>&1 ||
	{ cat /tmp/dpkg.log; fail "dpkg -i"; }
dkms status -m luaunwind | grep -q "$rel.*installed" || fail "dkms status: \$(dkms status)"
for p in luaunwind-ctl luaunwind-report luaunwind-flamegraph; do
	[ -x /usr/bin/\$p ] || fail "/usr/bin/\$p missing"
	[ -f /usr/share/man/man1/\$p.1.gz ] || fail "man page of \$p missing"
done
step "installed"
modprobe luaunwind || fail "modprobe luaunwind"
[ -c /dev/luaunwind ] || fail "/dev/luaunwind missing"
luajit -e 'local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end
	while true do f(50) end' &
pid=\$!
sleep 1
luaunwind-ctl attach \$pid --freq 499 || fail "attach"
luaunwind-ctl status | grep -q "pids=\$pid" || fail "status after attach: \$(luaunwind-ctl status)"
luaunwind-ctl detach \$pid || fail "detach"
luaunwind-ctl record -p \$pid -o /tmp/p.luw --duration 2 || fail "record"
kill \$pid
luaunwind-report /tmp/p.luw >/tmp/p.folded || fail "report"
grep -q ':1' /tmp/p.folded || grep -q 'f' /tmp/p.folded || fail "no Lua frame in the report: \$(head -3 /tmp/p.folded)"
echo "pkg: recorded \$(awk '{ n += \$NF } END { print n }' /tmp/p.folded) samples with the installed programs"
rmmod luaunwind
step "dpkg -r"
dpkg -r luaunwind luaunwind-dkms >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg -r"; }
for f in /usr/bin/luaunwind-ctl /usr/bin/luaunwind-report /usr/share/man/man1/luaunwind-ctl.1.gz \
	/usr/src/luaunwind-$ver /lib/modules/$rel/updates/dkms/luaunwind.ko /var/lib/dkms/luaunwind; do
	[ ! -e \$f ] || fail "\$f left after dpkg -r"
done
modinfo luaunwind >/dev/null 2>&1 && fail "modinfo still finds luaunwind after dpkg -r"
dpkg-query -W -f='\${db:Status-Status}' luaunwind 2>/dev/null | grep -q '^installed' && fail "luaunwind still installed"
echo "pkg: ok"
EOS
chroot $R /bin/sh /tmp/t.sh
