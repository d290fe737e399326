#include "output/stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/*
 * Names live in chunks that never move, so the pointers handed out by
 * luw_stacks_name() stay valid while more names are interned.  Stacks are
 * runs of frame ids in one growing array, addressed by offset so that the
 * array may be reallocated.  Both hash tables use open addressing with
 * linear probing and hold indices, never pointers.
 */
#define NAME_CHUNK (64u * 1024u)
#define EMPTY UINT32_MAX

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct name {
	const char *str;
	uint32_t len;
	uint32_t hash;
};

struct stack {
	size_t off;		/* first frame in frames[] */
	uint32_t n;
	uint32_t hash;
	uint64_t count;
	uint64_t aux;		/* luw_stacks_add2's second value */
};

struct luw_stacks {
	struct chunk *chunks;
	struct name *names;
	size_t nnames, names_cap;
	uint32_t *name_tab;	/* ids, EMPTY where free */
	size_t name_tab_size;	/* power of two */

	int32_t *frames;
	size_t nframes, frames_cap;
	struct stack *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *stack_tab;
	size_t stack_tab_size;
	uint64_t total;
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint32_t hash_bytes(const char *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
	size_t i = 0;

	/* Eight bytes a step: names are hashed once per intern. */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = mix64(h ^ w) + i;
	}
	if (i < len) {
		uint64_t w = 0;

		memcpy(&w, p + i, len - i);
		h = mix64(h ^ w ^ 0xa5);
	}
	return (uint32_t)mix64(h);
}

static uint32_t hash_frames(const int32_t *f, size_t n)
{
	uint64_t h = 0x243f6a8885a308d3ULL ^ n;
	size_t i = 0;

	for (; i + 2 <= n; i += 2) {
		uint64_t w = (uint64_t)(uint32_t)f[i] |
			     (uint64_t)(uint32_t)f[i + 1] << 32;

		h = (h ^ w) * 0x9ddfea08eb382d69ULL;
		h ^= h >> 29;
	}
	if (i < n)
		h = (h ^ (uint32_t)f[i]) * 0x9ddfea08eb382d69ULL;
	return (uint32_t)mix64(h);
}

static uint32_t *new_table(size_t size)
{
	uint32_t *t = malloc(size * sizeof(*t));

	if (t)
		memset(t, 0xff, size * sizeof(*t));
	return t;
}

struct luw_stacks *luw_stacks_new(void)
{
	struct luw_stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->name_tab_size = 1024;
	s->stack_tab_size = 1024;
	s->name_tab = new_table(s->name_tab_size);
	s->stack_tab = new_table(s->stack_tab_size);
	if (!s->name_tab || !s->stack_tab) {
		luw_stacks_free(s);
		return NULL;
	}
	return s;
}

void luw_stacks_free(struct luw_stacks *s)
{
	struct chunk *c, *next;

	if (!s)
		return;
	for (c = s->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(s->names);
	free(s->name_tab);
	free(s->frames);
	free(s->stacks);
	free(s->stack_tab);
	free(s);
}

static char *arena_copy(struct luw_stacks *s, const char *p, size_t len)
{
	struct chunk *c = s->chunks;
	char *dst;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > NAME_CHUNK ? len + 1 : NAME_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		/* A big name gets its own chunk behind the current one, so
		 * the current chunk's free space is not abandoned. */
		if (s->chunks && cap > NAME_CHUNK) {
			c->next = s->chunks->next;
			s->chunks->next = c;
		} else {
			c->next = s->chunks;
			s->chunks = c;
		}
	}
	dst = c->data + c->used;
	memcpy(dst, p, len);
	dst[len] = '\0';
	c->used += len + 1;
	return dst;
}

static int rehash(uint32_t **tab, size_t *size, const void *items,
		  size_t nitems, size_t stride, size_t hash_off)
{
	size_t nsize = *size * 2, mask = nsize - 1, i;
	uint32_t *t = new_table(nsize);

	if (!t)
		return -1;
	for (i = 0; i < nitems; i++) {
		uint32_t h;
		size_t j;

		memcpy(&h, (const char *)items + i * stride + hash_off,
		       sizeof(h));
		for (j = h & mask; t[j] != EMPTY; j = (j + 1) & mask)
			;
		t[j] = (uint32_t)i;
	}
	free(*tab);
	*tab = t;
	*size = nsize;
	return 0;
}

