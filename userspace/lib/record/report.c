/*
 * report: .luw file -> merged, named stacks.  See record/report.h.
 */
#include "record/report.h"

#include "output/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/kvmap.h"
#include "target/funcname.h"
#include "record/dev.h"
#include "record/merge.h"
#include "record/offcpu.h"
#include "record/syscalls.h"
#include "util/grow.h"
#include "util/strbuf.h"

/* Name indexes: key (pid [<< 32 | extra], addr) -> payload offset in v. */
struct db {
	const struct luw_file *f;
	struct luw_kvmap proc, map, host, proto, pcline, fname, cfunc, trace,
		ff, callsite;
	struct luw_kvmap mapcount;	/* pid -> mapping sections so far */
	/* v4 files' samples brought up to this record version (records
	 * kept for later point into them). */
	void **upgraded;
	size_t nupgraded;
	int oom;
};

static void db_free(struct db *d)
{
	luw_kvmap_free(&d->proc);
	luw_kvmap_free(&d->map);
	luw_kvmap_free(&d->host);
	luw_kvmap_free(&d->proto);
	luw_kvmap_free(&d->pcline);
	luw_kvmap_free(&d->fname);
	luw_kvmap_free(&d->cfunc);
	luw_kvmap_free(&d->trace);
	luw_kvmap_free(&d->ff);
	luw_kvmap_free(&d->callsite);
	luw_kvmap_free(&d->mapcount);
	for (size_t i = 0; i < d->nupgraded; i++)
		free(d->upgraded[i]);
	free(d->upgraded);
}

/*
 * Section s's records as this version's: those of a file before v5 (Lua
 * frames without func) rewritten, kept until d goes.  0, -1 without
 * memory.
 */
static int samples_of(struct db *d, struct luw_file_sec *s)
{
	void *up, **v;
	size_t n;

	if (d->f->version >= 5)
		return 0;
	up = luw_dev_upgrade_v4(s->p, s->size, &n);
	v = up ? realloc(d->upgraded, (d->nupgraded + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(up);
		return -1;
	}
	d->upgraded = v;
	v[d->nupgraded++] = up;
	s->p = up;
	s->size = n;
	return 0;
}

/* Later sections win: a process section rewritten at exit, say. */
static void put(struct db *d, struct luw_kvmap *m, uint64_t a, uint64_t b,
		const struct luw_file_sec *s)
{
	int isnew;
	struct luw_kv *kv = luw_kvmap_put(m, a, b, &isnew);

	if (!kv) {
		d->oom = 1;
		return;
	}
	kv->v = (uint64_t)(s->p - d->f->data);
	kv->w = (uint32_t)s->size;
}

static void index_sec(struct db *d, const struct luw_file_sec *s)
{
	struct luw_file_cur c;
	uint32_t pid, x;
	struct luw_kv *kv;
	int isnew;

	luw_file_cur_init(&c, s);
	pid = luw_file_get_u32(&c);
	x = luw_file_get_u32(&c);
	if (c.bad)
		return;
	switch (s->type) {
	case LUWF_SEC_PROCESS:
		put(d, &d->proc, pid, 0, s);
		break;
	case LUWF_SEC_FFNAMES:
		put(d, &d->ff, pid, 0, s);
		break;
	case LUWF_SEC_MAPPING:
		kv = luw_kvmap_put(&d->mapcount, pid, 0, &isnew);
		if (!kv) {
			d->oom = 1;
			break;
		}
		put(d, &d->map, pid, kv->v++, s);
		break;
	case LUWF_SEC_HOST:
		luw_file_get_u32(&c);
		luw_file_get_u32(&c);
		put(d, &d->host, pid, luw_file_get_u64(&c), s);
		break;
	case LUWF_SEC_PROTO:
		luw_file_get_u32(&c);
		luw_file_get_u32(&c);
		put(d, &d->proto, pid, luw_file_get_u64(&c), s);
		break;
	case LUWF_SEC_PCLINE:
		put(d, &d->pcline, (uint64_t)pid << 32 | x, luw_file_get_u64(&c), s);
		break;
	case LUWF_SEC_FNAME:
		put(d, &d->fname, pid, luw_file_get_u64(&c), s);
		break;
	case LUWF_SEC_CFUNC:
		put(d, &d->cfunc, pid, luw_file_get_u64(&c), s);
		break;
	case LUWF_SEC_TRACE:
		/* v1: one per number; v2: per (number, start proto). */
		put(d, &d->trace, (uint64_t)pid << 32 | x,
		    d->f->version >= 2 ? luw_file_get_u64(&c) : 0, s);
		break;
	case LUWF_SEC_CALLSITE:
		put(d, &d->callsite, (uint64_t)pid << 32 | x, luw_file_get_u64(&c),
		    s);
		break;
	default:
		break;
	}
}

static int cur_of(const struct db *d, const struct luw_kvmap *m, uint64_t a,
		  uint64_t b, struct luw_file_cur *c)
{
	const struct luw_kv *kv = luw_kvmap_get(m, a, b);

	if (!kv)
		return -1;
	c->p = d->f->data + kv->v;
	c->end = c->p + kv->w;
	c->bad = 0;
	return 0;
}

/* A name made safe for the folded format. */
static void put_name(struct luw_strbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		luw_strbuf_putc(b, ch == ';' ? ':' :
			       (unsigned char)ch < 0x20 || ch == 0x7f ? '?' : ch);
	}
}

