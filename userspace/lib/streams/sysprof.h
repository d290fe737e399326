/*
 * Streaming decoder of Tarantool's sysprof streams ("ljp" version 2).
 *
 * Grammar (checked against the fixtures' bytes and the fork's
 * src/lj_sysprof.h, src/lj_sysprof.c and tools/sysprof/parse.lua):
 *
 *   stream          := symtab sysprof            (symtab: see symtab.h)
 *   sysprof         := prologue sample* epilogue
 *   prologue        := 'l' 'j' 'p' version reserved
 *   version         := <BYTE>                   (2)
 *   reserved        := <BYTE> <BYTE> <BYTE>
 *   sample          := sample-guest | sample-host | sample-trace | symtab-update
 *   sample-guest    := sample-header stack-lua stack-host   (LFUNC FFUNC CFUNC)
 *   sample-host     := sample-header stack-host             (INTERP GC EXIT
 *                                                            RECORD OPT ASM)
 *   sample-trace    := sample-header traceno sym-addr line-no   (TRACE)
 *   symtab-update   := sample-header sym-body   (10: Lua function, 11: C
 *                                                symbol, 12: trace; the
 *                                                bodies of symtab.h)
 *   sample-header   := <BYTE>   0..9: the vmstate (LJ_VMST_*)
 *   stack-lua       := frame-lua* frame-lua-last    (innermost first)
 *   frame-lua       := frame-lfunc | frame-cfunc | frame-ffunc
 *   frame-lfunc     := <BYTE 1> sym-addr line-no    (GCproto, its first line)
 *   frame-cfunc     := <BYTE 2> exec-addr           (the lua_CFunction)
 *   frame-ffunc     := <BYTE 3> ffid
 *   frame-lua-last  := <BYTE 0x80>
 *   stack-host      := frame-host* frame-host-last  (innermost first)
 *   frame-host      := exec-addr                    (non-zero)
 *   frame-host-last := <ULEB128 0>
 *   epilogue        := <BYTE 0x80>
 *   line-no, traceno, ffid, sym-addr, exec-addr := <ULEB128>
 *
 * In leaf mode ('L') the host stack is empty; in default mode ('D') the
 * profiler writes no stream at all.  Nothing may follow the epilogue.
 *
 * The decoder is push-style: it calls back once per item, in stream order,
 * and keeps only the current sample (its frames live in a buffer reused
 * from sample to sample), so memory does not grow with the stream.  A
 * sample carries every field and raw header byte, so an encoder can
 * re-emit the stream byte for byte from the callbacks (the one thing it
 * cannot see is a non-minimal ULEB128, which LuaJIT never writes).
 */
#ifndef LUW_STREAMS_SYSPROF_H
#define LUW_STREAMS_SYSPROF_H

#include <stddef.h>
#include <stdint.h>

#include "streams/reader.h"
#include "streams/symtab.h"

#define LUW_LJP_VERSION 2

enum luw_vmstate {
	LUW_VMST_INTERP,
	LUW_VMST_LFUNC,
	LUW_VMST_FFUNC,
	LUW_VMST_CFUNC,
	LUW_VMST_GC,
	LUW_VMST_EXIT,
	LUW_VMST_RECORD,
	LUW_VMST_OPT,
	LUW_VMST_ASM,
	LUW_VMST_TRACE,
	LUW_VMST__MAX
};

/* Sample headers that carry symtab updates, and the epilogue. */
#define LUW_LJP_SYM_LFUNC 10
#define LUW_LJP_SYM_CFUNC 11
#define LUW_LJP_SYM_TRACE 12
#define LUW_LJP_EPILOGUE 0x80

enum luw_frame_type {
	LUW_FRAME_LFUNC = 1,
	LUW_FRAME_CFUNC = 2,
	LUW_FRAME_FFUNC = 3,
};
#define LUW_FRAME_LUA_LAST 0x80

/* Upper bound of frames per stack: more is treated as a corrupt stream. */
#define LUW_SP_MAX_FRAMES 65536

/* Names of the vmstates 0..9 ("INTERP", ..., "TRACE"). */
const char *luw_sysprof_vmstate_name(unsigned int vmstate);

struct luw_sp_frame {
	uint8_t type;		/* enum luw_frame_type (the raw header byte) */
	uint64_t addr;		/* LFUNC: GCproto; CFUNC: function; FFUNC: ffid */
	uint64_t line;		/* LFUNC: line-no */
};

struct luw_sp_sample {
	uint8_t vmstate;	/* the raw sample-header byte, 0..9 */
	uint64_t offset;	/* stream offset of the header */
	/* sample-guest: Lua frames, innermost first. */
	const struct luw_sp_frame *lua;
	size_t nlua;
	/* sample-guest, sample-host: host return addresses, innermost first. */
	const uint64_t *host;
	size_t nhost;
	/* sample-trace */
	uint64_t traceno, trace_addr, trace_line;
};

/*
 * Callbacks; any may be NULL.  A positive return stops decoding and is
 * returned by luw_sysprof_decode().  Pointers in the arguments are valid
 * during the call only.
 *  - prologue: "ljs" first, then "ljp".
 *  - sym: every symbol of the leading symtab (s->header raw) including its
 *    final marker (s->final), then every symtab update; for those,
 *    s->header is the sample header (10, 11, 12).
 *  - sample: one per sample.
 *  - epilogue: the 0x80 byte.
 */
struct luw_sysprof_ops {
	int (*prologue)(void *ctx, const struct luw_prologue *p);
	int (*sym)(void *ctx, const struct luw_sym *s);
	int (*sample)(void *ctx, const struct luw_sp_sample *s);
	int (*epilogue)(void *ctx, uint64_t offset);
};

/*
 * Decode a whole stream from r.  Returns 0 at a clean end (epilogue, then
 * end of input), -1 when the stream is bad or truncated (luw_reader_failed(r);
 * luw_reader_strerror() says where and what was expected), -2 on ENOMEM, or a
 * callback's positive value.  Everything before the failure point has
 * been delivered to the callbacks.
 */
int luw_sysprof_decode(struct luw_reader *r, const struct luw_sysprof_ops *ops,
		       void *ctx);
/* The same from the "ljp" prologue on (the symtab already consumed). */
int luw_sysprof_decode_body(struct luw_reader *r,
			    const struct luw_sysprof_ops *ops, void *ctx);

#endif
