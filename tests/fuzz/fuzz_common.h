/*
 * Shared by the fuzz targets: the properties every input must have, on top
 * of "no crash, no sanitizer report, no leak, no hang" that libFuzzer and
 * the sanitizers check by themselves.
 *
 * Encoder oracle: whatever the decoder delivers, re-encoded (tests/encoder),
 *  - for a clean stream: decodes cleanly again, to bytes that re-encode
 *    identically (the encoding is a fixed point), never longer than the
 *    input (the encoder writes minimal ULEB128s; the input may not), and
 *    equal to the input when no shorter;
 *  - for a bad stream: is no longer than the offset of the error (every
 *    item delivered lies before the failure point), and the error offset
 *    lies inside the input.
 */
#ifndef LUW_FUZZ_COMMON_H
#define LUW_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "streams/memprof.h"
#include "streams/reader.h"
#include "streams/symtab.h"
#include "streams/sysprof.h"

#define FUZZ_ASSERT(cond, ...)                                               \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "fuzz property failed: %s:%d: ",    \
				__FILE__, __LINE__);                         \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			abort();                                             \
		}                                                            \
	} while (0)

/* Where reports go: written for real, then thrown away. */
static inline FILE *fuzz_sink(void)
{
	static FILE *devnull;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	FUZZ_ASSERT(devnull, "cannot open /dev/null");
	return devnull;
}

/* The symtab callback of luaunwind-report: fill the table. */
static inline int fuzz_add_sym(void *ctx, const struct luw_sym *s)
{
	return !s->final && luw_symtab_add(ctx, s) ? 1 : 0;
}

/* Is the stream body after the symtab of the given kind ("ljp"/"ljm")? */
static inline int fuzz_body_is(const struct luw_reader *r, const char *magic)
{
	return r->end - r->p >= 3 && !memcmp(r->p, magic, 3);
}

/*
 * Decode data as a stream whose body is magic, re-encoding every item.
 * Returns the decoder's value; e gets the encoding, *err_off the failure
 * offset.
 */
static int fuzz_reencode(const uint8_t *data, size_t size, const char *magic,
			 struct luw_enc *e, uint64_t *err_off)
{
	struct luw_reader r;
	int rc;

	luw_enc_init_mem(e);
	luw_reader_open_mem(&r, data, size);
	rc = luw_symtab_decode(&r, luw_enc_sysprof_ops.prologue,
			       luw_enc_sysprof_ops.sym, e);
	if (!rc) {
		if (!strcmp(magic, "ljp"))
			rc = luw_sysprof_decode_body(&r, &luw_enc_sysprof_ops,
						     e);
		else
			rc = luw_memprof_decode_body(&r, &luw_enc_memprof_ops,
						     e);
	}
	*err_off = luw_reader_failed(&r) ? r.err_off : size;
	if (luw_reader_failed(&r)) {
		char msg[256];

		luw_reader_strerror(&r, msg, sizeof(msg));
		FUZZ_ASSERT(msg[0], "empty error message");
	}
	FUZZ_ASSERT(!luw_enc_finish(e), "encoder out of memory");
	return rc;
}

static size_t fuzz_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

static inline void fuzz_check_encoding(const uint8_t *data, size_t size,
				const char *magic)
{
	struct luw_enc e, again;
	uint64_t off, off2;
	int rc, rc2;

	rc = fuzz_reencode(data, size, magic, &e, &off);
	FUZZ_ASSERT(rc == 0 || rc == -1 || rc == -2, "decoder returned %d", rc);
	FUZZ_ASSERT(off <= size, "error offset %llu past the input (%zu)",
		    (unsigned long long)off, size);
	if (rc == 0) {
		FUZZ_ASSERT(e.len <= size, "re-encoding grew: %zu > %zu",
			    e.len, size);
		/*
		 * Only a non-minimal ULEB128 may shrink; nothing grows.  Same
		 * length, then, means every byte must come back: a reserved
		 * byte or a header bit the decoder dropped shows up here.
		 */
		FUZZ_ASSERT(e.len < size || !memcmp(e.buf, data, size),
			    "same length, different bytes at offset %zu",
			    fuzz_diff(e.buf, data, size));
		rc2 = fuzz_reencode(e.buf, e.len, magic, &again, &off2);
		FUZZ_ASSERT(rc2 == 0, "re-encoded stream does not decode");
		FUZZ_ASSERT(again.len == e.len &&
				    !memcmp(again.buf, e.buf, e.len),
			    "re-encoding is not a fixed point");
		luw_enc_free(&again);
	} else if (rc == -1) {
		FUZZ_ASSERT(e.len <= off,
			    "items past the error: %zu bytes re-encoded, "
			    "error at %llu",
			    e.len, (unsigned long long)off);
	}
	luw_enc_free(&e);
}

#endif