static const char *base_name(const char *p, size_t n, size_t *len)
{
	size_t i = n;

	while (i > 0 && p[i - 1] != '/')
		i--;
	*len = n - i;
	return p + i;
}

struct ctx {
	struct db *d;
	uint32_t pid;
	uint64_t vm_start, vm_end;
	char comm[64];		/* of pid, "" unknown */
	struct luw_strbuf b;
};

static void host_text(struct ctx *x, uint64_t pc)
{
	struct luw_file_cur c, mc;
	uint32_t mapno;
	const char *name;
	size_t n;

	if (cur_of(x->d, &x->d->host, x->pid, pc, &c) == 0) {
		uint32_t flags;
		uint64_t symoff;

		luw_file_get_u32(&c);
		mapno = luw_file_get_u32(&c);
		flags = luw_file_get_u32(&c);
		luw_file_get_u32(&c);
		luw_file_get_u64(&c);
		symoff = luw_file_get_u64(&c);
		name = luw_file_get_str(&c, &n);
		/* Unnamed code in an FDE: named by the function's start. */
		if (!c.bad && !n && (flags & LUWF_HF_FDE) && symoff <= pc)
			pc -= symoff;
		if (!c.bad && n) {
			put_name(&x->b, name, n);
			return;
		}
		if (!c.bad && mapno != LUWF_NO_MAP &&
		    cur_of(x->d, &x->d->map, x->pid, mapno, &mc) == 0) {
			uint64_t start, off;
			const char *path, *bn;
			size_t pl, bl;

			luw_file_get_u32(&mc);
			luw_file_get_u32(&mc);
			start = luw_file_get_u64(&mc);
			luw_file_get_u64(&mc);
			off = luw_file_get_u64(&mc);
			luw_file_get_str(&mc, &pl);
			path = luw_file_get_str(&mc, &pl);
			if (!mc.bad) {
				bn = base_name(path, pl, &bl);
				if (bl)
					put_name(&x->b, bn, bl);
				else
					luw_strbuf_puts(&x->b, "[anon]");
				luw_strbuf_putc(&x->b, '+');
				luw_strbuf_putx(&x->b, pc - start + off);
				return;
			}
		}
	}
	luw_strbuf_putx(&x->b, pc);
}

static int is_vm(void *vctx, uint64_t pc)
{
	struct ctx *x = vctx;
	struct luw_file_cur c;

	if (pc >= x->vm_start && pc < x->vm_end)
		return 1;
	if (cur_of(x->d, &x->d->host, x->pid, pc, &c))
		return 0;
	luw_file_get_u32(&c);
	luw_file_get_u32(&c);
	return !c.bad && (luw_file_get_u32(&c) & LUWF_HF_VM);
}

/* "@chunk:line" of a proto; 0, or -1 when the proto is unknown. */
static int proto_text(struct ctx *x, uint64_t pt, int32_t line)
{
	struct luw_file_cur c;
	const char *chunk;
	int32_t firstline;
	size_t n;

	if (cur_of(x->d, &x->d->proto, x->pid, pt, &c))
		return -1;
	luw_file_get_u32(&c);
	firstline = (int32_t)luw_file_get_u32(&c);
	luw_file_get_u32(&c);
	luw_file_get_u32(&c);
	luw_file_get_u64(&c);
	chunk = luw_file_get_str(&c, &n);
	if (c.bad)
		return -1;
	luw_strbuf_putc(&x->b, '@');
	put_name(&x->b, chunk, n);
	luw_strbuf_putc(&x->b, ':');
	luw_strbuf_putd(&x->b, line >= 0 ? line : firstline);
	return 0;
}

