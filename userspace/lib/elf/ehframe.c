/* FDE ranges of .eh_frame through libdw; see ehframe.h. */
#include "elf/ehframe.h"
#include "elf/elf.h"
#include "util/grow.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- pointer encodings ---- */

static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/*
 * Decode one encoded pointer at *p; vaddr is the virtual address of *p,
 * for pc-relative encodings.  Moves *p past it.
 */
static int read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end,
			uint64_t vaddr, uint64_t *val)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	size_t sz;

	if (enc == DW_EH_PE_omit)
		return -1;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		sz = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		sz = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		sz = 2;
		break;
	case DW_EH_PE_uleb128:
		if (read_uleb(&q, end, &v))
			return -1;
		sz = 0;
		break;
	default:
		return -1;
	}
	if (sz) {
		if ((size_t)(end - q) < sz)
			return -1;
		for (size_t i = 0; i < sz; i++)
			v |= (uint64_t)q[i] << (8 * i);
		if ((enc & DW_EH_PE_signed) && sz < 8 &&
		    (v & ((uint64_t)1 << (8 * sz - 1))))
			v |= ~(((uint64_t)1 << (8 * sz)) - 1);
		q += sz;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += vaddr;
		break;
	default:		/* textrel, datarel, funcrel: not in .eh_frame */
		return -1;
	}
	*p = q;
	*val = v;
	return 0;
}

/* The FDE pointer encoding a CIE's 'R' augmentation announces. */
static int cie_fde_encoding(const Dwarf_CIE *cie)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	int enc = DW_EH_PE_absptr;

	if (a[0] != 'z')
		return a[0] ? -1 : enc;
	for (a++; *a; a++) {
		uint64_t dummy;

		switch (*a) {
		case 'L':
			if (p >= end)
				return -1;
			p++;
			break;
		case 'P':
			if (p >= end)
				return -1;
			{
				uint8_t penc = *p++;

				/* The personality pointer's value is not needed. */
				if (read_encoded(penc & 0x7f, &p, end, 0, &dummy) &&
				    read_encoded(penc & 0x0f, &p, end, 0, &dummy))
					return -1;
			}
			break;
		case 'R':
			if (p >= end)
				return -1;
			enc = *p++;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return -1;
		}
	}
	return enc;
}

/* ---- the list ---- */

struct cie_enc {
	Dwarf_Off off;
	int enc;
};

int luw_ehframe_fdes(Elf *elf, struct luw_fdes *out)
{
	struct cie_enc *cies = NULL;
	size_t ncies = 0, cap = 0, fcap = 0;
	const unsigned char *ident;
	Dwarf_Off off = 0, next;
	GElf_Shdr sh;
	Elf_Data *d;
	Elf_Scn *scn;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	scn = luw_elf_section(elf, ".eh_frame", &sh);
	if (!scn || sh.sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)))
		return 0;
	ident = (const unsigned char *)elf_getident(elf, NULL);
	for (;;) {
		Dwarf_CFI_Entry ent;
		int r = dwarf_next_cfi(ident, d, true, off, &next, &ent);

		if (r != 0)
			break;	/* 1: end of section; -1: malformed tail */
		if (ent.CIE_id == DW_CIE_ID_64) {
			if (luw_grow((void **)&cies, &cap, ncies + 1,
				     sizeof(*cies))) {
				rc = -1;
				break;
			}
			cies[ncies].off = off;
			cies[ncies].enc = cie_fde_encoding(&ent.cie);
			ncies++;
		} else {
			const uint8_t *p = ent.fde.start;
			uint64_t lo, len;
			int enc = -1;

			out->total++;
			/* The CIE is almost always the one just before. */
			for (size_t i = ncies; i-- > 0;)
				if (cies[i].off == ent.fde.CIE_pointer) {
					enc = cies[i].enc;
					break;
				}
			if (enc < 0 ||
			    read_encoded((uint8_t)enc, &p, ent.fde.end,
					 sh.sh_addr + (uint64_t)(p - (const uint8_t *)d->d_buf),
					 &lo) ||
			    read_encoded((uint8_t)(enc & 0x0f), &p, ent.fde.end, 0,
					 &len)) {
				out->bad++;
			} else if (len) {
				if (luw_grow((void **)&out->v, &fcap, out->n + 1,
					     sizeof(*out->v))) {
					rc = -1;
					break;
				}
				out->v[out->n].start = lo;
				out->v[out->n].end = lo + len;
				out->n++;
			}
		}
		off = next;
		if (next == (Dwarf_Off)-1)
			break;
	}
	free(cies);
	if (rc)
		luw_ehframe_free(out);
	return rc;
}

void luw_ehframe_free(struct luw_fdes *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

uint64_t luw_ehframe_end(const struct luw_fdes *f, uint64_t addr)
{
	size_t i;

	for (i = 0; f && i < f->n; i++)
		if (f->v[i].start == addr)
			return f->v[i].end;
	return 0;
}
