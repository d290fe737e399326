#include "record/dev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int luw_dev_open_unchecked(int extra_flags)
{
	int fd = open(LUW_DEVICE, O_RDONLY | O_CLOEXEC | extra_flags);

	return fd < 0 ? -errno : fd;
}

int luw_dev_open(int extra_flags)
{
	int fd = luw_dev_open_unchecked(extra_flags), err;

	if (fd < 0)
		return fd;
	err = luw_dev_check(fd, NULL);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int luw_dev_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int luw_dev_version(int fd, struct luw_version *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	return luw_dev_ioctl(fd, LUW_IOC_VERSION, v);
}

int luw_dev_check(int fd, unsigned int *have)
{
	struct luw_version v;
	int err = luw_dev_version(fd, &v);

	if (err)
		return err;
	if (v.record_version == LUW_RECORD_VERSION)
		return 0;
	if (have)
		*have = v.record_version;
	return -EPROTO;
}

int luw_dev_attach(int fd, struct luw_attach *a)
{
	a->size = sizeof(*a);
	return luw_dev_ioctl(fd, LUW_IOC_ATTACH, a);
}

static int luw_dev_target(int fd, unsigned long cmd, pid_t pid)
{
	struct luw_target t = { .size = sizeof(t), .pid = pid };

	return luw_dev_ioctl(fd, cmd, &t);
}

int luw_dev_detach(int fd, pid_t pid)
{
	return luw_dev_target(fd, LUW_IOC_DETACH, pid);
}

int luw_dev_start(int fd, pid_t pid)
{
	return luw_dev_target(fd, LUW_IOC_START, pid);
}

int luw_dev_stop(int fd, pid_t pid)
{
	return luw_dev_target(fd, LUW_IOC_STOP, pid);
}

int luw_dev_stats(int fd, pid_t pid, struct luw_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->pid = pid;
	return luw_dev_ioctl(fd, LUW_IOC_STATS, s);
}

int luw_dev_alloc(int fd, pid_t pid, uint64_t allocf, uint64_t interval)
{
	struct luw_alloc a = {
		.size = sizeof(a), .pid = pid, .allocf = allocf,
		.interval = interval,
	};

	return luw_dev_ioctl(fd, LUW_IOC_ALLOC, &a);
}

int luw_dev_join(int fd, int other_fd, unsigned int flags)
{
	struct luw_join j = { .size = sizeof(j), .flags = flags, .fd = other_fd };

	return luw_dev_ioctl(fd, LUW_IOC_JOIN, &j);
}

int luw_dev_list(int fd, pid_t *pids, unsigned int max)
{
	int32_t buf[LUW_MAX_TARGETS];
	struct luw_list l = {
		.size = sizeof(l),
		.max = max < LUW_MAX_TARGETS ? max : LUW_MAX_TARGETS,
		.pids_ptr = (uintptr_t)buf,
	};
	int err = luw_dev_ioctl(fd, LUW_IOC_LIST, &l);

	if (err)
		return err;
	for (unsigned int i = 0; i < l.max && i < l.count; i++)
		pids[i] = buf[i];
	return (int)l.count;
}

int luw_dev_has(int fd, pid_t pid)
{
	pid_t pids[LUW_MAX_TARGETS];
	int n = luw_dev_list(fd, pids, LUW_MAX_TARGETS);

	for (int i = 0; i < n && i < LUW_MAX_TARGETS; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

int luw_dev_upload_table(int fd, pid_t pid, uint64_t start, uint64_t end,
			uint64_t file_offset, const void *table, size_t len)
{
	struct luw_unwind_table u = {
		.size = sizeof(u),
		.pid = pid,
		.table_size = (uint32_t)len,
		.start = start,
		.end = end,
		.file_offset = file_offset,
		.table_ptr = (uintptr_t)table,
	};

	if (len > LUW_MAX_TABLE_BYTES)
		return -EINVAL;
	return luw_dev_ioctl(fd, LUW_IOC_UNWIND_TABLE, &u);
}

static int luw_dev_check_sample(const struct luw_sample *s, size_t size,
			       struct luw_dev_rec *r)
{
	size_t want = sizeof(*s) + (size_t)s->nhost * 8 +
		      (size_t)s->nlua * sizeof(struct luw_lua_frame) +
		      (size_t)s->nsplice * sizeof(struct luw_splice);
	const unsigned char *p = (const unsigned char *)(s + 1);
	unsigned int prev_host = 0, prev_lua = 0;

	if (size < sizeof(*s) || want != size ||
	    s->nhost > LUW_MAX_HOST_FRAMES || s->nlua > LUW_MAX_LUA_FRAMES ||
	    s->nsplice > LUW_MAX_SPLICES || s->vmstate >= LUW_VMST_COUNT)
		return -EBADMSG;
	r->sample = s;
	r->host = (const uint64_t *)p;
	p += (size_t)s->nhost * 8;
	r->lua = (const struct luw_lua_frame *)p;
	p += (size_t)s->nlua * sizeof(struct luw_lua_frame);
	r->splice = (const struct luw_splice *)p;
	/* Splices: sorted, disjoint, inside both frame arrays. */
	for (unsigned int i = 0; i < s->nsplice; i++) {
		const struct luw_splice *sp = &r->splice[i];

		if (sp->host_first < prev_host || sp->lua_first < prev_lua ||
		    sp->host_first + sp->host_count > s->nhost ||
		    sp->lua_first + sp->lua_count > s->nlua)
			return -EBADMSG;
		prev_host = sp->host_first + sp->host_count;
		prev_lua = sp->lua_first + sp->lua_count;
	}
	return 0;
}

/* The Lua frame of record version 4: struct luw_lua_frame without func. */
#define V4_LUA_FRAME	24

void *luw_dev_upgrade_v4(const void *buf, size_t len, size_t *outlen)
{
	const unsigned char *in = buf;
	size_t off = 0, o = 0, grow = sizeof(struct luw_lua_frame) - V4_LUA_FRAME;
	unsigned char *out;

	/* A record of n frames holds n * 24 bytes of them and grows n * 8. */
	out = malloc(len + len / 3 + 8);
	if (!out)
		return NULL;
	while (off + sizeof(struct luw_sample) <= len) {
		struct luw_sample s;
		size_t frames, rest, size;

		memcpy(&s, in + off, sizeof(s));
		size = s.size;
		if (size < 8 || (size & 7) || size > len - off)
			break;
		if (s.type != LUW_REC_SAMPLE && s.type != LUW_REC_ALLOC &&
		    s.type != LUW_REC_SWITCH) {
			memcpy(out + o, in + off, size);
			o += size;
			off += size;
			continue;
		}
		frames = sizeof(s) + (size_t)s.nhost * 8;
		if (s.nlua > LUW_MAX_LUA_FRAMES ||
		    frames + (size_t)s.nlua * V4_LUA_FRAME > size ||
		    size + (size_t)s.nlua * grow > UINT16_MAX)
			break;
		rest = size - frames - (size_t)s.nlua * V4_LUA_FRAME;
		s.size = (uint16_t)(size + (size_t)s.nlua * grow);
		memcpy(out + o, &s, sizeof(s));
		memcpy(out + o + sizeof(s), in + off + sizeof(s), frames - sizeof(s));
		o += frames;
		for (unsigned int i = 0; i < s.nlua; i++) {
			memcpy(out + o, in + off + frames + (size_t)i * V4_LUA_FRAME,
			       V4_LUA_FRAME);
			memset(out + o + V4_LUA_FRAME, 0, grow);
			o += sizeof(struct luw_lua_frame);
		}
		memcpy(out + o, in + off + size - rest, rest);
		o += rest;
		off += size;
	}
	memcpy(out + o, in + off, len - off);
	*outlen = o + len - off;
	return out;
}

int luw_dev_next(const void *buf, size_t len, size_t *off, struct luw_dev_rec *r)
{
	const unsigned char *p = (const unsigned char *)buf + *off;
	size_t left = len - *off;
	uint16_t size;
	uint8_t type;

	memset(r, 0, sizeof(*r));
	if (*off >= len)
		return 0;
	if (left < 8)
		return -EBADMSG;
	memcpy(&size, p, sizeof(size));
	type = p[2];
	if (size < 8 || (size & 7) || size > left)
		return -EBADMSG;
	r->type = type;
	r->size = size;
	switch (type) {
	case LUW_REC_SAMPLE:
		if (luw_dev_check_sample((const struct luw_sample *)p, size, r))
			return -EBADMSG;
		break;
	case LUW_REC_ALLOC: {
		const struct luw_alloc_tail *t;

		if (size < sizeof(struct luw_sample) + sizeof(*t) ||
		    luw_dev_check_sample((const struct luw_sample *)p,
					 size - sizeof(*t), r))
			return -EBADMSG;
		t = (const struct luw_alloc_tail *)(p + size - sizeof(*t));
		if (!t->nsize || t->kind < LUW_ALLOC_NEW ||
		    t->kind > LUW_ALLOC_SHRINK)
			return -EBADMSG;
		r->alloc = t;
		break;
	}
	case LUW_REC_SWITCH: {
		const struct luw_switch_tail *t;

		if (size < sizeof(struct luw_sample) + sizeof(*t) ||
		    luw_dev_check_sample((const struct luw_sample *)p,
					 size - sizeof(*t), r))
			return -EBADMSG;
		t = (const struct luw_switch_tail *)(p + size - sizeof(*t));
		if (t->state < LUW_SWITCH_BLOCKED || t->state > LUW_SWITCH_EXIT ||
		    (t->state == LUW_SWITCH_EXIT && size != sizeof(struct luw_sample) + sizeof(*t)))
			return -EBADMSG;
		r->sw = t;
		break;
	}
	case LUW_REC_LOST:
		if (size != sizeof(struct luw_lost))
			return -EBADMSG;
		r->lost = (const struct luw_lost *)p;
		break;
	case LUW_REC_END:
		if (size != sizeof(struct luw_end))
			return -EBADMSG;
		r->end = (const struct luw_end *)p;
		if (r->end->reason != LUW_END_EXIT &&
		    r->end->reason != LUW_END_EXEC)
			return -EBADMSG;
		break;
	default:
		return -EBADMSG;
	}
	*off += size;
	return 1;
}

uint64_t luw_dev_hist_quantile(const __u64 *hist, double q)
{
	uint64_t total = 0, seen = 0, rank;

	for (unsigned int b = 0; b < LUW_HIST_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return 0;
	rank = (uint64_t)(q * (double)(total - 1)) + 1;
	for (unsigned int b = 0; b < LUW_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= rank)
			return luw_hist_lower(b);
	}
	return luw_hist_lower(LUW_HIST_BUCKETS - 1);
}

uint64_t luw_dev_hist_max(const __u64 *hist)
{
	for (unsigned int b = LUW_HIST_BUCKETS; b-- > 0;)
		if (hist[b])
			return luw_hist_lower(b);
	return 0;
}

const char *luw_dev_vmstate_name(unsigned int vmstate)
{
	static const char *const names[LUW_VMST_COUNT] = {
		"INTERP", "LFUNC", "FFUNC", "CFUNC", "GC", "EXIT",
		"RECORD", "OPT", "ASM", "TRACE", "UNKNOWN",
	};

	return vmstate < LUW_VMST_COUNT ? names[vmstate] : "?";
}
