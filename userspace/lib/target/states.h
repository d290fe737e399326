/*
 * states: every global_State of t's process, found by scanning its
 * writable memory for GG_State as t->layout lays it out (the main thread
 * and G pointing at each other, the dispatch table into the VM).
 */
#ifndef LUW_TARGET_STATES_H
#define LUW_TARGET_STATES_H

#include <stddef.h>

struct luw_layout_target;

/* Fills t->states and t->nstates.  0 (even with none), -1 on error. */
int luw_states_find(struct luw_layout_target *t, char *err, size_t errlen);

#endif
