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

/*
 * Decode a whole stream from r.  Returns 0 at a clean end, -1 when the
 * stream is bad or truncated (see luw_rd_strerror()), or a callback's
 * positive value.  Everything before the failure has been delivered.
 */
int luw_memprof_decode(struct luw_rd *r, const struct luw_memprof_ops *ops,
		       void *ctx);
/* The same from the "ljm" prologue on (the symtab already consumed). */
int luw_memprof_decode_body(struct luw_rd *r,
			    const struct luw_memprof_ops *ops, void *ctx);

#endif
