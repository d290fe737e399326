/*
 * The stream decoders of streams/ -- sysprof.c, memprof.c and symtab.c,
 * over reader.c -- together, no one of them the main one, so the test is
 * named after what it does: a round trip through the test-only encoder
 * (tests/encoder):
 *
 *  1. every tests/fixtures/ *.bin decodes cleanly and, re-encoded from the
 *     decoders' callbacks alone, gives back the file byte for byte: the
 *     decoders deliver every field of the format;
 *  2. streams synthesised from each fixture (tests/encoder/gen.h) decode
 *     to exactly the items the synthesiser wrote, in order, and re-encode
 *     to the same bytes; they keep the fixture's symbols (no new
 *     generations) and reach the requested size;
 *  3. hand-built streams with what the fixtures lack (every vmstate, event
 *     kind and source, extreme values, non-zero reserved bytes and unused
 *     header bits) decode to the items written and re-encode identically
 *     (`test_roundtrip FIXTURES DIR` also saves them in DIR: fuzz seeds);
 *  4. synthesised streams of several reader windows decode the same
 *     through a pipe written in odd-sized pieces;
 *  `test_roundtrip --long-strings` (its own CTest test): streams with long
 *     C symbol names and Lua chunk names of 1000 B, 900 KiB and 3 MiB
 *     decode through a pipe (load(string) names a chunk after the whole
 *     source string, so such names occur in real streams).
 *
 * Items are compared as logs: every field of every item (offsets aside)
 * serialised in a fixed order, independently of the stream encoding.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "encoder.h"
#include "gen.h"
#include "streams/memprof.h"
#include "streams/reader.h"
#include "streams/sysprof.h"
#include "testlib.h"

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
 * Decode a whole stream of either kind from r.  Returns the decoder's
 * value; *kind gets 's' or 'm' (0 if the symtab did not decode).
 */
static int decode_rd(struct luw_reader *r, const struct luw_sysprof_ops *sops,
		     const struct luw_memprof_ops *mops, void *ctx, int *kind,
		     char *err, size_t errsize)
{
	int rc;

	*kind = 0;
	err[0] = 0;
	/* Both ops share the symtab callbacks' types: use the sysprof ones. */
	rc = luw_symtab_decode(r, sops->prologue, sops->sym, ctx);
	if (!rc && (r->end - r->p >= 3 || luw_reader_fill(r, 3)) &&
	    !memcmp(r->p, "ljp", 3)) {
		*kind = 's';
		rc = luw_sysprof_decode_body(r, sops, ctx);
	} else if (!rc && r->end - r->p >= 3 && !memcmp(r->p, "ljm", 3)) {
		*kind = 'm';
		rc = luw_memprof_decode_body(r, mops, ctx);
	} else if (!rc) {
		snprintf(err, errsize, "neither 'ljp' nor 'ljm' after the symtab");
		return -1;
	}
	if (rc && luw_reader_failed(r))
		luw_reader_strerror(r, err, errsize);
	return rc;
}

static int decode_any(const uint8_t *data, size_t len,
		      const struct luw_sysprof_ops *sops,
		      const struct luw_memprof_ops *mops, void *ctx, int *kind,
		      char *err, size_t errsize)
{
	struct luw_reader r;

	luw_reader_open_mem(&r, data, len);
	return decode_rd(&r, sops, mops, ctx, kind, err, errsize);
}

/*
 * The same through a pipe, written by a child in odd-sized pieces: the
 * reader's window (1 MiB) slides and refills mid-item, as on a real pipe.
 */
