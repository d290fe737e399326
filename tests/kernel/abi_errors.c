/*
 * The ioctl ABI's error contract, checked against the loaded module:
 * ENOTTY for unknown commands (and for ABI 2's magic), commands told apart
 * by number whatever size they encode (a program built against an older
 * struct keeps working), EINVAL for bad sizes, unknown flags, non-zero
 * reserved fields and rates out of the ABI's bounds (the admin's
 * perf_event_max_sample_rate is perf's throttle, not an error), EFAULT for
 * bad pointers, ESRCH/EBUSY for targets, the session rules of
 * LUW_IOC_JOIN, stats that answer only what the module counted, and that
 * good calls succeed.
 *   abi_errors SPIN_PID     (a running process to attach to)
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "luajit/known.h"
#include "target/layout.h"
#include "record/dev.h"
#include "onetab.h"

static int failures;

#define EXPECT(call, want)						\
	do {								\
		int _r = (call) < 0 ? -errno : 0;			\
		if (_r != (want)) {					\
			fprintf(stderr, "FAIL %s:%d: %s = %s, want %s\n", \
				__FILE__, __LINE__, #call,		\
				_r ? strerror(-_r) : "0",		\
				(want) ? strerror(-(want)) : "0");	\
			failures++;					\
		}							\
	} while (0)

static struct luw_attach attach_args(int pid)
{
	struct luw_attach a = {
		.size = sizeof(a), .pid = pid, .sample_rate = 99,
	};
	return a;
}

/* An attach with a layout descriptor and a plausible VM range. */
static struct luw_attach lua_args(int pid, const struct luw_lj_layout *ly)
{
	struct luw_attach a = attach_args(pid);

	a.vm_start = 0x400000;
	a.interp_end = 0x410000;
	a.vm_end = 0x411000;
	a.layout_ptr = (uintptr_t)ly;
	a.layout_size = sizeof(*ly);
	a.g_hint = 0x7f0000001000ULL;
	return a;
}

static char saved_rate[16];

/* Set the admin's perf_event_max_sample_rate; false if it cannot be. */
static int set_max_rate(const char *val)
{
	const char *path = "/proc/sys/kernel/perf_event_max_sample_rate";
	FILE *f;

	if (!saved_rate[0]) {
		f = fopen(path, "r");
		if (!f || !fgets(saved_rate, sizeof(saved_rate), f)) {
			fprintf(stderr, "FAIL cannot read %s\n", path);
			failures++;
			if (f)
				fclose(f);
			return 0;
		}
		fclose(f);
	}
	f = fopen(path, "w");
	if (!f || fputs(val, f) < 0 || fclose(f)) {
		fprintf(stderr, "FAIL cannot write %s\n", path);
		failures++;
		return 0;
	}
	return 1;
}

/* LUW_IOC_JOIN: its errors, and the kept session it shares. */
static void check_join(int pid)
{
	int a = luw_dev_open(0), b = luw_dev_open(0), c = luw_dev_open(0);
	int nul = open("/dev/null", O_RDONLY);
	struct luw_join j = { .size = sizeof(j), .fd = -1 };
	struct luw_attach at = attach_args(pid);
	pid_t pids[4];
	char buf[64];

	j.flags = 2;
	EXPECT(ioctl(a, LUW_IOC_JOIN, &j), -EINVAL);
	j = (struct luw_join){ .size = sizeof(j), .fd = -1, .reserved = 1 };
	EXPECT(ioctl(a, LUW_IOC_JOIN, &j), -EINVAL);
	j = (struct luw_join){ .size = sizeof(j), .fd = b, .flags = LUW_JOIN_CREATE };
	EXPECT(ioctl(a, LUW_IOC_JOIN, &j), -EINVAL);
	j = (struct luw_join){ .size = sizeof(j), .fd = -2 };
	EXPECT(ioctl(a, LUW_IOC_JOIN, &j), -EINVAL);
	EXPECT(luw_dev_join(a, nul, 0), -EBADF);
	EXPECT(luw_dev_join(a, 1000, 0), -EBADF);
	/* No kept session yet in this guest. */
	EXPECT(luw_dev_join(a, -1, 0), -ENOENT);
	/* a's session becomes the kept one; b joins it and sees a's target. */
	EXPECT(luw_dev_join(a, -1, LUW_JOIN_CREATE), 0);
	EXPECT(luw_dev_attach(a, &at), 0);
	EXPECT(luw_dev_join(b, -1, 0), 0);
	if (luw_dev_list(b, pids, 4) != 1 || pids[0] != pid) {
		fprintf(stderr, "FAIL joined file does not see the kept target\n");
		failures++;
	}
	/* c has a target of its own: it cannot join (they would orphan). */
	EXPECT(luw_dev_attach(c, &at), 0);
	EXPECT(luw_dev_join(c, a, 0), -EBUSY);
	/* A file that has read cannot change session either (nothing was
	 * ever attached in its own: no end of file, just nothing yet). */
	close(c);
	c = luw_dev_open(O_NONBLOCK);
	EXPECT(read(c, buf, sizeof(buf)), -EAGAIN);
	EXPECT(luw_dev_join(c, a, 0), -EBUSY);
	close(c);
	/* The kept session outlives its files ... */
	close(a);
	close(b);
	a = luw_dev_open(0);
	EXPECT(luw_dev_join(a, -1, 0), 0);
	EXPECT(luw_dev_detach(a, pid), 0);
	close(a);
	/* ... and ends with its last target. */
	a = luw_dev_open(0);
	EXPECT(luw_dev_join(a, -1, 0), -ENOENT);
	close(a);
	close(nul);
}

