/*
 * fakedev: /dev/luaunwind played by the test, for the tests of record/
 * (dev.c, record.c), which cannot load the module.  A test built with
 * fakedev.c has its ioctl() in place of libc's: the library's calls bind
 * to it at link time.  A request on the fd luw_fakedev.fd is answered
 * here as the module would answer it; any other fd goes to the kernel.
 *
 * The fake keeps the count of requests, the last one and a copy of the
 * struct it came with, and answers
 *   VERSION  abi_version LUW_ABI_VERSION, record_version, max_targets
 *   LIST     count npids; the first min(max, npids) of pids[] written out
 *   STATS    stats[k] at its k-th call (the last one after that), with
 *            the caller's size and pid
 *   others   0
 * or every request -1 with errno err when err is set.
 */
#ifndef LUW_TEST_FAKEDEV_H
#define LUW_TEST_FAKEDEV_H

#include <sys/types.h>

#include "luaunwind.h"

struct luw_fakedev {
	int fd;			/* -1: no fake device */
	int err;
	unsigned int calls;
	unsigned long req;
	unsigned char arg[sizeof(struct luw_stats)];
	pid_t pids[LUW_MAX_TARGETS + 8];
	unsigned int npids;
	struct luw_stats stats[2];
	unsigned int stats_calls;
};

extern struct luw_fakedev luw_fakedev;

#endif
