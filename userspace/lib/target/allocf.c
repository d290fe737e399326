/*
 * allocf: each universe's allocator, proven.  See allocf.h.
 */
#include "target/allocf.h"

#include "proc/maps.h"
#include "target/layout.h"
#include "target/obj.h"
#include "util/fail.h"

int luw_allocf_find(struct luw_layout_target *t, uint64_t *fns, int max,
		    char *why, size_t n)
{
	struct luw_maps maps = { 0 };
	struct luw_obj o;
	int nfns = 0, rc = 0;

	if (luw_layout_obj(t, &o, why, n))
		return -1;
	if (!o.off.heap_src)
		return luw_fail(why, n, "where global_State keeps allocf is not "
				"proven: %s", o.off.why_heap);
	if (luw_maps_read(t->pid, &maps))
		return luw_fail(why, n, "process %d: cannot read its maps",
				(int)t->pid);
	for (int i = 0; i < t->nstates && !rc; i++) {
		const struct luw_map *mp;
		uint64_t f = 0;
		int seen = 0;

		if (luw_obj_read(&o, t->states[i] + o.off.g_allocf, &f, 8)) {
			rc = luw_fail(why, n, "G 0x%llx: allocf at G+0x%x unreadable",
				      (unsigned long long)t->states[i],
				      o.off.g_allocf);
			break;
		}
		mp = luw_maps_find(&maps, f);
		if (!mp || !(mp->prot & LUW_MAP_X) || !luw_maps_is_file(mp)) {
			rc = luw_fail(why, n, "G 0x%llx: allocf (G+0x%x) is 0x%llx, "
				      "not in an executable mapping of a file",
				      (unsigned long long)t->states[i],
				      o.off.g_allocf, (unsigned long long)f);
			break;
		}
		for (int k = 0; k < nfns; k++)
			seen |= fns[k] == f;
		if (seen)
			continue;
		if (nfns == max) {
			rc = luw_fail(why, n, "more than %d allocators", max);
			break;
		}
		fns[nfns++] = f;
	}
	luw_maps_free(&maps);
	return rc ? -1 : nfns;
}