int main(int argc, char **argv)
{
	int pid, fd, r;
	struct luw_version v;
	struct luw_attach a;
	struct luw_target t;
	struct luw_stats *st;
	struct luw_list l;
	struct one_entry_table tab;
	struct {
		struct luw_uw_hdr h;
		struct luw_uw_entry e[2];
		struct luw_uw_r14 x[1];
	} xt;
	struct luw_unwind_table u;
	unsigned char big[512];
	void *unmapped;

	if (argc < 2)
		return 2;
	pid = atoi(argv[1]);
	fd = luw_dev_open(0);
	if (fd < 0) {
		fprintf(stderr, "open: %s\n", strerror(-fd));
		return 1;
	}
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(unmapped, 4096);

	/* Unknown commands; ABI 2's magic (nsfs's) is not ours any more. */
	EXPECT(ioctl(fd, _IO(LUW_IOC_MAGIC, 0x7f), 0), -ENOTTY);
	EXPECT(ioctl(fd, _IOW(0xb7, 0x01, struct luw_attach), &big), -ENOTTY);
	EXPECT(ioctl(fd, TCGETS, &big), -ENOTTY);

	/* Version: good, short, bad pointers, larger with zero tail. */
	EXPECT(luw_dev_version(fd, &v), 0);
	if (v.abi_version != LUW_ABI_VERSION || v.record_version != LUW_RECORD_VERSION ||
	    v.size != sizeof(v) || !v.nr_cpus || !v.ring_bytes) {
		fprintf(stderr, "FAIL version fields: abi %u rec %u size %u\n",
			v.abi_version, v.record_version, v.size);
		failures++;
	}
	memset(&v, 0, sizeof(v));
	v.size = 8;
	EXPECT(ioctl(fd, LUW_IOC_VERSION, &v), -EINVAL);
	EXPECT(ioctl(fd, LUW_IOC_VERSION, NULL), -EFAULT);
	EXPECT(ioctl(fd, LUW_IOC_VERSION, unmapped), -EFAULT);
	EXPECT(ioctl(fd, LUW_IOC_VERSION, (void *)0xffffffff81000000ULL), -EFAULT);
	memset(big, 0, sizeof(big));
	*(uint32_t *)big = 64;
	EXPECT(ioctl(fd, LUW_IOC_VERSION, big), 0);
	if (*(uint32_t *)big != sizeof(struct luw_version) ||
	    ((struct luw_version *)big)->abi_version != LUW_ABI_VERSION) {
		fprintf(stderr, "FAIL larger version struct not answered at the known size\n");
		failures++;
	}
	*(uint32_t *)big = 64;
	big[40] = 1;
	EXPECT(ioctl(fd, LUW_IOC_VERSION, big), -EINVAL);
	*(uint32_t *)big = 1 << 20;
	EXPECT(ioctl(fd, LUW_IOC_VERSION, big), -EINVAL);

	/* Attach: each bad field alone. */
	a = attach_args(pid); a.flags = 1U << 7;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.event = 9;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.sample_rate = 0;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.sample_rate = LUW_FREQ_MAX + 1;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.flags = LUW_ATTACH_PERIOD; a.sample_rate = 100;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.flags = LUW_ATTACH_PERIOD;
	a.sample_rate = LUW_PERIOD_MAX_NS + 1;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.flags = LUW_ATTACH_PERIOD; a.sample_rate = 1ULL << 63;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.flags = LUW_ATTACH_PERIOD;
	a.event = LUW_EVENT_CYCLES; a.sample_rate = 1;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.flags = LUW_ATTACH_PERIOD;
	a.event = LUW_EVENT_CYCLES; a.sample_rate = LUW_CYCLES_PERIOD_MAX + 1;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	/*
	 * The admin's limit is perf's throttle (t_chroot measures it), not
	 * an attach error: the module cannot read it without a file.
	 */
	if (set_max_rate("1000")) {
		a = attach_args(pid); a.sample_rate = 1001;
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), 0);
		EXPECT(luw_dev_detach(fd, pid), 0);
		a = attach_args(pid); a.flags = LUW_ATTACH_PERIOD;
		a.sample_rate = 999999;		/* just over 1000 Hz */
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), 0);
		EXPECT(luw_dev_detach(fd, pid), 0);
		set_max_rate(saved_rate);
	}
	a = attach_args(pid); a.layout_size = 16;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.vm_start = 2; a.vm_end = 1;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.max_host_frames = LUW_MAX_HOST_FRAMES + 1;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(pid); a.size = LUW_ATTACH_SIZE_VER0 - 8;
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(-1);
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	a = attach_args(0x3ffffff0);
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -ESRCH);
	a = attach_args(2);	/* kthreadd */
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, NULL), -EFAULT);

	/*
	 * The layout descriptor: a real one (Debian luajit's) passes the
	 * module's structural and bounds checks; each field out of bounds
	 * alone is EINVAL, an unreadable descriptor EFAULT.
	 */
	{
		size_t nk;
		const struct luw_known *k = luw_known_layouts(&nk);
		struct luw_lj_layout ly = *k[0].layout, bad;

#define LY_BAD(stmt) do {								bad = ly;								stmt;									a = lua_args(pid, &bad);						EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);			} while (0)
		LY_BAD(bad.size -= 8);
		LY_BAD(bad.version = LUW_LJ_LAYOUT_VERSION + 1);
		LY_BAD(bad.flags |= 0x80);
		LY_BAD(bad.reg_base = LUW_X86_NREGS);
		LY_BAD(bad.reg_dispatch = LUW_X86_RSP);
		LY_BAD(bad.cframe_size = 1024);
		LY_BAD(bad.cframe_l_size = 2);
		LY_BAD(bad.cframe_rbp_cfa = 0);
		LY_BAD(bad.g_vmstate = 5000);
		LY_BAD(bad.l_base = LUW_LJ_NOFIELD);
		LY_BAD(bad.pt_size = 0);
		LY_BAD(bad.gg_g2disp = -8);
		LY_BAD(bad.gg_g2l = 8);
		LY_BAD(bad.gg_ndisp = 0);
		LY_BAD(bad.n_vmst = LUW_LJ_MAX_RAW_VMST + 1);
		LY_BAD(bad.vmst_map[0] = LUW_VMST__MAX);
		LY_BAD(bad.tr_startpt = LUW_LJ_NOFIELD);
		LY_BAD(bad.stack_extra = 200);
		LY_BAD(bad.pad[1] = 1);
#undef LY_BAD
		a = lua_args(pid, &ly); a.layout_size -= 4;
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
		a = lua_args(pid, &ly); a.layout_ptr = 0;
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
		a = lua_args(pid, &ly); a.vm_end = a.vm_start;
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
		a = lua_args(pid, &ly); a.interp_end = a.vm_end + 1;
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
		a = lua_args(pid, &ly); a.g_hint = 0x10004;
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EINVAL);
		a = lua_args(pid, &ly); a.layout_ptr = (uintptr_t)unmapped;
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EFAULT);
		/* Version 0 of the struct (no interp_end, no hint) still works,
		 * also through the command number a program built against it
		 * used (_IOW encodes that struct's size). */
		a = lua_args(pid, &ly); a.size = LUW_ATTACH_SIZE_VER0;
		a.interp_end = 0;
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), 0);
		EXPECT(luw_dev_detach(fd, pid), 0);
		EXPECT(ioctl(fd, _IOW(LUW_IOC_MAGIC, 0x01,
				      char[LUW_ATTACH_SIZE_VER0]), &a), 0);
		EXPECT(luw_dev_detach(fd, pid), 0);
		a = lua_args(pid, &ly);
		EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), 0);
		EXPECT(luw_dev_detach(fd, pid), 0);
	}

	/* Good attach, then the same pid again. */
	a = attach_args(pid);
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), 0);
	a = attach_args(pid);
	EXPECT(ioctl(fd, LUW_IOC_ATTACH, &a), -EBUSY);
	/* Hardware cycles: fine with a PMU, EOPNOTSUPP without (TCG). */
	a = attach_args(getpid());
	a.event = LUW_EVENT_CYCLES;
	r = ioctl(fd, LUW_IOC_ATTACH, &a) < 0 ? -errno : 0;
	if (r != 0 && r != -EOPNOTSUPP) {
		fprintf(stderr, "FAIL cycles attach: %s\n", strerror(-r));
		failures++;
	}
	if (r == 0)
		EXPECT(luw_dev_detach(fd, getpid()), 0);

	/* Target commands. */
	t = (struct luw_target){ .size = sizeof(t), .pid = pid, .flags = 1 };
	EXPECT(ioctl(fd, LUW_IOC_STOP, &t), -EINVAL);
	t = (struct luw_target){ .size = sizeof(t), .pid = pid, .reserved = 1 };
	EXPECT(ioctl(fd, LUW_IOC_STOP, &t), -EINVAL);
	EXPECT(luw_dev_stop(fd, pid), 0);
	EXPECT(luw_dev_start(fd, pid), 0);
	EXPECT(luw_dev_stop(fd, 0), 0);
	EXPECT(luw_dev_start(fd, 0), 0);
	EXPECT(luw_dev_start(fd, 0x3ffffff0), -ESRCH);
	EXPECT(luw_dev_start(fd, -5), -EINVAL);

	/* Stats. */
	st = calloc(1, sizeof(*st) + 64);
	EXPECT(luw_dev_stats(fd, pid, st), 0);
	if (st->nr_targets != 1) {
		fprintf(stderr, "FAIL nr_targets %u, want 1\n", st->nr_targets);
		failures++;
	}
	EXPECT(luw_dev_stats(fd, 0x3ffffff0, st), -ESRCH);
	/* Output fields are the module's alone, whatever the caller left. */
	memset(st, 0x5a, sizeof(*st));
	st->size = sizeof(*st);
	st->flags = 0;
	st->pid = pid;
	EXPECT(ioctl(fd, LUW_IOC_STATS, st), 0);
	if (st->thread_events != 1 || st->ended != 0 ||
	    st->nr_targets != 1) {
		fprintf(stderr, "FAIL stats echo the caller's bytes: "
			"thread_events %llu ended %llu nr_targets %u\n",
			(unsigned long long)st->thread_events,
			(unsigned long long)st->ended, st->nr_targets);
		failures++;
	}
	st->pid = 0;
	memset(&st->nr_targets, 0x5a,
	       sizeof(*st) - offsetof(struct luw_stats, nr_targets));
	EXPECT(ioctl(fd, LUW_IOC_STATS, st), 0);
	if (st->thread_events != 1 || st->ended != 0) {
		fprintf(stderr, "FAIL session stats echo the caller's bytes: "
			"thread_events %llu ended %llu\n",
			(unsigned long long)st->thread_events,
			(unsigned long long)st->ended);
		failures++;
	}
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->flags = 2;
	EXPECT(ioctl(fd, LUW_IOC_STATS, st), -EINVAL);
	st->size = 16;
	st->flags = 0;
	EXPECT(ioctl(fd, LUW_IOC_STATS, st), -EINVAL);
	/* A version 0 stats struct, through its own command number: answered
	 * at that size, not a byte more. */
	{
		unsigned char *b = calloc(1, sizeof(struct luw_stats));

		*(uint32_t *)b = LUW_STATS_SIZE_VER0;
		((struct luw_stats *)b)->pid = pid;
		memset(b + LUW_STATS_SIZE_VER0, 0x5a, 8);
		EXPECT(ioctl(fd, _IOWR(LUW_IOC_MAGIC, 0x06,
				       char[LUW_STATS_SIZE_VER0]), b), 0);
		if (((struct luw_stats *)b)->nr_targets != 1 ||
		    b[LUW_STATS_SIZE_VER0] != 0x5a) {
			fprintf(stderr, "FAIL version 0 stats answered wrong\n");
			failures++;
		}
		free(b);
	}
	/* Stats straddling the end of a mapping. */
	{
		char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct luw_stats *s2;

		munmap(p + 4096, 4096);
		s2 = (struct luw_stats *)(p + 4096 - 64);
		s2->size = sizeof(*s2);
		EXPECT(ioctl(fd, LUW_IOC_STATS, s2), -EFAULT);
		munmap(p, 4096);
	}

	/* List. */
	l = (struct luw_list){ .size = sizeof(l), .max = 4, .pids_ptr = 0 };
	EXPECT(ioctl(fd, LUW_IOC_LIST, &l), -EINVAL);
	l = (struct luw_list){ .size = sizeof(l), .max = 4,
			       .pids_ptr = (uintptr_t)unmapped };
	EXPECT(ioctl(fd, LUW_IOC_LIST, &l), -EFAULT);
	l = (struct luw_list){ .size = sizeof(l), .max = 0 };
	EXPECT(ioctl(fd, LUW_IOC_LIST, &l), 0);
	if (l.count != 1) {
		fprintf(stderr, "FAIL list count %u, want 1\n", l.count);
		failures++;
	}

	/* Unwind tables. */
	one_entry_table_init(&tab);
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &tab, sizeof(tab)), 0);
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x402000, 0, &tab, sizeof(tab)), 0);
	EXPECT(luw_dev_upload_table(fd, 0x3ffffff0, 0x400000, 0x401000, 0, &tab, sizeof(tab)), -ESRCH);
	EXPECT(luw_dev_upload_table(fd, pid, 0x400001, 0x401000, 0, &tab, sizeof(tab)), -EINVAL);
	EXPECT(luw_dev_upload_table(fd, pid, 0x401000, 0x400000, 0, &tab, sizeof(tab)), -EINVAL);
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &tab, sizeof(tab) - 1), -EINVAL);
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, unmapped, sizeof(tab)), -EFAULT);
	tab.h.magic++;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &tab, sizeof(tab)), -EINVAL);
	tab.h.magic--;
	tab.h.flags = 0x80;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &tab, sizeof(tab)), -EINVAL);
	tab.h.flags = 0;
	/* Version 2 had no r14 rows: refused, not read as today's. */
	tab.h.version = LUW_UW_VERSION - 1;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &tab, sizeof(tab)), -EINVAL);
	tab.h.version = LUW_UW_VERSION;
	tab.h.r14_size = 0;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &tab, sizeof(tab)), -EINVAL);
	tab.h.r14_size = sizeof(struct luw_uw_r14);
	/* r14 rows: counted in the size, known rules, starting at text-lo. */
	memset(&xt, 0, sizeof(xt));
	xt.h = tab.h;
	xt.h.nentries = 2;
	xt.h.nr14 = 1;
	xt.h.text_hi = 0x1100;
	xt.e[0].start = 0x1000;
	xt.e[0].cfa_off = 8;
	xt.e[0].ra_off = -8;
	xt.e[0].rule = LUW_UW_RULE(LUW_UW_CFA_RSP, LUW_UW_RBP_SAME);
	xt.e[1].start = 0x1100;
	xt.x[0].start = 0x1000;
	xt.x[0].rule = LUW_UW_R14_CFA;
	xt.x[0].off = -16;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &xt, sizeof(xt)), 0);
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &xt, sizeof(xt) - sizeof(xt.x[0])), -EINVAL);
	xt.x[0].rule = LUW_UW_R14_MAX + 1;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &xt, sizeof(xt)), -EINVAL);
	xt.x[0].rule = LUW_UW_R14_SAME;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &xt, sizeof(xt)), -EINVAL);
	xt.x[0].off = 0;
	xt.x[0].start = 0x1001;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &xt, sizeof(xt)), -EINVAL);
	xt.x[0].start = 0x1000;
	EXPECT(luw_dev_upload_table(fd, pid, 0x400000, 0x401000, 0, &xt, sizeof(xt)), 0);
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.flags = 4;
	u.pid = pid;
	u.start = 0x400000;
	u.end = 0x401000;
	u.table_ptr = (uintptr_t)&tab;
	u.table_size = sizeof(tab);
	EXPECT(ioctl(fd, LUW_IOC_UNWIND_TABLE, &u), -EINVAL);

	/* Detach. */
	EXPECT(luw_dev_detach(fd, pid), 0);
	EXPECT(luw_dev_detach(fd, pid), -ESRCH);
	EXPECT(luw_dev_detach(fd, 0), -EINVAL);
	EXPECT(luw_dev_stats(fd, 0, st), 0);
	if (st->nr_targets != 0) {
		fprintf(stderr, "FAIL nr_targets %u after detach\n", st->nr_targets);
		failures++;
	}

	/*
	 * A second file joins fd's session; with no target left and the
	 * rings drained, read() is end of file, and so is a 0-byte read.
	 */
	{
		int nfd = luw_dev_open(O_NONBLOCK);
		char small[8];

		EXPECT(luw_dev_join(nfd, fd, 0), 0);
		while (read(nfd, big, sizeof(big)) > 0)
			;
		EXPECT(read(nfd, small, sizeof(small)), 0);
		EXPECT(read(nfd, small, 0), 0);
		close(nfd);
	}
	check_join(pid);
	free(st);
	close(fd);
	if (failures) {
		fprintf(stderr, "abi_errors: %d failures\n", failures);
		return 1;
	}
	printf("abi_errors: all checks passed\n");
	return 0;
}