static int decode_pipe(const uint8_t *data, size_t len,
		       const struct luw_sysprof_ops *sops,
		       const struct luw_memprof_ops *mops, void *ctx, int *kind,
		       char *err, size_t errsize)
{
	struct luw_reader r;
	int fds[2], rc, st;
	pid_t pid;

	if (pipe(fds)) {
		perror("pipe");
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (!pid) {
		size_t off = 0, piece = 1;

		close(fds[0]);
		while (off < len) {
			size_t n = piece < len - off ? piece : len - off;
			ssize_t w = write(fds[1], data + off, n);

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
			/* 1, 4094, 8187, ... bytes: never aligned to anything. */
			piece = (piece + 4093) % 65521;
		}
		_exit(0);
	}
	close(fds[1]);
	if (luw_reader_open_fd(&r, fds[0])) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	rc = decode_rd(&r, sops, mops, ctx, kind, err, errsize);
	luw_reader_close(&r);
	close(fds[0]);
	/* A decoder that stopped early leaves the writer to die of SIGPIPE. */
	if (waitpid(pid, &st, 0) != pid ||
	    (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st)))) {
		fprintf(stderr, "pipe writer failed\n");
		exit(1);
	}
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
	uint8_t *data = luw_test_load(path, &len);
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
	uint8_t *data = luw_test_load(path, &len);
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
	uint8_t *data = luw_test_load(path, &len);

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

/* --- 3. Corners the fixtures do not have ------------------------------- */

/*
 * Every item kind with extreme field values, odd reserved bytes and unused
 * header bits (the fixtures have zeros there), written through the
 * encoder with the log kept alongside: it must decode to the same items
 * and re-encode to the same bytes.
 */
