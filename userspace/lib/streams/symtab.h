/*
 * Symbol tables of Tarantool's LuaJIT profilers (format "ljs" version 3),
 * shared by the sysprof and memprof decoders.
 *
 * Grammar (checked against the fixtures' bytes and the fork's
 * src/lj_symtab.h):
 *
 *   symtab         := prologue sym* sym-final
 *   prologue       := 'l' 'j' 's' version reserved
 *   version        := <BYTE>                      (3)
 *   reserved       := <BYTE> <BYTE> <BYTE>
 *   sym            := sym-lfunc | sym-cfunc | sym-trace
 *   sym-lfunc      := sym-header sym-addr sym-chunk sym-line
 *   sym-cfunc      := sym-header sym-addr sym-name
 *   sym-trace      := sym-header trace-no sym-addr sym-line
 *   sym-header     := <BYTE>
 *   sym-final      := sym-header                  (F bit set)
 *   sym-addr       := <ULEB128>   GCproto address / C symbol address
 *   sym-chunk      := string      chunk name of the prototype
 *   sym-name       := string      C symbol name
 *   sym-line       := <ULEB128>   first line of the prototype; for a trace,
 *                                 the line where the trace starts
 *   trace-no       := <ULEB128>
 *   string         := string-len string-payload
 *   string-len     := <ULEB128>
 *   string-payload := <BYTE> {string-len}
 *
 *   sym-header: [FUUUUUTT]  TT: 0 Lua function, 1 C symbol, 2 trace
 *                           (3 is refused); UUUUU: unused; F: final.
 *
 * Built-in Lua functions (e.g. "rad", "move") carry sym-line 2^64-1.
 * The same entries appear later inside the profile streams as symtab
 * updates (sysprof sample headers 10/11/12, memprof event type 0): they
 * use the bodies above without the sym-header.
 *
 * Generations: an address that gets a new Lua-function entry (a prototype
 * freed and another allocated at the same place), or a trace number that
 * is reused, starts a new generation; a location refers to the generation
 * that was current when the location was seen, as the fork's
 * tools/utils/symtab.lua does.  C symbols are kept in address order; an
 * entry for an address that already has one replaces its name.
 */
#ifndef LUW_STREAMS_SYMTAB_H
#define LUW_STREAMS_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "streams/reader.h"
#include "util/strbuf.h"

#define LUW_LJS_VERSION 3

enum luw_sym_type {
	LUW_SYM_LFUNC = 0,
	LUW_SYM_CFUNC = 1,
	LUW_SYM_TRACE = 2,
};

/*
 * A stream prologue: "ljs", "ljp" or "ljm" plus version and the reserved
 * bytes, kept raw so an encoder can reproduce them.
 */
struct luw_prologue {
	char magic[3];
	uint8_t version;
	uint8_t reserved[3];
	uint64_t offset;	/* where it starts in the stream */
};

/*
 * One decoded symbol.  Everything needed to re-encode it is here: the raw
 * header byte (0 for the header-less in-stream updates, whose type then
 * comes from the enclosing event), every field, and the string bytes.
 * name is valid only during the callback that receives the symbol.
 */
struct luw_sym {
	uint8_t header;		/* raw sym-header byte */
	uint8_t type;		/* enum luw_sym_type */
	uint8_t final;		/* the sym-final marker: no fields */
	uint64_t addr;		/* LFUNC, CFUNC: sym-addr; TRACE: sym-addr */
	uint64_t line;		/* LFUNC: first line; TRACE: start line */
	uint64_t traceno;	/* TRACE */
	const char *name;	/* LFUNC: chunk name; CFUNC: symbol name */
	size_t name_len;
	uint64_t offset;	/* stream offset of the entry */
};

/*
 * Read a prologue with the given magic and version.  Returns 1, or 0 with
 * the reader failed ("ljs prologue", "ljp version 2 (found 7)", ...).
 */
int luw_symtab_read_prologue(struct luw_reader *r, const char *magic, uint8_t version,
		      struct luw_prologue *p);

/*
 * Read one symtab entry (header included); s->final is set for the final
 * marker.  Returns 1, or 0 with the reader failed.
 */
int luw_symtab_read_sym(struct luw_reader *r, struct luw_sym *s);

/* Read the body of an entry of the given type (in-stream updates). */
int luw_symtab_read_sym_body(struct luw_reader *r, uint8_t type, struct luw_sym *s);

/*
 * Decode a leading symtab (prologue, entries, final marker), calling back
 * for the prologue and for every entry (the final marker included); a
 * positive callback value stops and is returned.  0 after the final
 * marker, -1 on a bad or truncated stream.
 */
int luw_symtab_decode(struct luw_reader *r,
		      int (*prologue)(void *ctx, const struct luw_prologue *p),
		      int (*sym)(void *ctx, const struct luw_sym *s),
		      void *ctx);

/* --- The table ---------------------------------------------------------- */

struct luw_symtab;

struct luw_symtab *luw_symtab_new(void);
void luw_symtab_free(struct luw_symtab *st);

/* Add a decoded symbol (not the final marker).  0, or -1 on ENOMEM. */
int luw_symtab_add(struct luw_symtab *st, const struct luw_sym *s);

/* Number of additions so far: lets caches notice that names may change. */
uint64_t luw_symtab_epoch(const struct luw_symtab *st);

/*
 * A code location as the profilers report it, with the generation of its
 * symbol (filled by luw_symtab_loc()).
 */
struct luw_loc {
	uint64_t addr;
	uint64_t line;
	uint64_t traceno;
	uint32_t gen;
};

/*
 * Set loc->gen the way the reference symtab.loc() does: the current
 * generation count of the trace (traceno != 0 and known) or of the Lua
 * function at addr; 0 when addr falls in a C symbol; 1 otherwise.
 */
void luw_symtab_loc(struct luw_symtab *st, struct luw_loc *loc);

/*
 * Append the reference tools' name for loc to out ("@chunk:line",
 * "function_alias_N:line", "INTERNAL", "name:0xstart", "CFUNC 0xaddr",
 * "TRACE [n] started at ...").  Returns 0, or -1 on ENOMEM.
 */
int luw_symtab_demangle(struct luw_symtab *st, const struct luw_loc *loc,
			struct luw_strbuf *out);

/*
 * Lua function generation gen (0: the latest) at addr: chunk name, first
 * line and alias number (0 for none; see luw_symtab_alias_chunk()).
 * Returns 1 if known.
 */
int luw_symtab_lfunc(const struct luw_symtab *st, uint64_t addr, uint32_t gen,
		     const char **chunk, size_t *len, uint64_t *firstline,
		     uint32_t *alias);

/* C symbol containing addr (greatest start <= addr).  Returns 1 if any. */
int luw_symtab_cfunc(struct luw_symtab *st, uint64_t addr, uint64_t *start,
		     const char **name, size_t *len);

/*
 * Trace traceno, generation gen (0: the latest): where it starts, and the
 * generation of the Lua function there at the time.  Returns 1 if known.
 */
int luw_symtab_trace(const struct luw_symtab *st, uint64_t traceno,
		     uint32_t gen, struct luw_loc *start);

/* Aliased chunk names ("function_alias_N" for chunks holding newlines). */
size_t luw_symtab_nalias(const struct luw_symtab *st);
/* Chunk of alias number i + 1 (i from 0). */
const char *luw_symtab_alias_chunk(const struct luw_symtab *st, size_t i,
				   size_t *len);

#endif
