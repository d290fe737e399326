/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The kernel environment of the walkers that userspace compiles too.
 *
 * ljwalk.c (the Lua stack walk) and uwtable.c (the unwind-table check,
 * lookup and step) run in the module's sample handler and are built a second time, unchanged, into the
 * userspace library: luaunwind-ljprobe, luaunwind-hostunwind, the layout
 * validation of userspace/lib/process/ljlayout.c, the unit tests and the
 * walkcost benchmark run the very code the module runs.  Kbuild compiles
 * them with __KERNEL__ defined; userspace gets here the few kernel things
 * they use: the fixed-size integer types and the errno values (and
 * LUW_NOINLINE below).  Nothing else may be used by them: no libc call, no
 * allocation, no lock.
 */
#ifndef LUW_WALKENV_H
#define LUW_WALKENV_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/stddef.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stddef.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;
#endif

/*
 * What the handler keeps out of line (a slow path whose locals the kernel
 * sets to zero on entry), and what it keeps inline whatever its size (a
 * read: its size is a constant at every call, and the load is a few
 * instructions then, the call and the size's switch more); userspace
 * leaves both to the compiler.
 */
#ifdef __KERNEL__
#define LUW_NOINLINE noinline
#define LUW_INLINE __always_inline
#else
#define LUW_NOINLINE
#define LUW_INLINE inline
#endif

/*
 * A walk's state that is written before it is read (the Lua walk's state,
 * filled field by field at its entry; a block a read fills): not also set
 * to zero on entry where the kernel initialises automatic variables
 * (INIT_STACK_ALL_ZERO), which for the Lua walk's function memo is some
 * 400 bytes a walk.  Older kernels lack __uninitialized.
 */
#if defined(__KERNEL__) && __has_attribute(__uninitialized__)
#define LUW_NOINIT __attribute__((__uninitialized__))
#else
#define LUW_NOINIT
#endif

/*
 * The walkers' reads.  In userspace each walk is given a read callback
 * and its context.  The module has one reader, luw_walk_read() of
 * uread.h (the sample's budget and the load, inline), and its walkers
 * are given a struct luw_cost as the context: they call it directly, because an
 * indirect call in the handler goes through a retpoline on most kernels,
 * and the walks make one per field they read.  The callback the module
 * passes is the same function, so both builds do the same.
 */
#ifdef __KERNEL__
#define LUW_WALK_READ(fn, ctx, addr, dst, len)				\
	luw_walk_read(ctx, addr, dst, len)
#define LUW_WALK_READ64(fn, ctx, addr, val) luw_walk_read(ctx, addr, val, 8)
#else
#define LUW_WALK_READ(fn, ctx, addr, dst, len) ((fn)(ctx, addr, dst, len))
#define LUW_WALK_READ64(fn, ctx, addr, val) ((fn)(ctx, addr, val))
#endif

#ifdef __KERNEL__
#include "uread.h"	/* luw_walk_read() */
#endif

#endif /* LUW_WALKENV_H */