static void edge_stream(int memprof, const char *save_dir)
{
	static const char chunk[] = "@chunk\nwith a newline;and;semicolons";
	const struct luw_prologue ljs = { { 'l', 'j', 's' }, 3, { 1, 0x7f, 0xff }, 0 };
	const struct luw_prologue ljp = { { 'l', 'j', 'p' }, 2, { 0xff, 2, 0 }, 0 };
	const struct luw_prologue ljm = { { 'l', 'j', 'm' }, 3, { 0, 0, 0x80 }, 0 };
	const struct luw_sym lead[] = {
		/* Unused header bits set: kept raw. */
		{ .header = 0x7c, .type = LUW_SYM_LFUNC, .addr = UINT64_MAX,
		  .line = UINT64_MAX, .name = chunk, .name_len = sizeof(chunk) - 1 },
		{ .header = 0x01, .type = LUW_SYM_CFUNC, .addr = 0,
		  .name = "", .name_len = 0 },
		{ .header = 0x42, .type = LUW_SYM_TRACE, .traceno = UINT64_MAX,
		  .addr = 1ull << 63, .line = 0 },
		{ .header = 0x81, .final = 1 },	/* final marker, odd bits */
	};
	const struct luw_sp_frame frames[] = {
		{ LUW_FRAME_LFUNC, UINT64_MAX, UINT64_MAX },
		{ LUW_FRAME_CFUNC, 0x7fffffffffffull, 0 },
		{ LUW_FRAME_FFUNC, 0, 0 },
		{ LUW_FRAME_FFUNC, 1ull << 35, 0 },
	};
	const uint64_t host[] = { 1, UINT64_MAX, 0x80, 0x3fff, 0x4000 };
	struct log wrote = { 0 }, got = { 0 };
	struct luw_enc e, again;
	char err[256];
	size_t i;
	int rc, kind;

	luw_enc_init_mem(&e);
	luw_enc_init_mem(&again);
	luw_enc_init_mem(&wrote.b);
	luw_enc_init_mem(&got.b);
#define EMIT_PRO(p) (luw_enc_prologue(&e, p), lg_prologue(&wrote, p))
#define EMIT_SYM(sy) (luw_enc_sym(&e, sy), lg_sym(&wrote, sy))
	EMIT_PRO(&ljs);
	for (i = 0; i < sizeof(lead) / sizeof(lead[0]); i++)
		EMIT_SYM(&lead[i]);
	if (!memprof) {
		struct luw_sp_sample sm = { 0 };
		unsigned int vm;

		EMIT_PRO(&ljp);
		for (vm = 0; vm < LUW_VMST__MAX; vm++) {
			memset(&sm, 0, sizeof(sm));
			sm.vmstate = (uint8_t)vm;
			if (vm == LUW_VMST_TRACE) {
				sm.traceno = UINT64_MAX;
				sm.trace_addr = 0;
				sm.trace_line = 1ull << 42;
			} else {
				if (vm >= LUW_VMST_LFUNC && vm <= LUW_VMST_CFUNC) {
					sm.lua = frames;
					/* LFUNC: no Lua frame at all. */
					sm.nlua = vm == LUW_VMST_LFUNC ? 0 : 4;
				}
				sm.host = host;
				sm.nhost = vm % 2 ? 5 : 0;
			}
			luw_enc_sp_sample(&e, &sm);
			lg_sample(&wrote, &sm);
		}
		for (i = 0; i < 3; i++) {
			struct luw_sym u = lead[i];

			u.header = (uint8_t)(LUW_LJP_SYM_LFUNC + u.type);
			EMIT_SYM(&u);
		}
	} else {
		static const uint8_t hdr[] = {
			0x05, 0x06, 0x07,	/* internal: alloc free realloc */
			0x09, 0x0a, 0x0b,	/* Lua function */
			0x0d, 0x0e, 0x0f,	/* C function */
			0x11, 0x12, 0x13,	/* trace */
			0x08, 0x0c, 0x10,	/* symtab: Lua, C, trace */
		};

		EMIT_PRO(&ljm);
		for (i = 0; i < sizeof(hdr); i++) {
			struct luw_mp_event ev = { 0 };

			ev.header = hdr[i];
			ev.aevent = hdr[i] & 3;
			ev.asource = (hdr[i] >> 2) & 7;
			if (ev.aevent == LUW_AEVENT_SYMTAB) {
				ev.sym = lead[ev.asource - LUW_ASOURCE_LFUNC];
				ev.sym.header = 0;
			} else {
				if (ev.asource == LUW_ASOURCE_LFUNC) {
					ev.addr = UINT64_MAX;
					ev.line = 1;
				} else if (ev.asource == LUW_ASOURCE_CFUNC) {
					ev.addr = 0x7f0000001234ull;
				} else if (ev.asource == LUW_ASOURCE_TRACE) {
					ev.traceno = 0;
				}
				if (ev.aevent & LUW_AEVENT_FREE) {
					ev.oaddr = UINT64_MAX;
					ev.osize = 0;
				}
				if (ev.aevent & LUW_AEVENT_ALLOC) {
					ev.naddr = 0;
					ev.nsize = UINT64_MAX;
				}
			}
			luw_enc_mp_event(&e, &ev);
			lg_event(&wrote, &ev);
		}
	}
	luw_enc_epilogue(&e);
	lg_epilogue(&wrote, 0);
#undef EMIT_PRO
#undef EMIT_SYM
	CHECK(luw_enc_finish(&e) == 0, "edge %s: encoder failed",
	      memprof ? "memprof" : "sysprof");

	rc = decode_any(e.buf, e.len, &log_sops, &log_mops, &got, &kind, err,
			sizeof(err));
	CHECK(rc == 0 && kind == (memprof ? 'm' : 's'),
	      "edge %s: does not decode: rc %d %s",
	      memprof ? "memprof" : "sysprof", rc, err);
	CHECK(got.b.len == wrote.b.len &&
		      !memcmp(got.b.buf, wrote.b.buf, got.b.len),
	      "edge %s: decoded items differ from the written ones (first "
	      "difference at %zu of %zu)",
	      memprof ? "memprof" : "sysprof",
	      first_diff(got.b.buf, got.b.len, wrote.b.buf, wrote.b.len),
	      wrote.b.len);
	rc = decode_any(e.buf, e.len, &luw_enc_sysprof_ops,
			&luw_enc_memprof_ops, &again, &kind, err, sizeof(err));
	CHECK(rc == 0 && again.len == e.len &&
		      !memcmp(again.buf, e.buf, e.len),
	      "edge %s: does not re-encode identically (first difference at "
	      "%zu)",
	      memprof ? "memprof" : "sysprof",
	      first_diff(again.buf, again.len, e.buf, e.len));
	if (save_dir) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/edge-%s", save_dir,
			 memprof ? "memprof" : "sysprof");
		f = fopen(path, "wb");
		CHECK(f && fwrite(e.buf, 1, e.len, f) == e.len && !fclose(f),
		      "cannot write %s", path);
	}
	printf("ok edge cases (%s): %zu bytes, %zu samples, %zu events, %zu "
	       "symbols round-trip\n",
	       memprof ? "memprof" : "sysprof", e.len, got.nsample, got.nevent,
	       got.nsym);
	luw_enc_free(&e);
	luw_enc_free(&again);
	luw_enc_free(&wrote.b);
	luw_enc_free(&got.b);
}

