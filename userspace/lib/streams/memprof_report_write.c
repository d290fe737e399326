/*
 * memprof_report_write: the memprof report's text from what
 * memprof_report.c aggregated: the ALLOCATIONS, REALLOCATIONS and
 * DEALLOCATIONS tables, the HEAP SUMMARY and the overrides.  See
 * memprof_report.h.
 */
#include "streams/memprof_report.h"
#include "streams/memprof_report_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"

/*
 * The primaries of t grouped by record, each group in creation order:
 * those of record r are list[start[r]] .. list[start[r + 1] - 1].  0, or
 * -1 on ENOMEM.
 */
static int prim_lists(const struct primtab *t, size_t nrec, uint32_t **start,
		      uint32_t **list)
{
	size_t i;

	*start = calloc(nrec + 1, sizeof(**start));
	*list = malloc((t->n ? t->n : 1) * sizeof(**list));
	if (!*start || !*list) {
		free(*start);
		free(*list);
		return -1;
	}
	for (i = 0; i < t->n; i++)
		(*start)[t->p[i].rec + 1]++;
	for (i = 0; i < nrec; i++)
		(*start)[i + 1] += (*start)[i];
	for (i = 0; i < t->n; i++)
		(*list)[(*start)[t->p[i].rec]++] = (uint32_t)i;
	/* Each start was moved to the next group's: shift them back. */
	for (i = nrec; i > 0; i--)
		(*start)[i] = (*start)[i - 1];
	(*start)[0] = 0;
	return 0;
}

/*
 * Report text goes out in pieces of about SPILL bytes: a service's report
 * is megabytes, which need not sit in memory.
 */
#define SPILL (1u << 16)

struct sink {
	struct luw_strbuf text;
	FILE *out;
	int err;
};

static void spill(struct sink *k, int all)
{
	struct luw_strbuf *t = &k->text;

	if (luw_strbuf_failed(t))
		k->err = 1;
	if (k->err || (!all && t->len < SPILL) || !t->len)
		return;
	if (fwrite(t->p, 1, t->len, k->out) != t->len)
		k->err = 1;
	luw_strbuf_reset(t);
}

struct order {
	uint32_t idx;
	uint64_t key;
	int64_t skey;
};

/*
 * Sort a[0..n): the bigger key first (skey when sgn, else key), then the
 * smaller idx (unique, so the order is total), as a stable radix sort:
 * bytes of idx (unless a is in idx order already), then of the key
 * complemented (the bigger first), least significant first; a byte every
 * entry shares takes no pass.  The counts and sums of a service's report are small
 * numbers, so two or three passes of n moves replace n log n comparisons
 * (the merge sort before was 4% of the report's instructions).  0, or -1
 * on ENOMEM.
 */
static int ord_sort(struct order *a, size_t n, int sgn)
{
	enum { IDXB = 4, KEYB = 8, NB = IDXB + KEYB };
	uint32_t (*cnt)[256];
	struct order *tmp, *src = a, *dst;
	size_t i;
	int d, sorted = 1;

	if (n < 2)
		return 0;
	cnt = calloc(NB, sizeof(*cnt));
	tmp = malloc(n * sizeof(*tmp));
	if (!cnt || !tmp) {
		free(cnt);
		free(tmp);
		return -1;
	}
	for (i = 0; i < n; i++) {
		uint64_t k = ~(sgn ? (uint64_t)a[i].skey ^ 1ULL << 63 : a[i].key);

		if (i && a[i].idx < a[i - 1].idx)
			sorted = 0;
		for (d = 0; d < IDXB; d++)
			cnt[d][a[i].idx >> (8 * d) & 0xff]++;
		for (d = 0; d < KEYB; d++)
			cnt[IDXB + d][k >> (8 * d) & 0xff]++;
	}
	dst = tmp;
	for (d = sorted ? IDXB : 0; d < NB; d++) {
		uint32_t *c = cnt[d], sum = 0, t;
		int j, sh = 8 * (d < IDXB ? d : d - IDXB);

		for (j = 0; j < 256 && c[j] != n; j++)
			;
		if (j < 256)
			continue;	/* one value: nothing moves */
		for (j = 0; j < 256; j++) {
			t = c[j];
			c[j] = sum;
			sum += t;
		}
		for (i = 0; i < n; i++) {
			uint64_t k = d < IDXB ? src[i].idx
				     : ~(sgn ? (uint64_t)src[i].skey ^ 1ULL << 63
					    : src[i].key);

			dst[c[k >> sh & 0xff]++] = src[i];
		}
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	free(cnt);
	return 0;
}

/*
 * A report line after its name, composed in place and appended at once:
 * the general-purpose appends (a bounds check and a copy per piece, a
 * division per digit) were a tenth of the report's instructions.
 */
struct line {
	char b[128];	/* the longest: three 20-digit numbers and text */
	size_t n;
};

#define LN_LIT(l, s) (memcpy((l)->b + (l)->n, s, sizeof(s) - 1), \
		      (l)->n += sizeof(s) - 1)