int32_t luw_stacks_intern(struct luw_stacks *s, const char *name, size_t len)
{
	uint32_t h = hash_bytes(name, len);
	size_t mask = s->name_tab_size - 1, j;
	struct name *nm;

	for (j = h & mask; s->name_tab[j] != EMPTY; j = (j + 1) & mask) {
		nm = &s->names[s->name_tab[j]];
		if (nm->hash == h && nm->len == len &&
		    memcmp(nm->str, name, len) == 0)
			return (int32_t)s->name_tab[j];
	}
	if (len > UINT32_MAX || s->nnames >= INT32_MAX) {
		errno = ENOMEM;
		return -1;
	}
	if (luw_grow((void **)&s->names, &s->names_cap, s->nnames + 1,
		 sizeof(*s->names)))
		return -1;
	nm = &s->names[s->nnames];
	nm->str = arena_copy(s, name, len);
	if (!nm->str)
		return -1;
	nm->len = (uint32_t)len;
	nm->hash = h;
	s->name_tab[j] = (uint32_t)s->nnames++;
	/* Keep the load under one half so probes stay short. */
	if (s->nnames * 2 > s->name_tab_size &&
	    rehash(&s->name_tab, &s->name_tab_size, s->names, s->nnames,
		   sizeof(*s->names), offsetof(struct name, hash)))
		return -1;
	return (int32_t)(s->nnames - 1);
}

const char *luw_stacks_name(const struct luw_stacks *s, int32_t id)
{
	if (id < 0 || (size_t)id >= s->nnames)
		return NULL;
	return s->names[id].str;
}

size_t luw_stacks_name_len(const struct luw_stacks *s, int32_t id)
{
	if (id < 0 || (size_t)id >= s->nnames)
		return 0;
	return s->names[id].len;
}

size_t luw_stacks_nnames(const struct luw_stacks *s)
{
	return s->nnames;
}

int luw_stacks_add(struct luw_stacks *s, const int32_t *frames, size_t n,
		   uint64_t count)
{
	return luw_stacks_add2(s, frames, n, count, 0);
}

int luw_stacks_add2(struct luw_stacks *s, const int32_t *frames, size_t n,
		    uint64_t count, uint64_t aux)
{
	uint32_t h;
	size_t mask = s->stack_tab_size - 1, i, j;
	struct stack *st;

	if (n == 0 || n > UINT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (frames[i] < 0 || (size_t)frames[i] >= s->nnames) {
			errno = EINVAL;
			return -1;
		}
	}
	if (count == 0 && aux == 0)
		return 0;
	if (s->total + count < s->total) {
		errno = EOVERFLOW;
		return -1;
	}
	h = hash_frames(frames, n);
	for (j = h & mask; s->stack_tab[j] != EMPTY; j = (j + 1) & mask) {
		st = &s->stacks[s->stack_tab[j]];
		if (st->hash == h && st->n == n &&
		    memcmp(s->frames + st->off, frames,
			   n * sizeof(*frames)) == 0) {
			st->count += count;
			st->aux += aux;
			s->total += count;
			return 0;
		}
	}
	if (s->nstacks >= EMPTY - 1) {
		errno = ENOMEM;
		return -1;
	}
	if (luw_grow((void **)&s->frames, &s->frames_cap, s->nframes + n,
		 sizeof(*s->frames)) ||
	    luw_grow((void **)&s->stacks, &s->stacks_cap, s->nstacks + 1,
		 sizeof(*s->stacks)))
		return -1;
	st = &s->stacks[s->nstacks];
	st->off = s->nframes;
	st->n = (uint32_t)n;
	st->hash = h;
	st->count = count;
	st->aux = aux;
	memcpy(s->frames + s->nframes, frames, n * sizeof(*frames));
	s->nframes += n;
	s->stack_tab[j] = (uint32_t)s->nstacks++;
	s->total += count;
	if (s->nstacks * 2 > s->stack_tab_size &&
	    rehash(&s->stack_tab, &s->stack_tab_size, s->stacks, s->nstacks,
		   sizeof(*s->stacks), offsetof(struct stack, hash)))
		return -1;
	return 0;
}

size_t luw_stacks_count(const struct luw_stacks *s)
{
	return s->nstacks;
}

uint64_t luw_stacks_total(const struct luw_stacks *s)
{
	return s->total;
}

/*
 * Order of the folded text without building it: the text of a stack is
 * its names joined by ';'.  Equal leading ids are equal text, so skip
 * them; from the first differing frame, walk both texts byte by byte,
 * with the end of a text below every byte (a stack sorts before the
 * stacks it is a prefix of, as `sort` puts "a 1" before "a;b 1").
 */
struct cursor {
	const struct luw_stacks *s;
	const int32_t *f;
	size_t n, fi;
	const unsigned char *p;
	size_t left;
};

static int cursor_next(struct cursor *c)
{
	if (c->left) {
		c->left--;
		return *c->p++;
	}
	if (c->fi + 1 >= c->n)
		return -1;
	c->fi++;
	c->p = (const unsigned char *)c->s->names[c->f[c->fi]].str;
	c->left = c->s->names[c->f[c->fi]].len;
	return ';';
}

