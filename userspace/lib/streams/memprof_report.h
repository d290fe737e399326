/*
 * The report of a memprof stream, line for line what the fork's
 * luajit-parse-memprof prints (tools/memprof.lua with memprof/parse.lua,
 * process.lua, humanize.lua and utils/symtab.lua):
 *
 *   ALLOCATIONS / REALLOCATIONS / DEALLOCATIONS: one entry per location
 *   (source, address, line, trace, symbol generation), "NAME: N events
 *   <TAB>+AB<TAB>-FB"; for reallocations and frees also "Overrides:", the
 *   names of the locations that allocated the chunks they changed, sorted
 *   bytewise.  Entries by event count, most first.
 *   HEAP SUMMARY: per location name, bytes still held and the alloc/free
 *   counts of the chunks involved, most bytes first; only names that hold
 *   more than 0 bytes.
 *   ALIASES: the chunks named "function_alias_N" (sources with newlines).
 *
 * Names are fixed when a location is first seen (the symbol generation
 * current then), as the reference does.
 *
 * Order of equal entries: the reference sorts with table.sort on the count
 * alone, starting from pairs() order over tables keyed by strings, and
 * LuaJIT seeds its string hashes at random per process, so the reference
 * itself prints equal-count entries in an order that changes from run to
 * run.  Here they come in the order of first appearance in the stream,
 * which is stable.
 *
 * Memory: one record per distinct location and one per live heap chunk
 * (the reference keeps the same), never per event.
 */
#ifndef LUW_STREAMS_MEMPROF_REPORT_H
#define LUW_STREAMS_MEMPROF_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "streams/memprof.h"
#include "streams/reader.h"
#include "streams/symtab.h"

struct luw_memprof_report;

/* A report over the symbols in st (extended by the stream's updates). */
struct luw_memprof_report *luw_memprof_report_new(struct luw_symtab *st);
void luw_memprof_report_free(struct luw_memprof_report *rep);

/* Decoder callbacks that feed rep (ctx = rep). */
extern const struct luw_memprof_ops luw_memprof_report_ops;

/*
 * The same as luw_memprof_decode_body(r, &luw_memprof_report_ops, rep), faster: the
 * common events go from the reader's window straight into the report's
 * queue, with no event structure and no call per event between them.
 * Returns 0 at a clean end, -1 on a bad or truncated stream, 1 when out of
 * memory (luw_memprof_report_oom()).
 */
int luw_memprof_report_decode_body(struct luw_reader *r, struct luw_memprof_report *rep);

/*
 * Events received (alloc, realloc and free events; not symtab ones).  The
 * last few wait in a queue until the next symtab event or luw_memprof_report_write().
 */
uint64_t luw_memprof_report_events(const struct luw_memprof_report *rep);
int luw_memprof_report_oom(const struct luw_memprof_report *rep);

/*
 * The full report, or only HEAP SUMMARY and ALIASES.  0 or -1.  Events
 * still queued are aggregated first.  The text goes out in pieces as it is
 * made (a service's report is megabytes), so after a failure (out of
 * memory, a write error) part of it may have been written.  It ends the
 * intake: the live-heap table is freed first (the report needs only the
 * records), so rep takes no more events after it.
 */
int luw_memprof_report_write(struct luw_memprof_report *rep, int leak_only, FILE *out);

#endif
