/*
 * luw-walkcost: what one sample of luaunwind.ko's handler costs, measured
 * on this CPU by replaying the module's walkers in userspace.
 *
 *   luw-walkcost [-v] [-n SAMPLES] [-i ITERATIONS] [-m MAX_THREADS] PID
 *   luw-walkcost --copycost
 *
 * The module's reads (kmod/uread.h): every read the walkers ask for -- a
 * word or a short block, at most 64 bytes -- is made where they ask for
 * it, as one user load (stac, the load under the exception table, clac)
 * with page faults disabled for the sample, against the sample's budget:
 * LUW_SAMPLE_READS requests and LUW_SAMPLE_FAULTS failed ones, each
 * refused past either.  Only the sample's first read, the 8 bytes at the
 * interrupted sp, is a kernel copy (copy_from_user_nmi(), for the check
 * of the loaded mm it makes; outside the budget).  Nothing is kept or
 * copied ahead.
 *
 * Capture: stop a thread of PID with ptrace (proc/ptrace.h: SEIZE + INTERRUPT,
 * as luaunwind-ljprobe does), take its registers, and run one sample's
 * merged walk on it: the host CFA walk (luw_uw_find + luw_uw_step of
 * kmod/uwtable.c over the tables cfi.c builds from .eh_frame,
 * the tables luaunwind-ctl uploads) and the Lua walk (luw_lj_walk of
 * kmod/ljwalk.c with the layout target/layout.c proves), glued
 * the way kmod/mergewalk.c's luw_merged_walk() glues them (mirrored here:
 * the glue is kernel code).  Every read the walkers ask for is one
 * request (snap_read(), the module's luw_walk_read() with the same
 * budget), served exactly from a snapshot: the first touch of a page
 * copies it out of the target (process_vm_readv), so after the walk the
 * snapshot holds exactly the memory the walk needed.  The thread then
 * runs on; the samples are spread over the threads (up to MAX_THREADS of
 * them).
 *
 * Replay: the same walk over the snapshot, ITERATIONS times per sample
 * (15 batches, the median batch, in the thread's CPU time), checked to
 * find the same frames as the capture walk, counting per sample the reads
 * (= the module's loads) and the bytes they ask for.  Each read's copy out
 * of the snapshot (a page lookup and a memcpy) stands for the module's
 * load; those copies alone are timed over the recorded sequence (read_ns)
 * and subtracted, leaving the walkers' and the glue's own code (code_ns):
 * what the handler spends besides the loads themselves and its one
 * kernel copy.  The walkers call the reader through their callbacks here,
 * where the module's build calls luw_walk_read() inline (kmod/walkenv.h),
 * so code_ns holds a call per read the module does not make.
 *
 * -v: print every read.
 *
 * --copycost: what a kernel copy from user memory costs here (see
 * copycost()): the price of the sample's one copy_from_user_nmi().
 *
 * Output: "sample ..." lines, then "summary ..." lines and "readsize ..."
 * lines (key value pairs, for tests/bench/walkcost.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "target/layout.h"
#include "proc/maps.h"
#include "proc/ptrace.h"
#include "kmod/ljwalk.h"
#include "luaunwind.h"
#include "kmod/uwtable.h"

#define PROG "luw-walkcost"
#define PAGE 4096u
#define MAX_THREADS 256
/* The module's bounds (include/luaunwind.h, kmod/mergewalk.c, hostwalk.c). */
#define TRACE_SCAN 128
#define STACK_WINDOW (64ULL << 20)
/* kmod/uread.h: a read's most bytes (LUW_READ_MAX), x86-64's TASK_SIZE_MAX. */
#define READ_MAX 64u
#define TASK_SIZE_MAX (((uint64_t)1 << 47) - PAGE)
#define BATCHES 15

/*
 * The thread's own CPU time: on a shared machine, time spent descheduled
 * would otherwise land in whichever batch it hit.
 */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, unsigned int p)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (n * p + 99) / 100;
	return v[i ? i - 1 : 0];
}

/* ---- snapshot of the memory one sample's walk touched ---- */

