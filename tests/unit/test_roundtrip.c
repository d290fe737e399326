/*
 * Round trip through the test-only encoder (tests/encoder):
 *
 *  1. every tests/fixtures/ *.bin decodes cleanly and, re-encoded from the
 *     decoders' callbacks alone, gives back the file byte for byte: the
 *     decoders deliver every field of the format;
 *  2. streams synthesised from each fixture (tests/encoder/gen.h) decode
 *     to exactly the items the synthesiser wrote, in order, and re-encode
 *     to the same bytes; they keep the fixture's symbols (no new
 *     generations) and reach the requested size.
 *
 * Items are compared as logs: every field of every item (offsets aside)
 * serialised in a fixed order, independently of the stream encoding.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "gen.h"
#include "memprof.h"
#include "reader.h"
#include "sysprof.h"

static int failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			failures++;                                          \
		}                                                            \
	} while (0)

static uint8_t *load(const char *path, size_t *len)
{
	uint8_t *buf;
	long n;
	FILE *f = fopen(path, "rb");

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* --- Item logs ---------------------------------------------------------- */

struct log {
	struct luw_enc b;
	size_t nsym, nsample, nevent, nprologue, nepilogue;
};

static void log_u64(struct log *l, uint64_t v)
{
	luw_enc_uleb(&l->b, v);
}

static void log_sym(struct log *l, const struct luw_sym *s)
{
	log_u64(l, 'S');
	log_u64(l, s->header);
	log_u64(l, s->type);
	log_u64(l, s->final);
	log_u64(l, s->addr);
	log_u64(l, s->line);
	log_u64(l, s->traceno);
	luw_enc_string(&l->b, s->name, s->name_len);
}

static int lg_prologue(void *ctx, const struct luw_prologue *p)
{
	struct log *l = ctx;

	log_u64(l, 'P');
	luw_enc_prologue(&l->b, p);
	l->nprologue++;
	return 0;
}

static int lg_sym(void *ctx, const struct luw_sym *s)
{
	struct log *l = ctx;

	log_sym(l, s);
	l->nsym++;
	return 0;
}

static int lg_sample(void *ctx, const struct luw_sp_sample *s)
{
	struct log *l = ctx;
	size_t i;

	log_u64(l, 'T');
	log_u64(l, s->vmstate);
	log_u64(l, s->nlua);
	for (i = 0; i < s->nlua; i++) {
		log_u64(l, s->lua[i].type);
		log_u64(l, s->lua[i].addr);
		log_u64(l, s->lua[i].line);
	}
	log_u64(l, s->nhost);
	for (i = 0; i < s->nhost; i++)
		log_u64(l, s->host[i]);
	log_u64(l, s->traceno);
	log_u64(l, s->trace_addr);
	log_u64(l, s->trace_line);
	l->nsample++;
	return 0;
}

static int lg_event(void *ctx, const struct luw_mp_event *ev)
{
	struct log *l = ctx;

	log_u64(l, 'E');
	log_u64(l, ev->header);
	log_u64(l, ev->aevent);
	log_u64(l, ev->asource);
	log_u64(l, ev->addr);
	log_u64(l, ev->line);
	log_u64(l, ev->traceno);
	log_u64(l, ev->oaddr);
	log_u64(l, ev->osize);
	log_u64(l, ev->naddr);
	log_u64(l, ev->nsize);
	if (ev->aevent == LUW_AEVENT_SYMTAB) {
		log_sym(l, &ev->sym);
		l->nsym++;
	} else {
		l->nevent++;
	}
	return 0;
}

static int lg_epilogue(void *ctx, uint64_t offset)
{
	struct log *l = ctx;

	(void)offset;
	log_u64(l, 'Z');
	l->nepilogue++;
	return 0;
}

static const struct luw_sysprof_ops log_sops = {
	lg_prologue, lg_sym, lg_sample, lg_epilogue,
};
static const struct luw_memprof_ops log_mops = {
	lg_prologue, lg_sym, lg_event, lg_epilogue,
};

/* --- Decoding with a given set of callbacks ----------------------------- */

/*
 * Decode a whole stream of either kind.  Returns the decoder's value; *kind
 * gets 's' or 'm' (0 if the symtab did not decode).
 */
