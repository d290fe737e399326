/*
 * Our own ioctl fuzzer: for SECONDS, random commands (ours with random
 * direction/size bits, random numbers, real ones), random struct sizes,
 * random field values and flags, and random pointers (NULL, unmapped,
 * kernel, straddling a page end, read-only), with real targets attached
 * and detached in between and a reader draining the rings.  Any return
 * is fine; the test is that the kernel survives (the runner checks the log)
 * and the module still works and unloads afterwards.
 *   ioctl_fuzz SECONDS SEED PID...
 * A PID written LPID is a LuaJIT process: its real layout descriptor and
 * VM range (found as luaunwind-ctl attach finds them) are the base of
 * random descriptors -- a few bytes changed, or none -- so the handler's
 * Lua walk runs with garbage offsets over real LuaJIT memory, and with
 * real ones over processes that are not LuaJIT.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "record/attach.h"
#include "record/dev.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static const unsigned long cmds[] = {
	LUW_IOC_VERSION, LUW_IOC_ATTACH, LUW_IOC_DETACH, LUW_IOC_UNWIND_TABLE,
	LUW_IOC_START, LUW_IOC_STOP, LUW_IOC_STATS, LUW_IOC_LIST,
};

static char *page_end;		/* last bytes before an unmapped page */
static char *ro_page;
static char *unmapped;
static unsigned char arena[8192] __attribute__((aligned(8)));
static int *pids;
static int npids;
static struct luw_attach lua_req;	/* real VM range, layout, G */
static struct luw_lj_layout base_ly, fuzz_ly;
static int have_ly;

static uint64_t rnd_ptr(void)
{
	switch (rnd() % 10) {
	case 0: return 0;
	case 1: return (uintptr_t)unmapped + rnd() % 4096;
	case 2: return 0xffffffff81000000ULL + (rnd() % 0x1000000);
	case 3: return (uintptr_t)page_end - rnd() % 64;
	case 4: return (uintptr_t)ro_page + rnd() % 4096;
	case 5: return rnd();
	default: return (uintptr_t)arena + (rnd() % 64) * 8;
	}
}

static uint32_t rnd_size(uint32_t real)
{
	switch (rnd() % 8) {
	case 0: return 0;
	case 1: return (uint32_t)rnd();
	case 2: return real + 8 * (uint32_t)(rnd() % 16);
	case 3: return real - 4 * (uint32_t)(rnd() % 4);
	case 4: return (uint32_t)(rnd() % 8192);
	default: return real;
	}
}

static uint32_t rnd_pid(void)
{
	switch (rnd() % 6) {
	case 0: return (uint32_t)rnd();
	case 1: return 0;
	case 2: return 1;
	default: return (uint32_t)pids[rnd() % npids];
	}
}

/* A plausible argument for cmd, with some fields made wrong. */
static void fill(unsigned long cmd, unsigned char *p)
{
	unsigned int i;

	for (i = 0; i < 512; i++)
		p[i] = rnd() % 4 ? 0 : (unsigned char)rnd();
	switch (cmd) {
	case LUW_IOC_ATTACH: {
		struct luw_attach *a = (void *)p;

		a->size = rnd_size(sizeof(*a));
		a->flags = rnd() % 3 ? (uint32_t)(rnd() % 4) : (uint32_t)rnd();
		a->pid = (int32_t)rnd_pid();
		a->event = rnd() % 4 ? 0 : (uint32_t)(rnd() % 3);
		a->sample_rate = rnd() % 4 ? 1 + rnd() % 5000 : rnd();
		if (rnd() % 2)
			a->layout_ptr = a->layout_size = 0;
		a->max_host_frames = (uint16_t)(rnd() % 200);
		if (have_ly && rnd() % 2) {
			unsigned int k, n = (unsigned int)(rnd() % 4);

			fuzz_ly = base_ly;
			for (k = 0; k < n; k++) {
				size_t at = rnd() % 8 ? 12 + rnd() % (sizeof(fuzz_ly) - 12) :
						      rnd() % sizeof(fuzz_ly);

				((unsigned char *)&fuzz_ly)[at] = (unsigned char)rnd();
			}
			a->layout_ptr = rnd() % 8 ? (uintptr_t)&fuzz_ly : rnd_ptr();
			a->layout_size = rnd() % 8 ? sizeof(fuzz_ly) :
						     rnd_size(sizeof(fuzz_ly));
			a->vm_start = rnd() % 8 ? lua_req.vm_start : rnd();
			a->vm_end = rnd() % 8 ? lua_req.vm_end : rnd();
			a->interp_end = rnd() % 4 ? lua_req.interp_end :
				       a->vm_start + rnd() % 0x10000;
			a->g_hint = rnd() % 2 ? lua_req.g_hint : rnd() & ~7ULL;
			a->max_lua_frames = (uint16_t)(rnd() % 160);
			a->flags &= ~(uint32_t)LUW_ATTACH_STOPPED;
		}
		break;
	}
	case LUW_IOC_UNWIND_TABLE: {
		struct luw_unwind_table *u = (void *)p;

		u->size = rnd_size(sizeof(*u));
		u->flags = rnd() % 4 ? 0 : (uint32_t)rnd();
		u->pid = (int32_t)rnd_pid();
		u->start = (rnd() % 0x10000) << 12;
		u->end = u->start + ((1 + rnd() % 16) << 12);
		u->file_offset = (rnd() % 16) << 12;
		u->table_ptr = rnd_ptr();
		u->table_size = (uint32_t)(rnd() % 3 ? rnd() % 256 : rnd());
		break;
	}
	default: {
		struct luw_target *t = (void *)p;

		t->size = rnd_size(cmd == LUW_IOC_STATS ? sizeof(struct luw_stats) :
				   cmd == LUW_IOC_LIST ? sizeof(struct luw_list) :
				   cmd == LUW_IOC_VERSION ? sizeof(struct luw_version) :
				   sizeof(*t));
		t->flags = rnd() % 4 ? 0 : (uint32_t)rnd();
		t->pid = (int32_t)rnd_pid();
		if (cmd == LUW_IOC_LIST) {
			struct luw_list *l = (void *)p;

			l->max = (uint32_t)(rnd() % 80);
			l->pids_ptr = rnd_ptr();
		}
		break;
	}
	}
}