struct page {
	uint64_t addr;
	int ok;			/* 0: unreadable in the target */
	uint8_t *data;
};

struct rdlog {
	uint64_t addr;
	uint32_t len;
};

struct snap {
	pid_t pid;		/* capture: fetch missing pages; 0: replay */
	struct page *pg;
	size_t npg, cap;
	size_t last;
	/* counted per walk, as the module's struct luw_cost */
	uint32_t reads, faults;
	uint64_t bytes;
	/* capture: every read, for timing the reads alone */
	struct rdlog *log;
	size_t nlog, caplog;
};

static struct page *snap_page(struct snap *s, uint64_t pa)
{
	size_t lo = 0, hi = s->npg;

	if (s->last < s->npg && s->pg[s->last].addr == pa)
		return &s->pg[s->last];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->pg[mid].addr < pa)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->npg && s->pg[lo].addr == pa) {
		s->last = lo;
		return &s->pg[lo];
	}
	if (!s->pid)
		return NULL;
	if (s->npg == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 16;
		struct page *q = realloc(s->pg, nc * sizeof(*q));

		if (!q)
			return NULL;
		s->pg = q;
		s->cap = nc;
	}
	memmove(&s->pg[lo + 1], &s->pg[lo], (s->npg - lo) * sizeof(*s->pg));
	s->npg++;
	s->pg[lo].addr = pa;
	s->pg[lo].data = malloc(PAGE);
	s->pg[lo].ok = 0;
	if (s->pg[lo].data) {
		struct iovec l = { s->pg[lo].data, PAGE };
		struct iovec r = { (void *)(uintptr_t)pa, PAGE };

		s->pg[lo].ok = process_vm_readv(s->pid, &l, 1, &r, 1, 0) ==
			       (ssize_t)PAGE;
	}
	s->last = lo;
	return &s->pg[lo];
}

/*
 * The bytes out of the snapshot, up to the first unreadable page; returns
 * how many were copied.
 */
static uint32_t snap_copy(struct snap *s, uint64_t addr, void *dst,
			  uint32_t len)
{
	uint8_t *d = dst;
	uint32_t done = 0;

	while (done < len) {
		uint64_t pa = addr & ~(uint64_t)(PAGE - 1);
		uint32_t n = PAGE - (uint32_t)(addr - pa);
		struct page *p = snap_page(s, pa);

		if (!p || !p->ok)
			break;
		if (n > len - done)
			n = len - done;
		memcpy(d, p->data + (addr - pa), n);
		d += n;
		addr += n;
		done += n;
	}
	return done;
}

/*
 * What stands for the module's load (kmod/uread.h luw_user_load()),
 * without counting: what the timing of reads replays.  All or nothing:
 * 0, or -1 when the address is out of bounds, the block longer than a
 * load may be, or any of its bytes unreadable.
 */
static int snap_load(struct snap *s, uint64_t addr, void *dst, uint32_t len)
{
	if (len > READ_MAX || addr > TASK_SIZE_MAX - len)
		return -1;
	return snap_copy(s, addr, dst, len) == len ? 0 : -1;
}

/*
 * The module's one reader (kmod/uread.h luw_walk_read()): one request of
 * the sample, refused past LUW_SAMPLE_READS requests or LUW_SAMPLE_FAULTS
 * failed ones; a failed read counts a fault.  0, or -1 (refused or
 * failed).
 */
static int snap_read(struct snap *s, uint64_t addr, void *dst, uint32_t len)
{
	if (s->reads >= LUW_SAMPLE_READS || s->faults >= LUW_SAMPLE_FAULTS)
		return -1;
	s->reads++;
	s->bytes += len;
	if (s->pid && s->nlog < s->caplog) {
		s->log[s->nlog].addr = addr;
		s->log[s->nlog++].len = len;
	}
	if (snap_load(s, addr, dst, len)) {
		s->faults++;
		return -1;
	}
	return 0;
}

static void snap_free(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->npg; i++)
		free(s->pg[i].data);
	free(s->pg);
	free(s->log);
	memset(s, 0, sizeof(*s));
}

/* ---- the process: tables per executable mapping, LuaJIT target ---- */

