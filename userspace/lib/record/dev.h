/*
 * luwdev: thin wrappers around the /dev/luaunwind ioctls and a validating
 * iterator over the records read() returns.  The ABI itself (structs,
 * flags, record grammar) is include/luaunwind.h.
 *
 * Every function returns 0 (or a count) on success and -errno on failure;
 * none prints anything.
 */
#ifndef LUW_RECORD_DEV_H
#define LUW_RECORD_DEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "luaunwind.h"

/*
 * open(LUW_DEVICE, O_RDONLY | O_CLOEXEC | extra), and the module checked
 * to write the record stream this build reads (luw_dev_check): fd or
 * -errno, -EPROTO for a module of another record version (one built from
 * other sources is still loaded), whose records would be misread.
 */
int luw_dev_open(int extra_flags);
/* The same without the check: for asking such a module its version. */
int luw_dev_open_unchecked(int extra_flags);
/*
 * 0 when the module behind fd writes records of LUW_RECORD_VERSION;
 * -EPROTO when it writes another, which *have (unless NULL) receives;
 * the VERSION request's -errno when it fails.
 */
int luw_dev_check(int fd, unsigned int *have);

int luw_dev_version(int fd, struct luw_version *v);
/* a->size is filled in. */
int luw_dev_attach(int fd, struct luw_attach *a);
int luw_dev_detach(int fd, pid_t pid);
/* pid 0: every target. */
int luw_dev_start(int fd, pid_t pid);
int luw_dev_stop(int fd, pid_t pid);
/* pid 0: the whole session, detached targets included. */
int luw_dev_stats(int fd, pid_t pid, struct luw_stats *s);
/*
 * Share a session (LUW_IOC_JOIN): that of other_fd, another open
 * /dev/luaunwind; or, with other_fd -1, the caller's kept session
 * (flags LUW_JOIN_CREATE: this file's becomes it when there is none).
 * -ENOENT: no kept session.
 */
int luw_dev_join(int fd, int other_fd, unsigned int flags);
/* Up to max pids into pids; returns how many targets are attached. */
int luw_dev_list(int fd, pid_t *pids, unsigned int max);
/* Whether pid is a target of fd's session (1, else 0). */
int luw_dev_has(int fd, pid_t pid);
/* Probe the allocator at allocf of target pid (LUW_IOC_ALLOC). */
int luw_dev_alloc(int fd, pid_t pid, uint64_t allocf, uint64_t interval);
/* Hand over the unwind table (luaunwind_unwind.h) of one mapping. */
int luw_dev_upload_table(int fd, pid_t pid, uint64_t start, uint64_t end,
			uint64_t file_offset, const void *table, size_t len);

/* One record of a read() buffer, checked against the grammar. */
struct luw_dev_rec {
	unsigned int type;			/* LUW_REC_* */
	size_t size;
	const struct luw_sample *sample;	/* LUW_REC_SAMPLE, _ALLOC, _SWITCH */
	const uint64_t *host;			/* sample->nhost pcs */
	const struct luw_lua_frame *lua;	/* sample->nlua frames */
	const struct luw_splice *splice;	/* sample->nsplice */
	const struct luw_lost *lost;		/* LUW_REC_LOST */
	const struct luw_end *end;		/* LUW_REC_END */
	const struct luw_alloc_tail *alloc;	/* LUW_REC_ALLOC */
	const struct luw_switch_tail *sw;	/* LUW_REC_SWITCH */
};

/*
 * The record at buf + *off: 1 and *off advanced, 0 at the end of the
 * buffer, -EBADMSG when the bytes there are not a valid record (sizes that
 * disagree, an unknown type, a splice out of range).  buf must be 8-byte
 * aligned.
 */
int luw_dev_next(const void *buf, size_t len, size_t *off, struct luw_dev_rec *r);

/*
 * Records of record version 4 (Lua frames of 24 bytes, without func), as
 * .luw files up to version 4 hold them, rewritten as this version's (func
 * 0): a malloc'd buffer and its length in *outlen, NULL when memory ran
 * out.  A record that does not parse as version 4 ends the rewrite: it
 * and what follows are copied as they are, for luw_dev_next to refuse.
 */
void *luw_dev_upgrade_v4(const void *buf, size_t len, size_t *outlen);

/* The q-quantile (0..1) of a stats histogram (hist: handler ns,
 * reads_hist: user reads per sample): the lower bound of the bucket
 * holding it; 0 with no samples. */
uint64_t luw_dev_hist_quantile(const __u64 *hist, double q);
/* The lower bound of the highest bucket with a count; 0 with none. */
uint64_t luw_dev_hist_max(const __u64 *hist);

/* "INTERP", "LFUNC", ..., "TRACE", "UNKNOWN"; "?" out of range. */
const char *luw_dev_vmstate_name(unsigned int vmstate);

#endif /* LUW_RECORD_DEV_H */
