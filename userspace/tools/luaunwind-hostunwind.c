/*
 * luaunwind-hostunwind: the host-side proof of the table-driven unwinder.
 *
 * Stops each thread of a live process for a moment with ptrace, unwinds
 * its C stack with the compact tables built from .eh_frame (frame
 * pointers where no table covers a pc) using exactly the lookup and step
 * of kmod/uwtable.c that the kernel runs, prints the
 * symbolized stack and lets the thread go.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "util/cli.h"
#include "elf/symbols.h"
#include "proc/maps.h"
#include "proc/mem.h"

#define MAX_THREADS 4096
#define PAGE 4096u
#define NPAGES 32

#define PROG "luaunwind-hostunwind"

static const char usage[] =
"usage: luaunwind-hostunwind [options] PID\n"
"       luaunwind-hostunwind --table FILE...\n"
"Stop each thread of PID briefly (ptrace), unwind its host stack with\n"
"compact tables built from .eh_frame, print it symbolized.\n"
"  -n, --probes N      probe N times (default 1)\n"
"  -i, --interval MS   wait between probes (default 20)\n"
"  -t, --tid TID       only this thread\n"
"  -m, --max-frames N  bound on the walk (default 128)\n"
"      --no-fp         never fall back to frame pointers\n"
"      --fp-for NAME   ignore the table of files named NAME: frame\n"
"                      pointers there (tests the fallback)\n"
"      --table         build the tables of the FILEs, print their\n"
"                      entries with timing, and exit\n"
"  -h, --help\n";

struct opts {
	int probes, interval_ms, max_frames, no_fp;
	pid_t pid, tid;
	const char *fp_for;
};

/* ---- target memory: a few cached pages, valid while the thread stops ---- */

struct mem {
	pid_t tid;
	uint64_t page[NPAGES];
	int valid[NPAGES];
	uint8_t data[NPAGES][PAGE];
	unsigned next;
};

static int mem_read(void *ctx, __u64 addr, __u64 *val)
{
	struct mem *m = ctx;
	uint64_t pg = addr & ~(uint64_t)(PAGE - 1);
	unsigned i;

	if (addr & 7)
		return -1;	/* stack slots are 8-byte aligned */
	for (i = 0; i < NPAGES; i++)
		if (m->valid[i] && m->page[i] == pg)
			goto hit;
	i = m->next++ % NPAGES;
	m->valid[i] = 0;
	if (luw_mem_read(m->tid, pg, m->data[i], PAGE))
		return -1;
	m->page[i] = pg;
	m->valid[i] = 1;
hit:
	memcpy(val, m->data[i] + (addr - pg), 8);
	return 0;
}

/* ---- per-process view: maps, their files' tables and symbols ---- */

struct mapx {
	const struct luw_map *map;
	const struct luw_cfi *cfi;	/* NULL: frame pointers only */
	const struct luw_symbols *elf;	/* NULL: no symbols */
};

struct view {
	pid_t pid;
	struct luw_maps maps;
	struct mapx *x;			/* parallel to maps.v */
};

/*
 * The [vdso] has no file but is a whole ELF image with its own .eh_frame
 * and .dynsym: read it out of the target once, build from memory.
 */
static struct luw_cfi *vdso_cfi;
static struct luw_symbols *vdso_elf;

static void load_vdso(pid_t pid, const struct luw_map *mp)
{
	size_t len = mp->end - mp->start;
	char err[512];
	void *img;
	Elf *elf;

	if (vdso_cfi || len > (64u << 20) ||
	    !(img = luw_mem_dup(pid, mp->start, len)))
		return;
	elf_version(EV_CURRENT);
	elf = elf_memory(img, len);
	if (elf) {
		vdso_cfi = luw_cfi_build_elf(elf, "[vdso]", err, sizeof(err));
		if (!vdso_cfi)
			fprintf(stderr, "luaunwind-hostunwind: table: %s\n", err);
		vdso_elf = luw_symbols_load_elf(elf, "[vdso]", err, sizeof(err));
		elf_end(elf);
	}
	free(img);
}

static void view_free(struct view *v)
{
	luw_maps_free(&v->maps);
	free(v->x);
	v->x = NULL;
}

