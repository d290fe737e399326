/*
 * record/dev.c, the /dev/luaunwind wrappers, without the module:
 *   - luw_dev_open says -ENOENT where the device is absent (as on this
 *     machine, which never loads the module);
 *   - on an fd that is no device every wrapper gives the kernel's
 *     -ENOTTY, on a closed one -EBADF;
 *   - through the fake device of common/fakedev.c each wrapper sends the
 *     request include/luaunwind.h gives it with the struct filled as the
 *     ABI says (size set, the rest as asked), passes the answer back
 *     (LIST: the pids copied, at most max and at most LUW_MAX_TARGETS
 *     asked for; the count of all), and errors as -errno; an unwind table
 *     over LUW_MAX_TABLE_BYTES is -EINVAL before any request;
 *   - luw_dev_next walks hand-built read() buffers: every record kind,
 *     and each malformed record the grammar rules out is -EBADMSG with
 *     the offset left on it;
 *   - luw_dev_hist_quantile against the quantile of the sorted samples;
 *   - luw_dev_vmstate_name against luaunwind_layout.h's enum.
 *
 * usage: test_dev FIXTURES
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakedev.h"
#include "record/dev.h"
#include "testlib.h"

/* The fake's copy of the last request's struct, as type T. */
#define SENT(T) ((const T *)luw_fakedev.arg)

static void test_no_device(void)
{
	int fd = open("/dev/null", O_RDONLY), r;
	struct luw_version v;
	struct luw_stats s;
	pid_t pids[4];

	if (access(LUW_DEVICE, F_OK) && errno == ENOENT) {
		r = luw_dev_open(0);
		CHECK(r == -ENOENT, "luw_dev_open without %s: %d", LUW_DEVICE, r);
	} else {
		printf("skip: %s exists here\n", LUW_DEVICE);
	}
	CHECK(fd >= 0, "/dev/null");
	CHECK(luw_dev_version(fd, &v) == -ENOTTY &&
	      luw_dev_start(fd, 0) == -ENOTTY && luw_dev_stats(fd, 0, &s) == -ENOTTY &&
	      luw_dev_list(fd, pids, 4) == -ENOTTY &&
	      luw_dev_join(fd, -1, 0) == -ENOTTY,
	      "/dev/null taken for the device");
	close(fd);
	CHECK(luw_dev_detach(fd, 1) == -EBADF && luw_dev_stop(-1, 0) == -EBADF,
	      "a closed fd taken for the device");
}

static void expect_req(const char *what, int rc, unsigned long req)
{
	CHECK(rc == 0 && luw_fakedev.req == req,
	      "%s: rc %d, request 0x%lx, want 0x%lx", what, rc, luw_fakedev.req,
	      req);
}

