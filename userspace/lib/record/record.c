/*
 * record: /dev/luaunwind -> .luw file.  See record.h.
 */
#include "record/record.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/sched.h"
#include "record/attach.h"
#include "record/dev.h"
#include "record/file.h"
#include "record/symbolize.h"
#include "proc/procinfo.h"

#define BUF_BYTES (1U << 20)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every one of pids exited: gone, or a zombie (record -- CMD's child). */
static int all_gone(const pid_t *pids, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct luw_procinfo_stat st;

		if ((kill(pids[i], 0) == 0 || errno != ESRCH) &&
		    (luw_procinfo_stat(pids[i], &st) ||
		     (st.state != 'Z' && st.state != 'X')))
			return 0;
	}
	return n > 0;
}

static void write_stats(struct luw_file_writer *w, const struct luw_stats *a,
			const struct luw_stats *b, const struct luw_rec_result *r)
{
	struct luw_file_buf sb = { 0 };

	luw_file_put_u32(&sb, 0);
	luw_file_put_u32(&sb, 0);
	luw_file_put_u64(&sb, (uint64_t)(r->seconds * 1e9));
	luw_file_put_u64(&sb, r->records);
	luw_file_put_u64(&sb, b->samples - a->samples);
	luw_file_put_u64(&sb, r->lost);
	luw_file_put_u64(&sb, b->drops - a->drops);
	luw_file_put_u64(&sb, b->faults - a->faults);
	luw_file_put_u64(&sb, b->truncated - a->truncated);
	for (unsigned int i = 0; i < 16; i++)
		luw_file_put_u64(&sb, b->vmstate[i] - a->vmstate[i]);
	luw_file_put_u64(&sb, b->alloc_calls - a->alloc_calls);
	luw_file_put_u64(&sb, b->alloc_bytes - a->alloc_bytes);
	luw_file_put_u64(&sb, b->alloc_samples - a->alloc_samples);
	luw_file_write_buf(w, LUWF_SEC_STATS, &sb);
	luw_file_buf_free(&sb);
}

/*
 * Where each live thread of pids stands now (threadend sections): the
 * end of its last off-CPU interval.
 */
static void write_thread_ends(struct luw_file_writer *w, const pid_t *pids,
			      unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct luw_thread_time *v;
		struct luw_file_buf b = { 0 };
		size_t nt;

		if (luw_sched_thread_times(pids[i], &v, &nt))
			continue;	/* gone: its threads' exits closed them */
		for (size_t k = 0; k < nt; k++) {
			luw_file_put_u32(&b, (uint32_t)pids[i]);
			luw_file_put_u32(&b, (uint32_t)v[k].tid);
			luw_file_put_u64(&b, v[k].time);
			luw_file_put_u64(&b, v[k].runtime);
			luw_file_write_buf(w, LUWF_SEC_THREADEND, &b);
			luw_file_buf_free(&b);
		}
		free(v);
	}
}

/*
 * The processes o->follow attached since: named from now on (their first
 * samples wait in the ring for this), and kept in pids.  One that exited
 * before its maps were read is not: its samples are dropped (take()), and
 * counted in res->unnamed.  A write that failed is not counted: the
 * writer keeps the error, and the recording ends with it.
 */
static unsigned int follow(const struct luw_rec_opts *o, int fd,
			   struct luw_symbolize *z, pid_t *pids,
			   unsigned int *npids, unsigned int natt,
			   struct luw_rec_result *res)
{
	unsigned int n = o->follow(o->follow_ctx, fd, o->att, natt);

	for (unsigned int i = natt; i < n && *npids < LUW_MAX_TARGETS; i++) {
		pid_t pid = luw_attach_pid(o->att[i]);
		char why[1024];

		if (luw_symbolize_add_proven(z, pid,
					     luw_attach_target(o->att[i]),
					     why, sizeof(why)) == -1)
			res->unnamed++;
		else
			pids[(*npids)++] = pid;
	}
	return n;
}

