#include "streams/symtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"
#include "util/kvmap.h"

#define NONE UINT32_MAX

struct lf_gen {
	size_t chunk;		/* offset in the pool */
	size_t chunk_len;
	uint64_t line;
	uint32_t prev;		/* older generation at the same address */
	uint32_t gen;		/* 1-based */
	uint32_t alias;		/* alias number, 0 for none */
};

struct tr_gen {
	struct luw_loc start;
	uint32_t prev;
	uint32_t gen;
};

struct cf_ent {
	uint64_t addr;
	size_t name;
	size_t name_len;
	uint64_t seq;
};

struct alias_ent {
	size_t chunk;
	size_t len;
};

struct luw_symtab {
	char *pool;
	size_t pool_len, pool_cap;
	struct lf_gen *lf;
	size_t nlf, caplf;
	struct tr_gen *tr;
	size_t ntr, captr;
	struct cf_ent *cf;
	size_t ncf, capcf;
	size_t cf_sorted;	/* cf[0..cf_sorted) sorted, one per address */
	struct alias_ent *alias;
	size_t nalias, capalias;
	struct luw_kvmap lfmap;	/* addr -> v: newest lf index, w: count */
	struct luw_kvmap trmap;	/* traceno -> v: newest tr index, w: count */
	struct luw_kvmap aliasmap; /* (hash, probe) -> v: alias index */
	uint64_t epoch;
};

/* --- Stream parts ------------------------------------------------------- */

int luw_symtab_read_prologue(struct luw_reader *r, const char *magic, uint8_t version,
		      struct luw_prologue *p)
{
	uint64_t off = luw_reader_offset(r);
	int i;

	p->offset = off;
	for (i = 0; i < 3; i++) {
		p->magic[i] = (char)luw_reader_u8(r, "prologue");
		if (luw_reader_failed(r))
			return 0;
		if (p->magic[i] != magic[i])
			return luw_reader_failf(r, off, "'%.3s' prologue", magic);
	}
	p->version = luw_reader_u8(r, "format version");
	for (i = 0; i < 3; i++)
		p->reserved[i] = luw_reader_u8(r, "reserved prologue bytes");
	if (luw_reader_failed(r))
		return 0;
	if (p->version != version)
		return luw_reader_failf(r, off + 3,
				    "'%.3s' format version %u (stream has %u)",
				    magic, version, p->version);
	return 1;
}

int luw_symtab_read_sym_body(struct luw_reader *r, uint8_t type, struct luw_sym *s)
{
	s->type = type;
	s->final = 0;
	s->traceno = 0;
	s->line = 0;
	s->name = NULL;
	s->name_len = 0;
	switch (type) {
	case LUW_SYM_LFUNC:
		s->addr = luw_reader_uleb(r, "Lua function address (ULEB128)");
		s->name = luw_reader_string(r, &s->name_len, "Lua chunk name");
		s->line = luw_reader_uleb(r, "Lua function line (ULEB128)");
		break;
	case LUW_SYM_CFUNC:
		s->addr = luw_reader_uleb(r, "C symbol address (ULEB128)");
		s->name = luw_reader_string(r, &s->name_len, "C symbol name");
		break;
	case LUW_SYM_TRACE:
		s->traceno = luw_reader_uleb(r, "trace number (ULEB128)");
		s->addr = luw_reader_uleb(r, "trace start address (ULEB128)");
		s->line = luw_reader_uleb(r, "trace start line (ULEB128)");
		break;
	default:
		return luw_reader_failf(r, s->offset, "symbol type 0..2 (found %u)",
				    type);
	}
	return !luw_reader_failed(r);
}

int luw_symtab_read_sym(struct luw_reader *r, struct luw_sym *s)
{
	s->offset = luw_reader_offset(r);
	s->header = luw_reader_u8(r, "symtab entry header");
	if (luw_reader_failed(r))
		return 0;
	if (s->header & 0x80) {
		s->final = 1;
		s->type = 0;
		s->addr = s->line = s->traceno = 0;
		s->name = NULL;
		s->name_len = 0;
		return 1;
	}
	return luw_symtab_read_sym_body(r, s->header & 3, s);
}

int luw_symtab_decode(struct luw_reader *r,
		      int (*prologue)(void *ctx, const struct luw_prologue *p),
		      int (*sym)(void *ctx, const struct luw_sym *s),
		      void *ctx)
{
	struct luw_prologue p;
	struct luw_sym s;
	int rc;

	if (!luw_symtab_read_prologue(r, "ljs", LUW_LJS_VERSION, &p))
		return -1;
	if (prologue && (rc = prologue(ctx, &p)))
		return rc;
	do {
		if (!luw_symtab_read_sym(r, &s))
			return -1;
		if (sym && (rc = sym(ctx, &s)))
			return rc;
	} while (!s.final);
	return 0;
}

/* --- The table ---------------------------------------------------------- */

struct luw_symtab *luw_symtab_new(void)
{
	struct luw_symtab *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	luw_kvmap_init(&st->lfmap);
	luw_kvmap_init(&st->trmap);
	luw_kvmap_init(&st->aliasmap);
	return st;
}