static int decode_any(const uint8_t *data, size_t len,
		      const struct luw_sysprof_ops *sops,
		      const struct luw_memprof_ops *mops, void *ctx, int *kind,
		      char *err, size_t errsize)
{
	struct luw_rd r;
	int rc;

	*kind = 0;
	err[0] = 0;
	luw_rd_open_mem(&r, data, len);
	/* Both ops share the symtab callbacks' types: use the sysprof ones. */
	rc = luw_symtab_decode(&r, sops->prologue, sops->sym, ctx);
	if (!rc && r.end - r.p >= 3 && !memcmp(r.p, "ljp", 3)) {
		*kind = 's';
		rc = luw_sysprof_decode_body(&r, sops, ctx);
	} else if (!rc && r.end - r.p >= 3 && !memcmp(r.p, "ljm", 3)) {
		*kind = 'm';
		rc = luw_memprof_decode_body(&r, mops, ctx);
	} else if (!rc) {
		snprintf(err, errsize, "neither 'ljp' nor 'ljm' after the symtab");
		return -1;
	}
	if (rc && luw_rd_failed(&r))
		luw_rd_strerror(&r, err, errsize);
	return rc;
}

static size_t first_diff(const uint8_t *a, size_t na, const uint8_t *b,
			 size_t nb)
{
	size_t i, n = na < nb ? na : nb;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

/* --- 1. Fixtures re-encode byte for byte --------------------------------- */

static void roundtrip_fixture(const char *path, int *nsys, int *nmem)
{
	struct luw_enc e;
	char err[256];
	size_t len, d;
	uint8_t *data = load(path, &len);
	int rc, kind;

	luw_enc_init_mem(&e);
	/* The memprof ops share prologue/sym/epilogue with the sysprof ones. */
	rc = decode_any(data, len, &luw_enc_sysprof_ops, &luw_enc_memprof_ops,
			&e, &kind, err, sizeof(err));
	CHECK(rc == 0, "%s: decode: rc %d %s", path, rc, err);
	CHECK(luw_enc_finish(&e) == 0, "%s: encoder failed", path);
	d = first_diff(data, len, e.buf, e.len);
	CHECK(e.len == len && d == len,
	      "%s: re-encoded %zu bytes of %zu, first difference at offset %zu",
	      path, e.len, len, d);
	if (kind == 's')
		(*nsys)++;
	if (kind == 'm')
		(*nmem)++;
	printf("ok %s: %zu bytes re-encoded identically (%s)\n", path, len,
	       kind == 's' ? "sysprof" : "memprof");
	luw_enc_free(&e);
	free(data);
}

/* --- 2. Synthesised streams decode to what was written ------------------ */

static void synth_check(const char *path, uint64_t size, uint64_t seed,
			unsigned int flags)
{
	struct log wrote = { 0 }, got = { 0 }, fixture = { 0 };
	struct luw_enc e, again;
	struct luw_gen *g;
	char err[256];
	size_t len;
	uint8_t *data = load(path, &len);
	int rc, kind;

	luw_enc_init_mem(&wrote.b);
	luw_enc_init_mem(&got.b);
	luw_enc_init_mem(&fixture.b);
	luw_enc_init_mem(&e);
	luw_enc_init_mem(&again);

	g = luw_gen_load(data, len, err, sizeof(err));
	CHECK(g, "%s: luw_gen_load: %s", path, err);
	if (!g)
		goto out;
	rc = luw_gen_write(g, &e, size, seed, flags, &log_sops, &log_mops,
			   &wrote);
	CHECK(rc == 0 && luw_enc_finish(&e) == 0, "%s: synthesis failed",
	      path);
	CHECK(e.len >= size, "%s: synthesised %zu bytes, asked for %llu",
	      path, e.len, (unsigned long long)size);
	/* At most one item past the size: a sample or event is < 64 KiB here. */
	CHECK(e.len < size + 65536, "%s: synthesised %zu bytes, asked for %llu",
	      path, e.len, (unsigned long long)size);

	rc = decode_any(e.buf, e.len, &log_sops, &log_mops, &got, &kind, err,
			sizeof(err));
	CHECK(rc == 0, "%s: synthesised stream does not decode: %s", path,
	      err);
	CHECK(got.b.len == wrote.b.len &&
		      !memcmp(got.b.buf, wrote.b.buf, got.b.len),
	      "%s: decoded items differ from the written ones (logs of %zu "
	      "and %zu bytes, first difference at %zu)",
	      path, got.b.len, wrote.b.len,
	      first_diff(got.b.buf, got.b.len, wrote.b.buf, wrote.b.len));
	CHECK(got.nprologue == 2 && got.nepilogue == 1,
	      "%s: %zu prologues, %zu epilogues", path, got.nprologue,
	      got.nepilogue);

	/* The synthesised bytes survive a round trip as well. */
	rc = decode_any(e.buf, e.len, &luw_enc_sysprof_ops,
			&luw_enc_memprof_ops, &again, &kind, err, sizeof(err));
	CHECK(rc == 0 && again.len == e.len &&
		      !memcmp(again.buf, e.buf, e.len),
	      "%s: synthesised stream does not re-encode identically", path);

	/* Same symbols as the fixture: no generation is ever added. */
	rc = decode_any(data, len, &log_sops, &log_mops, &fixture, &kind, err,
			sizeof(err));
	CHECK(rc == 0 && got.nsym <= fixture.nsym &&
		      (size < len || flags || got.nsym == fixture.nsym),
	      "%s: synthesised stream has %zu symbols, the fixture %zu", path,
	      got.nsym, fixture.nsym);
	CHECK(size < len ||
		      got.nsample + got.nevent >
			      (fixture.nsample + fixture.nevent) * (size / len) / 2,
	      "%s: %zu samples/events in %zu bytes, the fixture has %zu in %zu",
	      path, got.nsample + got.nevent, e.len,
	      fixture.nsample + fixture.nevent, len);
	printf("ok %s: synthesised %zu bytes (seed %llu), %zu samples, %zu "
	       "events, %zu symbols decode back unchanged\n",
	       path, e.len, (unsigned long long)seed, got.nsample, got.nevent,
	       got.nsym);
out:
	luw_gen_free(g);
	luw_enc_free(&e);
	luw_enc_free(&again);
	luw_enc_free(&wrote.b);
	luw_enc_free(&got.b);
	luw_enc_free(&fixture.b);
	free(data);
}

/* Two seeds give different streams of the same workload; one seed, one stream. */
static void synth_seeds(const char *path)
{
	struct luw_enc a, b, c;
	struct luw_gen *g;
	char err[256];
	size_t len;
	uint8_t *data = load(path, &len);

	g = luw_gen_load(data, len, err, sizeof(err));
	CHECK(g, "%s: %s", path, err);
	if (!g) {
		free(data);
		return;
	}
	luw_enc_init_mem(&a);
	luw_enc_init_mem(&b);
	luw_enc_init_mem(&c);
	luw_gen_write(g, &a, 4 * len, 1, 0, NULL, NULL, NULL);
	luw_gen_write(g, &b, 4 * len, 1, 0, NULL, NULL, NULL);
	luw_gen_write(g, &c, 4 * len, 2, 0, NULL, NULL, NULL);
	CHECK(a.len == b.len && !memcmp(a.buf, b.buf, a.len),
	      "%s: the same seed gave different streams", path);
	CHECK(a.len != c.len || memcmp(a.buf, c.buf, a.len),
	      "%s: seeds 1 and 2 gave the same stream", path);
	luw_enc_free(&a);
	luw_enc_free(&b);
	luw_enc_free(&c);
	luw_gen_free(g);
	free(data);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/fixtures";
	struct dirent **ents;
	int i, n, nsys = 0, nmem = 0;

	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		perror(dir);
		return 1;
	}
	for (i = 0; i < n; i++) {
		char path[4096];

		if (ends_with(ents[i]->d_name, ".bin")) {
			size_t len;
			uint8_t *data;

			snprintf(path, sizeof(path), "%s/%s", dir,
				 ents[i]->d_name);
			roundtrip_fixture(path, &nsys, &nmem);
			data = load(path, &len);
			free(data);
			/* Pass 0 cut short (compact symtab), several passes. */
			synth_check(path, len / 3, 11, LUW_GEN_COMPACT);
			synth_check(path, 4096, 3, LUW_GEN_COMPACT);
			synth_check(path, 5 * (uint64_t)len + 12345, 42, 0);
			synth_check(path, 3 * (uint64_t)len, 5,
				    LUW_GEN_COMPACT);
			synth_seeds(path);
		}
		free(ents[i]);
	}
	free(ents);
	CHECK(nsys >= 3 && nmem >= 2,
	      "expected >= 3 sysprof and >= 2 memprof fixtures in %s, found "
	      "%d and %d",
	      dir, nsys, nmem);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("all round trips ok\n");
	return 0;
}