static int wanted(pid_t pid, const pid_t *pids, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

/*
 * The rings are the module's, not this reader's: they can still hold
 * samples of a target detached before this record began (the last
 * ticks of an earlier record, taken after its final drain).  With the
 * targets named, those are dropped here -- the file could not name their
 * frames, their process being gone.  filter 0 keeps everything.
 * One read() worth of records: names first, then the records.
 */
static int take(struct luw_symbolize *z, struct luw_file_writer *w, void *buf,
		size_t n, int filter, const pid_t *pids, unsigned int npids,
		struct luw_rec_result *res)
{
	struct luw_dev_rec r;
	size_t off = 0, at = 0, keep = 0;
	int got;

	while ((got = luw_dev_next(buf, n, &off, &r)) > 0) {
		/* End records say what record.c finds out by itself
		 * (all_gone); the file keeps samples and losses. */
		if (r.type == LUW_REC_END ||
		    (r.sample && filter &&
		     !wanted((pid_t)r.sample->pid, pids, npids))) {
			at = off;
			continue;
		}
		if (r.type == LUW_REC_SAMPLE)
			res->records++;
		else if (r.type == LUW_REC_ALLOC)
			res->allocs++;
		else if (r.type == LUW_REC_SWITCH)
			res->switches++;
		else
			res->lost += r.lost->count;
		if (keep != at)
			memmove((char *)buf + keep, (char *)buf + at, off - at);
		keep += off - at;
		at = off;
	}
	if (got < 0)
		return -2;
	if (!keep)
		return 0;
	luw_symbolize_records(z, buf, keep);
	return luw_file_write_section(w, LUWF_SEC_SAMPLES, buf, keep);
}

int luw_record(int fd, const struct luw_rec_opts *o, struct luw_rec_result *res,
	       char *err, size_t errlen)
{
	pid_t pids[LUW_MAX_TARGETS];
	struct luw_stats s0, s1;
	struct luw_file_writer w = { 0 };
	struct luw_symbolize *z = NULL;
	uint64_t *buf = NULL;
	double t0, next_tick;
	unsigned int npids = 0, natt = o->natt;
	int rc = -1, flags, draining = 0, ended = 0;
	FILE *f;

	memset(res, 0, sizeof(*res));
	if (natt || o->follow) {
		for (unsigned int i = 0; i < natt && i < LUW_MAX_TARGETS; i++)
			pids[npids++] = luw_attach_pid(o->att[i]);
	} else {
		int n = luw_dev_list(fd, pids, LUW_MAX_TARGETS);

		if (n < 0) {
			snprintf(err, errlen, "listing targets: %s", strerror(-n));
			return -1;
		}
		if (n == 0) {
			snprintf(err, errlen, "no process is attached: run "
				 "'luaunwind-ctl attach PID' first, or 'record -p PID'");
			return -1;
		}
		npids = (unsigned int)(n < LUW_MAX_TARGETS ? n : LUW_MAX_TARGETS);
	}
	f = fopen(o->path, "wb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", o->path, strerror(errno));
		return -1;
	}
	buf = malloc(BUF_BYTES);
	if (!buf || luw_file_writer_init(&w, f) || !(z = luw_symbolize_new(&w, o->freq))) {
		snprintf(err, errlen, "%s: %s", o->path,
			 strerror(buf ? (w.err ? w.err : ENOMEM) : ENOMEM));
		goto out;
	}
	for (unsigned int i = 0; i < npids; i++) {
		char why[1024];

		/* Not LuaJIT, or gone already: its host frames still count. */
		luw_symbolize_add_proven(z, pids[i], i < natt ?
					 luw_attach_target(o->att[i]) : NULL,
					 why, sizeof(why));
	}
	memset(&s0, 0, sizeof(s0));
	luw_dev_stats(fd, 0, &s0);
	if (o->fresh) {
		/* Counters from zero: the records in the rings go back to
		 * the attach, before the symbols above were read. */
		uint64_t interval = s0.alloc_interval;

		memset(&s0, 0, sizeof(s0));
		s0.alloc_interval = interval;
	}
	/* The allocation sampling of the session's targets, as the module
	 * has it (one interval for them all, luw_stats). */
	if (s0.alloc_interval) {
		struct luw_file_buf ab = { 0 };

		luw_file_put_u32(&ab, 0);
		luw_file_put_u32(&ab, 0);
		luw_file_put_u64(&ab, s0.alloc_interval);
		luw_file_write_buf(&w, LUWF_SEC_ALLOC, &ab);
		luw_file_buf_free(&ab);
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "%s: %s", LUW_DEVICE, strerror(errno));
		goto out;
	}
	t0 = now_s();
	next_tick = t0 + 1;
	for (;;) {
		ssize_t n = read(fd, buf, BUF_BYTES);
		double t = now_s();

		if (n > 0) {
			int r = take(z, &w, buf, (size_t)n,
				     natt || o->follow, pids, npids, res);

			if (r == -2) {
				snprintf(err, errlen, "the module returned a malformed record");
				goto out;
			}
			if (r) {
				snprintf(err, errlen, "%s: %s", o->path,
					 strerror(w.err));
				goto out;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN) {
			snprintf(err, errlen, "reading %s: %s", LUW_DEVICE,
				 strerror(errno));
			goto out;
		}
		/* Nothing waiting: the rings are drained. */
		if (draining)
			break;
		/*
		 * The tick first: a loop slower than the tick (a loaded
		 * machine, a long take()) still refreshes tables and names
		 * before the end it reached, as it would have on time.
		 */
		if (t >= next_tick) {
			next_tick = t + 1;
			for (unsigned int i = 0; i < natt; i++)
				luw_attach_upload(o->att[i], fd, NULL, err, errlen);
			if (o->follow)
				natt = follow(o, fd, z, pids, &npids, natt,
					      res);
			luw_symbolize_reap(z);
			if (o->follow ? o->nroots &&
					all_gone(o->roots, o->nroots) &&
					(!npids || all_gone(pids, npids)) :
					all_gone(pids, npids)) {
				res->targets_gone = 1;
				draining = 1;
				continue;
			}
			if (o->progress) {
				fprintf(o->progress,
					"\rrecording: %.0f s, %llu samples, %llu lost   ",
					t - t0, (unsigned long long)res->records,
					(unsigned long long)res->lost);
				fflush(o->progress);
			}
		}
		if ((o->stop && *o->stop) ||
		    (o->duration > 0 && t - t0 >= o->duration)) {
			if (o->offcpu || res->switches)
				write_thread_ends(&w, pids, npids);
			draining = 1;
			continue;
		}
		{
			struct pollfd p = { .fd = fd, .events = POLLIN };
			double left = o->duration > 0 ? t0 + o->duration - t : 1;
			int ms = left < 0.2 ? (int)(left * 1000) + 1 : 200;

			poll(&p, 1, ms < 1 ? 1 : ms);
		}
	}
	res->seconds = now_s() - t0;
	luw_symbolize_reap(z);
	memset(&s1, 0, sizeof(s1));
	if (luw_dev_stats(fd, 0, &s1))
		s1 = s0;
	write_stats(&w, &s0, &s1, res);
	if (luw_file_write_end(&w)) {
		snprintf(err, errlen, "%s: %s", o->path, strerror(w.err));
		goto out;
	}
	rc = 0;
	ended = 1;
out:
	/* On a device error the samples so far still make a whole file. */
	if (z && !ended && !w.err)
		luw_file_write_end(&w);
	if (o->progress) {
		fprintf(o->progress, "\r%60s\r", "");
		fflush(o->progress);
	}
	res->bytes = w.off;
	luw_symbolize_free(z);
	free(buf);
	if (fclose(f) && !rc) {
		snprintf(err, errlen, "%s: %s", o->path, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* As large as a read of the dump ever needs: the rings give what fits. */
#define DUMP_BYTES (256U << 10)

int luw_record_dump(int fd, const struct luw_record_dump_opts *o, char *err,
		    size_t errlen)
{
	long long count = o->count;
	double deadline = o->duration >= 0 ? now_s() + o->duration : 0;
	uint64_t *buf = malloc(DUMP_BYTES);
	int rc = 0;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (!(o->stop && *o->stop) && count != 0) {
		struct luw_dev_rec r;
		size_t off = 0;
		ssize_t n;

		if (o->duration >= 0 && now_s() >= deadline)
			break;
		n = read(fd, buf, DUMP_BYTES);
		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int ms = 200;

			if (o->nonblock)
				break;
			if (o->duration >= 0) {
				double left = deadline - now_s();

				ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
				ms = ms > 200 ? 200 : ms;
			}
			poll(&p, 1, ms);
			continue;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "read: %s", strerror(errno));
			rc = -1;
			break;
		}
		if (n == 0)
			break;	/* no target left */
		while (count != 0) {
			int got = luw_dev_next(buf, (size_t)n, &off, &r);

			if (got == 0)
				break;
			if (got < 0) {
				snprintf(err, errlen, "malformed record at byte "
					 "%zu of a read", off);
				rc = -1;
				break;
			}
			o->record(o->ctx, &r);
			if (r.type == LUW_REC_SAMPLE && count > 0)
				count--;
		}
		if (rc)
			break;
	}
	free(buf);
	return rc;
}
