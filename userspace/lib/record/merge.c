/*
 * merge: see merge.h.
 */
#include "record/merge.h"

struct acc {
	struct luw_mframe *v;
	size_t n, max;
};

static void push(struct acc *a, unsigned int src, unsigned int idx)
{
	if (a->n < a->max) {
		a->v[a->n].src = (uint16_t)src;
		a->v[a->n].idx = (uint16_t)idx;
		a->n++;
	}
}

static int splices_ok(const struct luw_sample *s, const struct luw_splice *sp)
{
	unsigned int host_end = 0, lua_end = 0;

	for (unsigned int i = 0; i < s->nsplice; i++) {
		const struct luw_splice *x = &sp[i];

		if (x->host_first < host_end ||
		    (unsigned int)x->host_first + x->host_count > s->nhost ||
		    x->lua_first < lua_end ||
		    (unsigned int)x->lua_first + x->lua_count > s->nlua)
			return 0;
		host_end = x->host_first + x->host_count;
		lua_end = x->lua_first + x->lua_count;
	}
	return 1;
}

int luw_merge(const struct luw_sample *s, const uint64_t *host,
	      const struct luw_lua_frame *lua, const struct luw_splice *sp,
	      int keep_vm, luw_is_vm_fn is_vm, void *ctx,
	      struct luw_mframe *out, size_t max)
{
	struct acc a = { out, 0, max };
	unsigned int i = 0, si = 0, placed = 0;

	if (!splices_ok(s, sp))
		return -1;
	for (si = 0; si < s->nsplice; si++)
		placed += sp[si].lua_count;
	/* Unplaced Lua frames first: we build innermost first. */
	if (placed < s->nlua) {
		unsigned int next = 0;

		for (si = 0; si < s->nsplice; si++) {
			for (; next < sp[si].lua_first; next++)
				push(&a, LUW_MF_LUA, next);
			next = sp[si].lua_first + sp[si].lua_count;
		}
		for (; next < s->nlua; next++)
			push(&a, LUW_MF_LUA, next);
		push(&a, LUW_MF_MARK, 0);
	}
	si = 0;
	for (;;) {
		if (si < s->nsplice && sp[si].host_first == i) {
			const struct luw_splice *x = &sp[si];
			unsigned int l = x->lua_first;

			if (x->lua_count && lua[l].kind == LUW_LF_C && i > 0)
				l++;
			for (; l < (unsigned int)x->lua_first + x->lua_count; l++)
				push(&a, LUW_MF_LUA, l);
			for (unsigned int h = 0; h < x->host_count; h++)
				if (keep_vm)
					push(&a, LUW_MF_HOST, i + h);
			i += x->host_count;
			si++;
			continue;
		}
		if (i >= s->nhost)
			break;
		if (keep_vm || !is_vm || !is_vm(ctx, host[i]))
			push(&a, LUW_MF_HOST, i);
		i++;
	}
	/* Root first. */
	for (size_t lo = 0, hi = a.n; hi > lo + 1; lo++, hi--) {
		struct luw_mframe t = out[lo];

		out[lo] = out[hi - 1];
		out[hi - 1] = t;
	}
	return (int)a.n;
}
