/* ELF facts read from an open Elf with libelf; see elf.h. */
#include "elf/elf.h"
#include "util/fail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Elf *luw_elf_open(const char *path, int *fd, char *err, size_t errlen)
{
	Elf *elf;

	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		luw_fail(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		luw_fail(err, errlen, "%s: not an ELF file", path);
		if (elf)
			elf_end(elf);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return elf;
}

Elf_Scn *luw_elf_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *nm;

		if (gelf_getshdr(scn, sh) &&
		    (nm = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(nm, name))
			return scn;
	}
	return NULL;
}

Elf_Scn *luw_elf_section_at(Elf *elf, uint64_t addr, size_t n,
			    uint64_t flags, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	/* Offsets, not ends: an address near 2^64 must not wrap inside. */
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == SHT_PROGBITS &&
		    (sh->sh_flags & flags) == flags && addr >= sh->sh_addr &&
		    addr - sh->sh_addr < sh->sh_size &&
		    n <= sh->sh_size - (addr - sh->sh_addr))
			return scn;
	return NULL;
}

const uint8_t *luw_elf_bytes_at(Elf *elf, uint64_t addr, size_t n,
				uint64_t flags, size_t *len)
{
	GElf_Shdr sh;
	Elf_Scn *scn = luw_elf_section_at(elf, addr, n, flags, &sh);
	Elf_Data *d;

	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    d->d_size != sh.sh_size)
		return NULL;
	*len = sh.sh_addr + sh.sh_size - addr;
	return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
}

int luw_elf_read_at(Elf *elf, uint64_t addr, void *v, size_t n)
{
	size_t len;
	const uint8_t *p = luw_elf_bytes_at(elf, addr, n, SHF_ALLOC, &len);

	if (!p)
		return -1;
	memcpy(v, p, n);
	return 0;
}

int luw_elf_symbol(Elf *elf, unsigned int sh_type, const char *name,
		   int func_only, uint64_t *addr)
{
	uint64_t size;

	return luw_elf_symbol_sized(elf, sh_type, name, func_only, addr, &size);
}

int luw_elf_symbol_sized(Elf *elf, unsigned int sh_type, const char *name,
			 int func_only, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t cnt;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		cnt = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < cnt; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s) ||
			    (func_only && (!s.st_value ||
					   GELF_ST_TYPE(s.st_info) != STT_FUNC)))
				continue;
			nm = elf_strptr(elf, sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				*addr = s.st_value;
				*size = s.st_size;
				return 0;
			}
		}
	}
	return -1;
}

int luw_elf_read_segs(Elf *elf, struct luw_elf_seg **segs, size_t *nsegs)
{
	size_t n, k = 0, fsize = 0;

	*segs = NULL;
	*nsegs = 0;
	if (elf_getphdrnum(elf, &n) || !elf_rawfile(elf, &fsize))
		return -1;
	*segs = calloc(n ? n : 1, sizeof(**segs));
	if (!*segs)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* A cut-off file: better no answer than a wrong one. */
		if (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset) {
			free(*segs);
			*segs = NULL;
			return -1;
		}
		(*segs)[k].vaddr = ph.p_vaddr;
		(*segs)[k].offset = ph.p_offset;
		(*segs)[k].filesz = ph.p_filesz;
		(*segs)[k].flags = ph.p_flags;
		k++;
	}
	*nsegs = k;
	return 0;
}