struct proc {
	pid_t pid;
	struct luw_maps maps;
	const struct luw_cfi **cfi;	/* parallel to maps.v, NULL: none */
	struct luw_layout_target t;
	uint64_t g_hint;
};

static int proc_load(struct proc *p, pid_t pid)
{
	char err[1024], path[PATH_MAX];
	size_t i;

	p->pid = pid;
	if (luw_layout_attach(pid, &p->t, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s\n", err);
		return -1;
	}
	p->g_hint = p->t.nstates == 1 ? p->t.states[0] : 0;
	if (luw_maps_read(pid, &p->maps)) {
		fprintf(stderr, PROG ": /proc/%d/maps: %s\n", (int)pid,
			strerror(errno));
		return -1;
	}
	p->cfi = calloc(p->maps.n + 1, sizeof(*p->cfi));
	if (!p->cfi)
		return -1;
	for (i = 0; i < p->maps.n; i++) {
		const struct luw_map *mp = &p->maps.v[i];

		if (!(mp->prot & LUW_MAP_X) || !luw_maps_is_file(mp))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64
			 "-%" PRIx64, (int)pid, mp->start, mp->end);
		p->cfi[i] = luw_cfi_get(path, err, sizeof(err));
	}
	return 0;
}

/* The table entry for the frame in r, as kmod/hostwalk.c finds it. */
static const struct luw_uw_entry *proc_entry(const struct proc *p,
					     const struct luw_uw_regs *r)
{
	uint64_t key = luw_uw_key(r);
	const struct luw_map *mp = luw_maps_find(&p->maps, key);
	const struct luw_cfi *c;

	if (!mp || !(c = p->cfi[mp - p->maps.v]))
		return NULL;
	return luw_cfi_find(c, luw_uw_rel(key, mp->start, mp->offset));
}

/* ---- one sample: the merged walk of kmod/mergewalk.c ---- */

struct sample {
	pid_t tid;
	struct user_regs_struct u;
	struct snap mem;
	/* results of the capture walk, checked on every replay */
	uint32_t nhost, nlua, reads, faults;
	uint64_t bytes, digest;
	uint64_t walk_ns, read_ns;	/* replay: walk, reads alone */
};

struct walk {
	const struct proc *p;
	struct snap *mem;
	struct luw_lj_regs regs;
	struct luw_uw_regs hr;
	struct luw_lj_walk_out out;
	struct luw_lj_frame lf[LUW_MAX_LUA_FRAMES];
	struct luw_lj_seg segs[LUW_MAX_SPLICES];
	int walked;
	int digesting;		/* off while timed */
	uint64_t digest;	/* of the frames found */
};

static int verbose;

/* The walkers' read callbacks: every read is one request of the sample. */
static int host_read(void *ctx, __u64 addr, __u64 *val)
{
	struct walk *w = ctx;

	return snap_read(w->mem, addr, val, 8);
}

static int lua_read(void *ctx, __u64 addr, void *dst, __u32 len)
{
	struct walk *w = ctx;

	return snap_read(w->mem, addr, dst, len);
}

static void lua_walk(struct walk *w, int sample_frame, uint64_t ip,
		     uint64_t sp, uint64_t vm_sp)
{
	const struct luw_layout_target *t = &w->p->t;
	struct luw_lj_walk_in in;

	memset(&in, 0, sizeof(in));
	in.ly = &t->layout;
	in.read = lua_read;
	in.ctx = w;
	in.vm_start = t->vm_start;
	in.interp_end = t->interp_end;
	in.vm_end = t->vm_end;
	in.vm_sp = vm_sp;
	/* What is left of the sample's budget, as kmod/mergewalk.c gives. */
	in.max_reads = w->mem->reads < LUW_SAMPLE_READS ?
		       LUW_SAMPLE_READS - w->mem->reads : 1;
	in.g_hint = w->p->g_hint;
	if (sample_frame) {
		in.regs = w->regs;
	} else {
		in.regs.ip = ip;
		in.regs.r[LUW_X86_RSP] = sp;
	}
	memset(&w->out, 0, sizeof(w->out));
	w->out.frames = w->lf;
	w->out.max_frames = LUW_MAX_LUA_FRAMES;
	w->out.segs = w->segs;
	w->out.max_segs = LUW_MAX_SPLICES;
	luw_lj_walk(&in, &w->out);
}

