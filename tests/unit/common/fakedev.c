/*
 * fakedev: the ioctl() of the tests of record/.  See fakedev.h.
 */
#include "fakedev.h"
#include "testlib.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct luw_fakedev luw_fakedev = { .fd = -1 };

static void answer_list(struct luw_list *l)
{
	int32_t *out = (int32_t *)(uintptr_t)l->pids_ptr;

	for (unsigned int i = 0; i < l->max && i < luw_fakedev.npids; i++)
		out[i] = luw_fakedev.pids[i];
	l->count = luw_fakedev.npids;
}

static void answer_stats(struct luw_stats *s)
{
	unsigned int k = luw_fakedev.stats_calls++;
	struct luw_stats a = luw_fakedev.stats[k < 2 ? k : 1];

	a.size = s->size;
	a.pid = s->pid;
	*s = a;
}

static int fake(unsigned long req, void *arg)
{
	size_t n = _IOC_SIZE(req);

	luw_fakedev.calls++;
	luw_fakedev.count[_IOC_NR(req) & 15]++;
	luw_fakedev.req = req;
	memset(luw_fakedev.arg, 0, sizeof(luw_fakedev.arg));
	memcpy(luw_fakedev.arg, arg,
	       n < sizeof(luw_fakedev.arg) ? n : sizeof(luw_fakedev.arg));
	if (luw_fakedev.err) {
		errno = luw_fakedev.err;
		return -1;
	}
	if (req == LUW_IOC_VERSION) {
		struct luw_version *v = arg;

		v->abi_version = LUW_ABI_VERSION;
		v->record_version = luw_fakedev.record_version ?
				    luw_fakedev.record_version :
				    LUW_RECORD_VERSION;
		v->max_targets = LUW_MAX_TARGETS;
	} else if (req == LUW_IOC_LIST) {
		answer_list(arg);
	} else if (req == LUW_IOC_STATS) {
		answer_stats(arg);
	}
	return 0;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == luw_fakedev.fd)
		return fake(req, arg);
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

static void *put(struct luw_fakedev_buf *b, const void *p, size_t n)
{
	void *at = (char *)b->w + b->len;

	if (b->len + n > sizeof(b->w))
		abort();	/* the test's own mistake */
	memcpy(at, p, n);
	b->len += n;
	return at;
}

struct luw_sample *luw_fakedev_sample(struct luw_fakedev_buf *b, uint32_t pid,
				      unsigned int nh, unsigned int nl,
				      const struct luw_splice *sp,
				      unsigned int ns)
{
	uint64_t host[LUW_MAX_HOST_FRAMES + 8];
	struct luw_lua_frame lua[LUW_MAX_LUA_FRAMES + 8];
	uint64_t rec[(LUW_RECORD_MAX + 64 * 32) / 8];

	if (nh > LUW_MAX_HOST_FRAMES + 8 || nl > LUW_MAX_LUA_FRAMES + 8)
		abort();	/* the test's own mistake */
	for (unsigned int i = 0; i < nh; i++)
		host[i] = 0x401000 + 16 * (uint64_t)i;
	for (unsigned int i = 0; i < nl; i++)
		lua[i] = (struct luw_lua_frame){ .addr = 0x42, .kind = LUW_LF_LUA };
	return put(b, rec, luw_test_sample(rec, pid, LUW_VMST_LFUNC, host, nh,
					   lua, nl, sp, ns));
}

struct luw_lost *luw_fakedev_lost(struct luw_fakedev_buf *b, uint32_t count)
{
	struct luw_lost l = { .size = sizeof(l), .type = LUW_REC_LOST,
			      .count = count };

	return put(b, &l, sizeof(l));
}

struct luw_end *luw_fakedev_end(struct luw_fakedev_buf *b, uint32_t pid,
				uint8_t reason)
{
	struct luw_end e = { .size = sizeof(e), .type = LUW_REC_END,
			     .reason = reason, .pid = pid };

	return put(b, &e, sizeof(e));
}
