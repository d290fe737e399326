/*
 * states: every global_State of a process whose layout is known.  See
 * states.h.
 */
#include "target/states.h"
#include "target/layout.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "util/fail.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int luw_states_find(struct luw_layout_target *t, char *err, size_t n)
{
	struct luw_maps maps;
	const struct luw_lj_layout *ly = &t->layout;
	enum { CHUNK = 1 << 20 };
	uint64_t *buf;
	uint64_t scanned = 0, limit = 2ull << 30;
	uint32_t need = ly->gg_ndisp ? ly->gg_ndisp : 64;

	t->nstates = 0;
	if (ly->size != sizeof(*ly))
		return luw_fail(err, n, "no layout");
	buf = malloc(CHUNK);
	if (!buf)
		return luw_fail(err, n, "out of memory");
	if (luw_maps_read(t->pid, &maps)) {
		free(buf);
		return luw_fail(err, n, "pid %d: %s", (int)t->pid, strerror(errno));
	}
	for (size_t mi = 0; mi < maps.n && scanned < limit; mi++) {
		const struct luw_map *m = &maps.v[mi];
		uint64_t a, run = 0, run_start = 0;

		/* GG_State comes from the Lua allocator: anonymous or heap. */
		if ((m->prot & (LUW_MAP_R | LUW_MAP_W)) != (LUW_MAP_R | LUW_MAP_W))
			continue;
		if (m->path[0] && strcmp(m->path, "[heap]"))
			continue;
		for (a = m->start; a < m->end && scanned < limit; a += CHUNK) {
			uint64_t len = m->end - a < CHUNK ? m->end - a : CHUNK, i;

			/*
			 * A chunk that does not read whole (the heap shrank
			 * since the maps were read) is read page by page:
			 * skipping all of it lost GG_State now and then in
			 * test_ljattach's churn.  An unreadable page ends a run.
			 */
			uint8_t ok[CHUNK / 4096];

			memset(ok, 1, sizeof(ok));
			if (luw_mem_read(t->pid, a, buf, (uint32_t)len)) {
				uint64_t pg;

				for (pg = 0; pg < (len + 4095) / 4096; pg++)
					ok[pg] = !luw_mem_read(t->pid, a + pg * 4096,
						     (uint8_t *)buf + pg * 4096,
						     (uint32_t)(len - pg * 4096 < 4096 ?
								len - pg * 4096 : 4096));
			}
			scanned += len;
			for (i = 0; i < len / 8; i++) {
				uint64_t v = buf[i];

				if (!ok[i / 512]) {
					run = 0;
					continue;
				}
				if (v >= t->vm_start && v < t->vm_end) {
					if (!run++)
						run_start = a + 8 * i;
					/* Validation tells a real G from a lookalike. */
					if (run == need && t->nstates < LUW_LJL_MAX_STATES)
						t->states[t->nstates++] =
							run_start - ly->gg_g2disp;
				} else {
					run = 0;
				}
			}
		}
	}
	luw_maps_free(&maps);
	free(buf);
	return 0;
}