static int in_any_trace(struct walk *w, uint64_t pc)
{
	const struct luw_lj_layout *ly = &w->p->t.layout;
	uint64_t j = w->out.G + (int64_t)ly->gg_g2j, arr = 0;
	unsigned int gc64 = !!(ly->flags & LUW_LJ_F_GC64), i;
	uint32_t size = 0;

	if (ly->j_trace == LUW_LJ_NOFIELD || ly->j_sizetrace == LUW_LJ_NOFIELD ||
	    lua_read(w, j + ly->j_trace, &arr, sizeof(arr)) ||
	    lua_read(w, j + ly->j_sizetrace, &size, sizeof(size)))
		return 0;
	for (i = 1; i < size && i <= TRACE_SCAN; i++) {
		uint64_t tr = 0, mcode = 0;
		uint32_t sz = 0;

		if (lua_read(w, arr + (uint64_t)i * (gc64 ? 8 : 4), &tr,
			     gc64 ? 8 : 4))
			return 0;
		if (!tr)
			continue;
		if (lua_read(w, tr + ly->tr_mcode, &mcode, sizeof(mcode)) ||
		    lua_read(w, tr + ly->tr_szmcode, &sz, sizeof(sz)))
			continue;
		if (pc >= mcode && pc < mcode + sz)
			return 1;
	}
	return 0;
}

static int trace_probe(struct walk *w, int sample_frame, uint64_t pc,
		       uint64_t sp)
{
	const struct luw_lj_layout *ly = &w->p->t.layout;
	const struct luw_lj_frame *f = &w->lf[0];
	uint64_t mcode = 0;
	uint32_t size = 0;
	int in_mcode;

	if (ly->tr_mcode == LUW_LJ_NOFIELD || ly->tr_szmcode == LUW_LJ_NOFIELD)
		return 0;
	lua_walk(w, sample_frame, sample_frame ? w->regs.ip : pc, sp, 0);
	if (w->out.vmstate != LUW_VMST_TRACE || !w->out.nframes ||
	    f->kind != LUW_LJF_TRACE || !f->func)
		return 0;
	in_mcode = !lua_read(w, f->func + ly->tr_mcode, &mcode,
			     sizeof(mcode)) &&
		   !lua_read(w, f->func + ly->tr_szmcode, &size,
			     sizeof(size)) &&
		   pc >= mcode && pc < mcode + size;
	if (!in_mcode && !(sample_frame && (ly->flags & LUW_LJ_F_GC64) &&
			   w->out.G == w->regs.r[ly->reg_dispatch] -
					(int64_t)ly->gg_g2disp) &&
	    !in_any_trace(w, pc))
		return 0;
	w->walked = 1;
	return 1;
}

static int hw_restart(struct walk *w, uint64_t ip, uint64_t sp, uint64_t bp)
{
	if (sp <= w->hr.sp || sp >= w->hr.stack_end || !ip)
		return 0;
	w->hr.ip = ip;
	w->hr.sp = sp;
	w->hr.bp = bp;
	w->hr.flags = LUW_UW_R_BP_VALID | LUW_UW_R_CALLER;
	return 1;
}

static int cframe_at(struct walk *w, uint64_t sp)
{
	const struct luw_lj_layout *ly = &w->p->t.layout;
	uint64_t l = 0;
	uint8_t gct;

	if (lua_read(w, sp + ly->cframe_ofs_l, &l, ly->cframe_l_size) ||
	    !l || lua_read(w, l + ly->gc_gct, &gct, 1))
		return 0;
	return gct == ly->gct_thread;
}

static int vm_subroutine(struct walk *w)
{
	const struct luw_layout_target *t = &w->p->t;
	__u64 sp = w->hr.sp, ra = 0;

	if (cframe_at(w, sp) || host_read(w, sp, &ra) ||
	    ra < t->vm_start || ra >= t->interp_end || !cframe_at(w, sp + 8) ||
	    !hw_restart(w, ra, sp + 8, w->hr.bp))
		return 0;
	w->regs.ip = ra;
	w->regs.r[LUW_X86_RSP] = sp + 8;
	return 1;
}

