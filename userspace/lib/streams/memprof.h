/*
 * Streaming decoder of Tarantool's memprof streams ("ljm" version 3).
 *
 * Grammar (checked against the fixtures' bytes and the fork's
 * src/lj_memprof.h and tools/memprof/parse.lua):
 *
 *   stream         := symtab memprof             (symtab: see symtab.h)
 *   memprof        := prologue event* epilogue
 *   prologue       := 'l' 'j' 'm' version reserved
 *   version        := <BYTE>                    (3)
 *   reserved       := <BYTE> <BYTE> <BYTE>
 *   event          := event-alloc | event-realloc | event-free | event-symtab
 *   event-alloc    := event-header loc naddr nsize
 *   event-realloc  := event-header loc oaddr osize naddr nsize
 *   event-free     := event-header loc oaddr osize
 *   event-symtab   := event-header sym-body     (the bodies of symtab.h;
 *                                               source LFUNC, CFUNC, TRACE)
 *   event-header   := <BYTE>
 *   loc            := loc-int | loc-lua | loc-c | loc-trace
 *   loc-int        := (nothing)                 source INTERNAL
 *   loc-lua        := sym-addr line-no          source LFUNC
 *   loc-c          := sym-addr                  source CFUNC
 *   loc-trace      := trace-no                  source TRACE
 *   epilogue       := <BYTE 0x80>
 *   sym-addr, line-no, trace-no, oaddr, osize, naddr, nsize := <ULEB128>
 *
 *   event-header: [FUUSSSEE]
 *     EE : 0 symtab, 1 alloc, 2 free, 3 realloc
 *     SSS: 1 internal, 2 Lua function, 3 C function, 4 trace
 *     UU : unused, must be 0; F: the epilogue (the byte is exactly 0x80)
 *
 * Nothing may follow the epilogue.  The decoder calls back once per item
 * in stream order and keeps no per-event state; every field is delivered,
 * so an encoder can re-emit the stream byte for byte (LuaJIT always writes
 * minimal ULEB128s, the one thing the events cannot show).
 */
#ifndef LUW_STREAMS_MEMPROF_H
#define LUW_STREAMS_MEMPROF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "streams/reader.h"
#include "streams/symtab.h"

#define LUW_LJM_VERSION 3

enum luw_aevent {
	LUW_AEVENT_SYMTAB = 0,
	LUW_AEVENT_ALLOC = 1,
	LUW_AEVENT_FREE = 2,
	LUW_AEVENT_REALLOC = 3,
};

enum luw_asource {
	LUW_ASOURCE_INT = 1,
	LUW_ASOURCE_LFUNC = 2,
	LUW_ASOURCE_CFUNC = 3,
	LUW_ASOURCE_TRACE = 4,
};

#define LUW_LJM_EPILOGUE 0x80

struct luw_mp_event {
	uint8_t header;		/* raw event-header byte */
	uint8_t aevent;		/* enum luw_aevent */
	uint8_t asource;	/* enum luw_asource */
	uint64_t offset;	/* stream offset of the header */
	/* loc (alloc, free, realloc); fields a source lacks are 0. */
	uint64_t addr, line, traceno;
	uint64_t oaddr, osize;	/* free, realloc */
	uint64_t naddr, nsize;	/* alloc, realloc */
	struct luw_sym sym;	/* symtab (header 0, type from the source) */
};

/*
 * Callbacks; any may be NULL.  A positive return stops decoding and is
 * returned by luw_memprof_decode().  Pointers in the arguments are valid
 * during the call only.
 *  - prologue: "ljs" first, then "ljm".
 *  - sym: every symbol of the leading symtab, its final marker included.
 *  - event: every event, symtab events included (ev->sym).
 *  - epilogue: the 0x80 byte.
 */
struct luw_memprof_ops {
	int (*prologue)(void *ctx, const struct luw_prologue *p);
	int (*sym)(void *ctx, const struct luw_sym *s);
	int (*event)(void *ctx, const struct luw_mp_event *ev);
	int (*epilogue)(void *ctx, uint64_t offset);
};

