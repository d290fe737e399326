/*
 * ehframe: the FDEs of an ELF file's .eh_frame, each as the address range
 * it covers -- the one reader of that section.  The unwind tables (cfi.c)
 * walk each FDE's rows, the symbols (elf/symbols.c) name code no symbol
 * covers after the FDE holding it, the LuaJIT layout (target/layout.c)
 * finds the interpreter as the largest FDE with a CFA on rsp, and the
 * machine-code readers (x86/) take an FDE for the extent of the function
 * a call or jump leads into.
 *
 * Entries come from libdw (dwarf_next_cfi); libdw hands the FDE's
 * initial location and range in the pointer encoding its CIE's 'R'
 * augmentation names, which is decoded here (absptr and pcrel, the two
 * .eh_frame uses; anything else is counted as bad).  .eh_frame_hdr is not
 * read: it is only an index of the same FDEs.
 */
#ifndef LUW_ELF_EHFRAME_H
#define LUW_ELF_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct luw_fde {
	uint64_t start, end;	/* link-time addresses, end exclusive */
};

struct luw_fdes {
	struct luw_fde *v;	/* in section order; empty FDEs left out */
	size_t n;
	size_t total;		/* FDEs in the section, empty and bad too */
	size_t bad;		/* of which the range could not be decoded */
};

/*
 * The FDEs of elf into *out (zeroed first; a file without .eh_frame, or
 * with it in a separate debug file as SHT_NOBITS, has none).  A malformed
 * tail ends the list.  0, or -1 when out of memory.
 */
int luw_ehframe_fdes(Elf *elf, struct luw_fdes *out);
void luw_ehframe_free(struct luw_fdes *f);
/* The end of the FDE that starts at addr (a function's entry), else 0. */
uint64_t luw_ehframe_end(const struct luw_fdes *f, uint64_t addr);

#endif
