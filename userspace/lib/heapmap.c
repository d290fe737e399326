#include "heapmap.h"

#include <stdlib.h>

void luw_heapmap_init(struct luw_heapmap *m)
{
	m->slot = NULL;
	m->mask = 0;
	m->shift = 64;
	m->n = 0;
}

void luw_heapmap_free(struct luw_heapmap *m)
{
	free(m->slot);
	luw_heapmap_init(m);
}

int luw_heapmap_grow(struct luw_heapmap *m)
{
	struct luw_heapmap nw;
	size_t cap = m->slot ? (m->mask + 1) * 2 : 256, i;
	unsigned int bits = 0;

	if (cap > SIZE_MAX / sizeof(*nw.slot) / 2)
		return -1;
	while (((size_t)1 << bits) < cap)
		bits++;
	nw.slot = calloc(cap, sizeof(*nw.slot));
	if (!nw.slot)
		return -1;
	nw.mask = cap - 1;
	nw.shift = 64 - bits;
	nw.n = m->n;
	for (i = 0; m->slot && i <= m->mask; i++) {
		const struct luw_heap_slot *s = &m->slot[i];
		size_t j;

		if (!s->site1)
			continue;
		for (j = luw_heapmap_home(&nw, s->addr); nw.slot[j].site1;
		     j = (j + 1) & nw.mask)
			;
		nw.slot[j] = *s;
	}
	free(m->slot);
	*m = nw;
	return 0;
}