/* The numbers of an alloc, free or realloc event; those it lacks are 0. */
struct luw_mp_nums {
	uint64_t addr, line, traceno;	/* loc */
	uint64_t oaddr, osize;		/* free, realloc */
	uint64_t naddr, nsize;		/* alloc, realloc */
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Longest alloc, free or realloc event: the header and six 10-byte ULEBs. */
#define LUW_MP_MAX_EVENT 61

/*
 * A ULEB128 of at most 8 bytes with no bounds check (the caller has
 * LUW_MP_MAX_EVENT bytes); NULL for a longer one, left to the checked
 * path.  One and two bytes (sizes, lines) take no squeezing; longer ones
 * (addresses take 6-7) are squeezed from one load in three steps.
 *
 * What both decoders do first: one and two bytes straight, their end
 * returned; otherwise p itself, the 8 bytes at p in *v and in *stop the
 * high bits of those that end the number; NULL when none of the 8 does.
 */
static inline const uint8_t *luw_mp_uleb8_head(const uint8_t *p, uint64_t *out,
						uint64_t *v, uint64_t *stop)
{
	if (!(p[0] & 0x80)) {
		*out = p[0];
		return p + 1;
	}
	if (!(p[1] & 0x80)) {
		*out = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	memcpy(v, p, 8);
	*stop = ~*v & 0x8080808080808080ULL;
	return *stop ? p : NULL;
}

static inline const uint8_t *luw_mp_uleb8(const uint8_t *p, uint64_t *out)
{
	uint64_t v, stop;
	const uint8_t *q = luw_mp_uleb8_head(p, out, &v, &stop);

	if (q != p)
		return q;
	v &= stop ^ (stop - 1);
	v = (v & 0x007f007f007f007fULL) | (v & 0x7f007f007f007f00ULL) >> 1;
	v = (v & 0x00003fff00003fffULL) | (v & 0x3fff00003fff0000ULL) >> 2;
	v = (v & 0x000000000fffffffULL) | (v & 0x0fffffff00000000ULL) >> 4;
	*out = v;
	return p + (__builtin_ctzll(stop) >> 3) + 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LUW_MP_HAVE_BMI2 1
/*
 * The same with BMI2: pext squeezes the 7-bit groups in one instruction.
 * Only where pext is fast (luw_mp_bmi2_fast()).
 */
static inline __attribute__((target("bmi2"))) const uint8_t *
luw_mp_uleb8_bmi2(const uint8_t *p, uint64_t *out)
{
	uint64_t v, stop;
	const uint8_t *q = luw_mp_uleb8_head(p, out, &v, &stop);

	if (q != p)
		return q;
	*out = _pext_u64(v & (stop ^ (stop - 1)), 0x7f7f7f7f7f7f7f7fULL);
	return p + (__builtin_ctzll(stop) >> 3) + 1;
}

/*
 * pext is one fast instruction on Intel since Haswell and AMD since Zen 3;
 * AMD's families 15h and 17h (Excavator, Zen 1 and 2) microcode it at
 * ~20 cycles or more, slower than the three squeeze steps.
 */
static inline int luw_mp_bmi2_fast(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("bmi2") &&
	       !(__builtin_cpu_is("amd") && (__builtin_cpu_is("amdfam15h") ||
					     __builtin_cpu_is("amdfam17h")));
}
#endif

/*
 * The body of luw_mp_fast(), for each ULEB128 reader (ATTR: its target).
 */
#define LUW_MP_FAST_DEF(NAME, ULEB, ATTR)					\
static inline ATTR const uint8_t *NAME(const uint8_t *p, uint8_t *aevent,	\
				       struct luw_mp_nums *n)		\
{										\
	uint8_t h = *p++;							\
	unsigned int src = (h >> 2) & 7;					\
										\
	if ((h & 0xe0) || !(h & 3) || src < LUW_ASOURCE_INT ||		\
	    src > LUW_ASOURCE_TRACE)						\
		return NULL;							\
	*aevent = h & 3;							\
	n->addr = n->line = n->traceno = 0;					\
	n->oaddr = n->osize = n->naddr = n->nsize = 0;				\
	switch (src) {								\
	case LUW_ASOURCE_INT:							\
		break;								\
	case LUW_ASOURCE_LFUNC:							\
		if (!(p = ULEB(p, &n->addr)) || !(p = ULEB(p, &n->line)))	\
			return NULL;						\
		break;								\
	case LUW_ASOURCE_CFUNC:							\
		if (!(p = ULEB(p, &n->addr)))					\
			return NULL;						\
		break;								\
	default:								\
		if (!(p = ULEB(p, &n->traceno)))				\
			return NULL;						\
		break;								\
	}									\
	if ((h & LUW_AEVENT_FREE) && (!(p = ULEB(p, &n->oaddr)) ||		\
				      !(p = ULEB(p, &n->osize))))		\
		return NULL;							\
	if ((h & LUW_AEVENT_ALLOC) && (!(p = ULEB(p, &n->naddr)) ||		\
				       !(p = ULEB(p, &n->nsize))))		\
		return NULL;							\
	return p;								\
}

/*
 * The common case of the event loop: an alloc, free or realloc event at p
 * whose numbers fit 8 bytes each, with at least LUW_MP_MAX_EVENT bytes
 * readable from p.  Returns the byte after it, with its kind (enum
 * luw_aevent) in *aevent and its numbers in *n; NULL leaves it to the
 * checked path (symtab events, the epilogue, bad headers, long numbers),
 * *aevent and *n then hold anything.
 */
LUW_MP_FAST_DEF(luw_mp_fast, luw_mp_uleb8, )
#ifdef LUW_MP_HAVE_BMI2
LUW_MP_FAST_DEF(luw_mp_fast_bmi2, luw_mp_uleb8_bmi2,
		__attribute__((target("bmi2"))))
#endif
#else
#define LUW_MP_MAX_EVENT 61
static inline const uint8_t *luw_mp_fast(const uint8_t *p, uint8_t *aevent,
					 struct luw_mp_nums *n)
{
	(void)p;
	(void)aevent;
	(void)n;
	return NULL;
}
#endif

/*
 * The next item through the checked path, from its header on: 1 and the
 * event in *ev, 0 at the epilogue when nothing follows it, -1 when the
 * stream is bad or truncated.  For decoders of their own (the report's)
 * that take the common events with luw_mp_fast() and the rest here.
 */
int luw_memprof_next(struct luw_reader *r, struct luw_mp_event *ev);

/*
 * Decode a whole stream from r.  Returns 0 at a clean end, -1 when the
 * stream is bad or truncated (see luw_reader_strerror()), or a callback's
 * positive value.  Everything before the failure has been delivered.
 */
int luw_memprof_decode(struct luw_reader *r, const struct luw_memprof_ops *ops,
		       void *ctx);
/* The same from the "ljm" prologue on (the symtab already consumed). */
int luw_memprof_decode_body(struct luw_reader *r,
			    const struct luw_memprof_ops *ops, void *ctx);

#endif
