/*
 * The second compilation unit of test_dwstruct: the only definition of
 * struct luw_tdw_fwd, which test_dwstruct.c (the first unit in the link)
 * only declares.  Its offsets as this unit's compiler laid them out.
 */
#include <stddef.h>

struct luw_tdw_fwd {
	char a;
	long b;
	short c;
};

struct luw_tdw_fwd luw_tdw_fwd_var;
struct luw_tdw_fwd *luw_tdw_fwd_ptr = &luw_tdw_fwd_var;
const long luw_tdw_fwd_off_b = offsetof(struct luw_tdw_fwd, b);
const long luw_tdw_fwd_off_c = offsetof(struct luw_tdw_fwd, c);
