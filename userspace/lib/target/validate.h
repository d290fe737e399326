/*
 * validate: a layout descriptor proven against a live process before it
 * is used -- see "Reading a running target" in validate.c for how a
 * process that runs while it is read is handled.
 */
#ifndef LUW_TARGET_VALIDATE_H
#define LUW_TARGET_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

struct luw_layout_target;
struct luw_lj_layout;

/*
 * Checks `ly` against global_State `g` of t's process.  0 when every check
 * passes; else -1 and `why` names the first failed check.
 */
int luw_validate_state(const struct luw_layout_target *t,
		       const struct luw_lj_layout *ly, uint64_t g, char *why,
		       size_t whylen);

/*
 * luw_validate_state on every state of t, each read again after a
 * failure; 0 when all pass, -1 with the first failed check.
 */
int luw_validate_all(struct luw_layout_target *t, const struct luw_lj_layout *ly,
		     char *why, size_t n);

/*
 * Installs `ly` (called `name` in messages) after finding the states,
 * measuring what only the process shows and validating it on every
 * state; -1 with a message naming the binary, its build-id and the
 * failed check otherwise.
 */
int luw_validate_use(struct luw_layout_target *t, const struct luw_lj_layout *ly,
		     const char *name, char *err, size_t errlen);

#endif