/* The name string of an fname or callsite section; 0 when none. */
static int name_of(struct ctx *x, const struct luw_kvmap *m, uint64_t a,
		   uint64_t b)
{
	struct luw_file_cur c;
	const char *s;
	size_t n;

	if (cur_of(x->d, m, a, b, &c))
		return 0;
	luw_file_get_u32(&c);
	luw_file_get_u32(&c);
	luw_file_get_u64(&c);
	s = luw_file_get_str(&c, &n);
	if (c.bad || !n)
		return 0;
	put_name(&x->b, s, n);
	luw_strbuf_putc(&x->b, ' ');
	return 1;
}

/*
 * The name caller's call site calls frame f by, when the recorder proved
 * that name on f's proto (v5: the section says which proto; before, the
 * first call site seen, unproven).
 */
static int callsite_name(struct ctx *x, const struct luw_lua_frame *caller,
			 const struct luw_lua_frame *f)
{
	struct luw_file_cur c;
	const char *s;
	size_t n;

	if (cur_of(x->d, &x->d->callsite, (uint64_t)x->pid << 32 | caller->pc,
		   caller->addr, &c))
		return 0;
	luw_file_get_u32(&c);
	luw_file_get_u32(&c);
	luw_file_get_u64(&c);
	s = luw_file_get_str(&c, &n);
	if (x->d->f->version >= 5 && luw_file_get_u64(&c) != f->addr)
		return 0;
	if (c.bad || !n)
		return 0;
	put_name(&x->b, s, n);
	luw_strbuf_putc(&x->b, ' ');
	return 1;
}

/* LUW_LJFN_MAIN_CHUNK and a space when proto pt is a main chunk (target/funcname.h). */
static int main_chunk(struct ctx *x, uint64_t pt)
{
	struct luw_file_cur c;
	int32_t firstline, numline;

	if (cur_of(x->d, &x->d->proto, x->pid, pt, &c))
		return 0;
	luw_file_get_u32(&c);
	firstline = (int32_t)luw_file_get_u32(&c);
	numline = (int32_t)luw_file_get_u32(&c);
	if (c.bad || !luw_funcname_is_main_chunk(firstline, numline))
		return 0;
	luw_strbuf_puts(&x->b, LUW_LJFN_MAIN_CHUNK " ");
	return 1;
}

/*
 * caller: the Lua frame below f in its segment, NULL when f was entered
 * from C.  A proto is named by its definition (or the global holding
 * it); a main chunk, which has no definition, as one; only the rest by
 * the call in this sample's caller (names differ between call sites).
 */
static void lua_text(struct ctx *x, const struct luw_lua_frame *f,
		     const struct luw_lua_frame *caller)
{
	struct luw_file_cur c;
	const char *s;
	size_t n;

	switch (f->kind) {
	case LUW_LF_LUA:
		if (!name_of(x, &x->d->fname, x->pid, f->addr) &&
		    !main_chunk(x, f->addr) && caller &&
		    caller->kind == LUW_LF_LUA &&
		    !(caller->flags & LUW_LFF_PC_AT))
			callsite_name(x, caller, f);
		if (proto_text(x, f->addr, -1)) {
			luw_strbuf_puts(&x->b, "@?");
			luw_strbuf_putx(&x->b, f->addr);
		}
		return;
	case LUW_LF_FFUNC:
		if (cur_of(x->d, &x->d->ff, x->pid, 0, &c) == 0) {
			uint32_t count;

			luw_file_get_u32(&c);
			count = luw_file_get_u32(&c);
			for (uint32_t i = 0; i < count && i <= f->ffid && !c.bad; i++) {
				s = luw_file_get_str(&c, &n);
				if (i == f->ffid && !c.bad && n) {
					put_name(&x->b, s, n);
					return;
				}
			}
		}
		luw_strbuf_puts(&x->b, "[ffid ");
		luw_strbuf_putu(&x->b, f->ffid);
		luw_strbuf_putc(&x->b, ']');
		return;
	case LUW_LF_C:
		if (cur_of(x->d, &x->d->cfunc, x->pid, f->addr, &c) == 0) {
			uint64_t fn;

			luw_file_get_u32(&c);
			luw_file_get_u32(&c);
			luw_file_get_u64(&c);
			fn = luw_file_get_u64(&c);
			if (!c.bad && fn) {
				host_text(x, fn);
				return;
			}
		}
		luw_strbuf_puts(&x->b, "[C ");
		luw_strbuf_putx(&x->b, f->addr);
		luw_strbuf_putc(&x->b, ']');
		return;
	case LUW_LF_TRACE:
		luw_strbuf_puts(&x->b, "TRACE_");
		luw_strbuf_putu(&x->b, f->trace);
		if (cur_of(x->d, &x->d->trace,
			   (uint64_t)x->pid << 32 | f->trace,
			   x->d->f->version >= 2 ? f->addr : 0, &c) == 0) {
			uint64_t pt;
			int32_t line;

			luw_file_get_u32(&c);
			luw_file_get_u32(&c);
			pt = luw_file_get_u64(&c);
			line = (int32_t)luw_file_get_u32(&c);
			if (x->d->f->version >= 2) {
				luw_file_get_u32(&c);
				pt = luw_file_get_u64(&c);
			}
			if (!c.bad && pt) {
				luw_strbuf_putc(&x->b, ' ');
				if (proto_text(x, pt, line))
					x->b.len--;
			}
		}
		return;
	default:
		luw_strbuf_puts(&x->b, "[lua kind ");
		luw_strbuf_putu(&x->b, f->kind);
		luw_strbuf_putc(&x->b, ']');
	}
}

