/*
 * The sysprof reports cache frame names while the symbol table stays the
 * same (--compat by (addr, line), bounded; --folded frame ids and symbol
 * starts).  This stream has more distinct host frames than the caches keep
 * (so they are emptied or overwritten mid-stream and names come back
 * recomputed), and symtab updates that rename a symbol and add symbols
 * inside others, right after the affected frames were seen, so that cached
 * names and symbol starts are stale.  Both reports must equal a model that
 * names every frame from scratch.
 */
#include "streams/symtab.h"
#include "streams/sysprof.h"
#include "output/stacks.h"
#include "streams/sysprof_report.h"

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

/*
 * A CFUNC sample: the Lua stack holds one C function at lpc, the host
 * stack hpc (innermost) and main.  --folded anchors the Lua frame at the
 * host frame when both fall in the same C symbol.
 */
static void sample_c(struct buf *b, uint64_t lpc, uint64_t hpc)
{
	u8(b, LUW_VMST_CFUNC);
	u8(b, LUW_FRAME_CFUNC);
	uleb(b, lpc);
	u8(b, LUW_FRAME_LUA_LAST);
	uleb(b, hpc);
	uleb(b, MAIN + 0x10);
	uleb(b, 0);
}

static uint64_t fn(unsigned int i)
{
	return BASE + (uint64_t)STEP * i;
}

/* Samples of f<i> in the stream below (before any update took effect). */
static unsigned int count(size_t i)
{
	return 1 + (i % 7 == 0) + (i <= 2);
}

struct line {
	char *text;
};

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text,
		      ((const struct line *)b)->text);
}

/* The report of mode on the stream as a malloc'd string. */
static char *report(enum luw_sysprof_report_mode mode, const struct buf *b, size_t *len)
{
	struct luw_symtab *st = luw_symtab_new();
	struct luw_stacks *stacks = luw_stacks_new();
	struct luw_sysprof_report *rep = st && stacks ? luw_sysprof_report_new(mode, st, stacks)
					   : NULL;
	struct luw_reader rd;
	char *out = NULL;
	FILE *f;
	int rc;

	if (!rep) {
		fprintf(stderr, "test_sysprof_report: out of memory\n");
		exit(1);
	}
	luw_reader_open_mem(&rd, b->p, b->len);
	rc = luw_sysprof_decode(&rd, &luw_sysprof_report_ops, rep);
	f = open_memstream(&out, len);
	if (rc || !f ||
	    (mode == LUW_SPR_FOLDED ? luw_stacks_write_folded(stacks, f)
				    : luw_sysprof_report_write(rep, f)) ||
	    fclose(f)) {
		fprintf(stderr, "test_sysprof_report: decode/report %d\n", rc);
		exit(1);
	}
	luw_reader_close(&rd);
	luw_sysprof_report_free(rep);
	luw_stacks_free(stacks);
	luw_symtab_free(st);
	return out;
}

/* The model's lines, sorted, as one string. */
static char *model(int folded, size_t *len)
{
	struct line *want = calloc(NSYM + 3, sizeof(*want));
	char *exp = NULL;
	size_t n = 0, i;
	FILE *f;
	int bad = !want;

	for (i = 0; !bad && i < NSYM; i++)
		bad = (folded ? asprintf(&want[n++].text, "main;f%zu %u", i,
					 count(i))
			      : asprintf(&want[n++].text,
					 "main:0x%x;f%zu:0x%" PRIx64 ";\t%u",
					 MAIN, i, fn((unsigned int)i),
					 count(i))) < 0;
	/* After the updates; "mid" splits f2, so the anchor is gone. */
	if (!bad && folded)
		bad = asprintf(&want[n++].text, "main;renamed 1") < 0 ||
		      asprintf(&want[n++].text, "main;inner 1") < 0 ||
		      asprintf(&want[n++].text, "main;mid;[lua];f2 1") < 0;
	else if (!bad)
		bad = asprintf(&want[n++].text,
			       "main:0x%x;renamed:0x%" PRIx64 ";\t1", MAIN,
			       fn(0)) < 0 ||
		      asprintf(&want[n++].text,
			       "main:0x%x;inner:0x%" PRIx64 ";\t1", MAIN,
			       fn(1) + 4) < 0 ||
		      asprintf(&want[n++].text,
			       "main:0x%x;mid:0x%" PRIx64 ";\t1", MAIN,
			       fn(2) + 10) < 0;
	f = open_memstream(&exp, len);
	if (bad || !f) {
		fprintf(stderr, "test_sysprof_report: out of memory\n");
		exit(1);
	}
	qsort(want, n, sizeof(*want), line_cmp);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s\n", want[i].text);
		free(want[i].text);
	}
	fclose(f);
	free(want);
	return exp;
}

static int compare(const char *what, const char *got, size_t gotlen,
		   const char *exp, size_t explen)
{
	size_t k = 0;

	if (gotlen == explen && !memcmp(got, exp, explen))
		return 0;
	while (k < gotlen && k < explen && got[k] == exp[k])
		k++;
	fprintf(stderr,
		"test_sysprof_report: %s report differs at byte %zu:\n"
		"got:  %.80s\nwant: %.80s\n",
		what, k, got + (k > 20 ? k - 20 : 0),
		exp + (k > 20 ? k - 20 : 0));
	return 1;
}

int main(void)
{
	struct buf b = { 0 };
	char name[64], *got, *exp;
	size_t gotlen, explen;
	unsigned int i;
	int rc = 0, folded;

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
	for (i = 0; i < NSYM; i += 7)	/* after the caches were emptied */
		sample(&b, fn(i) + 8);
	/* Fresh in every cache, then made stale: f0 renamed, symbols
	 * starting inside f1 and f2. */
	sample(&b, fn(0) + 8);
	sample(&b, fn(1) + 8);
	sample_c(&b, fn(2) + 8, fn(2) + 12);
	u8(&b, LUW_LJP_SYM_CFUNC);
	uleb(&b, fn(0));
	str(&b, "renamed");
	u8(&b, LUW_LJP_SYM_CFUNC);
	uleb(&b, fn(1) + 4);
	str(&b, "inner");
	u8(&b, LUW_LJP_SYM_CFUNC);
	uleb(&b, fn(2) + 10);
	str(&b, "mid");
	sample(&b, fn(0) + 8);
	sample(&b, fn(1) + 8);
	sample_c(&b, fn(2) + 8, fn(2) + 12);
	u8(&b, LUW_LJP_EPILOGUE);

	for (folded = 0; folded < 2; folded++) {
		got = report(folded ? LUW_SPR_FOLDED : LUW_SPR_COMPAT, &b,
			     &gotlen);
		exp = model(folded, &explen);
		rc |= compare(folded ? "--folded" : "--compat", got, gotlen,
			      exp, explen);
		free(got);
		free(exp);
	}
	free(b.p);
	return rc;
}