static int lua_restart(struct walk *w, uint64_t cframe)
{
	const struct luw_lj_layout *ly = &w->p->t.layout;
	__u64 top = cframe + ly->cframe_size, ra = 0, bp = 0;

	if (!cframe || host_read(w, top - 8, &ra) ||
	    host_read(w, top - ly->cframe_rbp_cfa, &bp))
		return 0;
	return hw_restart(w, ra, top, bp);
}

enum { HW_NEXT, HW_END, HW_STOP };

static int hw_step(struct walk *w)
{
	const struct luw_uw_entry *e = proc_entry(w->p, &w->hr);
	int rc;

	if ((!e || LUW_UW_CFA_OF(e->rule) == LUW_UW_CFA_NONE ||
	     LUW_UW_CFA_OF(e->rule) == LUW_UW_CFA_UNSUP) &&
	    (w->hr.flags & LUW_UW_R_BP_VALID) && !w->hr.bp)
		return HW_END;
	rc = luw_uw_step(e, &w->hr, host_read, w);
	if (rc == LUW_UW_END)
		return HW_END;
	return rc < 0 ? HW_STOP : HW_NEXT;
}

/* FNV-1a over what the walk found, to compare two walks of one sample. */
static void mix(struct walk *w, uint64_t v)
{
	int i;

	if (!w->digesting)
		return;
	for (i = 0; i < 8; i++, v >>= 8) {
		w->digest ^= v & 0xff;
		w->digest *= 1099511628211ULL;
	}
}

/*
 * One sample as luw_merged_walk() takes it; returns the host frame count
 * and sets *nlua.  Only what costs reads and time is kept: the record
 * itself is not written.  The sample's first read (luw_user_reads_begin():
 * copy_from_user_nmi() of the 8 bytes at sp, outside the budget) is not
 * made here: the estimate prices it as one kernel copy (--copycost).
 */
static unsigned int merged_walk(struct walk *w, const struct proc *p,
				struct snap *mem,
				const struct user_regs_struct *u,
				unsigned int *nlua)
{
	const struct luw_layout_target *t = &p->t;
	unsigned int n = 0, seg = 0, lua = 0, max = LUW_MAX_HOST_FRAMES;
	int complete = 0, probed = 0, probed_here = 0, sub = 0, rc;

	w->p = p;
	w->mem = mem;
	w->walked = 0;
	w->digest = 14695981039346656037ULL;
	memset(&w->out, 0, sizeof(w->out));
	luw_layout_regs_from(u, &w->regs);
	w->hr.ip = u->rip;
	w->hr.sp = u->rsp;
	w->hr.bp = u->rbp;
	w->hr.flags = LUW_UW_R_BP_VALID;
	w->hr.stack_end = u->rsp + STACK_WINDOW;
	n++;
	mix(w, w->hr.ip);
	for (;;) {
		uint64_t pc = w->hr.ip;
		int vm = pc >= t->vm_start && pc < t->interp_end;
		int trace = 0;

		if (!vm && !w->walked && !probed &&
		    (t->layout.flags & LUW_LJ_F_JIT) &&
		    (pc < t->vm_start || pc >= t->vm_end) &&
		    !proc_entry(p, &w->hr)) {
			probed = 1;
			probed_here = n == 1;
			trace = trace_probe(w, n == 1, pc, w->hr.sp);
			vm = trace;
		}
		if (vm && !trace && n == 1 && max > 1 && vm_subroutine(w)) {
			n++;
			mix(w, w->hr.ip);
			sub = 1;
		}
		if (vm && !w->walked) {
			w->walked = 1;
			if (n == 1 || sub)
				lua_walk(w, 1, 0, 0, 0);
			else
				lua_walk(w, 0, 0, w->hr.sp, w->hr.sp);
		}
		if (vm && seg < w->out.nsegs) {
			const struct luw_lj_seg *g = &w->segs[seg];
			int below = trace || (seg == 0 &&
					      w->out.vmstate == LUW_VMST_TRACE);

			if (!g->cframe || (below ? g->cframe < w->hr.sp :
					   g->cframe != w->hr.sp)) {
				w->out.nsegs = seg;
			} else {
				lua += g->count;
				seg++;
				if (!lua_restart(w, g->cframe) || n >= max)
					break;
				n++;
				mix(w, w->hr.ip);
				continue;
			}
		}
		if (trace || n >= max)
			break;
		rc = hw_step(w);
		if (rc == HW_END)
			complete = 1;
		if (rc != HW_NEXT)
			break;
		n++;
		mix(w, w->hr.ip);
	}
	if (!w->walked && !complete) {
		if (!probed_here)
			lua_walk(w, 1, 0, 0, 0);
		w->walked = w->out.status != LUW_LJW_NOG &&
			    w->out.status != LUW_LJW_NOL;
	}
	if (w->walked)
		for (; seg < w->out.nsegs; seg++)
			lua += w->segs[seg].count;
	for (seg = 0; w->digesting && seg < w->out.nframes; seg++) {
		const struct luw_lj_frame *f = &w->lf[seg];

		mix(w, (uint64_t)f->kind | (uint64_t)f->link << 8 |
		       (uint64_t)f->flags << 16 | (uint64_t)f->ffid << 24 |
		       (uint64_t)f->trace << 32);
		mix(w, f->func);
		mix(w, f->proto);
		mix(w, f->pc);
	}
	mix(w, (uint64_t)w->out.status | (uint64_t)w->out.vmstate << 8 |
	       (uint64_t)w->out.nsegs << 16 | (uint64_t)lua << 32);
	*nlua = lua;
	return n;
}

