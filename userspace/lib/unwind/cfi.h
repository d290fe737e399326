/*
 * Compact unwind tables (include/luaunwind_unwind.h) from an ELF file's
 * .eh_frame, evaluated with libdw.
 *
 * Every FDE is walked row by row with dwarf_cfi_addrframe(); each row's
 * CFA rule and the rules of the return address (DWARF column 16) and of
 * rbp (column 6) are reduced to the table's vocabulary, rows are moved
 * from virtual addresses to file offsets through the executable PT_LOAD
 * segments, and adjacent rows with identical rules are merged.  r14's
 * rule (column 14: LuaJIT's DISPATCH register) goes into the table's r14
 * rows, merged over every stretch where it does not change.  Rows whose
 * rules the table cannot express become UNSUP; the only DWARF expression
 * recognised is the one every .plt section uses for its CFA (a sample can
 * land in any call into another library, e.g. luajit calling libm or
 * memcpy); none of the live tests' samples needed it, the step test
 * covers it.  LuaJIT's VM FDE (one rule for all of its code, true only
 * once its C frame is set up) gets exact rows in its entry prologues and
 * exit epilogues, found in its machine code (vmseq.h), marked
 * LUW_UW_VMSEQ.  A stub whose FDE ends at its `syscall` with nothing
 * pushed (glibc's clone, clone3) gets its entry rule at the pc after it,
 * marked LUW_UW_SYSCALL: true for the thread inside the call.
 *
 * Tables are cached per build-id (and per device/inode/mtime before the
 * build-id is known); not thread-safe.
 */
#ifndef LUW_UNWIND_CFI_H
#define LUW_UNWIND_CFI_H

#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

#include "kmod/uwtable.h"
#include "luajit/vmseq.h"

struct luw_cfi_stats {
	size_t fdes;		/* FDEs in .eh_frame */
	size_t fdes_bad;	/* FDEs whose address could not be decoded */
	size_t rows;		/* CFI rows evaluated */
	size_t unsup;		/* of which not expressible (UNSUP) */
	size_t plt;		/* of which the .plt expression (PLT) */
	size_t deref;		/* of which a saved CFA (DEREF_RBP/RSP) */
	size_t rbp_rbp;		/* rows whose caller's rbp is at rbp + N */
	size_t end;		/* of which outermost frames (END) */
	size_t vm_entries;	/* LuaJIT VM entry prologues (vmseq.h) */
	size_t vm_exits;	/* and exit epilogues, given exact rows */
	size_t r14_saved;	/* rows whose caller's r14 is at CFA + N */
	size_t r14_undef;	/* rows whose caller's r14 is lost */
	size_t syscall_tails;	/* SYSCALL rows after stubs' system calls */
};

struct luw_cfi {
	struct luw_uw_hdr *hdr;	/* header then entries, one block */
	size_t size;		/* bytes at hdr: what gets uploaded */
	const struct luw_uw_entry *ent;
	uint32_t n;
	const struct luw_uw_r14 *r14;	/* nr14 rows after the entries */
	uint32_t nr14;
	struct luw_cfi_stats st;
	/* The VM's entry/exit sequences; their at[] are file offsets. */
	struct luw_vmseqs vm;
	char *path;
};

/* Build the table of the file at path (uncached); NULL + err on failure. */
struct luw_cfi *luw_cfi_build(const char *path, char *err, size_t errlen);
/* Build from an open Elf (e.g. a [vdso] image read with elf_memory()). */
struct luw_cfi *luw_cfi_build_elf(Elf *elf, const char *name, char *err,
				  size_t errlen);
void luw_cfi_free(struct luw_cfi *t);

/* Cached luw_cfi_build(); the result lives until luw_cfi_cache_clear(). */
struct luw_cfi *luw_cfi_get(const char *path, char *err, size_t errlen);
void luw_cfi_cache_clear(void);

/* The entry covering file offset off, or NULL. */
static inline const struct luw_uw_entry *luw_cfi_find(const struct luw_cfi *t,
						      uint64_t off)
{
	return luw_uw_find(t->ent, t->n, off);
}

/* The r14 row covering file offset off, or NULL. */
static inline const struct luw_uw_r14 *luw_cfi_find_r14(const struct luw_cfi *t,
							uint64_t off)
{
	return luw_uw_find_r14(t->r14, t->nr14, off);
}

/* Human-readable rule of an entry, e.g. "rsp+16 ra=c-8 rbp=c-16". */
void luw_cfi_format(const struct luw_uw_entry *e, char *buf, size_t len);

#endif