static void test_requests(void)
{
	int fd = open("/dev/null", O_RDONLY);
	struct luw_version v;
	struct luw_attach a;
	struct luw_stats s;
	unsigned int calls;
	pid_t pids[LUW_MAX_TARGETS + 8];
	static const unsigned char table[64];
	int r;

	luw_fakedev.fd = fd;
	memset(&v, 0xff, sizeof(v));
	expect_req("version", luw_dev_version(fd, &v), LUW_IOC_VERSION);
	CHECK(SENT(struct luw_version)->size == sizeof(v) &&
	      SENT(struct luw_version)->abi_version == 0,
	      "version: size %u, the rest not zeroed",
	      SENT(struct luw_version)->size);
	CHECK(v.abi_version == LUW_ABI_VERSION && v.max_targets == LUW_MAX_TARGETS,
	      "version: the answer not passed back");

	/* A module of this build's record version passes; another does not. */
	{
		unsigned int have = 0;

		r = luw_dev_check(fd, &have);
		CHECK(r == 0 && have == 0, "check, same version: rc %d, have %u",
		      r, have);
		luw_fakedev.record_version = LUW_RECORD_VERSION + 1;
		r = luw_dev_check(fd, &have);
		CHECK(r == -EPROTO && have == LUW_RECORD_VERSION + 1,
		      "check, another version: rc %d, have %u", r, have);
		CHECK(luw_dev_check(fd, NULL) == -EPROTO,
		      "check without have: not -EPROTO");
		luw_fakedev.record_version = 0;
		luw_fakedev.err = EPERM;
		r = luw_dev_check(fd, &have);
		CHECK(r == -EPERM, "check, VERSION failing: rc %d", r);
		luw_fakedev.err = 0;
	}

	memset(&a, 0, sizeof(a));
	a.pid = 4242;
	a.sample_rate = 997;
	expect_req("attach", luw_dev_attach(fd, &a), LUW_IOC_ATTACH);
	CHECK(a.size == sizeof(a) && SENT(struct luw_attach)->size == sizeof(a) &&
	      SENT(struct luw_attach)->pid == 4242 &&
	      SENT(struct luw_attach)->sample_rate == 997,
	      "attach: size %u, pid %d", SENT(struct luw_attach)->size,
	      SENT(struct luw_attach)->pid);

	expect_req("detach", luw_dev_detach(fd, 77), LUW_IOC_DETACH);
	CHECK(SENT(struct luw_target)->size == sizeof(struct luw_target) &&
	      SENT(struct luw_target)->pid == 77 && !SENT(struct luw_target)->flags,
	      "detach: struct");
	expect_req("start", luw_dev_start(fd, 78), LUW_IOC_START);
	CHECK(SENT(struct luw_target)->pid == 78, "start: pid");
	expect_req("stop", luw_dev_stop(fd, 0), LUW_IOC_STOP);
	CHECK(SENT(struct luw_target)->pid == 0, "stop: pid");

	memset(&s, 0xff, sizeof(s));
	luw_fakedev.stats[0].samples = 12345;
	luw_fakedev.stats_calls = 0;
	expect_req("stats", luw_dev_stats(fd, 79, &s), LUW_IOC_STATS);
	CHECK(SENT(struct luw_stats)->size == sizeof(s) &&
	      SENT(struct luw_stats)->pid == 79 && !SENT(struct luw_stats)->samples,
	      "stats: struct sent");
	CHECK(s.samples == 12345, "stats: the answer not passed back");

	expect_req("join", luw_dev_join(fd, 9, LUW_JOIN_CREATE), LUW_IOC_JOIN);
	CHECK(SENT(struct luw_join)->size == sizeof(struct luw_join) &&
	      SENT(struct luw_join)->fd == 9 &&
	      SENT(struct luw_join)->flags == LUW_JOIN_CREATE, "join: struct");

	expect_req("upload", luw_dev_upload_table(fd, 80, 0x1000, 0x5000, 0x2000,
						  table, sizeof(table)),
		   LUW_IOC_UNWIND_TABLE);
	CHECK(SENT(struct luw_unwind_table)->size == sizeof(struct luw_unwind_table) &&
	      SENT(struct luw_unwind_table)->pid == 80 &&
	      SENT(struct luw_unwind_table)->start == 0x1000 &&
	      SENT(struct luw_unwind_table)->end == 0x5000 &&
	      SENT(struct luw_unwind_table)->file_offset == 0x2000 &&
	      SENT(struct luw_unwind_table)->table_size == sizeof(table) &&
	      SENT(struct luw_unwind_table)->table_ptr == (uintptr_t)table,
	      "upload: struct");
	calls = luw_fakedev.calls;
	r = luw_dev_upload_table(fd, 80, 0, 0x1000, 0, table,
				 (size_t)LUW_MAX_TABLE_BYTES + 1);
	CHECK(r == -EINVAL && luw_fakedev.calls == calls,
	      "upload over the limit: %d, %u requests", r,
	      luw_fakedev.calls - calls);

	/* LIST: 70 attached, room for 3 -> 3 copied, 70 told. */
	luw_fakedev.npids = 70;
	for (int i = 0; i < 70; i++)
		luw_fakedev.pids[i] = 1000 + i;
	for (int i = 0; i < LUW_MAX_TARGETS + 8; i++)
		pids[i] = -1;
	r = luw_dev_list(fd, pids, 3);
	CHECK(r == 70 && luw_fakedev.req == LUW_IOC_LIST &&
	      SENT(struct luw_list)->max == 3 &&
	      SENT(struct luw_list)->size == sizeof(struct luw_list) &&
	      pids[0] == 1000 && pids[2] == 1002 && pids[3] == -1,
	      "list of 3: rc %d, max %u, pids %d %d %d", r,
	      SENT(struct luw_list)->max, pids[0], pids[2], pids[3]);
	/* Room for more than the module can have: LUW_MAX_TARGETS asked. */
	r = luw_dev_list(fd, pids, LUW_MAX_TARGETS + 8);
	CHECK(r == 70 && SENT(struct luw_list)->max == LUW_MAX_TARGETS &&
	      pids[LUW_MAX_TARGETS - 1] == 1000 + LUW_MAX_TARGETS - 1 &&
	      pids[LUW_MAX_TARGETS] == -1,
	      "list of %d: rc %d, max %u", LUW_MAX_TARGETS + 8, r,
	      SENT(struct luw_list)->max);
	luw_fakedev.npids = 2;
	r = luw_dev_list(fd, pids, 0);
	CHECK(r == 2 && SENT(struct luw_list)->max == 0, "list of 0: rc %d", r);

	/* The module's errors, as -errno. */
	luw_fakedev.err = EPERM;
	CHECK(luw_dev_version(fd, &v) == -EPERM &&
	      luw_dev_attach(fd, &a) == -EPERM &&
	      luw_dev_detach(fd, 1) == -EPERM && luw_dev_start(fd, 1) == -EPERM &&
	      luw_dev_stop(fd, 1) == -EPERM &&
	      luw_dev_stats(fd, 1, &s) == -EPERM &&
	      luw_dev_join(fd, -1, 0) == -EPERM &&
	      luw_dev_list(fd, pids, 3) == -EPERM &&
	      luw_dev_upload_table(fd, 1, 0, 4096, 0, table, 8) == -EPERM,
	      "an error not passed back as -EPERM");
	luw_fakedev.err = 0;
	luw_fakedev.fd = -1;
	close(fd);
}

