/*
 * symbolize: live names for sample records, written as .luw sections.
 * See symbolize.h.
 */
#include "record/symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elf/demangle.h"
#include "elf/symbols.h"
#include "util/grow.h"
#include "util/kvmap.h"
#include "target/global.h"
#include "target/layout.h"
#include "target/funcname.h"
#include "target/obj.h"
#include "target/proto.h"
#include "target/states.h"
#include "record/dev.h"
#include "proc/maps.h"
#include "proc/procinfo.h"

/* Keys of struct proc.seen: (what << 32 | extra, address). */
enum { K_HOST = 1, K_PROTO, K_PCLINE, K_FNAME, K_CFUNC, K_TRACE, K_CALLSITE,
       K_MAP, K_CALLTRY };

struct proc {
	pid_t pid;
	int lj;			/* LuaJIT found: t and ljs are valid */
	int gone;
	/* Read while it lives: the record rewritten at its exit keeps them. */
	char comm[64], exe[4096];
	struct luw_layout_target *t;
	struct luw_proto_ctx *ljs;
	struct luw_maps maps;
	uint32_t nmaps;		/* mapping sections written */
	struct luw_kvmap seen;
	/* Protos named so far, for finding each one's parent (its FNEW). */
	struct known *known;
	size_t nknown, capknown;
	int rescans;		/* luw_states_find runs for traces */
	struct luw_obj obj;	/* the objects of t's layout */
	/* Tables read for names held by globals (target/global.h): 0 not
	 * worked out yet, 1 in obj, -1 refused. */
	int tables_state;
	struct proc *next;
};

struct known {
	uint64_t pt;
	int32_t first, numline;
	char *chunk;
	int done;		/* its parent was found */
	int gsearched;		/* looked for in the globals (target/global.h) */
};

struct luw_symbolize {
	struct luw_file_writer *w;
	uint32_t freq;
	uint64_t start_ns;
	struct luw_file_buf b;
	struct proc *procs;
	int failed;
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct luw_symbolize *luw_symbolize_new(struct luw_file_writer *w, uint32_t freq)
{
	struct luw_symbolize *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->w = w;
	z->freq = freq;
	z->start_ns = realtime_ns();
	return z;
}

static void proc_free(struct proc *p)
{
	for (size_t i = 0; i < p->nknown; i++)
		free(p->known[i].chunk);
	free(p->known);
	luw_proto_free(p->ljs);
	free(p->t);
	luw_maps_free(&p->maps);
	luw_kvmap_free(&p->seen);
	free(p);
}

void luw_symbolize_free(struct luw_symbolize *z)
{
	if (!z)
		return;
	while (z->procs) {
		struct proc *p = z->procs;

		z->procs = p->next;
		proc_free(p);
	}
	luw_file_buf_free(&z->b);
	free(z);
}

static int emit(struct luw_symbolize *z, uint32_t type)
{
	if (luw_file_write_buf(z->w, type, &z->b)) {
		z->failed = 1;
		return -1;
	}
	return 0;
}

static int write_process(struct luw_symbolize *z, const struct proc *p)
{
	uint32_t flags = 0;

	if (p->lj && (p->t->layout.flags & LUW_LJ_F_GC64))
		flags |= LUWF_PF_GC64;
	if (p->gone)
		flags |= LUWF_PF_EXITED;
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, flags);
	luw_file_put_u64(&z->b, p->lj ? p->t->vm_start : 0);
	luw_file_put_u64(&z->b, p->lj ? p->t->vm_end : 0);
	luw_file_put_u64(&z->b, z->start_ns);
	luw_file_put_u32(&z->b, z->freq);
	luw_file_put_str(&z->b, p->comm);
	luw_file_put_str(&z->b, p->exe);
	luw_file_put_str(&z->b, p->lj ? p->t->kind : "");
	return emit(z, LUWF_SEC_PROCESS);
}

static int write_ffnames(struct luw_symbolize *z, const struct proc *p)
{
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, 256);
	for (unsigned int i = 0; i < 256; i++)
		luw_file_put_str(&z->b, luw_proto_ffname(p->ljs, i));
	return emit(z, LUWF_SEC_FFNAMES);
}