static int cmp_stacks(const void *a, const void *b, void *ctx)
{
	const struct luw_stacks *s = ctx;
	const struct stack *x = &s->stacks[*(const uint32_t *)a];
	const struct stack *y = &s->stacks[*(const uint32_t *)b];
	const int32_t *fx = s->frames + x->off, *fy = s->frames + y->off;
	struct cursor cx, cy;
	size_t i = 0;

	while (i < x->n && i < y->n && fx[i] == fy[i])
		i++;
	if (i == x->n || i == y->n)
		return (x->n > y->n) - (x->n < y->n);
	cx = (struct cursor){ s, fx, x->n, i,
			      (const unsigned char *)s->names[fx[i]].str,
			      s->names[fx[i]].len };
	cy = (struct cursor){ s, fy, y->n, i,
			      (const unsigned char *)s->names[fy[i]].str,
			      s->names[fy[i]].len };
	for (;;) {
		int bx = cursor_next(&cx), by = cursor_next(&cy);

		if (bx != by)
			return bx < by ? -1 : 1;
		if (bx < 0)
			break;
	}
	/* Same text from different frames: only names holding ';' do
	 * that; order by the frame count to stay deterministic. */
	return (x->n > y->n) - (x->n < y->n);
}

int luw_stacks_each(const struct luw_stacks *s, luw_stacks_fn fn, void *ctx)
{
	return luw_stacks_each2(s, fn, NULL, ctx);
}

int luw_stacks_each2(const struct luw_stacks *s, luw_stacks_fn fn,
		     luw_stacks_fn2 fn2, void *ctx)
{
	uint32_t *order;
	size_t i;
	int ret = 0;

	if (s->nstacks == 0)
		return 0;
	order = malloc(s->nstacks * sizeof(*order));
	if (!order)
		return -1;
	for (i = 0; i < s->nstacks; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, s->nstacks, sizeof(*order), cmp_stacks, (void *)s);
	for (i = 0; i < s->nstacks && !ret; i++) {
		const struct stack *st = &s->stacks[order[i]];

		ret = fn2 ? fn2(ctx, s->frames + st->off, st->n, st->count,
				st->aux) :
			    fn(ctx, s->frames + st->off, st->n, st->count);
	}
	free(order);
	return ret;
}

struct folded_out {
	const struct luw_stacks *s;
	FILE *out;
};

static int write_one(void *ctx, const int32_t *frames, size_t n,
		     uint64_t count)
{
	struct folded_out *fo = ctx;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct name *nm = &fo->s->names[frames[i]];

		if (i)
			putc(';', fo->out);
		fwrite(nm->str, 1, nm->len, fo->out);
	}
	fprintf(fo->out, " %" PRIu64 "\n", count);
	return ferror(fo->out) ? -1 : 0;
}

int luw_stacks_write_folded(const struct luw_stacks *s, FILE *out)
{
	struct folded_out fo = { s, out };

	if (luw_stacks_each(s, write_one, &fo))
		return -1;
	return ferror(out) ? -1 : 0;
}

struct heavy {
	const int32_t *frames;	/* into s->frames: stable while visiting */
	size_t n;
	uint64_t count;
};

struct top_ctx {
	const struct luw_stacks *s;
	uint64_t *self, *incl;
	size_t *seen;		/* last stack (1-based) that counted a name */
	size_t visit;
	struct heavy *heavy;	/* the n heaviest stacks, heaviest first */
	size_t n, nheavy;
};

/* Visits come in folded order, so of two equal counts the earlier stays
 * ahead: ties fall back to folded text. */
static int top_visit(void *vc, const int32_t *frames, size_t n,
		     uint64_t count)
{
	struct top_ctx *c = vc;
	size_t i, k;

	c->visit++;
	c->self[frames[n - 1]] += count;
	for (i = 0; i < n; i++) {
		if (c->seen[frames[i]] != c->visit) {
			c->seen[frames[i]] = c->visit;
			c->incl[frames[i]] += count;
		}
	}
	for (k = c->nheavy; k > 0 && c->heavy[k - 1].count < count; k--)
		;
	if (k >= c->n)
		return 0;
	if (c->nheavy < c->n)
		c->nheavy++;
	memmove(c->heavy + k + 1, c->heavy + k,
		(c->nheavy - 1 - k) * sizeof(*c->heavy));
	c->heavy[k] = (struct heavy){ frames, n, count };
	return 0;
}

static int cmp_frames_top(const void *a, const void *b, void *ctx)
{
	const struct top_ctx *c = ctx;
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	const struct name *nx = &c->s->names[x], *ny = &c->s->names[y];
	size_t l = nx->len < ny->len ? nx->len : ny->len;
	int r;

	if (c->self[x] != c->self[y])
		return c->self[x] < c->self[y] ? 1 : -1;
	if (c->incl[x] != c->incl[y])
		return c->incl[x] < c->incl[y] ? 1 : -1;
	r = memcmp(nx->str, ny->str, l);
	return r ? r : (nx->len > ny->len) - (nx->len < ny->len);
}

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