static void test_next_valid(void)
{
	static const struct luw_splice sp[2] = { { 1, 1, 0, 2 }, { 3, 1, 2, 1 } };
	struct luw_fakedev_buf b = { .len = 0 };
	struct luw_dev_rec r;
	size_t off = 0;
	int n = 0, rc;

	luw_fakedev_sample(&b, 7, 5, 3, sp, 2);
	luw_fakedev_lost(&b, 9);
	luw_fakedev_sample(&b, 7, 0, 0, NULL, 0);
	luw_fakedev_end(&b, 7, LUW_END_EXIT);
	luw_fakedev_end(&b, 7, LUW_END_EXEC);
	while ((rc = luw_dev_next(b.w, b.len, &off, &r)) == 1) {
		switch (n++) {
		case 0:
			CHECK(r.type == LUW_REC_SAMPLE && r.sample == (void *)b.w &&
			      r.sample->nhost == 5 && r.host[4] == 0x401040 &&
			      r.lua[2].addr == 0x42 && r.splice[1].host_first == 3,
			      "record 0: the sample's arrays");
			break;
		case 1:
			CHECK(r.type == LUW_REC_LOST && r.lost && r.lost->count == 9 &&
			      !r.sample, "record 1: lost");
			break;
		case 2:
			CHECK(r.type == LUW_REC_SAMPLE && r.size == sizeof(struct luw_sample),
			      "record 2: an empty sample");
			break;
		default:
			CHECK(r.type == LUW_REC_END && r.end && r.end->pid == 7 &&
			      !r.lost, "record %d: end", n - 1);
			break;
		}
	}
	CHECK(rc == 0 && n == 5 && off == b.len && r.type == 0,
	      "walk: rc %d after %d records, offset %zu of %zu", rc, n, off, b.len);
	off = 0;
	CHECK(luw_dev_next(b.w, 0, &off, &r) == 0, "an empty buffer");
}