int main(int argc, char **argv)
{
	double secs;
	struct timespec t0, t1;
	unsigned long calls = 0, ok = 0, lua_ok = 0;
	static uint64_t rbuf[65536 / 8];
	int fd, rd;

	if (argc < 4)
		return 2;
	secs = atof(argv[1]);
	rng_state = strtoull(argv[2], NULL, 0) | 1;
	npids = argc - 3;
	pids = calloc((size_t)npids, sizeof(*pids));
	for (int i = 0; i < npids; i++) {
		const char *a = argv[3 + i];

		pids[i] = atoi(a[0] == 'L' ? a + 1 : a);
		if (a[0] == 'L' && !have_ly) {
			struct luw_attacher *att;
			char err[1024];

			if (luw_attach_open(pids[i], 1, &att, err, sizeof(err))) {
				fprintf(stderr, "ioctl_fuzz: %s\n", err);
				return 1;
			}
			luw_attach_fill(att, &lua_req);
			base_ly = *luw_attach_layout(att);
			have_ly = 1;
			luw_attach_free(att);
		}
	}

	page_end = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(page_end + 4096, 4096);
	page_end += 4096;
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(unmapped, 4096);

	fd = luw_dev_open(0);
	rd = luw_dev_open(O_NONBLOCK);
	if (fd < 0 || rd < 0) {
		fprintf(stderr, "open: %s\n", strerror(fd < 0 ? -fd : -rd));
		return 1;
	}
	if (luw_dev_join(rd, fd, 0)) {
		fprintf(stderr, "join: %s\n", strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		unsigned long cmd;
		uint64_t arg;
		unsigned int pick = rnd() % 16;

		if ((calls & 255) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if ((double)(t1.tv_sec - t0.tv_sec) +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
				break;
			while (read(rd, rbuf, sizeof(rbuf)) > 0)
				;
		}
		if (pick < 10) {
			cmd = cmds[rnd() % 8];
		} else if (pick < 13) {
			/* Our type and number, wrong direction or size. */
			cmd = _IOC(rnd() % 4, LUW_IOC_MAGIC, rnd() % 10,
				   rnd() % (1 << 13));
		} else {
			cmd = (unsigned long)(uint32_t)rnd();
		}
		if (rnd() % 8) {
			unsigned char *at = arena + (rnd() % 64) * 8;

			fill(cmd, at);
			arg = rnd() % 6 ? (uintptr_t)at : rnd_ptr();
		} else {
			arg = rnd_ptr();
		}
		if (ioctl(fd, cmd, (unsigned long)arg) == 0) {
			ok++;
			/* How often a (mutated) layout got through. */
			if (cmd == LUW_IOC_ATTACH &&
			    ((struct luw_attach *)(uintptr_t)arg)->layout_size)
				lua_ok++;
		}
		calls++;
		/* Sometimes poke read() with odd buffers too. */
		if (rnd() % 64 == 0)
			(void)!read(rd, (void *)(uintptr_t)rnd_ptr(), rnd() % 4096);
	}
	/* Leave nothing attached; then the module must answer normally. */
	{
		pid_t left[LUW_MAX_TARGETS];
		int n = luw_dev_list(fd, left, LUW_MAX_TARGETS);

		for (int i = 0; i < n && i < LUW_MAX_TARGETS; i++)
			luw_dev_detach(fd, left[i]);
	}
	{
		struct luw_version v;
		struct luw_stats st;

		if (luw_dev_version(fd, &v) || v.abi_version != LUW_ABI_VERSION ||
		    luw_dev_stats(fd, 0, &st) || st.nr_targets != 0) {
			fprintf(stderr, "ioctl_fuzz: module misbehaves after fuzzing\n");
			return 1;
		}
	}
	printf("ioctl_fuzz: %lu calls, %lu succeeded, %lu attaches with a layout, seed %s\n",
	       calls, ok, lua_ok, argv[2]);
	close(fd);
	close(rd);
	return 0;
}