/* --- 4. Streams read through a pipe ------------------------------------ */

/* A synthesised stream of several windows decodes the same from a pipe. */
static void pipe_check(const char *path, uint64_t size)
{
	struct log wrote = { 0 }, got = { 0 };
	struct luw_gen *g;
	struct luw_enc e;
	char err[256];
	size_t len;
	uint8_t *data = luw_test_load(path, &len);
	int rc, kind;

	luw_enc_init_mem(&e);
	luw_enc_init_mem(&wrote.b);
	luw_enc_init_mem(&got.b);
	g = luw_gen_load(data, len, err, sizeof(err));
	CHECK(g, "%s: %s", path, err);
	if (g && !luw_gen_write(g, &e, size, 9, 0, &log_sops, &log_mops,
				&wrote)) {
		rc = decode_pipe(e.buf, e.len, &log_sops, &log_mops, &got,
				 &kind, err, sizeof(err));
		CHECK(rc == 0, "%s: %zu bytes through a pipe: %s", path, e.len,
		      err);
		CHECK(got.b.len == wrote.b.len &&
			      !memcmp(got.b.buf, wrote.b.buf, got.b.len),
		      "%s: %zu bytes through a pipe decode differently (first "
		      "difference at %zu of %zu)",
		      path, e.len,
		      first_diff(got.b.buf, got.b.len, wrote.b.buf,
				 wrote.b.len),
		      wrote.b.len);
		printf("ok %s: %zu synthesised bytes decode the same through a "
		       "pipe\n",
		       path, e.len);
	}
	luw_gen_free(g);
	luw_enc_free(&e);
	luw_enc_free(&wrote.b);
	luw_enc_free(&got.b);
	free(data);
}

/*
 * Long strings: a symtab of many long C symbol names (strings straddle the
 * reader's window edges), then a Lua chunk name of name_len bytes (LuaJIT
 * names a chunk made by load(string) after the whole string, so chunk
 * names of megabytes are real), then a memprof body that uses them.
 */