/* An ALLOC record: sample s of b turned into one, with this tail. */
static void make_alloc(struct luw_fakedev_buf *b, struct luw_sample *s,
		       uint64_t nsize, uint8_t kind)
{
	struct luw_alloc_tail t = { .nsize = nsize, .osize = 0, .kind = kind };

	memcpy((char *)b->w + b->len, &t, sizeof(t));
	b->len += sizeof(t);
	s->size += sizeof(t);
	s->type = LUW_REC_ALLOC;
}

static void expect_bad(const char *what, const struct luw_fakedev_buf *b,
		       size_t at);

/* ALLOC records: the sample's arrays and the tail; a bad tail refused. */
static void test_next_alloc(void)
{
	static const struct luw_splice sp[1] = { { 1, 1, 0, 2 } };
	struct luw_fakedev_buf b = { .len = 0 };
	struct luw_dev_rec r;
	struct luw_sample *s;
	size_t off = 0, at;

	s = luw_fakedev_sample(&b, 7, 3, 2, sp, 1);
	make_alloc(&b, s, 3000, LUW_ALLOC_NEW);
	luw_fakedev_lost(&b, 1);
	CHECK(luw_dev_next(b.w, b.len, &off, &r) == 1 &&
	      r.type == LUW_REC_ALLOC && r.sample == (void *)b.w &&
	      r.sample->nhost == 3 && r.lua[1].addr == 0x42 &&
	      r.splice[0].host_first == 1 && r.alloc &&
	      r.alloc->nsize == 3000 && r.alloc->kind == LUW_ALLOC_NEW,
	      "an ALLOC record: its arrays and tail");
	CHECK(luw_dev_next(b.w, b.len, &off, &r) == 1 && r.type == LUW_REC_LOST &&
	      !r.alloc, "the record after it");
	for (int k = 0; k < 3; k++) {
		b.len = 0;
		luw_fakedev_lost(&b, 1);
		at = b.len;
		s = luw_fakedev_sample(&b, 7, 3, 2, sp, 1);
		if (k == 2) {
			/* No room for a tail: the frames fill the size. */
			s->type = LUW_REC_ALLOC;
		} else {
			make_alloc(&b, s, k == 0 ? 0 : 64,
				   k == 0 ? LUW_ALLOC_NEW : LUW_ALLOC_SHRINK + 1);
		}
		expect_bad(k == 0 ? "an ALLOC of 0 bytes" :
			   k == 1 ? "an ALLOC of an unknown kind" :
			   "an ALLOC without its tail", &b, at);
	}
}

/* A SWITCH record: sample s of b turned into one, with this tail. */
static void make_switch(struct luw_fakedev_buf *b, struct luw_sample *s,
			uint8_t state)
{
	struct luw_switch_tail t = { .runtime = 5000, .nvcsw = 3, .nivcsw = 1,
				     .syscall = 7, .state = state };

	memcpy((char *)b->w + b->len, &t, sizeof(t));
	b->len += sizeof(t);
	s->size += sizeof(t);
	s->type = LUW_REC_SWITCH;
}

/* SWITCH records: the sample's arrays and the tail; an exiting thread's
 * header alone; a bad state, frames on an exit record, a missing tail
 * refused. */
static void test_next_switch(void)
{
	static const struct luw_splice sp[1] = { { 1, 1, 0, 2 } };
	struct luw_fakedev_buf b = { .len = 0 };
	struct luw_dev_rec r;
	struct luw_sample *s;
	size_t off = 0, at;

	s = luw_fakedev_sample(&b, 7, 3, 2, sp, 1);
	make_switch(&b, s, LUW_SWITCH_BLOCKED);
	s = luw_fakedev_sample(&b, 7, 0, 0, NULL, 0);
	make_switch(&b, s, LUW_SWITCH_EXIT);
	CHECK(luw_dev_next(b.w, b.len, &off, &r) == 1 &&
	      r.type == LUW_REC_SWITCH && r.sample == (void *)b.w &&
	      r.sample->nhost == 3 && r.lua[1].addr == 0x42 && r.sw &&
	      !r.alloc && r.sw->runtime == 5000 && r.sw->nvcsw == 3 &&
	      r.sw->syscall == 7 && r.sw->state == LUW_SWITCH_BLOCKED,
	      "a SWITCH record: its arrays and tail");
	CHECK(luw_dev_next(b.w, b.len, &off, &r) == 1 &&
	      r.type == LUW_REC_SWITCH && r.sw->state == LUW_SWITCH_EXIT,
	      "an exiting thread's SWITCH record");
	for (int k = 0; k < 3; k++) {
		b.len = 0;
		luw_fakedev_lost(&b, 1);
		at = b.len;
		s = luw_fakedev_sample(&b, 7, 3, 2, sp, 1);
		if (k == 2)
			s->type = LUW_REC_SWITCH;	/* no tail */
		else
			make_switch(&b, s, k == 0 ? LUW_SWITCH_EXIT + 1 :
						    LUW_SWITCH_EXIT);
		expect_bad(k == 0 ? "a SWITCH of an unknown state" :
			   k == 1 ? "an exit SWITCH with frames" :
			   "a SWITCH without its tail", &b, at);
	}
}