static int view_load(struct view *v, pid_t pid, const struct opts *o)
{
	char path[PATH_MAX], err[512];

	v->pid = pid;
	if (luw_maps_read(pid, &v->maps)) {
		fprintf(stderr, "luaunwind-hostunwind: /proc/%d/maps: %s\n",
			(int)pid, strerror(errno));
		return -1;
	}
	v->x = calloc(v->maps.n ? v->maps.n : 1, sizeof(*v->x));
	if (!v->x)
		return -1;
	for (size_t i = 0; i < v->maps.n; i++) {
		const struct luw_map *mp = &v->maps.v[i];
		const char *base;

		v->x[i].map = mp;
		if ((mp->prot & LUW_MAP_X) && !strcmp(mp->path, "[vdso]")) {
			load_vdso(pid, mp);
			v->x[i].cfi = vdso_cfi;
			v->x[i].elf = vdso_elf;
			continue;
		}
		if (!(mp->prot & LUW_MAP_X) || luw_maps_file(pid, mp, path, sizeof(path)))
			continue;
		base = strrchr(mp->path, '/');
		base = base ? base + 1 : mp->path;
		v->x[i].elf = luw_symbols_get(path, err, sizeof(err));
		if (!v->x[i].elf)
			fprintf(stderr, "luaunwind-hostunwind: symbols: %s\n", err);
		if (o->fp_for && !strcmp(base, o->fp_for))
			continue;
		v->x[i].cfi = luw_cfi_get(path, err, sizeof(err));
		if (!v->x[i].cfi)
			fprintf(stderr, "luaunwind-hostunwind: table: %s\n", err);
	}
	return 0;
}

static const struct mapx *view_find(const struct view *v, uint64_t addr)
{
	const struct luw_map *mp = luw_maps_find(&v->maps, addr);

	return mp ? &v->x[mp - v->maps.v] : NULL;
}

/* ---- one thread ---- */

static const char *err_name(int rc)
{
	switch (rc) {
	case LUW_UW_ERR_READ:
		return "stack read faulted";
	case LUW_UW_ERR_CFA:
		return "CFA not above sp or outside the stack";
	case LUW_UW_ERR_RA:
		return "return address 0";
	case LUW_UW_ERR_NOINFO:
		return "no unwind rule and no frame pointer";
	case LUW_UW_ERR_GUESS:
		return "rsp-based rule after a frame-pointer guess";
	default:
		return "?";
	}
}

static void print_frame(const struct view *v, int n, const struct luw_uw_regs *r,
			const char *how)
{
	const struct mapx *x = view_find(v, r->ip);
	/* A return address may be past the end of its call's function. */
	uint64_t key = luw_uw_key(r);
	const char *mod = "?";
	const struct luw_symbols_sym *s = NULL;
	uint64_t off = 0, vaddr = 0;

	if (x) {
		mod = strrchr(x->map->path, '/');
		mod = mod ? mod + 1 : (x->map->path[0] ? x->map->path : "[anon]");
		off = luw_maps_fileoff(x->map, key);
		if (x->elf && !luw_symbols_off2vaddr(x->elf, off, &vaddr))
			s = luw_symbols_at(x->elf, vaddr);
	}
	/* Module+file offset is what tables key on; the symbol is for people. */
	printf("#%-3d 0x%016" PRIx64 " %s+0x%" PRIx64 " ", n, (uint64_t)r->ip, mod,
	       (uint64_t)(off + (r->ip - key)));
	if (s)
		printf("%s+0x%" PRIx64, s->name,
		       (uint64_t)(vaddr - s->addr + (r->ip - key)));
	else
		printf("?");
	printf(" %s\n", how);
}

