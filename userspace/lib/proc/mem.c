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

#define GATHER 1024	/* UIO_MAXIOV */

size_t luw_mem_gather(pid_t pid, const uint64_t *addrs, size_t n, size_t len,
		      void *dst, uint8_t *ok)
{
	struct iovec r[GATHER];
	size_t done = 0, i = 0;

	while (i < n) {
		size_t k = n - i < GATHER ? n - i : GATHER, whole;
		struct iovec l = { (uint8_t *)dst + i * len, k * len };
		ssize_t got;

		for (size_t j = 0; j < k; j++) {
			r[j].iov_base = (void *)(uintptr_t)addrs[i + j];
			r[j].iov_len = len;
		}
		/* A partial read ends before the first region that faults. */
		got = process_vm_readv(pid, &l, 1, r, k, 0);
		if (got < 0 && errno != EFAULT) {
			while (i < n)	/* the process is gone */
				ok[i++] = 0;
			break;
		}
		whole = got > 0 ? (size_t)got / len : 0;
		for (size_t j = 0; j < whole; j++)
			ok[i + j] = 1;
		done += whole;
		i += whole;
		if (whole < k)
			ok[i++] = 0;	/* it faulted: go on after it */
	}
	return done;
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