int luw_stacks_write_top(const struct luw_stacks *s, FILE *out, size_t n,
			 const char *unit)
{
	struct top_ctx c = { 0 };
	int32_t *ids = NULL;
	size_t i, k, nids = 0;
	int ret = -1;

	c.s = s;
	c.n = n;
	c.self = calloc(s->nnames + 1, sizeof(*c.self));
	c.incl = calloc(s->nnames + 1, sizeof(*c.incl));
	c.seen = calloc(s->nnames + 1, sizeof(*c.seen));
	c.heavy = calloc(n + 1, sizeof(*c.heavy));
	ids = malloc((s->nnames + 1) * sizeof(*ids));
	if (!c.self || !c.incl || !c.seen || !c.heavy || !ids)
		goto out;
	if (luw_stacks_each(s, top_visit, &c))
		goto out;

	if (!unit)
		unit = "samples";
	fprintf(out, "Heaviest stacks (%zu of %zu, %" PRIu64 " %s):\n",
		c.nheavy, s->nstacks, s->total, unit);
	for (k = 0; k < c.nheavy; k++) {
		fprintf(out, "%10" PRIu64 " %6.2f%%  ", c.heavy[k].count,
			pct(c.heavy[k].count, s->total));
		for (i = 0; i < c.heavy[k].n; i++) {
			const struct name *nm = &s->names[c.heavy[k].frames[i]];

			if (i)
				putc(';', out);
			fwrite(nm->str, 1, nm->len, out);
		}
		putc('\n', out);
	}

	for (i = 0; i < s->nnames; i++)
		if (c.incl[i])
			ids[nids++] = (int32_t)i;
	qsort_r(ids, nids, sizeof(*ids), cmp_frames_top, &c);
	fprintf(out, "\nFrames by self %s (%zu of %zu):\n"
		"      self  self%%     total total%%  frame\n",
		unit, nids < n ? nids : n, nids);
	for (k = 0; k < nids && k < n; k++) {
		const struct name *nm = &s->names[ids[k]];

		fprintf(out, "%10" PRIu64 " %6.2f%% %9" PRIu64 " %6.2f%%  ",
			c.self[ids[k]], pct(c.self[ids[k]], s->total),
			c.incl[ids[k]], pct(c.incl[ids[k]], s->total));
		fwrite(nm->str, 1, nm->len, out);
		putc('\n', out);
	}
	ret = ferror(out) ? -1 : 0;
out:
	free(c.self);
	free(c.incl);
	free(c.seen);
	free(c.heavy);
	free(ids);
	return ret;
}

/* Parse the count: decimal digits only, no sign, no overflow. */
static int parse_count(const char *p, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned d = (unsigned char)p[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int luw_stacks_read_folded(struct luw_stacks *s, FILE *in, char *err,
			   size_t errsize)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int32_t *frames = NULL;
	size_t nf, frames_cap = 0;
	ssize_t got;
	int ret = 0;

	while ((got = getline(&line, &cap, in)) >= 0) {
		size_t len = (size_t)got, sep, start, i;
		uint64_t count;
		const char *why = NULL;

		lineno++;
		if (len && line[len - 1] == '\n')
			len--;
		if (len && line[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		if (memchr(line, '\0', len)) {
			why = "NUL byte in the line";
			goto bad;
		}
		for (sep = len; sep > 0; sep--)
			if (line[sep - 1] == ' ' || line[sep - 1] == '\t')
				break;
		if (sep == 0) {
			why = "no space before the count";
			goto bad;
		}
		if (parse_count(line + sep, len - sep, &count)) {
			why = "the text after the last space is not a count";
			goto bad;
		}
		len = sep - 1;
		nf = 0;
		for (start = 0, i = 0; i <= len; i++) {
			int32_t id;

			if (i < len && line[i] != ';')
				continue;
			id = luw_stacks_intern(s, line + start, i - start);
			if (id < 0 || luw_grow((void **)&frames, &frames_cap,
					   nf + 1, sizeof(*frames))) {
				why = "out of memory";
				goto bad;
			}
			frames[nf++] = id;
			start = i + 1;
		}
		if (luw_stacks_add(s, frames, nf, count)) {
			why = errno == EOVERFLOW ? "the total count overflows"
						 : "out of memory";
			goto bad;
		}
		continue;
bad:
		if (err && errsize)
			snprintf(err, errsize, "line %zu: %s", lineno, why);
		ret = -1;
		break;
	}
	if (!ret && ferror(in)) {
		if (err && errsize)
			snprintf(err, errsize, "line %zu: read error: %s",
				 lineno + 1, strerror(errno));
		ret = -1;
	}
	free(line);
	free(frames);
	return ret;
}