/* Unwind the stopped thread from regs; returns 1 if complete. */
static int unwind(const struct view *v, const struct user_regs_struct *ur,
		  const struct opts *o, pid_t tid, int probe)
{
	struct mem *m = calloc(1, sizeof(*m));
	struct luw_uw_regs r = { 0 };
	const struct luw_map *stack;
	const char *end = NULL;
	char how[64] = "";
	int n = 0, complete = 0;
	char buf[64];

	if (!m)
		return 0;
	m->tid = tid;
	r.ip = ur->rip;
	r.sp = ur->rsp;
	r.bp = ur->rbp;
	r.flags = LUW_UW_R_BP_VALID | (o->no_fp ? LUW_UW_R_NO_FP : 0);
	stack = luw_maps_find(&v->maps, r.sp);
	r.stack_end = stack ? stack->end : r.sp;

	/* Frames are printed after the walk, with how each was left. */
	struct luw_uw_regs *fr = calloc((size_t)o->max_frames, sizeof(*fr));
	char (*hows)[80] = calloc((size_t)o->max_frames, sizeof(*hows));

	if (!fr || !hows) {
		free(fr);
		free(hows);
		free(m);
		return 0;
	}
	for (;;) {
		const struct mapx *x = view_find(v, luw_uw_key(&r));
		const struct luw_uw_entry *e = NULL;
		int rc;

		if (n == o->max_frames) {
			end = "truncated: max frames";
			break;
		}
		fr[n] = r;
		if (!x || !(x->map->prot & LUW_MAP_X)) {
			snprintf(hows[n++], sizeof(*hows), "-");
			end = "truncated: pc outside executable mappings";
			break;
		}
		if (x->cfi) {
			e = luw_cfi_find(x->cfi, luw_maps_fileoff(x->map, luw_uw_key(&r)));
			luw_cfi_format(e ? e : &(struct luw_uw_entry){ 0 }, how,
				       sizeof(how));
		} else {
			snprintf(how, sizeof(how), "no table");
		}
		rc = luw_uw_step(e, &r, mem_read, m);
		snprintf(hows[n++], sizeof(*hows), "[%s%s]",
			 rc == LUW_UW_OK_FP ? "fp; " : "", how);
		if (rc == LUW_UW_END) {
			end = "complete";
			complete = 1;
			break;
		}
		if (rc < 0) {
			snprintf(buf, sizeof(buf), "truncated: %s", err_name(rc));
			end = buf;
			break;
		}
	}
	printf("probe %d tid %d frames %d end %s\n", probe, (int)tid, n, end);
	for (int i = 0; i < n; i++)
		print_frame(v, i, &fr[i], hows[i]);
	free(fr);
	free(hows);
	free(m);
	return complete;
}

/* ---- ptrace ---- */

static int list_threads(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)) && n < max)
		if (d->d_name[0] != '.')
			tids[n++] = (pid_t)strtol(d->d_name, NULL, 10);
	closedir(dir);
	return n;
}

/*
 * Stop tid, read its registers, let it go.  Returns 0, or -1 when the
 * thread vanished or refused (reported unless it simply exited).
 */
static int grab_regs(pid_t tid, struct user_regs_struct *ur)
{
	int st, sig = 0;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
		if (errno != ESRCH)
			fprintf(stderr, "luaunwind-hostunwind: seize %d: %s\n",
				(int)tid, strerror(errno));
		return -1;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) ||
	    waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st)) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return -1;
	}
	/* A signal that arrived meanwhile is handed back at detach. */
	if ((st >> 16) != PTRACE_EVENT_STOP)
		sig = WSTOPSIG(st);
	if (ptrace(PTRACE_GETREGS, tid, 0, ur)) {
		ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)sig);
		return -1;
	}
	return sig;
}