static void long_strings(size_t name_len)
{
	const struct luw_prologue ljs = { { 'l', 'j', 's' }, 3, { 0 }, 0 };
	const struct luw_prologue ljm = { { 'l', 'j', 'm' }, 3, { 0 }, 0 };
	struct log wrote = { 0 }, got = { 0 };
	struct luw_sym sym = { 0 };
	struct luw_mp_event ev = { 0 };
	struct luw_enc e;
	char *name = malloc(name_len), err[256];
	int i, rc, kind;

	if (!name) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (i = 0; (size_t)i < name_len; i++)
		name[i] = (char)('a' + i % 26);
	luw_enc_init_mem(&e);
	luw_enc_init_mem(&wrote.b);
	luw_enc_init_mem(&got.b);
	luw_enc_prologue(&e, &ljs);
	lg_prologue(&wrote, &ljs);
	for (i = 0; i < 2000; i++) {
		sym.header = LUW_SYM_CFUNC;
		sym.type = LUW_SYM_CFUNC;
		sym.addr = 0x400000 + 0x1000 * (uint64_t)i;
		sym.name = name;
		sym.name_len = 700 + (size_t)(i % 97);
		luw_enc_sym(&e, &sym);
		lg_sym(&wrote, &sym);
	}
	sym.header = LUW_SYM_LFUNC;
	sym.type = LUW_SYM_LFUNC;
	sym.addr = 0x41410000;
	sym.line = 1;
	sym.name = name;
	sym.name_len = name_len;
	luw_enc_sym(&e, &sym);
	lg_sym(&wrote, &sym);
	memset(&sym, 0, sizeof(sym));
	sym.header = 0x80;
	sym.final = 1;
	luw_enc_sym(&e, &sym);
	lg_sym(&wrote, &sym);
	luw_enc_prologue(&e, &ljm);
	lg_prologue(&wrote, &ljm);
	for (i = 0; i < 1000; i++) {
		ev.header = 0x09;	/* alloc from a Lua function */
		ev.aevent = LUW_AEVENT_ALLOC;
		ev.asource = LUW_ASOURCE_LFUNC;
		ev.addr = 0x41410000;
		ev.line = 1 + (uint64_t)i % 7;
		ev.naddr = 0x10000 + 16 * (uint64_t)i;
		ev.nsize = 24;
		luw_enc_mp_event(&e, &ev);
		lg_event(&wrote, &ev);
	}
	luw_enc_epilogue(&e);
	lg_epilogue(&wrote, 0);
	CHECK(luw_enc_finish(&e) == 0, "long strings: encoder failed");

	rc = decode_pipe(e.buf, e.len, &log_sops, &log_mops, &got, &kind, err,
			 sizeof(err));
	if (name_len > (64u << 20)) {
		/* Beyond the reader's cap: a clear error, not an allocation. */
		CHECK(rc != 0 && strstr(err, "expected Lua chunk name") &&
			      strstr(err, "limit"),
		      "a %zu-byte chunk name: rc %d, error '%s'", name_len, rc,
		      err);
		if (rc != 0)
			printf("ok a %zu-byte chunk name is refused: %s\n",
			       name_len, err);
	} else {
		CHECK(rc == 0 && got.b.len == wrote.b.len &&
			      !memcmp(got.b.buf, wrote.b.buf, got.b.len),
		      "stream of %zu bytes with a %zu-byte chunk name does "
		      "not decode through a pipe: rc %d %s",
		      e.len, name_len, rc, err);
		if (rc == 0)
			printf("ok a %zu-byte stream with a %zu-byte chunk name "
			       "decodes through a pipe\n",
			       e.len, name_len);
	}
	luw_enc_free(&e);
	luw_enc_free(&wrote.b);
	luw_enc_free(&got.b);
	free(name);
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

	if (!strcmp(dir, "--long-strings")) {
		long_strings(1000);
		long_strings(900u << 10);
		long_strings(3u << 20);
		long_strings(40u << 20);
		long_strings((64u << 20) + 1);
		return luw_test_status("test_roundtrip --long-strings");
	}
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
			data = luw_test_load(path, &len);
			free(data);
			/* Pass 0 cut short (compact symtab), several passes. */
			synth_check(path, len / 3, 11, LUW_GEN_COMPACT);
			synth_check(path, 4096, 3, LUW_GEN_COMPACT);
			synth_check(path, 5 * (uint64_t)len + 12345, 42, 0);
			synth_check(path, 3 * (uint64_t)len, 5,
				    LUW_GEN_COMPACT);
			synth_seeds(path);
			pipe_check(path, 3u << 20);
		}
		free(ents[i]);
	}
	free(ents);
	edge_stream(0, argc > 2 ? argv[2] : NULL);
	edge_stream(1, argc > 2 ? argv[2] : NULL);
	CHECK(nsys >= 3 && nmem >= 2,
	      "expected >= 3 sysprof and >= 2 memprof fixtures in %s, found "
	      "%d and %d",
	      dir, nsys, nmem);
	if (luw_test_status("test_roundtrip"))
		return 1;
	printf("all round trips ok\n");
	return 0;
}