/* ---- capture ---- */

static int stop(pid_t tid, struct user_regs_struct *u)
{
	return luw_ptrace_stop(tid) < 0 || luw_ptrace_getregs(tid, u) ? -1 : 0;
}

/*
 * ---- copy cost: the sample's one copy_from_user_nmi() (the 8 bytes at
 * sp, luw_user_reads_begin()) ----
 */

/* Best-of-batches ns per call of fn(arg). */
static double per_call(long (*fn)(long), long arg)
{
	uint64_t b[BATCHES];
	int i, k;

	for (i = 0; i < BATCHES; i++) {
		uint64_t t0 = now_ns();

		for (k = 0; k < 4000; k++)
			fn(arg);
		b[i] = now_ns() - t0;
	}
	qsort(b, BATCHES, sizeof(*b), cmp_u64);
	/* The best: the least disturbed by other programs. */
	return b[0] / 4000.0;
}

static sigset_t cur_mask;
static struct iovec iov[1024];
static int devnull;
static uint8_t cbuf[1 << 16];

static long sig_nocopy(long a)
{
	(void)a;
	return syscall(SYS_rt_sigprocmask, SIG_SETMASK, NULL, NULL, 8);
}

static long sig_copy(long a)
{
	(void)a;
	return syscall(SYS_rt_sigprocmask, SIG_SETMASK, &cur_mask, NULL, 8);
}

static long iov_copy(long n)
{
	return writev(devnull, iov, (int)n);
}

/*
 * A kernel copy from user memory, measured two ways: rt_sigprocmask with
 * a new mask minus without one (copy_from_user of 8 bytes plus setting
 * the mask under the signal lock: an upper bound for one small copy); and
 * writev to /dev/null with 1024 against 1 iovec (the kernel copies the
 * iovec array from user memory, 16 bytes per entry, checks each entry,
 * and /dev/null reads no data): an upper bound per byte of a larger copy.
 * The first, copy8_ns, is what walkcost.sh adds per sample; the module
 * makes no larger copy, and byte_ns is printed for reference.
 */
