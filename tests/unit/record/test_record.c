/*
 * record/record.c, the loop of `luaunwind-ctl record`, without the
 * module: the "device" is a pipe the test writes the module's records
 * into (common/fakedev.h builds them), and common/fakedev.c's ioctl()
 * answers LIST and STATS on it.  A live luajit is the recorded process.
 * The .luw file written is read back (record/file.h) and must hold:
 *   - the samples and losses read, in order, whole, END records left out;
 *     with targets named (att), another process's samples left out too;
 *     without, every process's, the targets being those LIST gives;
 *   - a process section for each process sampled (none for one whose
 *     samples were left out), a stats section whose counters (allocator
 *     probes' too) are the module's at the end less those at the start,
 *     or in a session begun with the recording (fresh) the module's at
 *     the end, and the end section,
 *     whatever ended the recording: the duration, the stop flag (what was
 *     waiting still drained), every target gone (noticed at the
 *     once-a-second tick, which also uploads unwind tables and prints the
 *     progress line), a malformed record, a read error;
 *   - and nothing is created when no process is attached or LIST fails;
 *     an unwritable path, a full disk and a device read error are
 *     reported with what failed.
 * The records' pcs are made up: naming them is symbolize.c's (its own
 * test), this test checks what record.c keeps and writes.
 *
 * usage: test_record FIXTURES
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakedev.h"
#include "record/attach.h"
#include "record/file.h"
#include "record/record.h"
#include "testlib.h"

#define OTHER_PID 2147480000	/* a pid no process has */
#define NSTATS 26		/* u64s of a stats section after its two u32s */

static char dir[64], path[128];
static pid_t lj;

/* What a .luw file holds, as this test looks at it. */
struct luw_seen {
	int complete;		/* its end section reached */
	uint64_t size;
	unsigned int nproc;
	uint32_t proc[8];
	uint8_t samples[8192];
	size_t samples_len;
	int stats;
	uint64_t stat[NSTATS];
};

