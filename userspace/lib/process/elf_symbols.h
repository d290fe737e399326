/*
 * ELF symbolization with libelf.
 *
 * One struct luw_elf per distinct file (cached per build-id, or per
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
#ifndef LUW_PROCESS_ELF_SYMBOLS_H
#define LUW_PROCESS_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

#include "process/debugfile.h"

struct luw_elf_sym {
	uint64_t addr;		/* virtual address (link-time) */
	uint64_t end;		/* exclusive */
	const char *name;
};

struct luw_elf_seg {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	uint32_t flags;		/* PF_X, PF_W, PF_R */
};


struct luw_fde;

struct luw_elf {
	char *path;
	char *debug_path;	/* separate debug file used, or NULL */
	const char *name;	/* basename of path */
	uint8_t build_id[LUW_BUILD_ID_MAX];
	size_t build_id_len;
	uint16_t e_type;	/* ET_EXEC, ET_DYN */
	uint64_t entry;
	struct luw_elf_seg *segs;	/* PT_LOAD, in program header order */
	size_t nsegs;
	struct luw_elf_sym *syms;	/* sorted by addr, one per address */
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
 * luw_elf_cache_clear().
 */
struct luw_elf *luw_elf_get(const char *path, char *err, size_t errlen);
void luw_elf_cache_clear(void);

/*
 * The start (link-time address) of the .eh_frame FDE that covers vaddr:
 * the function holding code that has no symbol (a stripped library).
 * 0 and *start set; -1 when no FDE covers it or the file has no
 * .eh_frame.
 */
int luw_elf_fde_start(struct luw_elf *e, uint64_t vaddr, uint64_t *start);

/* Load without the cache; free with luw_elf_free(). */
struct luw_elf *luw_elf_load(const char *path, char *err, size_t errlen);
void luw_elf_free(struct luw_elf *e);
/* Load from an open Elf, e.g. a [vdso] image read with elf_memory(). */
struct luw_elf *luw_elf_load_elf(Elf *elf, const char *name, char *err,
				 size_t errlen);

/* The symbol covering vaddr, or NULL. */
const struct luw_elf_sym *luw_elf_sym_at(const struct luw_elf *e, uint64_t vaddr);
/* The symbol named name (first match), or NULL.  Linear: for tests/tools. */
const struct luw_elf_sym *luw_elf_sym_named(const struct luw_elf *e,
					const char *name);

/* File offset <-> virtual address through the PT_LOAD segments: 0 or -1. */
int luw_elf_off2vaddr(const struct luw_elf *e, uint64_t off, uint64_t *vaddr);
int luw_elf_vaddr2off(const struct luw_elf *e, uint64_t vaddr, uint64_t *off);

/* Shared with cfi.c: facts read from an open Elf. */
/* The ELF file at path, read-only (*fd open until the caller closes it
 * after elf_end); NULL with a message in err. */
Elf *luw_elf_open(const char *path, int *fd, char *err, size_t errlen);
/* The section called name (its header in *sh), or NULL. */
Elf_Scn *luw_elf_section(Elf *elf, const char *name, GElf_Shdr *sh);
/*
 * The value of the first symbol called name in a section of type sh_type
 * (SHT_SYMTAB, SHT_DYNSYM); func_only: defined functions only.  0, or -1.
 */
int luw_elf_symbol(Elf *elf, unsigned int sh_type, const char *name,
		   int func_only, uint64_t *addr);
/* The same, with the symbol's st_size in *size. */
int luw_elf_symbol_sized(Elf *elf, unsigned int sh_type, const char *name,
			 int func_only, uint64_t *addr, uint64_t *size);
int luw_elf_read_segs(Elf *elf, struct luw_elf_seg **segs, size_t *nsegs);

#endif
