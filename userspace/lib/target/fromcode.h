/*
 * fromcode: layout fields from a stripped build's machine code
 * (target/recover.h) put into a layout, and the live process's part in
 * it: GG_State anchored from two recovered fields, GCstr's shape,
 * G->strempty and G->tmpbuf.L measured where the code does not show them.
 */
#ifndef LUW_TARGET_FROMCODE_H
#define LUW_TARGET_FROMCODE_H

#include <stddef.h>

struct luw_layout_target;
struct luw_lj_layout;
struct luw_recover_result;

/*
 * The family layout fam with every field t->rec gave put in; `used`
 * lists them.  0, or -1 with the reason.
 */
int luw_fromcode_layout(struct luw_layout_target *t, const struct luw_lj_layout *fam,
			struct luw_lj_layout *ly, char *used, size_t un,
			char *why, size_t n);

/* The type tags where the code shows them (added to used, when given). */
void luw_fromcode_tags(const struct luw_recover_result *r,
		       struct luw_lj_layout *ly, char *used, size_t un);

/*
 * Onto a layout from DWARF: the VM's C frame, registers, rbp rule and
 * type tags, which no DWARF holds, where the code shows them.
 */
void luw_fromcode_vm_constants(const struct luw_recover_result *r,
			       struct luw_lj_layout *ly);

/* 0 when the code's VM states agree with ly's vmst_map; -1 with why. */
int luw_fromcode_vmst_agrees(const struct luw_recover_result *r,
			     const struct luw_lj_layout *ly, char *why, size_t n);

/* A trace's frame (cframe_size_jit, tr_spadjust) set to unknown. */
void luw_fromcode_unproven(struct luw_lj_layout *ly);

#endif
