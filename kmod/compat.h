/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel version guards: luaunwind.ko builds against 5.10 to the newest.
 */
#ifndef LUW_COMPAT_H
#define LUW_COMPAT_H

#include <linux/slab.h>
#include <linux/version.h>

#endif /* LUW_COMPAT_H */