static void set_proc(struct ctx *x, uint32_t pid)
{
	struct luw_file_cur c;

	x->pid = pid;
	x->vm_start = x->vm_end = 0;
	x->comm[0] = 0;
	if (cur_of(x->d, &x->d->proc, pid, 0, &c) == 0) {
		const char *comm;
		size_t n;

		luw_file_get_u32(&c);
		luw_file_get_u32(&c);
		x->vm_start = luw_file_get_u64(&c);
		x->vm_end = luw_file_get_u64(&c);
		luw_file_get_u64(&c);
		luw_file_get_u32(&c);
		comm = luw_file_get_str(&c, &n);
		if (c.bad) {
			x->vm_start = x->vm_end = 0;
		} else if (comm && n < sizeof(x->comm)) {
			memcpy(x->comm, comm, n);
			x->comm[n] = 0;
		}
	}
}

/* The Lua frame below frame j in its segment, or NULL. */
static const struct luw_lua_frame *caller_of(const struct luw_dev_rec *r,
					     unsigned int j)
{
	unsigned int end = r->sample->nlua;

	for (unsigned int i = 0; i < r->sample->nsplice; i++) {
		const struct luw_splice *s = &r->splice[i];

		if (j >= s->lua_first &&
		    j < (unsigned int)s->lua_first + s->lua_count) {
			end = s->lua_first + s->lua_count;
			break;
		}
	}
	return j + 1 < end ? &r->lua[j + 1] : NULL;
}

/* The frame "comm-PID" (or with by_pid 2 "comm-PID/TID") of x's process
 * into *id. */
static int root_frame(struct ctx *x, struct luw_stacks *st, uint32_t pid,
		      uint32_t tid, int by_pid, int32_t *id)
{
	luw_strbuf_reset(&x->b);
	luw_strbuf_puts(&x->b, x->comm[0] ? x->comm : "?");
	luw_strbuf_putc(&x->b, '-');
	luw_strbuf_putu(&x->b, pid);
	if (by_pid > 1) {
		luw_strbuf_putc(&x->b, '/');
		luw_strbuf_putu(&x->b, tid);
	}
	if (luw_strbuf_failed(&x->b) ||
	    (*id = luw_stacks_intern(st, x->b.p, x->b.len)) < 0)
		return -1;
	return 0;
}

/*
 * The merged stack of r into st with weight and objects (the second
 * value); leaf, when not NULL, one more frame inside the innermost (how
 * an off-CPU thread waited).
 */
