/*
 * fakedev: /dev/luaunwind played by the test, for the tests of record/
 * (dev.c, record.c), which cannot load the module.  A test built with
 * fakedev.c has its ioctl() in place of libc's: the library's calls bind
 * to it at link time.  A request on the fd luw_fakedev.fd is answered
 * here as the module would answer it; any other fd goes to the kernel.
 *
 * The fake keeps the count of requests, the last one and a copy of the
 * struct it came with, and answers
 *   VERSION  abi_version LUW_ABI_VERSION, record_version (LUW_RECORD_VERSION
 *            unless record_version is set), max_targets
 *   LIST     count npids; the first min(max, npids) of pids[] written out
 *   STATS    stats[k] at its k-th call (the last one after that), with
 *            the caller's size and pid
 *   others   0
 * or every request -1 with errno err when err is set.
 *
 * What read() gives, the device's records, is built with
 * luw_fakedev_sample/_lost/_end into a buffer (written to a pipe that
 * stands for the device, or walked directly).
 */
#ifndef LUW_TEST_FAKEDEV_H
#define LUW_TEST_FAKEDEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "luaunwind.h"

struct luw_fakedev {
	int fd;			/* -1: no fake device */
	int err;
	unsigned int calls;
	unsigned int count[16];	/* requests by _IOC_NR */
	unsigned long req;
	unsigned char arg[sizeof(struct luw_stats)];
	pid_t pids[LUW_MAX_TARGETS + 8];
	unsigned int npids;
	struct luw_stats stats[2];
	unsigned int stats_calls;
	unsigned int record_version;	/* 0: LUW_RECORD_VERSION */
};

extern struct luw_fakedev luw_fakedev;

/* Records as read() returns them: 8-aligned, appended. */
struct luw_fakedev_buf {
	uint64_t w[1024];
	size_t len;		/* bytes */
};

/*
 * A sample of pid: nh host pcs (0x401000, 0x401010, ...), nl Lua frames
 * (LUW_LF_LUA at 0x42), the ns splices.  Its header, to alter.
 */
struct luw_sample *luw_fakedev_sample(struct luw_fakedev_buf *b, uint32_t pid,
				      unsigned int nh, unsigned int nl,
				      const struct luw_splice *sp,
				      unsigned int ns);
struct luw_lost *luw_fakedev_lost(struct luw_fakedev_buf *b, uint32_t count);
struct luw_end *luw_fakedev_end(struct luw_fakedev_buf *b, uint32_t pid,
				uint8_t reason);

#endif