static struct proc *find(struct luw_symbolize *z, pid_t pid)
{
	for (struct proc *p = z->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct proc *add(struct luw_symbolize *z, pid_t pid,
			const struct luw_layout_target *proven, int *status,
			char *err, size_t errlen)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(err, errlen, "out of memory");
		*status = -2;
		return NULL;
	}
	p->pid = pid;
	*status = 0;
	luw_procinfo_comm(pid, p->comm, sizeof(p->comm));
	luw_procinfo_exe(pid, p->exe, sizeof(p->exe));
	if (luw_maps_read(pid, &p->maps)) {
		snprintf(err, errlen, "process %d: cannot read its maps: %s",
			 (int)pid, strerror(errno));
		p->gone = 1;
		*status = -1;
	} else {
		p->t = calloc(1, sizeof(*p->t));
		if (p->t && proven)
			*p->t = *proven;
		if (p->t && (proven || !luw_layout_attach(pid, p->t, err,
							errlen)) &&
		    (p->ljs = luw_proto_new(pid, &p->t->layout, &p->t->ff))) {
			p->lj = 1;
			luw_obj_init(&p->obj, pid, &p->t->layout);
		} else {
			*status = 1;
			if (!p->t)
				snprintf(err, errlen, "out of memory");
		}
	}
	p->next = z->procs;
	z->procs = p;
	if (write_process(z, p) || (p->lj && write_ffnames(z, p))) {
		snprintf(err, errlen, "writing the record file: %s",
			 strerror(z->w->err));
		*status = -2;
	}
	return p;
}

int luw_symbolize_add_proven(struct luw_symbolize *z, pid_t pid,
			     const struct luw_layout_target *t, char *err,
			     size_t errlen)
{
	struct proc *p = find(z, pid);
	int status;

	if (p)
		return p->lj ? 0 : 1;
	add(z, pid, t, &status, err, errlen);
	return status;
}

int luw_symbolize_add(struct luw_symbolize *z, pid_t pid, char *err, size_t errlen)
{
	return luw_symbolize_add_proven(z, pid, NULL, err, errlen);
}

/* 1 when (what, extra, addr) is new (and now marked seen). */
static int first(struct luw_symbolize *z, struct proc *p, unsigned int what,
		 uint32_t extra, uint64_t addr)
{
	int isnew = 0;

	if (!luw_kvmap_put(&p->seen, (uint64_t)what << 32 | extra, addr,
			   &isnew)) {
		z->failed = 1;
		return 0;
	}
	return isnew;
}

static int is_vm_name(const char *s)
{
	return s && (!strncmp(s, "lj_vm_", 6) || !strncmp(s, "lj_BC_", 6));
}

static struct luw_symbols *elf_of(const struct proc *p, const struct luw_map *m)
{
	char err[256], path[4200];

	if (luw_maps_file(p->pid, m, path, sizeof(path)))
		return NULL;
	return luw_symbols_get(path, err, sizeof(err));
}

static uint32_t mapno_of(struct luw_symbolize *z, struct proc *p,
			 const struct luw_map *m, struct luw_symbols *e)
{
	struct luw_kv *kv = luw_kvmap_get(&p->seen, (uint64_t)K_MAP << 32,
					  m->start);
	uint32_t prot = 0;
	int isnew;

	if (kv)
		return (uint32_t)kv->v;
	if (m->prot & LUW_MAP_R)
		prot |= LUWF_MAP_R;
	if (m->prot & LUW_MAP_W)
		prot |= LUWF_MAP_W;
	if (m->prot & LUW_MAP_X)
		prot |= LUWF_MAP_X;
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, prot);
	luw_file_put_u64(&z->b, m->start);
	luw_file_put_u64(&z->b, m->end);
	luw_file_put_u64(&z->b, m->offset);
	luw_file_put_strn(&z->b, e ? (const char *)e->build_id : "",
		      e ? e->build_id_len : 0);
	luw_file_put_str(&z->b, m->path);
	if (emit(z, LUWF_SEC_MAPPING))
		return LUWF_NO_MAP;
	kv = luw_kvmap_put(&p->seen, (uint64_t)K_MAP << 32, m->start, &isnew);
	if (!kv) {
		z->failed = 1;
		return LUWF_NO_MAP;
	}
	kv->v = p->nmaps;
	return p->nmaps++;
}