static int add_sample(struct ctx *x, struct luw_stacks *st,
		      const struct luw_dev_rec *r, const struct luw_report_opts *o,
		      struct luw_report_result *res, uint64_t weight,
		      uint64_t objects, const char *leaf)
{
	struct luw_mframe mf[LUW_MERGE_MAX];
	int32_t ids[LUW_MERGE_MAX + 2], *fr = ids;
	int n;

	if (r->sample->pid != x->pid)
		set_proc(x, r->sample->pid);
	n = luw_merge(r->sample, r->host, r->lua, r->splice, o->keep_vm, is_vm,
		      x, mf, LUW_MERGE_MAX);
	if (n < 0) {
		res->bad++;
		return 0;
	}
	if (o->by_pid) {
		if (root_frame(x, st, r->sample->pid, r->sample->tid,
			       o->by_pid, &ids[0]))
			return -1;
		fr = ids + 1;
	}
	for (int i = 0; i < n; i++) {
		luw_strbuf_reset(&x->b);
		if (mf[i].src == LUW_MF_HOST)
			host_text(x, r->host[mf[i].idx]);
		else if (mf[i].src == LUW_MF_LUA)
			lua_text(x, &r->lua[mf[i].idx],
				 caller_of(r, mf[i].idx));
		else
			luw_strbuf_puts(&x->b, "[unplaced lua]");
		if (luw_strbuf_failed(&x->b))
			return -1;
		fr[i] = luw_stacks_intern(st, x->b.p, x->b.len);
		if (fr[i] < 0)
			return -1;
	}
	if (n == 0) {
		luw_strbuf_reset(&x->b);
		luw_strbuf_putc(&x->b, '[');
		luw_strbuf_puts(&x->b, luw_dev_vmstate_name(r->sample->vmstate));
		luw_strbuf_putc(&x->b, ']');
		if (luw_strbuf_failed(&x->b) ||
		    (fr[0] = luw_stacks_intern(st, x->b.p, x->b.len)) < 0)
			return -1;
		n = 1;
	}
	if (leaf && (fr[n++] = luw_stacks_intern(st, leaf, strlen(leaf))) < 0)
		return -1;
	return luw_stacks_add2(st, ids, (size_t)n + (size_t)(fr - ids), weight,
			       objects) ? -1 : 0;
}

/*
 * What one ALLOC record of nsize bytes stands for, at the mean interval
 * it was drawn with: it was taken with probability p = 1 - e^(-nsize /
 * interval), so 1/p allocations of nsize bytes (luaunwind.h).
 */
static double alloc_scale(uint64_t nsize, uint64_t interval)
{
	double p = -expm1(-(double)nsize / (double)interval);

	return p > 0 ? 1 / p : 1;
}

/* Where the stats section's probe counters start (luaunwind_file.h):
 * pid, reserved, seven U64s, vmstate{16}. */
#define STATS_PROBE_OFF (8 + 7 * 8 + 16 * 8)

/* The processes whose allocations a file sampled, and their intervals. */
struct intervals {
	uint32_t pid[LUW_MAX_TARGETS];
	uint64_t bytes[LUW_MAX_TARGETS];
	unsigned int n;
};

/* A process's interval (its own, else pid 0's: every process's), 0 when
 * the file names none. */
static uint64_t interval_of(const struct intervals *iv, uint32_t pid)
{
	uint64_t all = 0;

	for (unsigned int i = 0; i < iv->n; i++) {
		if (iv->pid[i] == pid)
			return iv->bytes[i];
		if (iv->pid[i] == 0)
			all = iv->bytes[i];
	}
	return all;
}

static void interval_add(struct intervals *iv, const uint8_t *p)
{
	uint32_t pid;
	uint64_t bytes;

	memcpy(&pid, p, 4);
	memcpy(&bytes, p + 8, 8);
	for (unsigned int i = 0; i < iv->n; i++)
		if (iv->pid[i] == pid)
			return;
	if (!bytes || iv->n == LUW_MAX_TARGETS)
		return;
	iv->pid[iv->n] = pid;
	iv->bytes[iv->n++] = bytes;
}

/* A CPU sample of a wall-clock report (pid, tid, time and the record
 * in ev), and the ns it stands for. */
struct cpu_sample {
	struct luw_switch_ev ev;
	uint64_t weight;	/* 0: not yet placed in a run */
};

/* The switch records of a recording and its stop readings (offcpu.h);
 * with wall, its CPU samples. */
struct offcpu {
	struct luw_switch_ev *v;
	size_t n, cap;
	struct luw_thread_end *ends;
	size_t nends, ecap;
	struct cpu_sample *cs;
	size_t ncs, cscap;
	/* for the pairing's callback */
	struct ctx *x;
	struct luw_stacks *st;
	const struct luw_report_opts *o;
	struct luw_report_result *res;
};

static int offcpu_add(struct offcpu *oc, const struct luw_dev_rec *r)
{
	struct luw_switch_ev *e;

	if (luw_grow((void **)&oc->v, &oc->cap, oc->n + 1, sizeof(*oc->v)))
		return -1;
	e = &oc->v[oc->n++];
	e->pid = r->sample->pid;
	e->tid = r->sample->tid;
	e->time = r->sample->time;
	e->runtime = r->sw->runtime;
	e->nvcsw = r->sw->nvcsw;
	e->nivcsw = r->sw->nivcsw;
	e->syscall = r->sw->syscall;
	e->state = r->sw->state;
	e->rec = r->sample;
	e->size = r->size;
	return 0;
}

