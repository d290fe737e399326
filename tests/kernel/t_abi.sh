#!/bin/sh
# ioctl ABI errors: EINVAL / EFAULT / ENOTTY / ESRCH / EBUSY cases.
. tests/kernel/lib.sh
load
bg $K/spin
$K/abi_errors $last || fail "abi_errors"
unload
pass
