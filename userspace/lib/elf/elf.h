/*
 * elf: the facts every reader of an ELF file here needs from an open
 * Elf (libelf): opening it, a section by name or by the addresses it
 * holds (and the bytes there), a symbol's value, the loadable segments.
 * No cache and no LuaJIT knowledge: symbols.h keeps the per-file symbol
 * tables, the unwind tables (unwind/cfi.h), the layout search (target/),
 * the machine-code readers (x86/) and the recovery from code
 * (target/recover.h) call these.
 */
#ifndef LUW_ELF_ELF_H
#define LUW_ELF_ELF_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

/* A PT_LOAD segment: file offset <-> virtual address. */
struct luw_elf_seg {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	uint32_t flags;		/* PF_X, PF_W, PF_R */
};

/* The ELF file at path, read-only (*fd open until the caller closes it
 * after elf_end); NULL with a message in err. */
Elf *luw_elf_open(const char *path, int *fd, char *err, size_t errlen);
/* The section called name (its header in *sh), or NULL. */
Elf_Scn *luw_elf_section(Elf *elf, const char *name, GElf_Shdr *sh);
/*
 * The section with contents (SHT_PROGBITS) that has every flag of `flags`
 * (SHF_ALLOC: loaded, SHF_EXECINSTR: code) and holds the link-time
 * addresses [addr, addr + n), its header in *sh; NULL when none does.
 */
Elf_Scn *luw_elf_section_at(Elf *elf, uint64_t addr, size_t n,
			    uint64_t flags, GElf_Shdr *sh);
/*
 * The bytes at link-time address addr in that section, *len of them up to
 * its end; NULL when no section holds [addr, addr + n) or the file does
 * not hold all of its data.
 */
const uint8_t *luw_elf_bytes_at(Elf *elf, uint64_t addr, size_t n,
				uint64_t flags, size_t *len);
/* n bytes at link-time address addr of a loaded section into v: 0, or -1. */
int luw_elf_read_at(Elf *elf, uint64_t addr, void *v, size_t n);
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
