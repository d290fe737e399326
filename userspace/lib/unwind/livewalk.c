/*
 * livewalk: a live thread's host stack, stopped with ptrace and walked
 * with kmod/uwtable.c.  See unwind/livewalk.h.
 */
#include "unwind/livewalk.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "elf/symbols.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "proc/ptrace.h"
#include "proc/vdso.h"
#include "unwind/cfi.h"

#define PAGE 4096u
#define NPAGES 32

/*
 * The target's memory: a few cached pages, valid while the thread stays
 * stopped.  A walk reads its stack slot by slot; a page copied once
 * serves the slots around it.
 */
struct mem {
	pid_t tid;
	uint64_t page[NPAGES];
	int valid[NPAGES];
	uint8_t data[NPAGES][PAGE];
	unsigned int next;
};

/* A mapping with its file's table and symbols. */
struct mapx {
	const struct luw_map *map;
	const struct luw_cfi *cfi;	/* NULL: frame pointers only */
	const struct luw_symbols *elf;	/* NULL: no symbols */
};

struct luw_livewalk {
	pid_t pid;
	struct luw_livewalk_opts o;
	struct luw_maps maps;
	struct mapx *x;			/* parallel to maps.v */
	/* The [vdso]'s, built from its image once it loads. */
	struct luw_cfi *vdso_cfi;
	struct luw_symbols *vdso_elf;
	struct mem *mem;
	struct luw_livewalk_frame *f;	/* o.max_frames */
	char end[64];
};

