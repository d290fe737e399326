/*
 * dwstruct: struct definitions and members from DWARF.  See dwstruct.h.
 */
#include "elf/dwstruct.h"

#include <dwarf.h>
#include <string.h>

int luw_dwstruct_struct(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsz;

	while (dwarf_nextcu(dw, off, &next, &hsz, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, c;

		if (dwarf_offdie(dw, off + hsz, &cu) && dwarf_child(&cu, &c) == 0) {
			do {
				const char *nm = dwarf_diename(&c);

				if (dwarf_tag(&c) == DW_TAG_structure_type && nm &&
				    !strcmp(nm, name) && dwarf_haschildren(&c)) {
					*out = c;
					return 0;
				}
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		off = next;
	}
	return -1;
}

/* Through typedefs and qualifiers to the type itself (16 steps at most). */
static Dwarf_Die *peel(Dwarf_Die *d, Dwarf_Die *buf)
{
	int i;

	for (i = 0; i < 16; i++) {
		Dwarf_Attribute a;
		int tag = dwarf_tag(d);

		if (tag != DW_TAG_typedef && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_const_type)
			return d;
		if (!dwarf_attr_integrate(d, DW_AT_type, &a) ||
		    !dwarf_formref_die(&a, buf))
			return NULL;
		d = buf;
	}
	return NULL;
}

/* Member `name` of struct `s`: offset and (peeled) type. */
int luw_dwstruct_member(Dwarf_Die *s, const char *name, long *off, Dwarf_Die *type)
{
	Dwarf_Die c;

	if (dwarf_child(s, &c) != 0)
		return -1;
	do {
		Dwarf_Attribute a;
		Dwarf_Word w;
		const char *nm;

		if (dwarf_tag(&c) != DW_TAG_member)
			continue;
		nm = dwarf_diename(&c);
		if (!nm || strcmp(nm, name))
			continue;
		if (!dwarf_attr(&c, DW_AT_data_member_location, &a) ||
		    dwarf_formudata(&a, &w))
			return -1;
		*off = (long)w;
		if (type) {
			Dwarf_Die t, buf, *p;

			if (!dwarf_attr_integrate(&c, DW_AT_type, &a) ||
			    !dwarf_formref_die(&a, &t))
				return -1;
			p = peel(&t, &buf);
			if (!p)
				return -1;
			*type = *p;
		}
		return 0;
	} while (dwarf_siblingof(&c, &c) == 0);
	return -1;
}