/* ret: the pc is a return address (look up the call before it). */
/*
 * The mapping holding addr; the process's maps read again once when none
 * does (a library loaded since they were read).
 */
static const struct luw_map *map_at(struct proc *p, uint64_t addr)
{
	const struct luw_map *m = luw_maps_find(&p->maps, addr);
	struct luw_maps fresh;

	if (m || p->gone || luw_maps_read(p->pid, &fresh))
		return m;
	luw_maps_free(&p->maps);
	p->maps = fresh;
	return luw_maps_find(&p->maps, addr);
}

static void name_host(struct luw_symbolize *z, struct proc *p, uint64_t pc, int ret)
{
	const struct luw_map *m;
	const struct luw_symbols_sym *s = NULL;
	struct luw_symbols *e = NULL;
	uint64_t look = ret && pc ? pc - 1 : pc, vaddr, symoff = 0, fde;
	uint32_t mapno = LUWF_NO_MAP, flags = 0;
	const char *name = "";
	char *dem = NULL;

	if (!first(z, p, K_HOST, 0, pc))
		return;
	m = map_at(p, look);
	if (m) {
		e = elf_of(p, m);
		if (e && luw_symbols_off2vaddr(e, luw_maps_fileoff(m, look),
					   &vaddr) == 0) {
			if ((s = luw_symbols_at(e, vaddr))) {
				symoff = vaddr - s->addr + (pc - look);
				name = s->name;
			} else if (luw_symbols_fde_start(e, vaddr, &fde) == 0) {
				/* A stripped function: one name per FDE. */
				symoff = vaddr - fde + (pc - look);
				flags |= LUWF_HF_FDE;
			}
		}
		mapno = mapno_of(z, p, m, e);
	}
	if (p->lj && pc >= p->t->vm_start && pc < p->t->vm_end) {
		flags |= LUWF_HF_VM;
		/* The interpreter's and lj_vm_ffi_call's FDEs (target/layout.h). */
		if (!s) {
			int interp = look < p->t->interp_end;

			name = interp ? "lj_vm" : "lj_vm_ffi_call";
			symoff = pc - (interp ? p->t->vm_start : p->t->interp_end);
			flags &= ~LUWF_HF_FDE;
		}
	}
	if (s && is_vm_name(s->name))
		flags |= LUWF_HF_VM;
	if (s && (dem = luw_demangle(s->name)))
		name = dem;
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, mapno);
	luw_file_put_u32(&z->b, flags);
	luw_file_put_u32(&z->b, 0);
	luw_file_put_u64(&z->b, pc);
	luw_file_put_u64(&z->b, symoff);
	luw_file_put_str(&z->b, name);
	free(dem);
	emit(z, LUWF_SEC_HOST);
}

static uint64_t bc_addr(const struct proc *p, uint64_t pt, uint32_t pc)
{
	return pt + p->t->layout.pt_size + 4ULL * pc;
}

static int encloses(const struct known *q, const struct known *c)
{
	return q->pt != c->pt && q->first <= c->first &&
	       (int64_t)c->first + c->numline <=
	       (int64_t)q->first + q->numline &&
	       !strcmp(q->chunk, c->chunk);
}

/* Whether q creates c's closures; the definition name written if any. */
static int try_parent(struct luw_symbolize *z, struct proc *p, struct known *q,
		      struct known *c)
{
	char name[256];
	int r;

	if (c->done || !encloses(q, c))
		return 0;
	r = luw_funcname_def_name(p->pid, &p->t->layout, q->pt, c->pt, name,
			 sizeof(name));
	if (r <= 0)
		return 0;
	c->done = 1;
	if (r == 1) {
		luw_file_put_u32(&z->b, (uint32_t)p->pid);
		luw_file_put_u32(&z->b, 0);
		luw_file_put_u64(&z->b, c->pt);
		luw_file_put_str(&z->b, name);
		emit(z, LUWF_SEC_FNAME);
	}
	return 1;
}

/*
 * A proto's parent is found among the protos sampled in the same chunk:
 * either one already known is the parent of the new one, or the new one
 * is the parent of some known ones still without a definition.  A child
 * proto is a GC constant of exactly one parent (lj_parse.c), so a match
 * is the definition; a parent never sampled leaves the proto unnamed here
 * (then the report falls back to the call site of each sample).
 */
