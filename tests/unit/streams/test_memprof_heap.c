/*
 * streams/memprof_heap.c, the memprof report's live-heap table, against a
 * naive reference: random alloc/free/realloc-like churn over clustered heap addresses (long probe
 * runs, wrap-around, growth), checking every answer and, periodically, the
 * table's probing invariant (each live chunk reachable from its home slot
 * without crossing an empty slot, which backward-shift deletion must keep)
 * and where each chunk lives: in a 12-byte slot, with its size in the big
 * side map when it needs 24 bits or more, or wholly in the far side map
 * when its address needs 48 bits or more or its site 24.
 */
#include "streams/memprof_heap.h"
#include "testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define NKEYS 6000

struct ref {
	uint64_t addr, size;
	uint32_t site;
	int live;
};

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A slot's size: in the slot, or in the side map for big ones. */
static uint64_t slot_size(const struct luw_memprof_heap *m,
			  const struct luw_heap_slot *s)
{
	const struct luw_kv *e;

	if (luw_heap_slot_size(s) != LUW_HEAP_BIG)
		return luw_heap_slot_size(s);
	e = luw_kvmap_get(&m->big, luw_heap_slot_addr(s), 0);
	return e ? e->v : 0;
}

/* A chunk that must live wholly in the far side map. */
static int is_far(const struct ref *r)
{
	return (r->addr >> LUW_HEAP_ADDR_BITS) || r->site >= LUW_HEAP_SITE_MAX;
}

/* Every live reference chunk reachable from its home; n matches. */
static void check_invariant(const struct luw_memprof_heap *m, const struct ref *r,
			    size_t live)
{
	size_t i, used = 0, big, far;

	for (i = 0; m->slot && i <= m->mask; i++)
		used += luw_heap_slot_site1(&m->slot[i]) != 0;
	for (i = 0, big = 0, far = 0; i < NKEYS; i++) {
		far += r[i].live && is_far(&r[i]);
		big += r[i].live && !is_far(&r[i]) && r[i].size >= LUW_HEAP_BIG;
	}
	CHECK(used == live - far && m->n == live - far && m->far.n == far &&
		      luw_memprof_heap_live(m) == live,
	      "used %zu n %zu far %zu/%zu live %zu", used, m->n, m->far.n, far,
	      live);
	/* The side map holds exactly the big chunks of the slots. */
	CHECK(m->big.n == big, "big map %zu, big chunks %zu", m->big.n, big);
	for (i = 0; i < NKEYS; i++) {
		const struct luw_kv *e;
		size_t j;

		if (!r[i].live)
			continue;
		if (is_far(&r[i])) {
			e = luw_kvmap_get(&m->far, r[i].addr, 0);
			CHECK(e && e->v == r[i].size && e->w == r[i].site,
			      "chunk 0x%" PRIx64 " not in the far map",
			      r[i].addr);
			continue;
		}
		for (j = luw_memprof_heap_home(m, r[i].addr);
		     luw_heap_slot_site1(&m->slot[j]); j = (j + 1) & m->mask)
			if (luw_heap_slot_addr(&m->slot[j]) == r[i].addr)
				break;
		CHECK(luw_heap_slot_site1(&m->slot[j]) &&
			      slot_size(m, &m->slot[j]) == r[i].size &&
			      luw_heap_slot_site1(&m->slot[j]) == r[i].site + 1,
		      "chunk 0x%" PRIx64 " not reachable", r[i].addr);
	}
}

static void churn(unsigned int rounds)
{
	static struct ref r[NKEYS];
	struct luw_memprof_heap m;
	size_t i, live = 0;
	unsigned int k;

	luw_memprof_heap_init(&m);
	for (i = 0; i < NKEYS; i++) {
		/* Mostly a dense 16-byte-aligned arena, some outliers. */
		r[i].addr = i % 7 ? 0x7f0000000000ULL + 16 * i
			    : i % 3 ? next() : next() >> 16;
		r[i].live = 0;
	}
	r[0].addr = 0;		/* a corrupt stream may name address 0 */
	for (k = 0; k < rounds; k++) {
		struct ref *e = &r[next() % NKEYS];
		uint64_t size = 0;
		uint32_t site = 0;
		int got;

		switch (next() % 3) {
		case 0:		/* free */
			got = luw_memprof_heap_take(&m, e->addr, &size, &site);
			CHECK(got == e->live, "take 0x%" PRIx64 ": %d vs %d",
			      e->addr, got, e->live);
			if (got && e->live)
				CHECK(size == e->size && site == e->site,
				      "take 0x%" PRIx64 ": size %" PRIu64
				      " site %u", e->addr, size, site);
			live -= e->live;
			e->live = 0;
			break;
		default:	/* alloc, or a re-alloc at a live address */
			e->size = k % 97 ? next() % 4096
				  : k % 3 ? UINT64_MAX
				  : k % 2 ? LUW_HEAP_BIG : LUW_HEAP_BIG - 1;
			e->site = k % 89 ? (uint32_t)(next() % 1000)
				  : k % 2 ? UINT32_MAX - 1
				  : LUW_HEAP_SITE_MAX - (uint32_t)(k % 3);
			CHECK(!luw_memprof_heap_put(&m, e->addr, e->size, e->site),
			      "put failed");
			live += !e->live;
			e->live = 1;
			break;
		}
		if (k % 4096 == 0)
			check_invariant(&m, r, live);
	}
	check_invariant(&m, r, live);
	/* Drain: every live chunk comes back once, then the table is empty. */
	for (i = 0; i < NKEYS; i++) {
		uint64_t size;
		uint32_t site;

		CHECK(luw_memprof_heap_take(&m, r[i].addr, &size, &site) ==
			      r[i].live,
		      "drain 0x%" PRIx64, r[i].addr);
		CHECK(!luw_memprof_heap_take(&m, r[i].addr, &size, &site),
		      "drain twice 0x%" PRIx64, r[i].addr);
		r[i].live = 0;
	}
	CHECK(m.n == 0, "n %zu after drain", m.n);
	check_invariant(&m, r, 0);
	luw_memprof_heap_free(&m);
}

int main(void)
{
	struct luw_memprof_heap m;
	uint64_t size;
	uint32_t site;

	/* Empty and freed tables answer "not live". */
	luw_memprof_heap_init(&m);
	CHECK(!luw_memprof_heap_take(&m, 0x1000, &size, &site), "empty take");
	CHECK(!luw_memprof_heap_put(&m, 0x1000, 5, 7), "put");
	CHECK(luw_memprof_heap_take(&m, 0x1000, &size, &site) && size == 5 &&
		      site == 7, "take one");
	luw_memprof_heap_free(&m);
	CHECK(!luw_memprof_heap_take(&m, 0x1000, &size, &site), "freed take");

	churn(400000);
	return luw_test_status("test_memprof_heap");
}