static int offcpu_end(struct offcpu *oc, const uint8_t *p)
{
	struct luw_thread_end *e;

	if (luw_grow((void **)&oc->ends, &oc->ecap, oc->nends + 1,
		     sizeof(*oc->ends)))
		return -1;
	e = &oc->ends[oc->nends++];
	memcpy(&e->pid, p, 4);
	memcpy(&e->tid, p + 4, 4);
	memcpy(&e->time, p + 8, 8);
	memcpy(&e->runtime, p + 16, 8);
	return 0;
}

static int cpu_sample_add(struct offcpu *oc, const struct luw_dev_rec *r)
{
	struct cpu_sample *c;

	if (luw_grow((void **)&oc->cs, &oc->cscap, oc->ncs + 1,
		     sizeof(*oc->cs)))
		return -1;
	c = &oc->cs[oc->ncs++];
	memset(c, 0, sizeof(*c));
	c->ev.pid = r->sample->pid;
	c->ev.tid = r->sample->tid;
	c->ev.time = r->sample->time;
	c->ev.rec = r->sample;
	c->ev.size = r->size;
	return 0;
}

/* The first sample of oc->cs (sorted) not before (pid, tid, time). */
static size_t cpu_sample_at(const struct offcpu *oc, uint32_t pid,
			    uint32_t tid, uint64_t time)
{
	struct luw_switch_ev key = { .pid = pid, .tid = tid, .time = time };
	size_t lo = 0, hi = oc->ncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (luw_offcpu_cmp(&oc->cs[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A stack of one made-up frame (under the process's or thread's root
 * with by_pid) with weight and second value aux. */
static int add_bare(struct offcpu *oc, uint32_t pid, uint32_t tid,
		    const char *what, uint64_t weight, uint64_t aux)
{
	const struct luw_report_opts *o = oc->o;
	int32_t ids[2];
	size_t n = 0;

	if (o->by_pid) {
		if (pid != oc->x->pid)
			set_proc(oc->x, pid);
		if (root_frame(oc->x, oc->st, pid, tid, o->by_pid, &ids[n++]))
			return -1;
	}
	if ((ids[n++] = luw_stacks_intern(oc->st, what, strlen(what))) < 0)
		return -1;
	return luw_stacks_add2(oc->st, ids, n, weight, aux);
}

/*
 * The run that ends an interval, for a wall-clock report: its exact CPU
 * time spread over the thread's samples taken in it (the interval's
 * span), or without one put where the run ended -- the stack of the
 * switch that closes it, or a frame of its own at the stop.
 */
static int wall_run(struct offcpu *oc, const struct luw_offcpu_iv *iv)
{
	const struct luw_switch_ev *a = iv->from;
	size_t i = cpu_sample_at(oc, a->pid, a->tid, a->time + 1);
	size_t j = cpu_sample_at(oc, a->pid, a->tid, iv->end_time + 1);
	struct luw_dev_rec r;
	size_t ro = 0;

	if (!iv->run)
		return 0;
	oc->res->cpu_ns += iv->run;
	if (j > i) {
		/* Shares that add up to run exactly. */
		for (size_t k = i; k < j; k++)
			oc->cs[k].weight = iv->run * (k - i + 1) / (j - i) -
					   iv->run * (k - i) / (j - i);
		return 0;
	}
	if (!iv->to || iv->to->state == LUW_SWITCH_EXIT ||
	    luw_dev_next(iv->to->rec, iv->to->size, &ro, &r) != 1)
		return add_bare(oc, a->pid, a->tid, "[on-cpu: no sample]",
				iv->run, 0);
	oc->res->records++;
	return add_sample(oc->x, oc->st, &r, oc->o, oc->res, iv->run, 0, NULL);
}

/* One interval into the stacks (luw_offcpu_pair's callback): its time
 * off the CPU, and with wall its run. */
static int offcpu_interval(void *ctx, const struct luw_offcpu_iv *iv)
{
	struct offcpu *oc = ctx;
	const struct luw_report_opts *o = oc->o;
	const struct luw_switch_ev *from = iv->from;
	uint64_t off = iv->off;
	int kind = iv->kind;
	struct luw_dev_rec r;
	char leaf[64];
	size_t ro = 0;

	if (o->wall && wall_run(oc, iv))
		return -1;
	oc->res->off_ns[kind] += off;
	if (!off)
		return 0;
	if (kind == LUW_OFF_UNKNOWN)
		return add_bare(oc, from->pid, from->tid,
				"[off-cpu: switches not recorded]", off,
				o->wall ? off : 0);
	if (!(o->offcpu & (kind == LUW_OFF_BLOCKED ? LUW_REPORT_OFF_BLOCKED :
			   LUW_REPORT_OFF_PREEMPTED)))
		return 0;
	if (luw_dev_next(from->rec, from->size, &ro, &r) != 1)
		return 0;	/* checked when it was read */
	if (!r.sample->nhost && !r.sample->nlua)
		/* A switch on the thread's way out: no frames to show. */
		return add_bare(oc, from->pid, from->tid, "[exiting]", off,
				o->wall ? off : 0);
	if (kind == LUW_OFF_PREEMPTED)
		snprintf(leaf, sizeof(leaf), "[preempted]");
	else if (from->syscall < 0)
		snprintf(leaf, sizeof(leaf), "[blocked]");
	else
		snprintf(leaf, sizeof(leaf), "[blocked: %s]",
			 luw_syscalls_name(from->syscall));
	oc->res->records++;
	return add_sample(oc->x, oc->st, &r, o, oc->res, off,
			  o->wall ? off : 0, leaf);
}

int luw_report_run(const struct luw_file *f, const struct luw_report_opts *o,
		 struct luw_stacks *stacks, struct luw_report_result *res,
		 char *err, size_t errlen)
{
	struct intervals iv = { .n = 0 };
	struct db d = { .f = f };
	struct ctx x = { .d = &d, .pid = UINT32_MAX };
	struct offcpu oc = { .x = &x, .st = stacks, .o = o, .res = res };
	uint64_t period_ns = 0;
	struct luw_file_sec s;
	uint64_t off = LUWF_HEADER_SIZE, stop, tmin = UINT64_MAX, tmax = 0;
	int got, status = 0;
	char msg[256] = "";

	memset(res, 0, sizeof(*res));
	luw_strbuf_init(&x.b);
	if (luw_file_check_header((struct luw_file *)f, err, errlen))
		return 2;
	/* Pass 1: names; also finds where the readable part ends. */
	while ((got = luw_file_next(f, &off, &s, msg, sizeof(msg))) > 0) {
		index_sec(&d, &s);
		if (s.type == LUWF_SEC_STATS && s.size >= 16) {
			memcpy(&res->duration_ns, s.p + 8, 8);
			if (s.size >= STATS_PROBE_OFF + 24) {
				res->probe_counted = 1;
				memcpy(&res->probe_calls, s.p + STATS_PROBE_OFF, 8);
				memcpy(&res->probe_bytes, s.p + STATS_PROBE_OFF + 8, 8);
				memcpy(&res->probe_samples, s.p + STATS_PROBE_OFF + 16, 8);
			}
		} else if (s.type == LUWF_SEC_ALLOC && s.size >= 16) {
			interval_add(&iv, s.p);
		} else if (s.type == LUWF_SEC_THREADEND && s.size >= 24) {
			if (o->offcpu && offcpu_end(&oc, s.p))
				goto oom;
		} else if (s.type == LUWF_SEC_PROCESS && !res->freq &&
			   s.size >= 36) {
			memcpy(&res->start_ns, s.p + 24, 8);
			memcpy(&res->freq, s.p + 32, 4);
		}
	}
	if (d.oom)
		goto oom;
	res->complete = got == 0;
	stop = off;
	res->alloc_interval = iv.n ? iv.bytes[0] : 0;
	if (o->alloc && !iv.n) {
		snprintf(err, errlen, "no allocation samples: the recording "
			 "was made without --alloc");
		db_free(&d);
		luw_strbuf_free(&x.b);
		return 2;
	}
	if (o->wall) {
		if (!res->freq) {
			snprintf(err, errlen, "--wall: the recording does not "
				 "say its sampling frequency");
			db_free(&d);
			luw_strbuf_free(&x.b);
			return 2;
		}
		period_ns = 1000000000u / res->freq;
	}
	/* Pass 2: samples. */
	off = LUWF_HEADER_SIZE;
	while (off < stop && luw_file_next(f, &off, &s, msg, sizeof(msg)) > 0) {
		struct luw_dev_rec r;
		size_t ro = 0;
		int rc;

		if (s.type != LUWF_SEC_SAMPLES)
			continue;
		if (samples_of(&d, &s))
			goto oom;
		while ((rc = luw_dev_next(s.p, s.size, &ro, &r)) > 0) {
			uint64_t weight = 1, objects = 0;

			if (r.type == LUW_REC_LOST)
				res->lost += r.lost->count;
			if (r.type == LUW_REC_SWITCH) {
				res->switches++;
				if (o->offcpu && offcpu_add(&oc, &r))
					goto oom;
				continue;
			}
			if (r.type != (o->alloc ? LUW_REC_ALLOC : LUW_REC_SAMPLE) ||
			    (o->offcpu && !o->wall))
				continue;
			if (o->wall) {
				/* Weighed once the runs are known. */
				if (cpu_sample_add(&oc, &r))
					goto oom;
				continue;
			}
			if (o->alloc) {
				uint64_t i = interval_of(&iv, r.sample->pid);
				double k;

				if (!i) {
					res->bad++;	/* no interval known */
					continue;
				}
				k = alloc_scale(r.alloc->nsize, i);

				res->alloc_objects += k;
				res->alloc_bytes += k * (double)r.alloc->nsize;
				weight = (uint64_t)llround(k * (double)r.alloc->nsize);
				objects = (uint64_t)llround(k);
			}
			res->records++;
			if (r.sample->vmstate < LUW_VMST_COUNT)
				res->vmstate[r.sample->vmstate]++;
			if (r.sample->time < tmin)
				tmin = r.sample->time;
			if (r.sample->time > tmax)
				tmax = r.sample->time;
			if (add_sample(&x, stacks, &r, o, res, weight, objects,
				       NULL))
				goto oom;
		}
		if (rc < 0) {
			snprintf(err, errlen,
				 "offset %llu: malformed sample record in a samples section",
				 (unsigned long long)(s.off + 8 + ro));
			status = 2;
			break;
		}
	}
	if (!status && o->offcpu) {
		if (oc.ncs)
			qsort(oc.cs, oc.ncs, sizeof(*oc.cs), luw_offcpu_cmp);
		if (luw_offcpu_pair(oc.v, oc.n, oc.ends, oc.nends,
				    offcpu_interval, &oc, &res->pairs))
			goto oom;
		/* The CPU samples: their runs' shares, or outside every
		 * run the switches bound (before a thread's first, or a
		 * thread that never left its CPU) the sampling period. */
		for (size_t k = 0; k < oc.ncs; k++) {
			struct cpu_sample *c = &oc.cs[k];
			struct luw_dev_rec r;
			size_t ro = 0;

			if (!c->weight) {
				c->weight = period_ns;
				res->cpu_ns += period_ns;
			}
			if (luw_dev_next(c->ev.rec, c->ev.size, &ro, &r) != 1)
				continue;
			res->records++;
			if (r.sample->vmstate < LUW_VMST_COUNT)
				res->vmstate[r.sample->vmstate]++;
			if (add_sample(&x, stacks, &r, o, res, c->weight, 0,
				       NULL))
				goto oom;
		}
	}
	if (!res->duration_ns && tmax > tmin)
		res->duration_ns = tmax - tmin;
	if (!status && !res->complete) {
		snprintf(err, errlen, "%s", msg);
		status = 2;
	}
	db_free(&d);
	luw_strbuf_free(&x.b);
	free(oc.v);
	free(oc.ends);
	free(oc.cs);
	return status;
oom:
	snprintf(err, errlen, "out of memory");
	db_free(&d);
	luw_strbuf_free(&x.b);
	free(oc.v);
	free(oc.ends);
	free(oc.cs);
	return 1;
}

int luw_report_write_vmstates(const struct luw_report_result *res, FILE *out)
{
	if (fprintf(out, "samples\t%" PRIu64 "\n", res->records) < 0)
		return -1;
	for (unsigned int i = 0; i < LUW_VMST_COUNT; i++)
		if (fprintf(out, "%s\t%" PRIu64 "\n", luw_dev_vmstate_name(i),
			    res->vmstate[i]) < 0)
			return -1;
	return 0;
}

void luw_report_pprof_opts(const struct luw_report_opts *o,
			   const struct luw_report_result *res,
			   struct luw_pprof_opts *po)
{
	memset(po, 0, sizeof(*po));
	if (o->alloc) {
		/* As Go's allocation profiles: objects, then bytes. */
		po->count_type = "alloc_space";
		po->count_unit = "bytes";
		po->aux_type = "alloc_objects";
		po->aux_unit = "count";
		/* The period: the mean sampling interval in bytes, as Go's
		 * (its MemProfileRate). */
		po->period_ns = res->alloc_interval;
	} else if (o->wall) {
		po->count_type = "wall";
		po->count_unit = "nanoseconds";
		po->aux_type = "off_cpu";
		po->aux_unit = "nanoseconds";
	} else if (o->offcpu) {
		po->count_type = "off_cpu";
		po->count_unit = "nanoseconds";
	} else {
		po->period_ns = res->freq ? 1000000000ULL / res->freq : 0;
	}
	po->duration_ns = res->duration_ns;
	po->time_ns = res->start_ns;
}
