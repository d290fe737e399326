/*
 * sysprof --compat caches frame names by (addr, line) while the symbol
 * table stays the same.  This stream has more distinct host frames than
 * the cache keeps (so it is emptied mid-stream and names come back
 * recomputed), and symtab updates that rename a symbol and add one inside
 * another, after which the cached names are stale.  The report must equal
 * a model that names every frame from scratch.
 */
#include "symtab.h"
#include "sysprof.h"
#include "sysprof_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSYM 70000u		/* more than the name cache's entries */
#define MAIN 0x1000u
#define BASE 0x100000u
#define STEP 0x40u

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *s, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			perror("realloc");
			exit(1);
		}
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void u8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void uleb(struct buf *b, uint64_t v)
{
	do {
		u8(b, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

static void str(struct buf *b, const char *s)
{
	uleb(b, strlen(s));
	put(b, s, strlen(s));
}

/* An INTERP sample with host frames pc (innermost) and main. */
static void sample(struct buf *b, uint64_t pc)
{
	u8(b, LUW_VMST_INTERP);
	uleb(b, pc);
	uleb(b, MAIN + 0x10);
	uleb(b, 0);
}

static uint64_t fn(unsigned int i)
{
	return BASE + (uint64_t)STEP * i;
}

struct line {
	char *text;
};

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text,
		      ((const struct line *)b)->text);
}

int main(void)
{
	struct buf b = { 0 };
	struct line *want = calloc(NSYM + 2, sizeof(*want));
	struct luw_symtab *st = luw_symtab_new();
	struct luw_spr *rep;
	struct luw_rd rd;
	char name[64], *got = NULL, *exp = NULL;
	size_t gotlen = 0, explen = 0, n = 0;
	FILE *f;
	unsigned int i;
	int rc;

	if (!want || !st)
		return 1;
	put(&b, "ljs\3\0\0\0", 7);
	u8(&b, LUW_SYM_CFUNC);
	uleb(&b, MAIN);
	str(&b, "main");
	for (i = 0; i < NSYM; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		u8(&b, LUW_SYM_CFUNC);
		uleb(&b, fn(i));
		str(&b, name);
	}
	u8(&b, 0x80);
	put(&b, "ljp\2\0\0\0", 7);
	for (i = 0; i < NSYM; i++)
		sample(&b, fn(i) + 8);
	for (i = 0; i < NSYM; i += 7)	/* after the cache was emptied */
		sample(&b, fn(i) + 8);
	/* f0 renamed; a symbol starts inside f1. */
	u8(&b, LUW_LJP_SYM_CFUNC);
	uleb(&b, fn(0));
	str(&b, "renamed");
	u8(&b, LUW_LJP_SYM_CFUNC);
	uleb(&b, fn(1) + 4);
	str(&b, "inner");
	sample(&b, fn(0) + 8);
	sample(&b, fn(1) + 8);
	u8(&b, LUW_LJP_EPILOGUE);

	/* The model: every frame named from the symbols of its time. */
	for (i = 0; i < NSYM; i++) {
		if (asprintf(&want[n++].text,
			     "main:0x%x;f%u:0x%" PRIx64 ";\t%u", MAIN, i,
			     fn(i), 1 + (i % 7 == 0)) < 0)
			return 1;
	}
	if (asprintf(&want[n++].text, "main:0x%x;renamed:0x%" PRIx64 ";\t1",
		     MAIN, fn(0)) < 0 ||
	    asprintf(&want[n++].text, "main:0x%x;inner:0x%" PRIx64 ";\t1",
		     MAIN, fn(1) + 4) < 0)
		return 1;
	qsort(want, n, sizeof(*want), line_cmp);
	f = open_memstream(&exp, &explen);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", want[i].text);
	fclose(f);

	rep = luw_spr_new(LUW_SPR_COMPAT, st, NULL);
	if (!rep)
		return 1;
	luw_rd_open_mem(&rd, b.p, b.len);
	rc = luw_sysprof_decode(&rd, &luw_spr_ops, rep);
	f = open_memstream(&got, &gotlen);
	if (rc || luw_spr_write(rep, f) || fclose(f)) {
		fprintf(stderr, "test_compat_names: decode %d\n", rc);
		return 1;
	}
	rc = gotlen != explen || memcmp(got, exp, explen);
	if (rc) {
		size_t k = 0;

		while (k < gotlen && k < explen && got[k] == exp[k])
			k++;
		fprintf(stderr,
			"test_compat_names: report differs at byte %zu:\n"
			"got:  %.80s\nwant: %.80s\n",
			k, got + (k > 20 ? k - 20 : 0),
			exp + (k > 20 ? k - 20 : 0));
	}
	luw_rd_close(&rd);
	luw_spr_free(rep);
	luw_symtab_free(st);
	for (i = 0; i < n; i++)
		free(want[i].text);
	free(want);
	free(got);
	free(exp);
	free(b.p);
	return rc;
}
