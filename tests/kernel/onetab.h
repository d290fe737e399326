/*
 * Test helper: the smallest valid unwind table (luaunwind_unwind.h), one
 * entry that says "no rule" at 0x1000, for the tests that upload one.
 */
#ifndef LUW_TEST_ONETAB_H
#define LUW_TEST_ONETAB_H

#include <string.h>

#include "luaunwind.h"

struct one_entry_table {
	struct luw_uw_hdr h;
	struct luw_uw_entry e[1];
};

static inline void one_entry_table_init(struct one_entry_table *tab)
{
	memset(tab, 0, sizeof(*tab));
	tab->h.magic = LUW_UW_MAGIC;
	tab->h.version = LUW_UW_VERSION;
	tab->h.hdr_size = sizeof(tab->h);
	tab->h.entry_size = sizeof(tab->e[0]);
	tab->h.nentries = 1;
	tab->h.r14_size = sizeof(struct luw_uw_r14);
	tab->h.text_lo = tab->h.text_hi = 0x1000;
	tab->e[0].start = 0x1000;
	tab->e[0].rule = LUW_UW_RULE(LUW_UW_CFA_NONE, LUW_UW_RBP_SAME);
}

#endif