static int copycost(void)
{
	double s0, s1, v1, vn;
	int i;

	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || sigprocmask(SIG_SETMASK, NULL, &cur_mask))
		return 1;
	for (i = 0; i < 1024; i++) {
		iov[i].iov_base = cbuf;
		iov[i].iov_len = 1;
	}
	s0 = per_call(sig_nocopy, 0);
	s1 = per_call(sig_copy, 0);
	v1 = per_call(iov_copy, 1);
	vn = per_call(iov_copy, 1024);
	printf("copy syscall_ns %.1f copy8_ns %.1f byte_ns %.4f\n", s0,
	       s1 > s0 ? s1 - s0 : 0.0,
	       vn > v1 ? (vn - v1) / (1023.0 * sizeof(struct iovec)) : 0.0);
	close(devnull);
	return 0;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-v] [-n SAMPLES] [-i ITERATIONS] "
		   "[-m MAX_THREADS] PID\n"
		   "       " PROG " --copycost\n");
}

int main(int argc, char **argv)
{
	int nsamples = 100, iters = 2000, maxthr = 32, i, got = 0, ntid, tries;
	int rc = 1;
	pid_t pid = 0, tids[MAX_THREADS];
	int seized[MAX_THREADS] = { 0 };
	struct sample *sm;
	struct proc *p;
	struct walk *w;
	uint64_t *v;

	if (argc > 1 && !strcmp(argv[1], "--copycost"))
		return copycost();
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			nsamples = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-i") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-m") && i + 1 < argc)
			maxthr = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (argv[i][0] != '-' && !pid)
			pid = atoi(argv[i]);
		else {
			usage(stderr);
			return 1;
		}
	}
	if (pid <= 0 || nsamples <= 0 || iters <= 0 || maxthr <= 0) {
		usage(stderr);
		return 1;
	}
	if (maxthr > MAX_THREADS)
		maxthr = MAX_THREADS;
	p = calloc(1, sizeof(*p));
	w = calloc(1, sizeof(*w));
	if (w)
		w->digesting = 1;
	sm = calloc((size_t)nsamples, sizeof(*sm));
	v = calloc((size_t)nsamples + 1, sizeof(*v));
	if (!p || !w || !sm || !v || proc_load(p, pid))
		goto out;
	ntid = luw_ptrace_threads(pid, tids, maxthr);
	if (ntid <= 0) {
		fprintf(stderr, PROG ": no threads in %d\n", (int)pid);
		goto out;
	}
	srand((unsigned int)getpid());
	for (tries = 0; got < nsamples && tries < 20 * nsamples; tries++) {
		int k = tries % ntid;
		struct sample *s = &sm[got];
		unsigned int nlua;

		if (!seized[k]) {
			if (luw_ptrace_seize(tids[k]))
				continue;
			seized[k] = 1;
		}
		if (stop(tids[k], &s->u))
			continue;
		s->tid = tids[k];
		s->mem.pid = tids[k];
		/* The budget bounds a sample's reads. */
		s->mem.log = malloc(LUW_SAMPLE_READS * sizeof(*s->mem.log));
		s->mem.caplog = s->mem.log ? LUW_SAMPLE_READS : 0;
		s->nhost = merged_walk(w, p, &s->mem, &s->u, &nlua);
		s->nlua = nlua;
		s->reads = s->mem.reads;
		s->faults = s->mem.faults;
		s->bytes = s->mem.bytes;
		s->digest = w->digest;
		luw_ptrace_cont(tids[k], 0);
		s->mem.pid = 0;
		/* Only samples in LuaJIT's process with a Lua stack count. */
		if (!s->mem.log || !nlua) {
			snap_free(&s->mem);
			continue;
		}
		got++;
		usleep(300 + (unsigned int)(rand() % 3000));
	}
	for (i = 0; i < ntid; i++)
		if (seized[i])
			luw_ptrace_release(tids[i]);
	if (!got) {
		fprintf(stderr, PROG ": no sample with Lua frames\n");
		goto out;
	}

	/*
	 * Replay: walk time per sample, then the reads alone (each read's
	 * copy out of the snapshot, standing for the module's load).
	 */
	for (i = 0; i < got; i++) {
		struct sample *s = &sm[i];
		uint64_t bw[BATCHES], br[BATCHES];
		unsigned int nlua = 0, nhost = 0;
		int b, k;
		size_t r;
		static uint8_t tmp[READ_MAX];

		w->digesting = 0;
		for (b = 0; b < BATCHES; b++) {
			uint64_t t0 = now_ns();

			for (k = 0; k < iters; k++) {
				s->mem.reads = 0;
				s->mem.faults = 0;
				s->mem.bytes = 0;
				nhost = merged_walk(w, p, &s->mem, &s->u, &nlua);
			}
			bw[b] = now_ns() - t0;
			t0 = now_ns();
			for (k = 0; k < iters; k++)
				for (r = 0; r < s->mem.nlog; r++)
					snap_load(&s->mem, s->mem.log[r].addr,
						  tmp, s->mem.log[r].len);
			br[b] = now_ns() - t0;
		}
		w->digesting = 1;
		s->mem.reads = 0;
		s->mem.faults = 0;
		s->mem.bytes = 0;
		nhost = merged_walk(w, p, &s->mem, &s->u, &nlua);
		if (nhost != s->nhost || nlua != s->nlua ||
		    s->mem.reads != s->reads || s->mem.faults != s->faults ||
		    w->digest != s->digest) {
			fprintf(stderr, PROG ": sample %d replays differently "
				"(host %u/%u lua %u/%u reads %u/%u)\n", i,
				nhost, s->nhost, nlua, s->nlua, s->mem.reads,
				s->reads);
			goto out;
		}
		if (verbose)
			for (r = 0; r < s->mem.nlog; r++)
				printf("read %d sp %#llx addr %#" PRIx64 " len %u\n",
				       i, (unsigned long long)s->u.rsp,
				       s->mem.log[r].addr, s->mem.log[r].len);
		qsort(bw, BATCHES, sizeof(*bw), cmp_u64);
		qsort(br, BATCHES, sizeof(*br), cmp_u64);
		s->walk_ns = bw[BATCHES / 2] / (uint64_t)iters;
		s->read_ns = br[BATCHES / 2] / (uint64_t)iters;
		printf("sample %d tid %d host %u lua %u reads %u faults %u bytes %"
		       PRIu64 " pages %zu walk_ns %" PRIu64 " read_ns %" PRIu64
		       "\n", i, (int)s->tid, s->nhost, s->nlua, s->reads,
		       s->faults, s->bytes, s->mem.npg, s->walk_ns, s->read_ns);
	}