static void name_def(struct luw_symbolize *z, struct proc *p,
		     const struct luw_proto_info *lp)
{
	struct known *k;

	if (luw_grow((void **)&p->known, &p->capknown, p->nknown + 1,
		     sizeof(*p->known)))
		return;
	k = &p->known[p->nknown];
	k->pt = lp->addr;
	k->first = lp->firstline;
	k->numline = lp->numline;
	k->done = 0;
	k->gsearched = 0;
	k->chunk = strdup(lp->chunk);
	if (!k->chunk)
		return;
	p->nknown++;
	for (size_t i = 0; i + 1 < p->nknown && !k->done; i++)
		try_parent(z, p, &p->known[i], k);
	for (size_t i = 0; i + 1 < p->nknown; i++)
		try_parent(z, p, k, &p->known[i]);
}

static int name_proto(struct luw_symbolize *z, struct proc *p, uint64_t pt)
{
	const struct luw_proto_info *lp;

	if (!first(z, p, K_PROTO, 0, pt))
		return 0;
	if (luw_proto_get(p->ljs, pt, &lp))
		return -1;
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, (uint32_t)lp->firstline);
	luw_file_put_u32(&z->b, (uint32_t)lp->numline);
	luw_file_put_u32(&z->b, 0);
	luw_file_put_u64(&z->b, pt);
	luw_file_put_str(&z->b, lp->chunk);
	if (emit(z, LUWF_SEC_PROTO))
		return -1;
	name_def(z, p, lp);
	return 0;
}

static void name_line(struct luw_symbolize *z, struct proc *p, uint64_t pt,
		      uint32_t pc, int at)
{
	uint32_t key = (pc & ~LUWF_PC_AT) | (at ? LUWF_PC_AT : 0);
	int32_t line;

	if (!first(z, p, K_PCLINE, key, pt))
		return;
	line = luw_proto_line(p->ljs, pt, bc_addr(p, pt, pc & ~LUWF_PC_AT), !at);
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, key);
	luw_file_put_u64(&z->b, pt);
	luw_file_put_u32(&z->b, (uint32_t)line);
	luw_file_put_u32(&z->b, 0);
	emit(z, LUWF_SEC_PCLINE);
}

/* The object objects reads as the value of the TValue at a, 0 if none. */
static uint64_t tv_gc_at(const struct luw_obj *o, uint64_t a)
{
	uint8_t tv[8];
	struct luw_obj_tv v;

	if (!a || luw_obj_read(o, a, tv, sizeof(tv)))
		return 0;
	luw_obj_tv(o, tv, &v);
	return v.gc;
}

/* Closure fn's upvalue uv: the object it holds now, 0 if none. */
static uint64_t upvalue_of(const struct luw_obj *o, uint64_t fn, uint32_t uv)
{
	uint64_t u = 0, v = 0;

	if (uv > 255 || luw_obj_ref(o, fn + o->off.fn_uvptr + (uint64_t)uv * o->ref, &u) ||
	    !luw_obj_is(o, u, LUW_OBJ_UPVAL) || luw_obj_ref(o, u + o->off.uv_v, &v))
		return 0;
	return tv_gc_at(o, v);
}

/* Field key of table t now: its object, 0 if none. */
static uint64_t field_of(const struct luw_obj *o, uint64_t t, const char *key)
{
	struct luw_obj_tv v;

	return luw_obj_tab_getstr(o, t, key, &v) == 1 ? v.gc : 0;
}

/*
 * Whether the variable the call site read (src, name) holds closure
 * callee now, read from the caller's closure: its upvalue, or a field of
 * its environment or of a table one of those holds.  A frame a tail call
 * replaced runs another closure than that variable's; a local's value is
 * gone, and is not proven.  A metamethod event names the event, not a
 * variable: kept.
 */