static int table_mode(char **files, int n)
{
	int rc = 0;

	for (int i = 0; i < n; i++) {
		struct timespec a, b, c;
		char err[512], rule[96];
		struct luw_cfi *t;
		struct luw_symbols *e;

		clock_gettime(CLOCK_MONOTONIC, &a);
		t = luw_cfi_build(files[i], err, sizeof(err));
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (!t) {
			fprintf(stderr, "luaunwind-hostunwind: %s\n", err);
			rc = 1;
			continue;
		}
		e = luw_symbols_load(files[i], err, sizeof(err));
		clock_gettime(CLOCK_MONOTONIC, &c);
		printf("table %s: %zu FDEs (%zu undecodable), %zu rows (%zu unsup, "
		       "%zu plt, %zu deref, %zu end; rbp at rbp+N in %zu; "
		       "r14 saved in %zu, lost in %zu) -> %u "
		       "entries + %u r14 rows, %zu bytes; built in %.2f ms; "
		       "%zu symbols loaded in %.2f ms%s%s\n",
		       files[i], t->st.fdes, t->st.fdes_bad, t->st.rows,
		       t->st.unsup, t->st.plt, t->st.deref, t->st.end,
		       t->st.rbp_rbp, t->st.r14_saved,
		       t->st.r14_undef, t->n, t->nr14, t->size,
		       (double)(b.tv_sec - a.tv_sec) * 1e3 +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e6,
		       e ? e->nsyms : 0,
		       (double)(c.tv_sec - b.tv_sec) * 1e3 +
		       (double)(c.tv_nsec - b.tv_nsec) / 1e6,
		       e && e->debug_path ? " from " : "",
		       e && e->debug_path ? e->debug_path : "");
		for (uint32_t k = 0; k < t->n; k++) {
			luw_cfi_format(&t->ent[k], rule, sizeof(rule));
			printf("  %08x %s\n", t->ent[k].start, rule);
		}
		for (uint32_t k = 0; k < t->nr14; k++) {
			const struct luw_uw_r14 *x = &t->r14[k];

			if (x->rule == LUW_UW_R14_CFA)
				printf("  r14 %08x c%+d\n", x->start, x->off);
			else
				printf("  r14 %08x %s\n", x->start,
				       x->rule == LUW_UW_R14_SAME ? "same" : "u");
		}
		luw_symbols_free(e);
		luw_cfi_free(t);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "probes", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, 'i' },
		{ "tid", required_argument, NULL, 't' },
		{ "max-frames", required_argument, NULL, 'm' },
		{ "no-fp", no_argument, NULL, 'F' },
		{ "fp-for", required_argument, NULL, 'P' },
		{ "table", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct opts o = { .probes = 1, .interval_ms = 20, .max_frames = 128 };
	int c, table = 0, probes_ok = 0, samples = 0, complete = 0;
	static pid_t tids[MAX_THREADS];
	int v;

	while ((c = luw_cli_getopt(argc, argv, "n:i:t:m:h", lopts, usage)) != -1) {
		switch (c) {
		case 'n':
			if (luw_cli_int_arg(PROG, "probe count", optarg,
					    1, INT_MAX, &o.probes))
				return 1;
			break;
		case 'i':
			if (luw_cli_int_arg(PROG, "interval", optarg,
					    0, INT_MAX, &o.interval_ms))
				return 1;
			break;
		case 't':
			if (luw_cli_int_arg(PROG, "TID", optarg,
					    1, INT_MAX, &v))
				return 1;
			o.tid = (pid_t)v;
			break;
		case 'm':
			if (luw_cli_int_arg(PROG, "frame count", optarg,
					    1, 100000, &o.max_frames))
				return 1;
			break;
		case 'F':
			o.no_fp = 1;
			break;
		case 'P':
			o.fp_for = optarg;
			break;
		case 'T':
			table = 1;
			break;
		}
	}
	if (table) {
		if (optind >= argc) {
			fputs(usage, stderr);
			return 1;
		}
		return table_mode(argv + optind, argc - optind);
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 1;
	}
	if (luw_cli_int_arg(PROG, "PID", argv[optind], 1, INT_MAX, &v))
		return 1;
	o.pid = (pid_t)v;
	if (kill(o.pid, 0) && errno == ESRCH) {
		fprintf(stderr, "luaunwind-hostunwind: no process %d\n", (int)o.pid);
		return 1;
	}

	for (int p = 1; p <= o.probes; p++) {
		struct view v = { 0 };
		int nt;

		if (view_load(&v, o.pid, &o)) {
			view_free(&v);
			break;
		}
		if (o.tid) {
			tids[0] = o.tid;
			nt = 1;
		} else {
			nt = list_threads(o.pid, tids, MAX_THREADS);
		}
		if (nt < 0) {
			fprintf(stderr, "luaunwind-hostunwind: process %d is gone\n",
				(int)o.pid);
			view_free(&v);
			break;
		}
		for (int i = 0; i < nt; i++) {
			struct user_regs_struct ur;
			int sig = grab_regs(tids[i], &ur);

			if (sig < 0)
				continue;
			samples++;
			complete += unwind(&v, &ur, &o, tids[i], p);
			ptrace(PTRACE_DETACH, tids[i], 0, (void *)(uintptr_t)sig);
		}
		probes_ok++;
		view_free(&v);
		fflush(stdout);
		if (p < o.probes && o.interval_ms)
			nanosleep(&(struct timespec){ o.interval_ms / 1000,
						      (o.interval_ms % 1000) * 1000000L },
				  NULL);
	}
	printf("summary probes %d samples %d complete %d\n", probes_ok, samples,
	       complete);
	luw_cfi_cache_clear();
	luw_symbols_cache_clear();
	luw_cfi_free(vdso_cfi);
	luw_symbols_free(vdso_elf);
	return samples ? 0 : 2;
}