/* The buffer b with its record at `at` malformed: -EBADMSG there. */
static void expect_bad(const char *what, const struct luw_fakedev_buf *b,
		       size_t at)
{
	struct luw_dev_rec r;
	size_t off = 0;
	int rc;

	while ((rc = luw_dev_next(b->w, b->len, &off, &r)) == 1)
		;
	CHECK(rc == -EBADMSG && off == at, "%s: rc %d at offset %zu, want %d at %zu",
	      what, rc, off, -EBADMSG, at);
}

static void test_next_bad(void)
{
	static const char *const sizes[] = {
		"size 0", "size 36", "size past the buffer", "a cut record",
		"4 bytes left",
	};
	static const struct luw_splice ok = { 0, 1, 0, 1 };
	struct luw_splice sp[2];
	struct luw_fakedev_buf b;
	struct luw_sample *s;
	struct luw_end *e;
	uint16_t v;

	/* Sizes: under 8, not a multiple of 8, past the buffer; a record
	 * cut, and a tail shorter than any record. */
	for (int k = 0; k < 5; k++) {
		b.len = 0;
		luw_fakedev_lost(&b, 1);
		luw_fakedev_lost(&b, 2);
		v = k == 0 ? 0 : k == 1 ? 36 : 4096;
		if (k < 3)
			memcpy((char *)b.w + sizeof(struct luw_lost), &v, 2);
		else
			b.len -= k == 3 ? 4 : sizeof(struct luw_lost) - 4;
		expect_bad(sizes[k], &b, sizeof(struct luw_lost));
	}
	b.len = 0;
	luw_fakedev_lost(&b, 1);
	((unsigned char *)b.w)[2] = 9;
	expect_bad("type 9", &b, 0);
	b.len = 0;
	luw_fakedev_lost(&b, 1);
	luw_fakedev_lost(&b, 1);
	v = 2 * sizeof(struct luw_lost);
	memcpy(b.w, &v, 2);
	expect_bad("a lost record of two lost sizes", &b, 0);
	b.len = 0;
	e = luw_fakedev_end(&b, 7, 0);
	expect_bad("end reason 0", &b, 0);
	e->reason = LUW_END_EXEC + 1;
	expect_bad("end reason 3", &b, 0);

	b.len = 0;
	luw_fakedev_lost(&b, 1);
	s = luw_fakedev_sample(&b, 7, 2, 1, &ok, 1);
	s->vmstate = LUW_VMST_COUNT;
	expect_bad("vmstate past the last", &b, sizeof(struct luw_lost));
	s->vmstate = 0;
	s->nhost = 1;
	expect_bad("nhost not the size's", &b, sizeof(struct luw_lost));
	b.len = 0;
	s = luw_fakedev_sample(&b, 7, LUW_MAX_HOST_FRAMES + 1, 0, NULL, 0);
	expect_bad("nhost over the limit", &b, 0);
	b.len = 0;
	sp[0] = (struct luw_splice){ 1, 2, 0, 1 };	/* hosts 1, 2 of 2 */
	luw_fakedev_sample(&b, 7, 2, 1, sp, 1);
	expect_bad("a splice past nhost", &b, 0);
	b.len = 0;
	sp[0] = (struct luw_splice){ 0, 1, 0, 2 };	/* lua 0, 1 of 1 */
	luw_fakedev_sample(&b, 7, 2, 1, sp, 1);
	expect_bad("a splice past nlua", &b, 0);
	b.len = 0;
	sp[0] = (struct luw_splice){ 1, 1, 0, 1 };
	sp[1] = (struct luw_splice){ 0, 1, 1, 1 };	/* host before the last */
	luw_fakedev_sample(&b, 7, 2, 2, sp, 2);
	expect_bad("splices out of order", &b, 0);
	b.len = 0;
	sp[0] = (struct luw_splice){ 0, 2, 0, 1 };
	sp[1] = (struct luw_splice){ 1, 1, 1, 1 };	/* overlapping hosts */
	luw_fakedev_sample(&b, 7, 2, 2, sp, 2);
	expect_bad("splices overlapping", &b, 0);
}