static int callee_proven(struct proc *p, const struct luw_callee_src *src,
			 const char *name, uint64_t caller_fn, uint64_t callee)
{
	const struct luw_obj *o = &p->obj;
	uint64_t env = 0, t = 0;

	if (src->kind == LUW_CS_MM)
		return 1;
	if (!caller_fn || !callee || p->tables_state <= 0 || !o->off.heap_src)
		return 0;
	if (src->kind == LUW_CS_GLOBAL || (src->kind == LUW_CS_FIELD &&
					   src->table_kind == LUW_CS_GLOBAL))
		if (luw_obj_ref(o, caller_fn + o->off.fn_env, &env) || !env)
			return 0;
	switch (src->kind) {
	case LUW_CS_GLOBAL:
		return field_of(o, env, name) == callee;
	case LUW_CS_UPVAL:
		return upvalue_of(o, caller_fn, src->uv) == callee;
	case LUW_CS_FIELD:
		if (src->table_kind == LUW_CS_GLOBAL)
			t = field_of(o, env, src->table);
		else if (src->table_kind == LUW_CS_UPVAL)
			t = upvalue_of(o, caller_fn, src->uv);
		return t && field_of(o, t, name) == callee;
	default:
		return 0;
	}
}

/*
 * The name the call at (caller, caller_pc) calls its callee by, when the
 * variable it read holds the frame's closure (callee, of proto callee_pt)
 * now; the caller's closure is caller_fn.  Once per call site proven;
 * tried once per closure called from it (a tail call's callee fails, the
 * function called may pass later).  CALLTRY's key mixes the three; a
 * collision only skips a try.
 */
static void name_callsite(struct luw_symbolize *z, struct proc *p, uint64_t caller,
			  uint32_t caller_pc, uint64_t caller_fn,
			  uint64_t callee_pt, uint64_t callee)
{
	struct luw_callee_src src;
	char name[256], why[256];

	if (luw_kvmap_get(&p->seen, (uint64_t)K_CALLSITE << 32 | caller_pc, caller) ||
	    !first(z, p, K_CALLTRY, caller_pc, caller * 0x9e3779b97f4a7c15ULL ^ callee))
		return;
	if (luw_funcname_callee_name(p->pid, &p->t->layout, caller, caller_pc, name,
				     sizeof(name), &src) != 1)
		return;
	if (!p->tables_state && src.kind != LUW_CS_MM)
		p->tables_state = luw_layout_obj(p->t, &p->obj, why,
						 sizeof(why)) ? -1 : 1;
	if (!callee_proven(p, &src, name, caller_fn, callee) ||
	    !first(z, p, K_CALLSITE, caller_pc, caller))
		return;
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, caller_pc);
	luw_file_put_u64(&z->b, caller);
	luw_file_put_str(&z->b, name);
	luw_file_put_u64(&z->b, callee_pt);
	emit(z, LUWF_SEC_CALLSITE);
}

/*
 * The code a C function's frame ran: GCfuncC's f, read now, after the
 * sample, when the object may be gone (a finalizer's closure) and its
 * memory another object's.  Only a C function object whose f lies in
 * executable mapped code names the frame; otherwise 0 (unknown).
 */
static uint64_t cfunc_code(struct proc *p, uint64_t fn)
{
	uint64_t f = luw_obj_cfunc(&p->obj, fn);
	const struct luw_map *m;

	if (!f)
		return 0;
	m = map_at(p, f);
	return m && (m->prot & LUW_MAP_X) ? f : 0;
}

static void name_cfunc(struct luw_symbolize *z, struct proc *p, uint64_t fn)
{
	uint64_t f;

	if (!first(z, p, K_CFUNC, 0, fn))
		return;
	f = cfunc_code(p, fn);
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, 0);
	luw_file_put_u64(&z->b, fn);
	luw_file_put_u64(&z->b, f);
	if (emit(z, LUWF_SEC_CFUNC) == 0 && f)
		name_host(z, p, f, 0);
}

/* Whether trace number n of universe g starts in proto pt. */
static int trace_in(const struct proc *p, uint64_t g, uint32_t n, uint64_t pt)
{
	uint64_t t = luw_obj_trace(&p->obj, g, n), spt = 0;

	return t && !luw_obj_ref(&p->obj, t + p->t->layout.tr_startpt, &spt) &&
	       spt == pt;
}

/*
 * The universe (global_State) whose trace n starts in proto pt: the one
 * state of the process that has such a trace now, else 0 (unknown).
 * States created after attach (a thread's new lua_State) are looked for
 * again a few times.
 */