static inline void ln_u(struct line *l, uint64_t v)
{
	static const char d2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
	char t[20], *p = t + sizeof(t);

	while (v >= 100) {
		p -= 2;
		memcpy(p, d2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, d2 + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	memcpy(l->b + l->n, p, (size_t)(t + sizeof(t) - p));
	l->n += (size_t)(t + sizeof(t) - p);
}

static inline void ln_d(struct line *l, int64_t v)
{
	if (v < 0) {
		l->b[l->n++] = '-';
		ln_u(l, (uint64_t)0 - (uint64_t)v);
	} else {
		ln_u(l, (uint64_t)v);
	}
}

static const struct name *loc_name(const struct luw_memprof_report *rep, uint32_t li)
{
	return AT(rep->names, struct name,
		  AT(rep->locs, struct loc, li)->name);
}

static void put_name(struct luw_strbuf *out, const struct luw_memprof_report *rep,
		     const struct name *nm)
{
	luw_strbuf_putn(out, rep->pool.p + nm->off, nm->len);
}

static int name_cmp(const void *a, const void *b, void *ctx)
{
	const struct luw_memprof_report *rep = ctx;
	const struct name *x = *(const struct name *const *)a;
	const struct name *y = *(const struct name *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(rep->pool.p + x->off, rep->pool.p + y->off, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Sort a[0..n) ascending: insertion for short runs, else merges. */
static int u32_sort(uint32_t *a, size_t n)
{
	uint32_t *tmp, *src = a, *dst;
	size_t i, j, w;

	for (i = 0; i < n; i += 16) {
		size_t e = n - i < 16 ? n : i + 16;

		for (j = i + 1; j < e; j++) {
			uint32_t t = a[j];
			size_t k = j;

			for (; k > i && t < a[k - 1]; k--)
				a[k] = a[k - 1];
			a[k] = t;
		}
	}
	if (n <= 16)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -1;
	dst = tmp;
	for (w = 16; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t m = n - i < w ? n : i + w;
			size_t e = n - i < 2 * w ? n : i + 2 * w;
			size_t l = i, r = m, o = i;

			while (l < m && r < e)
				dst[o++] = src[r] < src[l] ? src[r++] : src[l++];
			while (l < m)
				dst[o++] = src[l++];
			while (r < e)
				dst[o++] = src[r++];
		}
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	return 0;
}

/*
 * Each name's place in bytewise order, and the names by place in *byrank:
 * the names once, rather than each record's Overrides list by strings.
 */
static int rank_names(struct luw_memprof_report *rep, uint32_t **byrank)
{
	const struct name **pl;
	size_t i, n = rep->names.n;

	pl = malloc((n ? n : 1) * sizeof(*pl));
	*byrank = malloc((n ? n : 1) * sizeof(**byrank));
	if (!pl || !*byrank) {
		free(pl);
		free(*byrank);
		return -1;
	}
	for (i = 0; i < n; i++)
		pl[i] = AT(rep->names, struct name, i);
	qsort_r(pl, n, sizeof(*pl), name_cmp, rep);
	for (i = 0; i < n; i++) {
		uint32_t id = (uint32_t)(pl[i] - (const struct name *)rep->names.p);

		AT(rep->names, struct name, id)->rank = (uint32_t)i;
		(*byrank)[i] = id;
	}
	free(pl);
	return 0;
}

static int render(struct luw_memprof_report *rep, int kind, const uint32_t *byrank,
		  struct sink *k)
{
	struct luw_strbuf *out = &k->text;
	struct vec *v = &rep->recs[kind];
	struct order *ord = calloc(v->n ? v->n : 1, sizeof(*ord));
	const struct primtab *t = kind == R_ALLOC ? NULL
				  : &rep->prim[kind - R_REALLOC];
	uint32_t *start = NULL, *list = NULL, *pl = NULL;
	size_t i;
	int rc = -1;

	if (!ord)
		return -1;
	for (i = 0; i < v->n; i++) {
		ord[i].idx = (uint32_t)i;
		ord[i].key = rec_cnt(rep, kind, (uint32_t)i)->num;
	}
	if (ord_sort(ord, v->n, 0))
		goto out;
	if (t && t->n) {
		if (prim_lists(t, v->n, &start, &list))
			goto out;
		pl = malloc(t->n * sizeof(*pl));
		if (!pl)
			goto out;
	}
	for (i = 0; i < v->n; i++) {
		uint32_t li = AT(*v, struct rec, ord[i].idx)->loc;
		const struct cnt *r = &AT(rep->locs, struct loc, li)->cnt[kind];
		size_t np = 0, j;

		struct line ln = { .n = 0 };

		spill(k, 0);
		put_name(out, rep, loc_name(rep, li));
		LN_LIT(&ln, ": ");
		ln_u(&ln, r->num);
		LN_LIT(&ln, " events\t+");
		ln_u(&ln, r->alloc);
		LN_LIT(&ln, "B\t-");
		ln_u(&ln, r->free);
		LN_LIT(&ln, "B\n");
		luw_strbuf_putn(out, ln.b, ln.n);
		if (!start)
			continue;
		for (j = start[ord[i].idx]; j < start[ord[i].idx + 1]; j++)
			pl[np++] = loc_name(rep, t->p[list[j]].loc)->rank;
		if (!np)
			continue;
		if (u32_sort(pl, np))
			goto out;
		luw_strbuf_puts(out, "\tOverrides:\n");
		for (j = 0; j < np; j++) {
			luw_strbuf_puts(out, "\t\t");
			put_name(out, rep,
				 AT(rep->names, struct name, byrank[pl[j]]));
			luw_strbuf_putc(out, '\n');
		}
		luw_strbuf_putc(out, '\n');
	}
	spill(k, 0);
	rc = k->err ? -1 : 0;
out:
	free(pl);
	free(start);
	free(list);
	free(ord);
	return rc;
}

static struct name *dheap(struct luw_memprof_report *rep, uint32_t li, uint32_t *seq)
{
	struct name *nm = AT(rep->names, struct name,
			     AT(rep->locs, struct loc, li)->name);

	if (nm->dheap_seq == NONE)
		nm->dheap_seq = (*seq)++;
	return nm;
}

/*
 * dbytes + v modulo 2^64: a corrupt stream can carry sizes near 2^64 (the
 * reference's doubles lose precision there), and signed overflow would be
 * undefined; real heaps stay far below.
 */
static int64_t wrap_add(int64_t dbytes, uint64_t v)
{
	return (int64_t)((uint64_t)dbytes + v);
}

/* The reference's form_heap_delta() and leak_info(). */
static int heap_summary(struct luw_memprof_report *rep, struct sink *sk)
{
	struct luw_strbuf *out = &sk->text;
	struct order *ord;
	uint32_t seq = 0;
	size_t i, n = 0;
	int k;

	for (i = 0; i < rep->names.n; i++) {
		struct name *nm = AT(rep->names, struct name, i);

		nm->dbytes = 0;
		nm->nalloc = nm->nfree = 0;
		nm->dheap_seq = NONE;
	}
	for (i = 0; i < rep->recs[R_ALLOC].n; i++) {
		uint32_t li = AT(rep->recs[R_ALLOC], struct rec, i)->loc;
		const struct cnt *r = &AT(rep->locs, struct loc, li)->cnt[R_ALLOC];
		struct name *nm;

		if (!r->alloc)
			continue;
		nm = dheap(rep, li, &seq);
		nm->dbytes = wrap_add(nm->dbytes, r->alloc);
		nm->nalloc += r->num;
	}
	for (k = R_REALLOC; k <= R_FREE; k++) {
		const struct primtab *t = &rep->prim[k - R_REALLOC];
		uint32_t *start, *list;

		if (!t->n)
			continue;
		if (prim_lists(t, rep->recs[k].n, &start, &list))
			return -1;
		for (i = 0; i < rep->recs[k].n; i++) {
			uint32_t p;

			for (p = start[i]; p < start[i + 1]; p++) {
				const struct prim *pr = &t->p[list[p]];
				struct name *nm;

				if (pr->allocated) {
					nm = dheap(rep, pr->loc, &seq);
					nm->dbytes = wrap_add(nm->dbytes,
							      pr->allocated);
					nm->nalloc += pr->count;
				}
				if (pr->freed) {
					nm = dheap(rep, pr->loc, &seq);
					nm->dbytes = wrap_add(nm->dbytes,
							      -pr->freed);
					nm->nfree += pr->count;
				}
			}
		}
		free(start);
		free(list);
	}
	ord = calloc(rep->names.n ? rep->names.n : 1, sizeof(*ord));
	if (!ord)
		return -1;
	for (i = 0; i < rep->names.n; i++) {
		const struct name *nm = AT(rep->names, struct name, i);

		if (nm->dheap_seq == NONE || nm->dbytes <= 0)
			continue;
		ord[n].idx = nm->dheap_seq;
		ord[n].key = i;
		ord[n++].skey = nm->dbytes;
	}
	if (ord_sort(ord, n, 1)) {
		free(ord);
		return -1;
	}
	luw_strbuf_puts(out, "HEAP SUMMARY:\n");
	for (i = 0; i < n; i++) {
		const struct name *nm = AT(rep->names, struct name, ord[i].key);

		struct line ln = { .n = 0 };

		spill(sk, 0);
		put_name(out, rep, nm);
		LN_LIT(&ln, " holds ");
		ln_d(&ln, nm->dbytes);
		LN_LIT(&ln, "B: ");
		ln_u(&ln, nm->nalloc);
		LN_LIT(&ln, " allocs, ");
		ln_u(&ln, nm->nfree);
		LN_LIT(&ln, " frees\n");
		luw_strbuf_putn(out, ln.b, ln.n);
	}
	luw_strbuf_putc(out, '\n');
	free(ord);
	spill(sk, 0);
	return sk->err ? -1 : 0;
}

static void aliases(const struct luw_memprof_report *rep, struct sink *k)
{
	struct luw_strbuf *out = &k->text;
	size_t i, n = luw_symtab_nalias(rep->st);

	if (!n)
		return;
	luw_strbuf_puts(out, "ALIASES:\n");
	for (i = 0; i < n; i++) {
		size_t len, a = 0, b;
		const char *s = luw_symtab_alias_chunk(rep->st, i, &len);
		uint64_t lineno = 1;

		spill(k, 0);
		luw_strbuf_puts(out, "function_alias_");
		luw_strbuf_putu(out, i + 1);
		luw_strbuf_puts(out, ":\n");
		while (a < len) {
			for (b = a; b < len && s[b] != '\n'; b++)
				;
			if (b > a) {
				luw_strbuf_putu(out, lineno++);
				luw_strbuf_puts(out, "\t| ");
				luw_strbuf_putn(out, s + a, b - a);
				luw_strbuf_putc(out, '\n');
			}
			a = b + 1;
		}
		luw_strbuf_puts(out, "\n\n");
	}
}

int luw_memprof_report_write(struct luw_memprof_report *rep, int leak_only, FILE *out)
{
	static const char *const title[R__MAX] = {
		"ALLOCATIONS\n", "REALLOCATIONS\n", "DEALLOCATIONS\n"
	};
	struct sink k;
	uint32_t *byrank = NULL;
	int i, rc = 0;

	if (luw_memprof_report_drain(rep))
		return -1;
	/*
	 * The report is made from the records alone: the live-heap table,
	 * most of the memory, goes before the output's own arrays are made.
	 */
	luw_memprof_heap_free(&rep->heap);
	if (!leak_only && (rep->prim[0].n || rep->prim[1].n) &&
	    rank_names(rep, &byrank))
		return -1;
	luw_strbuf_init(&k.text);
	k.out = out;
	k.err = 0;
	for (i = 0; !leak_only && i < R__MAX && !rc; i++) {
		luw_strbuf_puts(&k.text, title[i]);
		rc = render(rep, i, byrank, &k);
		luw_strbuf_putc(&k.text, '\n');
	}
	if (!rc)
		rc = heap_summary(rep, &k);
	if (!rc)
		aliases(rep, &k);
	spill(&k, 1);
	if (k.err)
		rc = -1;
	luw_strbuf_free(&k.text);
	free(byrank);
	return rc;
}