void luw_symtab_free(struct luw_symtab *st)
{
	if (!st)
		return;
	free(st->pool);
	free(st->lf);
	free(st->tr);
	free(st->cf);
	free(st->alias);
	luw_kvmap_free(&st->lfmap);
	luw_kvmap_free(&st->trmap);
	luw_kvmap_free(&st->aliasmap);
	free(st);
}

static int pool_add(struct luw_symtab *st, const char *s, size_t n,
		    size_t *off)
{
	if (n >= SIZE_MAX - st->pool_len ||
	    luw_grow((void **)&st->pool, &st->pool_cap, st->pool_len + n + 1, 1))
		return -1;
	memcpy(st->pool + st->pool_len, s, n);
	st->pool[st->pool_len + n] = '\0';
	*off = st->pool_len;
	st->pool_len += n + 1;
	return 0;
}

/* Alias number of a chunk name that holds a newline, creating it. */
static int alias_of(struct luw_symtab *st, size_t chunk, size_t len,
		    uint32_t *alias)
{
	uint64_t h = luw_fnv1a64(st->pool + chunk, len), probe;

	for (probe = 0;; probe++) {
		int isnew;
		struct luw_kv *e = luw_kvmap_put(&st->aliasmap, h, probe,
						 &isnew);
		struct alias_ent *a;

		if (!e)
			return -1;
		if (!isnew) {
			a = &st->alias[e->v];
			if (a->len == len &&
			    !memcmp(st->pool + a->chunk, st->pool + chunk, len)) {
				*alias = (uint32_t)e->v + 1;
				return 0;
			}
			continue;
		}
		if (luw_grow((void **)&st->alias, &st->capalias, st->nalias + 1,
			 sizeof(*st->alias))) {
			luw_kvmap_del(&st->aliasmap, h, probe, NULL);
			return -1;
		}
		e->v = st->nalias;
		st->alias[st->nalias].chunk = chunk;
		st->alias[st->nalias].len = len;
		*alias = (uint32_t)++st->nalias;
		return 0;
	}
}

static int add_lfunc(struct luw_symtab *st, const struct luw_sym *s)
{
	struct lf_gen *g;
	struct luw_kv *e;
	size_t off;
	int isnew;

	if (st->nlf >= NONE ||
	    luw_grow((void **)&st->lf, &st->caplf, st->nlf + 1, sizeof(*st->lf)) ||
	    pool_add(st, s->name, s->name_len, &off))
		return -1;
	g = &st->lf[st->nlf];
	g->chunk = off;
	g->chunk_len = s->name_len;
	g->line = s->line;
	g->alias = 0;
	if (memchr(s->name, '\n', s->name_len) &&
	    alias_of(st, off, s->name_len, &g->alias))
		return -1;
	e = luw_kvmap_put(&st->lfmap, s->addr, 0, &isnew);
	if (!e)
		return -1;
	g->prev = isnew ? NONE : (uint32_t)e->v;
	g->gen = ++e->w;
	e->v = st->nlf++;
	return 0;
}

static int add_trace(struct luw_symtab *st, const struct luw_sym *s)
{
	struct tr_gen *t;
	struct luw_kv *e;
	int isnew;

	if (st->ntr >= NONE ||
	    luw_grow((void **)&st->tr, &st->captr, st->ntr + 1, sizeof(*st->tr)))
		return -1;
	t = &st->tr[st->ntr];
	t->start.addr = s->addr;
	t->start.line = s->line;
	t->start.traceno = 0;
	luw_symtab_loc(st, &t->start);
	e = luw_kvmap_put(&st->trmap, s->traceno, 0, &isnew);
	if (!e)
		return -1;
	t->prev = isnew ? NONE : (uint32_t)e->v;
	t->gen = ++e->w;
	e->v = st->ntr++;
	return 0;
}

static int add_cfunc(struct luw_symtab *st, const struct luw_sym *s)
{
	struct cf_ent *c;

	if (luw_grow((void **)&st->cf, &st->capcf, st->ncf + 1, sizeof(*st->cf)))
		return -1;
	c = &st->cf[st->ncf];
	if (pool_add(st, s->name, s->name_len, &c->name))
		return -1;
	c->addr = s->addr;
	c->name_len = s->name_len;
	c->seq = st->epoch;
	st->ncf++;
	return 0;
}

int luw_symtab_add(struct luw_symtab *st, const struct luw_sym *s)
{
	int rc;

	switch (s->type) {
	case LUW_SYM_LFUNC:
		rc = add_lfunc(st, s);
		break;
	case LUW_SYM_CFUNC:
		rc = add_cfunc(st, s);
		break;
	case LUW_SYM_TRACE:
		rc = add_trace(st, s);
		break;
	default:
		return -1;
	}
	st->epoch++;
	return rc;
}

uint64_t luw_symtab_epoch(const struct luw_symtab *st)
{
	return st->epoch;
}