#define SUMMARY(name, expr)                                                \
	do {                                                               \
		for (i = 0; i < got; i++)                                  \
			v[i] = (expr);                                     \
		printf("summary %s median %" PRIu64 " p99 %" PRIu64 "\n",  \
		       name, pct(v, (size_t)got, 50), pct(v, (size_t)got, 99)); \
	} while (0)
	SUMMARY("host_frames", sm[i].nhost);
	SUMMARY("lua_frames", sm[i].nlua);
	SUMMARY("reads", sm[i].reads);
	SUMMARY("faults", sm[i].faults);
	SUMMARY("bytes", sm[i].bytes);
	SUMMARY("walk_ns", sm[i].walk_ns);
	SUMMARY("read_ns", sm[i].read_ns);
	SUMMARY("code_ns", sm[i].walk_ns > sm[i].read_ns ?
			   sm[i].walk_ns - sm[i].read_ns : 0);
	printf("summary samples %d threads %d stops %d\n", got, ntid, tries);
	/* Read sizes: "size count" pairs over all samples. */
	{
		uint64_t cnt[4097] = { 0 };
		int j;

		for (i = 0; i < got; i++)
			for (j = 0; j < (int)sm[i].mem.nlog; j++)
				cnt[sm[i].mem.log[j].len > 4096 ? 4096 :
				    sm[i].mem.log[j].len]++;
		for (j = 0; j <= 4096; j++)
			if (cnt[j])
				printf("readsize %d count %" PRIu64 "\n", j,
				       cnt[j]);
	}
	rc = 0;
out:
	for (i = 0; sm && i < got; i++)
		snap_free(&sm[i].mem);
	if (p) {
		luw_maps_free(&p->maps);
		free(p->cfi);
	}
	luw_cfi_cache_clear();
	free(p);
	free(w);
	free(sm);
	free(v);
	return rc;
}