static void warn(const struct luw_livewalk *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn(const struct luw_livewalk *w, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!w->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->o.warn(w->o.warn_ctx, msg);
}

static int mem_read(void *ctx, __u64 addr, __u64 *val)
{
	struct mem *m = ctx;
	uint64_t pg = addr & ~(uint64_t)(PAGE - 1);
	unsigned int i;

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

struct luw_livewalk *luw_livewalk_new(pid_t pid, const struct luw_livewalk_opts *o)
{
	struct luw_livewalk *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->pid = pid;
	w->o = *o;
	w->mem = malloc(sizeof(*w->mem));
	w->f = calloc((size_t)o->max_frames, sizeof(*w->f));
	if (!w->mem || !w->f) {
		luw_livewalk_free(w);
		return NULL;
	}
	return w;
}

static void unload(struct luw_livewalk *w)
{
	luw_maps_free(&w->maps);
	free(w->x);
	w->x = NULL;
}

void luw_livewalk_free(struct luw_livewalk *w)
{
	if (!w)
		return;
	unload(w);
	luw_cfi_free(w->vdso_cfi);
	luw_symbols_free(w->vdso_elf);
	free(w->mem);
	free(w->f);
	free(w);
}

/* Until the [vdso]'s table builds, every load tries again. */
static void load_vdso(struct luw_livewalk *w, const struct luw_map *mp)
{
	struct luw_vdso v;
	char err[512];

	if (w->vdso_cfi || luw_vdso_open(w->pid, mp, &v))
		return;
	w->vdso_cfi = luw_cfi_build_elf(v.elf, "[vdso]", err, sizeof(err));
	if (!w->vdso_cfi)
		warn(w, "table: %s", err);
	luw_symbols_free(w->vdso_elf);
	w->vdso_elf = luw_symbols_load_elf(v.elf, "[vdso]", err, sizeof(err));
	luw_vdso_close(&v);
}

int luw_livewalk_load(struct luw_livewalk *w, char *err, size_t errlen)
{
	char path[PATH_MAX], why[512];

	unload(w);
	if (luw_maps_read(w->pid, &w->maps)) {
		snprintf(err, errlen, "/proc/%d/maps: %s", (int)w->pid,
			 strerror(errno));
		return -1;
	}
	w->x = calloc(w->maps.n ? w->maps.n : 1, sizeof(*w->x));
	if (!w->x) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < w->maps.n; i++) {
		const struct luw_map *mp = &w->maps.v[i];
		struct mapx *x = &w->x[i];
		const char *base;

		x->map = mp;
		if (!(mp->prot & LUW_MAP_X))
			continue;
		if (luw_vdso_is(mp)) {
			load_vdso(w, mp);
			x->cfi = w->vdso_cfi;
			x->elf = w->vdso_elf;
			continue;
		}
		if (luw_maps_file(w->pid, mp, path, sizeof(path)))
			continue;
		base = strrchr(mp->path, '/');
		base = base ? base + 1 : mp->path;
		x->elf = luw_symbols_get(path, why, sizeof(why));
		if (!x->elf)
			warn(w, "symbols: %s", why);
		if (w->o.fp_for && !strcmp(base, w->o.fp_for))
			continue;
		x->cfi = luw_cfi_get(path, why, sizeof(why));
		if (!x->cfi)
			warn(w, "table: %s", why);
	}
	return 0;
}

static const struct mapx *find(const struct luw_livewalk *w, uint64_t addr)
{
	const struct luw_map *mp = luw_maps_find(&w->maps, addr);

	return mp ? &w->x[mp - w->maps.v] : NULL;
}

static const char *step_error(int rc)
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

/*
 * A system call's registers (orig_rax a call number), not a clone
 * child's (rax 0): what a SYSCALL row needs (kmod/uwtable.h).  A thread
 * stopped inside a call has the kernel's placeholder or restart error in
 * rax.
 */
static int in_syscall(const struct user_regs_struct *ur)
{
	return (long)ur->orig_rax >= 0 && ur->rax;
}

/* Walk the stopped thread from its registers ur. */
static void walk(struct luw_livewalk *w, const struct user_regs_struct *ur,
		 struct luw_livewalk_stack *s)
{
	struct luw_uw_regs r = { 0 };
	const struct luw_map *stack;

	r.ip = ur->rip;
	r.sp = ur->rsp;
	r.bp = ur->rbp;
	r.flags = LUW_UW_R_BP_VALID | (w->o.no_fp ? LUW_UW_R_NO_FP : 0) |
		  (in_syscall(ur) ? LUW_UW_R_SYSCALL : 0);
	stack = luw_maps_find(&w->maps, r.sp);
	r.stack_end = stack ? stack->end : r.sp;
	for (;;) {
		const struct mapx *x = find(w, luw_uw_key(&r));
		const struct luw_uw_entry *e = NULL;
		struct luw_livewalk_frame *f;
		int rc;

		if (s->n == w->o.max_frames) {
			s->end = "truncated: max frames";
			return;
		}
		f = &w->f[s->n++];
		memset(f, 0, sizeof(*f));
		f->r = r;
		if (!x || !(x->map->prot & LUW_MAP_X)) {
			f->via = LUW_LIVEWALK_OUTSIDE;
			s->end = "truncated: pc outside executable mappings";
			return;
		}
		f->via = x->cfi ? LUW_LIVEWALK_TABLE : LUW_LIVEWALK_NO_TABLE;
		if (x->cfi)
			e = luw_cfi_find(x->cfi, luw_maps_fileoff(x->map,
								  luw_uw_key(&r)));
		if (e)
			f->e = *e;
		rc = luw_uw_step(e, &r, mem_read, w->mem);
		f->fp = rc == LUW_UW_OK_FP;
		if (rc == LUW_UW_END) {
			s->end = "complete";
			s->complete = 1;
			return;
		}
		if (rc < 0) {
			snprintf(w->end, sizeof(w->end), "truncated: %s",
				 step_error(rc));
			s->end = w->end;
			return;
		}
	}
}

int luw_livewalk_thread(struct luw_livewalk *w, pid_t tid,
			struct luw_livewalk_stack *s)
{
	struct user_regs_struct ur;
	int sig;

	if (luw_ptrace_seize(tid)) {
		/* A thread that exited since the list was read is no news. */
		if (errno != ESRCH)
			warn(w, "seize %d: %s", (int)tid, strerror(errno));
		return -1;
	}
	sig = luw_ptrace_stop(tid);
	if (sig < 0) {
		luw_ptrace_detach(tid, 0);
		return -1;
	}
	if (luw_ptrace_getregs(tid, &ur)) {
		luw_ptrace_detach(tid, sig);
		return -1;
	}
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->f = w->f;
	memset(w->mem->valid, 0, sizeof(w->mem->valid));
	w->mem->next = 0;
	w->mem->tid = tid;
	walk(w, &ur, s);
	/* A signal that arrived meanwhile is the thread's: handed back. */
	luw_ptrace_detach(tid, sig);
	return 0;
}

void luw_livewalk_name(const struct luw_livewalk *w, const struct luw_uw_regs *r,
		       struct luw_livewalk_name *n)
{
	const struct mapx *x = find(w, r->ip);
	/* A return address may be past the end of its call's function. */
	uint64_t key = luw_uw_key(r);
	const struct luw_symbols_sym *s = NULL;
	uint64_t off = 0, vaddr = 0;

	n->mod = "?";
	if (x) {
		n->mod = strrchr(x->map->path, '/');
		n->mod = n->mod ? n->mod + 1 :
			 x->map->path[0] ? x->map->path : "[anon]";
		off = luw_maps_fileoff(x->map, key);
		if (x->elf && !luw_symbols_off2vaddr(x->elf, off, &vaddr))
			s = luw_symbols_at(x->elf, vaddr);
	}
	/* Module+file offset is what tables key on; the symbol is for people. */
	n->off = off + (r->ip - key);
	n->sym = s ? s->name : NULL;
	n->sym_off = s ? vaddr - s->addr + (r->ip - key) : 0;
}