static void read_luw(const char *p, struct luw_seen *g)
{
	struct luw_file f;
	struct luw_file_sec s;
	uint64_t off = LUWF_HEADER_SIZE;
	char err[256];
	int fd = open(p, O_RDONLY), rc = -1;

	memset(g, 0, sizeof(*g));
	if (fd < 0 || luw_file_read_fd(fd, &f)) {
		CHECK(0, "%s unreadable", p);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	g->size = f.size;
	CHECK(!luw_file_check_header(&f, err, sizeof(err)), "%s: %s", p, err);
	while ((rc = luw_file_next(&f, &off, &s, err, sizeof(err))) == 1) {
		struct luw_file_cur c;

		luw_file_cur_init(&c, &s);
		if (s.type == LUWF_SEC_PROCESS && g->nproc < 8) {
			g->proc[g->nproc++] = luw_file_get_u32(&c);
		} else if (s.type == LUWF_SEC_SAMPLES &&
			   g->samples_len + s.size <= sizeof(g->samples)) {
			memcpy(g->samples + g->samples_len, s.p, s.size);
			g->samples_len += s.size;
		} else if (s.type == LUWF_SEC_STATS) {
			luw_file_get_u32(&c);
			luw_file_get_u32(&c);
			for (int i = 0; i < NSTATS; i++)
				g->stat[i] = luw_file_get_u64(&c);
			g->stats = !c.bad;
		}
	}
	g->complete = rc == 0;
	CHECK(rc == 0, "%s: %s", p, err);
	luw_file_close(&f);
}

/* The fake's counters: start and end of a recording. */
static void set_stats(void)
{
	struct luw_stats *a = &luw_fakedev.stats[0], *b = &luw_fakedev.stats[1];

	memset(luw_fakedev.stats, 0, sizeof(luw_fakedev.stats));
	a->samples = 100;
	a->drops = 5;
	a->faults = 1;
	a->truncated = 2;
	b->samples = 160;
	b->drops = 9;
	b->faults = 4;
	b->truncated = 2;
	for (int i = 0; i < 16; i++) {
		a->vmstate[i] = (uint64_t)i;
		b->vmstate[i] = 3 * (uint64_t)i;
	}
	a->alloc_calls = 1000;
	a->alloc_bytes = 50000;
	a->alloc_samples = 10;
	b->alloc_calls = 3000;
	b->alloc_bytes = 170000;
	b->alloc_samples = 40;
	luw_fakedev.stats_calls = 0;
}

/*
 * One recording from a pipe standing for the device: the records in b
 * written into it, LIST giving `listed` (0: nothing attached) or every
 * request failing with err; read_error: recording from the pipe's write
 * end, which read() refuses.
 */
struct run {
	struct luw_fakedev_buf b;
	pid_t listed;
	int err;
	int read_error;
	struct luw_rec_result res;
	char msg[512];
	int rc;
};

static void record(struct run *r, const struct luw_rec_opts *o)
{
	int p[2];

	r->msg[0] = '\0';
	r->rc = -2;
	if (pipe(p)) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	if (r->b.len && write(p[1], r->b.w, r->b.len) != (ssize_t)r->b.len)
		CHECK(0, "write to the pipe: %s", strerror(errno));
	luw_fakedev.fd = r->read_error ? p[1] : p[0];
	luw_fakedev.err = r->err;
	luw_fakedev.pids[0] = r->listed;
	luw_fakedev.npids = r->listed ? 1 : 0;
	memset(luw_fakedev.count, 0, sizeof(luw_fakedev.count));
	set_stats();
	r->rc = luw_record(luw_fakedev.fd, o, &r->res, r->msg, sizeof(r->msg));
	luw_fakedev.fd = -1;
	close(p[0]);
	close(p[1]);
}

/* A sample of lj, one of another process, a loss, lj's end. */
static void usual_records(struct luw_fakedev_buf *b, size_t *lj_at,
			  size_t *other_at, size_t *lost_at)
{
	static const struct luw_splice sp = { 1, 1, 0, 2 };

	b->len = 0;
	*lj_at = b->len;
	luw_fakedev_sample(b, (uint32_t)lj, 3, 2, &sp, 1);
	*other_at = b->len;
	luw_fakedev_sample(b, OTHER_PID, 2, 0, NULL, 0);
	*lost_at = b->len;
	luw_fakedev_lost(b, 7);
	luw_fakedev_end(b, (uint32_t)lj, LUW_END_EXIT);
}

/* Stats section: the module's counters at the end less at the start, or
 * fresh, at the end. */
static void check_stats(const char *what, const struct luw_seen *g,
			const struct luw_rec_result *res, int fresh)
{
	CHECK(g->stats, "%s: no stats section", what);
	if (!g->stats)
		return;
	CHECK(g->stat[0] == (uint64_t)(res->seconds * 1e9) &&
	      g->stat[1] == res->records && g->stat[2] == (fresh ? 160 : 60) &&
	      g->stat[3] == res->lost && g->stat[4] == (fresh ? 9 : 4) &&
	      g->stat[5] == (fresh ? 4 : 3) && g->stat[6] == (fresh ? 2 : 0),
	      "%s: stats ns %llu records %llu samples %llu lost %llu drops %llu "
	      "faults %llu truncated %llu", what,
	      (unsigned long long)g->stat[0], (unsigned long long)g->stat[1],
	      (unsigned long long)g->stat[2], (unsigned long long)g->stat[3],
	      (unsigned long long)g->stat[4], (unsigned long long)g->stat[5],
	      (unsigned long long)g->stat[6]);
	for (int i = 0; i < 16; i++)
		CHECK(g->stat[7 + i] == (fresh ? 3 : 2) * (uint64_t)i,
		      "%s: vmstate[%d] %llu", what, i,
		      (unsigned long long)g->stat[7 + i]);
	CHECK(g->stat[23] == (fresh ? 3000 : 2000) &&
	      g->stat[24] == (fresh ? 170000 : 120000) &&
	      g->stat[25] == (fresh ? 40 : 30),
	      "%s: allocator probes' calls %llu bytes %llu samples %llu", what,
	      (unsigned long long)g->stat[23], (unsigned long long)g->stat[24],
	      (unsigned long long)g->stat[25]);
}

/* No target named: LIST's, everything kept but the END record. */
static void test_list(struct luw_seen *g)
{
	struct luw_rec_opts o = { .path = path, .duration = 0.3 };
	struct run r = { .listed = lj };
	size_t a, other, lost;

	usual_records(&r.b, &a, &other, &lost);
	record(&r, &o);
	CHECK(r.rc == 0, "list: %s", r.msg);
	read_luw(path, g);
	CHECK(g->complete && r.res.bytes == g->size, "list: %llu bytes said, %llu",
	      (unsigned long long)r.res.bytes, (unsigned long long)g->size);
	CHECK(r.res.records == 2 && r.res.lost == 7 && !r.res.targets_gone,
	      "list: %llu records, %llu lost", (unsigned long long)r.res.records,
	      (unsigned long long)r.res.lost);
	CHECK(g->samples_len == r.b.len - sizeof(struct luw_end) &&
	      !memcmp(g->samples, r.b.w, g->samples_len),
	      "list: %zu bytes of samples kept, want the %zu read before the end",
	      g->samples_len, r.b.len - sizeof(struct luw_end));
	/* Each process sampled is described, gone or not. */
	CHECK(g->nproc == 2 && g->proc[0] == (uint32_t)lj &&
	      g->proc[1] == OTHER_PID, "list: %u process sections", g->nproc);
	CHECK(r.res.seconds >= 0.3 && r.res.seconds < 5, "list: %.2f s, want 0.3",
	      r.res.seconds);
	CHECK(luw_fakedev.count[_IOC_NR(LUW_IOC_LIST)] == 1 &&
	      luw_fakedev.count[_IOC_NR(LUW_IOC_STATS)] == 2,
	      "list: %u LIST, %u STATS requests",
	      luw_fakedev.count[_IOC_NR(LUW_IOC_LIST)],
	      luw_fakedev.count[_IOC_NR(LUW_IOC_STATS)]);
	check_stats("list", g, &r.res, 0);
}

/*
 * The target named, in a session begun with the recording (its stats
 * from zero): the other process's sample dropped; past the first
 * second, the tick's table uploads and progress line.  LIST would say
 * nothing is attached: it is not asked.
 */
static void test_named(struct luw_seen *g)
{
	struct luw_attacher *att = NULL;
	struct run r = { .listed = 0 };
	char *prog = NULL;
	size_t a, other, lost, plen = 0;
	FILE *progress = open_memstream(&prog, &plen);
	struct luw_rec_opts o = {
		.path = path, .duration = 1.3, .att = &att, .natt = 1,
		.fresh = 1, .progress = progress,
	};

	CHECK(progress, "out of memory");
	if (!progress || luw_attach_open(lj, 1, &att, r.msg, sizeof(r.msg))) {
		CHECK(0, "named: luw_attach_open: %s", r.msg);
		goto out;
	}
	usual_records(&r.b, &a, &other, &lost);
	record(&r, &o);
	fflush(progress);
	CHECK(r.rc == 0, "named: %s", r.msg);
	read_luw(path, g);
	CHECK(g->complete && r.res.records == 1 && r.res.lost == 7,
	      "named: %llu records, %llu lost", (unsigned long long)r.res.records,
	      (unsigned long long)r.res.lost);
	CHECK(g->samples_len == other - a + sizeof(struct luw_lost) &&
	      !memcmp(g->samples, (char *)r.b.w + a, other - a) &&
	      !memcmp(g->samples + (other - a), (char *)r.b.w + lost,
		      sizeof(struct luw_lost)),
	      "named: %zu bytes of samples, want lj's sample and the loss",
	      g->samples_len);
	CHECK(g->nproc == 1 && g->proc[0] == (uint32_t)lj, "named: processes");
	CHECK(!luw_fakedev.count[_IOC_NR(LUW_IOC_LIST)], "named: LIST asked");
	CHECK(luw_fakedev.count[_IOC_NR(LUW_IOC_UNWIND_TABLE)] >= 2,
	      "named: %u tables uploaded at the tick",
	      luw_fakedev.count[_IOC_NR(LUW_IOC_UNWIND_TABLE)]);
	/* The seconds are the machine's: any count will do. */
	CHECK(prog && strstr(prog, "\rrecording: ") &&
	      strstr(prog, " s, 1 samples, 7 lost"),
	      "named: progress \"%s\"", prog ? prog : "");
	check_stats("named", g, &r.res, 1);
out:
	if (progress)
		fclose(progress);
	free(prog);
	luw_attach_free(att);
}

/*
 * The stop flag (what is waiting is drained, then the end), every
 * target gone (noticed at the tick), a record the grammar refuses (an
 * error, and still a whole file).
 */
static void test_ends(struct luw_seen *g)
{
	volatile sig_atomic_t stop = 1;
	struct luw_rec_opts o = { .path = path, .stop = &stop };
	struct run r = { .listed = lj };
	size_t a, other, lost;
	pid_t dead;

	usual_records(&r.b, &a, &other, &lost);
	record(&r, &o);
	read_luw(path, g);
	CHECK(r.rc == 0 && g->complete && r.res.records == 2 &&
	      r.res.seconds < 1, "stop: rc %d, %llu records in %.2f s: %s",
	      r.rc, (unsigned long long)r.res.records, r.res.seconds, r.msg);

	dead = fork();
	if (dead == 0)
		_exit(0);
	CHECK(dead > 0 && waitpid(dead, NULL, 0) == dead, "fork");
	o.stop = NULL;
	r.b.len = 0;
	r.listed = dead;
	alarm(20);
	record(&r, &o);
	alarm(0);
	read_luw(path, g);
	CHECK(r.rc == 0 && r.res.targets_gone && g->complete &&
	      r.res.seconds >= 1 && r.res.seconds < 3,
	      "gone: rc %d, targets_gone %d after %.2f s: %s", r.rc,
	      r.res.targets_gone, r.res.seconds, r.msg);

	o.duration = 5;
	r.listed = lj;
	luw_fakedev_lost(&r.b, 1)->type = 9;
	record(&r, &o);
	read_luw(path, g);
	CHECK(r.rc == -1 && strstr(r.msg, "malformed record") && g->complete &&
	      r.res.seconds < 1, "malformed: rc %d \"%s\", file complete %d",
	      r.rc, r.msg, g->complete);
}

/* Failures before, while and after reading. */
static void test_errors(struct luw_seen *g)
{
	struct luw_rec_opts o = { .path = path, .duration = 0.2 };
	struct run r = { .listed = 0 };
	char bad[160];

	unlink(path);
	record(&r, &o);
	CHECK(r.rc == -1 && strstr(r.msg, "no process is attached") &&
	      access(path, F_OK), "nothing attached: rc %d \"%s\"", r.rc, r.msg);
	r.err = EPERM;
	record(&r, &o);
	CHECK(r.rc == -1 && strstr(r.msg, "listing targets: ") &&
	      strstr(r.msg, strerror(EPERM)) && access(path, F_OK),
	      "LIST failing: rc %d \"%s\"", r.rc, r.msg);

	r.err = 0;
	r.listed = lj;
	snprintf(bad, sizeof(bad), "%s/no/such/dir.luw", dir);
	o.path = bad;
	record(&r, &o);
	CHECK(r.rc == -1 && !strncmp(r.msg, bad, strlen(bad)) &&
	      strstr(r.msg, strerror(ENOENT)), "unwritable: rc %d \"%s\"", r.rc,
	      r.msg);
	o.path = "/dev/full";
	record(&r, &o);
	CHECK(r.rc == -1 && strstr(r.msg, "/dev/full: ") &&
	      strstr(r.msg, strerror(ENOSPC)), "full: rc %d \"%s\"", r.rc, r.msg);

	o.path = path;
	r.read_error = 1;
	record(&r, &o);
	read_luw(path, g);
	CHECK(r.rc == -1 && strstr(r.msg, "reading " LUW_DEVICE) &&
	      strstr(r.msg, strerror(EBADF)) && g->complete,
	      "read error: rc %d \"%s\", file complete %d", r.rc, r.msg,
	      g->complete);
}

int main(void)
{
	static struct luw_seen seen;
	char *argv[] = { "luajit", "-e",
			 "io.stdout:write('ready\\n') io.stdout:flush() "
			 "local x = 0 while true do x = x + 1 end", NULL };

	lj = luw_test_spawn(argv, NULL, NULL, 0, NULL);
	CHECK(lj > 0, "cannot start luajit");
	if (lj <= 0 || luw_test_tmpdir("record", dir, sizeof(dir)))
		return luw_test_status("test_record");
	snprintf(path, sizeof(path), "%s/r.luw", dir);
	test_list(&seen);
	test_named(&seen);
	test_ends(&seen);
	test_errors(&seen);
	luw_test_stop(lj);
	luw_test_sh("rm -rf '%s'", dir);
	if (luw_test_status("test_record"))
		return 1;
	printf("test_record: ok\n");
	return 0;
}