static uint64_t trace_universe(struct proc *p, uint32_t n, uint64_t pt)
{
	for (int pass = 0; pass < 2; pass++) {
		uint64_t g = 0;
		int hits = 0;
		char err[256];

		for (int i = 0; i < p->t->nstates; i++)
			if (trace_in(p, p->t->states[i], n, pt)) {
				g = p->t->states[i];
				hits++;
			}
		if (hits == 1)
			return g;
		if (hits > 1 || pass || p->rescans >= 4)
			return 0;
		p->rescans++;
		if (luw_states_find(p->t, err, sizeof(err)))
			return 0;
	}
	return 0;
}

/*
 * A trace frame's addr is the GCproto it starts in (pc: the start
 * position; the module read both from the trace of the universe it
 * walked), or in older records its GCtrace.  A trace is named per
 * (number, start proto): trace numbers are per universe, and a proto
 * belongs to one universe, so a number never takes another universe's
 * start.  The universe itself is written when it can be told.
 */
static void name_trace(struct luw_symbolize *z, struct proc *p,
		       const struct luw_lua_frame *f)
{
	const struct luw_lj_layout *ly = &p->t->layout;
	uint64_t pt = 0, startpc = 0, g = 0;
	int32_t line = -1;

	if (!first(z, p, K_TRACE, f->trace, f->addr))
		return;
	if (f->addr) {
		if (luw_obj_is(&p->obj, f->addr, ly->gct_trace) &&
		    !luw_obj_ref(&p->obj, f->addr + ly->tr_startpt, &pt) &&
		    !luw_obj_ref(&p->obj, f->addr + ly->tr_startpc, &startpc)) {
			line = luw_proto_line(p->ljs, pt, startpc, 0);
		} else if (luw_obj_is(&p->obj, f->addr, ly->gct_proto)) {
			pt = f->addr;
			line = luw_proto_line(p->ljs, pt, bc_addr(p, pt, f->pc), 0);
			g = trace_universe(p, f->trace, pt);
		}
	}
	if (pt)
		name_proto(z, p, pt);
	luw_file_put_u32(&z->b, (uint32_t)p->pid);
	luw_file_put_u32(&z->b, f->trace);
	luw_file_put_u64(&z->b, f->addr);
	luw_file_put_u32(&z->b, (uint32_t)line);
	luw_file_put_u32(&z->b, 0);
	luw_file_put_u64(&z->b, pt);
	luw_file_put_u64(&z->b, g);
	emit(z, LUWF_SEC_TRACE);
}

/* Index of the segment end (exclusive) holding Lua frame j. */
static unsigned int seg_end(const struct luw_dev_rec *r, unsigned int j)
{
	for (unsigned int i = 0; i < r->sample->nsplice; i++) {
		const struct luw_splice *s = &r->splice[i];

		if (j >= s->lua_first && j < (unsigned int)s->lua_first + s->lua_count)
			return s->lua_first + s->lua_count;
	}
	return r->sample->nlua;
}

static void name_sample(struct luw_symbolize *z, struct proc *p,
			const struct luw_dev_rec *r)
{
	const struct luw_sample *s = r->sample;

	for (unsigned int i = 0; i < s->nhost; i++)
		name_host(z, p, r->host[i], i > 0);
	if (!p->lj || p->gone)
		return;
	for (unsigned int j = 0; j < s->nlua; j++) {
		const struct luw_lua_frame *f = &r->lua[j];

		switch (f->kind) {
		case LUW_LF_LUA:
			if (name_proto(z, p, f->addr))
				break;
			if (!f->line)
				name_line(z, p, f->addr, f->pc,
					  f->flags & LUW_LFF_PC_AT);
			if (j + 1 < seg_end(r, j) &&
			    r->lua[j + 1].kind == LUW_LF_LUA &&
			    !(r->lua[j + 1].flags & LUW_LFF_PC_AT))
				name_callsite(z, p, r->lua[j + 1].addr,
					      r->lua[j + 1].pc,
					      r->lua[j + 1].func, f->addr,
					      f->func);
			break;
		case LUW_LF_C:
			name_cfunc(z, p, f->addr);
			break;
		case LUW_LF_TRACE:
			name_trace(z, p, f);
			break;
		default:
			break;
		}
	}
}

