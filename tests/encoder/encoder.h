/*
 * Test-only encoder of Tarantool's profiler streams: the inverse of the
 * decoders in userspace/lib (symtab.h, sysprof.h, memprof.h).
 *
 * It writes the items the decoders deliver, one function per item, with
 * the same grammar (see the decoders' headers).  Feeding it every callback
 * of a decode must give back the input byte for byte: that is the proof
 * that the decoders see the whole format.  The same functions write the
 * large synthetic streams of the benchmarks and the fuzz seeds.
 *
 * ULEB128s are written minimal, as LuaJIT writes them.
 *
 * Output goes to a growing memory buffer, or to a FILE in chunks (so a
 * multi-gigabyte stream costs no memory).  Errors are sticky: check
 * luw_enc_finish() once at the end.
 */
#ifndef LUW_ENCODER_H
#define LUW_ENCODER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "streams/memprof.h"
#include "streams/symtab.h"
#include "streams/sysprof.h"

struct luw_enc {
	uint8_t *buf;
	size_t len, cap;
	FILE *out;		/* NULL: everything stays in buf */
	uint64_t flushed;	/* bytes already written to out */
	int failed;
};

/* Into memory; the bytes are e->buf[0 .. e->len) after finish. */
void luw_enc_init_mem(struct luw_enc *e);
/* Into out (not closed by the encoder). */
void luw_enc_init_file(struct luw_enc *e, FILE *out);
/* Flush to the FILE if any.  0, or -1 if any write or allocation failed. */
int luw_enc_finish(struct luw_enc *e);
void luw_enc_free(struct luw_enc *e);

/* Bytes produced so far (flushed or not). */
static inline uint64_t luw_enc_size(const struct luw_enc *e)
{
	return e->flushed + e->len;
}

/* --- Primitives --------------------------------------------------------- */

void luw_enc_u8(struct luw_enc *e, uint8_t v);
void luw_enc_uleb(struct luw_enc *e, uint64_t v);
void luw_enc_string(struct luw_enc *e, const char *s, size_t len);
/* Size in bytes of v as a minimal ULEB128. */
unsigned int luw_enc_uleb_size(uint64_t v);

/* --- Items -------------------------------------------------------------- */

/* prologue := magic version reserved */
void luw_enc_prologue(struct luw_enc *e, const struct luw_prologue *p);
/*
 * A symtab entry with its header byte: s->header, then the body of
 * s->type unless s->final.  This writes leading-symtab entries, the final
 * marker, and sysprof's in-stream updates (whose header is 10, 11 or 12).
 */
void luw_enc_sym(struct luw_enc *e, const struct luw_sym *s);
/* The body of a symbol of type s->type (no header). */
void luw_enc_sym_body(struct luw_enc *e, const struct luw_sym *s);

/* One sysprof sample (s->vmstate is the header byte). */
void luw_enc_sp_sample(struct luw_enc *e, const struct luw_sp_sample *s);
/* One memprof event (ev->header is the header byte; symtab events too). */
void luw_enc_mp_event(struct luw_enc *e, const struct luw_mp_event *ev);
/* Both formats end with the byte 0x80. */
void luw_enc_epilogue(struct luw_enc *e);

/*
 * Decoder callbacks that re-encode everything they receive
 * (ctx = struct luw_enc).
 */
extern const struct luw_sysprof_ops luw_enc_sysprof_ops;
extern const struct luw_memprof_ops luw_enc_memprof_ops;

#endif
