/*
 * mem: process_vm_readv, whole reads only.  See proc/mem.h.
 */
#include "proc/mem.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

int luw_mem_read(pid_t pid, uint64_t addr, void *dst, size_t len)
{
	struct iovec l = { dst, len };
	struct iovec r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EFAULT;
	return -1;
}

void *luw_mem_dup(pid_t pid, uint64_t addr, size_t len)
{
	void *p = malloc(len ? len : 1);

	if (p && luw_mem_read(pid, addr, p, len)) {
		free(p);
		p = NULL;
	}
	return p;
}

int luw_mem_read_cb(void *ctx, __u64 addr, void *dst, __u32 len)
{
	return luw_mem_read(*(const pid_t *)ctx, addr, dst, len);
}
