/*
 * streams/sysprof_report.c's name caches, against a model that names
 * every frame from scratch.  The sysprof reports cache frame names while
 * the symbol table stays the same (--compat by (addr, line), bounded;
 * --folded frame ids and symbol starts).  This stream (written with
 * tests/encoder) has more distinct host frames than the caches keep (so
 * they are emptied or overwritten mid-stream and names come back
 * recomputed), and symtab updates that rename a symbol and add symbols
 * inside others, right after the affected frames were seen, so that
 * cached names and symbol starts are stale.  Both reports must equal the
 * model.
 */
#include "streams/symtab.h"
#include "streams/sysprof.h"
#include "output/stacks.h"
#include "streams/sysprof_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "testlib.h"

#define NSYM 70000u		/* more than the name cache's entries */
#define MAIN 0x1000u
#define BASE 0x100000u
#define STEP 0x40u

/* A C symbol: in the leading symtab (header = type), or an update. */
static void csym(struct luw_enc *e, uint8_t header, uint64_t addr,
		 const char *name)
{
	struct luw_sym s = {
		.header = header, .type = LUW_SYM_CFUNC, .addr = addr,
		.name = name, .name_len = strlen(name),
	};

	luw_enc_sym(e, &s);
}

/* An INTERP sample with host frames pc (innermost) and main. */
static void sample(struct luw_enc *e, uint64_t pc)
{
	uint64_t host[] = { pc, MAIN + 0x10 };
	struct luw_sp_sample s = {
		.vmstate = LUW_VMST_INTERP, .host = host, .nhost = 2,
	};

	luw_enc_sp_sample(e, &s);
}

/*
 * A CFUNC sample: the Lua stack holds one C function at lpc, the host
 * stack hpc (innermost) and main.  --folded anchors the Lua frame at the
 * host frame when both fall in the same C symbol.
 */
static void sample_c(struct luw_enc *e, uint64_t lpc, uint64_t hpc)
{
	struct luw_sp_frame lua = { .type = LUW_FRAME_CFUNC, .addr = lpc };
	uint64_t host[] = { hpc, MAIN + 0x10 };
	struct luw_sp_sample s = {
		.vmstate = LUW_VMST_CFUNC, .lua = &lua, .nlua = 1,
		.host = host, .nhost = 2,
	};

	luw_enc_sp_sample(e, &s);
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
static char *report(enum luw_sysprof_report_mode mode, const struct luw_enc *b, size_t *len)
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
	luw_reader_open_mem(&rd, b->buf, b->len);
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

/* got equals want, or a CHECK failure showing where they part. */
static void compare(const char *what, const char *got, size_t gotlen,
		    const char *exp, size_t explen)
{
	size_t k = 0;

	if (gotlen == explen && !memcmp(got, exp, explen))
		return;
	while (k < gotlen && k < explen && got[k] == exp[k])
		k++;
	CHECK(0, "%s report differs at byte %zu:\ngot:  %.80s\nwant: %.80s",
	      what, k, got + (k > 20 ? k - 20 : 0),
	      exp + (k > 20 ? k - 20 : 0));
}

int main(void)
{
	static const struct luw_prologue ljs = { "ljs", LUW_LJS_VERSION, { 0 }, 0 };
	static const struct luw_prologue ljp = { "ljp", LUW_LJP_VERSION, { 0 }, 0 };
	static const struct luw_sym final = { .header = 0x80, .final = 1 };
	struct luw_enc b;
	char name[64], *got, *exp;
	size_t gotlen, explen;
	unsigned int i;
	int folded;

	luw_enc_init_mem(&b);
	luw_enc_prologue(&b, &ljs);
	csym(&b, LUW_SYM_CFUNC, MAIN, "main");
	for (i = 0; i < NSYM; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		csym(&b, LUW_SYM_CFUNC, fn(i), name);
	}
	luw_enc_sym(&b, &final);
	luw_enc_prologue(&b, &ljp);
	for (i = 0; i < NSYM; i++)
		sample(&b, fn(i) + 8);
	for (i = 0; i < NSYM; i += 7)	/* after the caches were emptied */
		sample(&b, fn(i) + 8);
	/* Fresh in every cache, then made stale: f0 renamed, symbols
	 * starting inside f1 and f2. */
	sample(&b, fn(0) + 8);
	sample(&b, fn(1) + 8);
	sample_c(&b, fn(2) + 8, fn(2) + 12);
	csym(&b, LUW_LJP_SYM_CFUNC, fn(0), "renamed");
	csym(&b, LUW_LJP_SYM_CFUNC, fn(1) + 4, "inner");
	csym(&b, LUW_LJP_SYM_CFUNC, fn(2) + 10, "mid");
	sample(&b, fn(0) + 8);
	sample(&b, fn(1) + 8);
	sample_c(&b, fn(2) + 8, fn(2) + 12);
	luw_enc_epilogue(&b);
	if (luw_enc_finish(&b)) {
		fprintf(stderr, "test_sysprof_report: out of memory\n");
		return 1;
	}

	for (folded = 0; folded < 2; folded++) {
		got = report(folded ? LUW_SPR_FOLDED : LUW_SPR_COMPAT, &b,
			     &gotlen);
		exp = model(folded, &explen);
		compare(folded ? "--folded" : "--compat", got, gotlen, exp,
			explen);
		free(got);
		free(exp);
	}
	luw_enc_free(&b);
	return luw_test_status("test_sysprof_report");
}
