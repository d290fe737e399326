/*
 * symbolize: name what sample records refer to while the processes live,
 * and write the names into a .luw file (include/luaunwind_file.h) so the
 * file can be reported after the processes are gone.
 *
 * Per process: its mappings (/proc/PID/maps, read again when a pc falls
 * outside every known mapping: dlopen, ffi.load), ELF symbols of each
 * sampled pc (elf_symbols: .symtab, debug files, .dynsym), and, when LuaJIT is
 * found in it (target/layout), its Lua prototypes (chunk, lines of the sampled
 * bytecode positions), callee names from the callers' bytecode (target/funcname),
 * C functions, traces and fast-function names (target/proto).  Every fact is
 * written once, as the first sample that needs it arrives.
 */
#ifndef LUW_RECORD_SYMBOLIZE_H
#define LUW_RECORD_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/file.h"

struct luw_symbolize;

/* Names go to w (which stays the caller's). */
struct luw_symbolize *luw_symbolize_new(struct luw_file_writer *w, uint32_t freq);
void luw_symbolize_free(struct luw_symbolize *z);

/*
 * Start on process pid: writes its process and fast-function sections.
 * 0; 1 when it is not (or no longer) a LuaJIT process we can read, with
 * the reason in err (host frames are still named); -1 with a message when
 * it cannot be read at all (gone, no permission); -2 with a message when
 * the sections could not be written (the writer keeps its error) or
 * memory ran out.  Processes whose samples arrive without a call here are
 * added then.
 */
int luw_symbolize_add(struct luw_symbolize *z, pid_t pid, char *err, size_t errlen);

/*
 * The same for a process whose layout attach has just proven (t, as
 * attach.h's luw_attach_target gives it): t is taken as it is, not proven
 * again.  A second proof of a process still making its Lua state can
 * fail where the first passed (record -- CMD attaches that early); its
 * samples would then go unnamed.  t NULL: as luw_symbolize_add.
 */
struct luw_layout_target;
int luw_symbolize_add_proven(struct luw_symbolize *z, pid_t pid,
			     const struct luw_layout_target *t, char *err,
			     size_t errlen);

/*
 * Names everything the records in buf[0..len) use (a read() buffer,
 * 8-byte aligned).  0; -1 when a record is malformed or writing failed.
 */
int luw_symbolize_records(struct luw_symbolize *z, const void *buf, size_t len);

/* Marks the processes that are gone (LUWF_PF_EXITED is written then). */
void luw_symbolize_reap(struct luw_symbolize *z);

/*
 * A raw capture (`cat /dev/luaunwind > raw.bin`: whole records, as read()
 * returns them) named against live process pid, as an in-memory .luw
 * file: *out (malloc'd) and *outlen.  0; 1 when pid is not a LuaJIT
 * process we can read (host frames are named, err says why); -1 with a
 * message (no such process, a malformed record, out of memory).
 */
int luw_symbolize_raw(pid_t pid, const void *raw, size_t len, uint8_t **out,
		 size_t *outlen, char *err, size_t errlen);

#endif