/* The q-quantile of the samples as a sorted list, bucket lower bounds. */
static uint64_t naive_quantile(const __u64 *hist, double q)
{
	uint64_t total = 0, k, seen = 0;

	for (unsigned int b = 0; b < LUW_HIST_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return 0;
	k = (uint64_t)(q * (double)(total - 1));	/* index, sorted */
	for (unsigned int b = 0; b < LUW_HIST_BUCKETS; b++) {
		if (k < seen + hist[b])
			return luw_hist_lower(b);
		seen += hist[b];
	}
	return 0;
}

static void test_quantile(void)
{
	static const double qs[] = { 0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1 };
	unsigned int seed = 7;
	__u64 hist[LUW_HIST_BUCKETS];

	memset(hist, 0, sizeof(hist));
	CHECK(luw_dev_hist_quantile(hist, 0.5) == 0, "no samples");
	hist[40] = 1;
	CHECK(luw_dev_hist_quantile(hist, 0) == luw_hist_lower(40) &&
	      luw_dev_hist_quantile(hist, 1) == luw_hist_lower(40), "one sample");
	for (int round = 0; round < 2000; round++) {
		memset(hist, 0, sizeof(hist));
		for (int i = 0; i < 1 + round % 9; i++) {
			seed = seed * 1103515245 + 12345;
			hist[(seed >> 8) % LUW_HIST_BUCKETS] += 1 + (seed >> 20) % 1000;
		}
		for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
			uint64_t got = luw_dev_hist_quantile(hist, qs[i]);
			uint64_t want = naive_quantile(hist, qs[i]);

			if (got != want) {
				CHECK(0, "round %d, q %g: %llu, want %llu", round,
				      qs[i], (unsigned long long)got,
				      (unsigned long long)want);
				return;
			}
		}
	}
}

static void test_vmstate_names(void)
{
	static const struct {
		unsigned int v;
		const char *name;
	} want[] = {
		{ LUW_VMST_INTERP, "INTERP" }, { LUW_VMST_LFUNC, "LFUNC" },
		{ LUW_VMST_FFUNC, "FFUNC" }, { LUW_VMST_CFUNC, "CFUNC" },
		{ LUW_VMST_GC, "GC" }, { LUW_VMST_EXIT, "EXIT" },
		{ LUW_VMST_RECORD, "RECORD" }, { LUW_VMST_OPT, "OPT" },
		{ LUW_VMST_ASM, "ASM" }, { LUW_VMST_TRACE, "TRACE" },
		{ LUW_VMST_UNKNOWN, "UNKNOWN" }, { LUW_VMST_COUNT, "?" },
		{ 255, "?" },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(!strcmp(luw_dev_vmstate_name(want[i].v), want[i].name),
		      "vmstate %u: \"%s\", want \"%s\"", want[i].v,
		      luw_dev_vmstate_name(want[i].v), want[i].name);
}

int main(void)
{
	test_no_device();
	test_requests();
	test_next_valid();
	test_next_bad();
	test_next_alloc();
	test_next_switch();
	test_quantile();
	test_vmstate_names();
	if (luw_test_status("test_dev"))
		return 1;
	printf("test_dev: ok\n");
	return 0;
}
