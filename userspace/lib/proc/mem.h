/*
 * mem: reading another process's memory (process_vm_readv), the one
 * way every module here reads a live target: LuaJIT objects (target/layout,
 * proto, funcname, global, ffscan, symbolize), the [vdso] image
 * (vdso), the probes' stack pages.  A read is whole or it fails: a
 * short read (an unmapped page inside the range) is a failure, never
 * part of an object.
 */
#ifndef LUW_PROC_MEM_H
#define LUW_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

/* len bytes at addr of pid into dst: 0, or -1 (errno set). */
int luw_mem_read(pid_t pid, uint64_t addr, void *dst, size_t len);

/*
 * n regions of len bytes each, at addrs[i], into dst + i * len, in as few
 * system calls as the kernel's iovec limit allows: a walk's many small
 * objects at once.  ok[i] says whether region i was read (a region that
 * fails is skipped, the rest still read).  Returns the regions read.
 */
size_t luw_mem_gather(pid_t pid, const uint64_t *addrs, size_t n, size_t len,
		      void *dst, uint8_t *ok);

/* A malloc'd copy of len bytes at addr of pid (an in-memory image such
 * as the [vdso]), or NULL. */
void *luw_mem_dup(pid_t pid, uint64_t addr, size_t len);

/* kmod/ljwalk.h's read callback: ctx points at a pid_t. */
int luw_mem_read_cb(void *ctx, __u64 addr, void *dst, __u32 len);

#endif
