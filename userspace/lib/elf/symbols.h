/*
 * ELF symbolization with libelf.
 *
 * One struct luw_symbols per distinct file (cached per build-id, or per
 * device/inode/mtime when the file has none): its function symbols as a
 * sorted array with binary search, its loadable segments (to turn the
 * file offsets that unwinding uses into the virtual addresses symbols
 * use) and its build-id.
 *
 * Symbols come from, merged and de-duplicated by address:
 *   - the file's .symtab, else its separate debug file's .symtab, found
 *     as /usr/lib/debug/.build-id/xx/yyyy.debug or through .gnu_debuglink
 *     (next to the file, in .debug/, under /usr/lib/debug/<dir>/; CRC
 *     checked);
 *   - the file's .dynsym, which is all a stripped library has.
 * Where aliases share an address, a global name beats a weak one beats a
 * local one, and a name without leading underscores wins a tie.
 *
 * An address past every symbol's extent stays unnamed: callers print
 * module+0xoffset, never a wrong neighbour's name.  The entry point gets
 * the name _start when no symbol covers it, over the extent where the CFI
 * marks the return address undefined (stripped executables lose _start).
 *
 * Not thread-safe: the cache is process-global and unlocked.
 */
#ifndef LUW_ELF_SYMBOLS_H
#define LUW_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

#include "elf/debugfile.h"
#include "elf/elf.h"

struct luw_symbols_sym {
	uint64_t addr;		/* virtual address (link-time) */
	uint64_t end;		/* exclusive */
	const char *name;
};



struct luw_fde;

struct luw_symbols {
	char *path;
	char *debug_path;	/* separate debug file used, or NULL */
	const char *name;	/* basename of path */
	uint8_t build_id[LUW_BUILD_ID_MAX];
	size_t build_id_len;
	uint16_t e_type;	/* ET_EXEC, ET_DYN */
	uint64_t entry;
	struct luw_elf_seg *segs;	/* PT_LOAD, in program header order */
	size_t nsegs;
	struct luw_symbols_sym *syms;	/* sorted by addr, one per address */
	size_t nsyms;
	char *names;		/* storage of every name */
	/* .eh_frame's FDE ranges (ehframe.h), listed on first use */
	struct luw_fde *fdes;	/* sorted by start */
	size_t nfde;
	int fde_state;		/* 0 not tried, 1 listed, -1 none */
};

/*
 * The cached description of the ELF file at path (loaded on first use).
 * NULL on failure with a message in err.  The result lives until
 * luw_symbols_cache_clear().
 */
struct luw_symbols *luw_symbols_get(const char *path, char *err, size_t errlen);
void luw_symbols_cache_clear(void);

/*
 * The start (link-time address) of the .eh_frame FDE that covers vaddr:
 * the function holding code that has no symbol (a stripped library).
 * 0 and *start set; -1 when no FDE covers it or the file has no
 * .eh_frame.
 */
int luw_symbols_fde_start(struct luw_symbols *e, uint64_t vaddr, uint64_t *start);

/* Load without the cache; free with luw_symbols_free(). */
struct luw_symbols *luw_symbols_load(const char *path, char *err, size_t errlen);
void luw_symbols_free(struct luw_symbols *e);
/* Load from an open Elf, e.g. a [vdso] image read with elf_memory(). */
struct luw_symbols *luw_symbols_load_elf(Elf *elf, const char *name, char *err,
				 size_t errlen);

/* The symbol covering vaddr, or NULL. */
const struct luw_symbols_sym *luw_symbols_at(const struct luw_symbols *e, uint64_t vaddr);
/* The symbol named name (first match), or NULL.  Linear: for tests/tools. */
const struct luw_symbols_sym *luw_symbols_named(const struct luw_symbols *e,
					const char *name);

/* File offset <-> virtual address through the PT_LOAD segments: 0 or -1. */
int luw_symbols_off2vaddr(const struct luw_symbols *e, uint64_t off, uint64_t *vaddr);
int luw_symbols_vaddr2off(const struct luw_symbols *e, uint64_t vaddr, uint64_t *off);

#endif