static int cf_cmp(const void *a, const void *b)
{
	const struct cf_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Merge pending C symbols in: sort, and keep the newest per address. */
static void cf_settle(struct luw_symtab *st)
{
	size_t i, j;

	if (st->cf_sorted == st->ncf)
		return;
	qsort(st->cf, st->ncf, sizeof(*st->cf), cf_cmp);
	for (i = j = 0; i < st->ncf; i++) {
		if (j && st->cf[j - 1].addr == st->cf[i].addr)
			j--;
		st->cf[j++] = st->cf[i];
	}
	st->ncf = st->cf_sorted = j;
}

int luw_symtab_cfunc(struct luw_symtab *st, uint64_t addr, uint64_t *start,
		     const char **name, size_t *len)
{
	size_t lo = 0, hi;

	cf_settle(st);
	hi = st->ncf;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->cf[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	*start = st->cf[lo - 1].addr;
	*name = st->pool + st->cf[lo - 1].name;
	*len = st->cf[lo - 1].name_len;
	return 1;
}

static const struct lf_gen *lf_find(const struct luw_symtab *st,
				    uint64_t addr, uint32_t gen)
{
	const struct luw_kv *e = luw_kvmap_get(&st->lfmap, addr, 0);
	uint32_t i;

	if (!e)
		return NULL;
	for (i = (uint32_t)e->v; i != NONE; i = st->lf[i].prev)
		if (!gen || st->lf[i].gen == gen)
			return &st->lf[i];
	return NULL;
}

int luw_symtab_lfunc(const struct luw_symtab *st, uint64_t addr, uint32_t gen,
		     const char **chunk, size_t *len, uint64_t *firstline,
		     uint32_t *alias)
{
	const struct lf_gen *g = lf_find(st, addr, gen);

	if (!g)
		return 0;
	*chunk = st->pool + g->chunk;
	*len = g->chunk_len;
	*firstline = g->line;
	*alias = g->alias;
	return 1;
}

int luw_symtab_trace(const struct luw_symtab *st, uint64_t traceno,
		     uint32_t gen, struct luw_loc *start)
{
	const struct luw_kv *e = luw_kvmap_get(&st->trmap, traceno, 0);
	uint32_t i;

	if (!e)
		return 0;
	for (i = (uint32_t)e->v; i != NONE; i = st->tr[i].prev) {
		if (!gen || st->tr[i].gen == gen) {
			*start = st->tr[i].start;
			return 1;
		}
	}
	return 0;
}

void luw_symtab_loc(struct luw_symtab *st, struct luw_loc *loc)
{
	const struct luw_kv *e;
	uint64_t start;
	const char *name;
	size_t len;

	if (loc->traceno) {
		e = luw_kvmap_get(&st->trmap, loc->traceno, 0);
		if (e) {
			loc->gen = e->w;
			return;
		}
	}
	e = luw_kvmap_get(&st->lfmap, loc->addr, 0);
	if (e)
		loc->gen = e->w;
	else
		loc->gen = luw_symtab_cfunc(st, loc->addr, &start, &name, &len)
				   ? 0 : 1;
}

static void put_lfunc_name(const struct luw_symtab *st, const struct lf_gen *g,
			   struct luw_strbuf *out)
{
	if (g->alias) {
		luw_strbuf_puts(out, "function_alias_");
		luw_strbuf_putu(out, g->alias);
	} else {
		luw_strbuf_putn(out, st->pool + g->chunk, g->chunk_len);
	}
}

int luw_symtab_demangle(struct luw_symtab *st, const struct luw_loc *loc,
			struct luw_strbuf *out)
{
	const struct lf_gen *g;
	uint64_t start;
	const char *name;
	size_t len;

	if (loc->traceno) {
		struct luw_loc from;

		luw_strbuf_puts(out, "TRACE [");
		luw_strbuf_putu(out, loc->traceno);
		luw_strbuf_putc(out, ']');
		if (loc->gen && luw_symtab_trace(st, loc->traceno, loc->gen,
						 &from)) {
			luw_strbuf_puts(out, " started at ");
			return luw_symtab_demangle(st, &from, out);
		}
		return luw_strbuf_failed(out) ? -1 : 0;
	}
	if (!loc->addr) {
		luw_strbuf_puts(out, "INTERNAL");
		return luw_strbuf_failed(out) ? -1 : 0;
	}
	g = loc->gen ? lf_find(st, loc->addr, loc->gen) : NULL;
	if (g) {
		put_lfunc_name(st, g, out);
		luw_strbuf_putc(out, ':');
		luw_strbuf_putd(out, (int64_t)loc->line);
	} else if (luw_symtab_cfunc(st, loc->addr, &start, &name, &len)) {
		luw_strbuf_putn(out, name, len);
		luw_strbuf_putc(out, ':');
		luw_strbuf_putx(out, start);
	} else {
		luw_strbuf_puts(out, "CFUNC ");
		luw_strbuf_putx(out, loc->addr);
	}
	return luw_strbuf_failed(out) ? -1 : 0;
}

size_t luw_symtab_nalias(const struct luw_symtab *st)
{
	return st->nalias;
}

const char *luw_symtab_alias_chunk(const struct luw_symtab *st, size_t i,
				   size_t *len)
{
	if (i >= st->nalias)
		return NULL;
	*len = st->alias[i].len;
	return st->pool + st->alias[i].chunk;
}