/*
 * The protos of the last batch of samples still without a definition
 * (their parent was never sampled: a finished main chunk) are named by
 * the global or module field that holds them, if exactly one does
 * (target/global.h).  After the whole batch, so that a parent sampled with
 * its child goes first; once per proto.
 */
static void name_held(struct luw_symbolize *z, struct proc *p)
{
	uint64_t *pts;
	char **names, why[256];
	size_t n = 0;

	if (!p->lj || p->tables_state < 0)
		return;
	for (size_t i = 0; i < p->nknown; i++)
		n += !p->known[i].done && !p->known[i].gsearched;
	if (!n)
		return;
	if (!p->tables_state)
		p->tables_state = luw_layout_obj(p->t, &p->obj, why,
						 sizeof(why)) ? -1 : 1;
	pts = malloc(n * sizeof(*pts));
	names = malloc(n * sizeof(*names));
	if (p->tables_state < 0 || !pts || !names) {
		free(pts);
		free(names);
		return;
	}
	n = 0;
	for (size_t i = 0; i < p->nknown; i++) {
		struct known *k = &p->known[i];

		if (!k->done && !k->gsearched) {
			k->gsearched = 1;
			pts[n++] = k->pt;
		}
	}
	if (luw_global_names(&p->obj, p->t->states, p->t->nstates, pts, n,
			     names) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (!names[i])
				continue;
			for (size_t j = 0; j < p->nknown; j++)
				if (p->known[j].pt == pts[i])
					p->known[j].done = 1;
			luw_file_put_u32(&z->b, (uint32_t)p->pid);
			luw_file_put_u32(&z->b, 0);
			luw_file_put_u64(&z->b, pts[i]);
			luw_file_put_str(&z->b, names[i]);
			emit(z, LUWF_SEC_FNAME);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(pts);
}

int luw_symbolize_records(struct luw_symbolize *z, const void *buf, size_t len)
{
	size_t off = 0;
	struct luw_dev_rec r;
	int got;
	char err[512];

	while ((got = luw_dev_next(buf, len, &off, &r)) > 0) {
		struct proc *p;
		int status;

		if (!r.sample)
			continue;
		p = find(z, (pid_t)r.sample->pid);
		if (!p)
			p = add(z, (pid_t)r.sample->pid, NULL, &status, err,
				sizeof(err));
		if (p)
			name_sample(z, p, &r);
	}
	for (struct proc *p = z->procs; p; p = p->next)
		name_held(z, p);
	return got < 0 || z->failed || z->w->err ? -1 : 0;
}

void luw_symbolize_reap(struct luw_symbolize *z)
{
	for (struct proc *p = z->procs; p; p = p->next) {
		if (p->gone || kill(p->pid, 0) == 0 || errno != ESRCH)
			continue;
		p->gone = 1;
		write_process(z, p);
	}
}

int luw_symbolize_raw(pid_t pid, const void *raw, size_t len, uint8_t **out,
		 size_t *outlen, char *err, size_t errlen)
{
	struct luw_file_writer w;
	struct luw_symbolize *z = NULL;
	char *mem = NULL;
	size_t memlen = 0;
	FILE *f = open_memstream(&mem, &memlen);
	int status = -1, rc;

	*out = NULL;
	*outlen = 0;
	if (!f || luw_file_writer_init(&w, f) || !(z = luw_symbolize_new(&w, 0))) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	rc = luw_symbolize_add(z, pid, err, errlen);
	if (rc < 0)
		goto done;
	if (luw_symbolize_records(z, raw, len)) {
		snprintf(err, errlen, w.err ? "out of memory" :
			 "malformed record in the capture (not a whole-record "
			 "copy of /dev/luaunwind?)");
		goto done;
	}
	if (luw_file_write_section(&w, LUWF_SEC_SAMPLES, raw, len) ||
	    luw_file_write_end(&w)) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	status = rc;
done:
	luw_symbolize_free(z);
	if (f && fclose(f) == 0 && status >= 0) {
		*out = (uint8_t *)mem;
		*outlen = memlen;
	} else {
		free(mem);
		if (status >= 0) {
			snprintf(err, errlen, "out of memory");
			status = -1;
		}
	}
	return status;
}
