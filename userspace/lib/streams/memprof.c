#include "streams/memprof.h"

#include <string.h>

static int read_event(struct luw_rd *r, uint8_t h, struct luw_mp_event *ev)
{
	ev->header = h;
	ev->aevent = h & 3;
	ev->asource = (h >> 2) & 7;
	ev->addr = ev->line = ev->traceno = 0;
	ev->oaddr = ev->osize = ev->naddr = ev->nsize = 0;

	if (ev->aevent == LUW_AEVENT_SYMTAB) {
		static const uint8_t type[] = {
			[LUW_ASOURCE_LFUNC] = LUW_SYM_LFUNC,
			[LUW_ASOURCE_CFUNC] = LUW_SYM_CFUNC,
			[LUW_ASOURCE_TRACE] = LUW_SYM_TRACE,
		};

		if (ev->asource < LUW_ASOURCE_LFUNC)
			return luw_rd_failf(r, ev->offset,
					    "symtab event of source 2..4 (header 0x%02x)",
					    h);
		ev->sym.offset = ev->offset;
		ev->sym.header = 0;
		return luw_sym_read_body(r, type[ev->asource], &ev->sym);
	}
	switch (ev->asource) {
	case LUW_ASOURCE_INT:
		break;
	case LUW_ASOURCE_LFUNC:
		ev->addr = luw_rd_uleb(r, "Lua function address (ULEB128)");
		ev->line = luw_rd_uleb(r, "Lua line (ULEB128)");
		break;
	case LUW_ASOURCE_CFUNC:
		ev->addr = luw_rd_uleb(r, "C function address (ULEB128)");
		break;
	default:
		ev->traceno = luw_rd_uleb(r, "trace number (ULEB128)");
		break;
	}
	if (ev->aevent & LUW_AEVENT_FREE) {
		ev->oaddr = luw_rd_uleb(r, "old address (ULEB128)");
		ev->osize = luw_rd_uleb(r, "old size (ULEB128)");
	}
	if (ev->aevent & LUW_AEVENT_ALLOC) {
		ev->naddr = luw_rd_uleb(r, "new address (ULEB128)");
		ev->nsize = luw_rd_uleb(r, "new size (ULEB128)");
	}
	return !luw_rd_failed(r);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Longest alloc, free or realloc event: the header and six 10-byte ULEBs. */
#define MAX_EVENT 61

/*
 * A ULEB128 of at most 8 bytes with no bounds check (the caller has
 * MAX_EVENT bytes); 0 for a longer one, left to the checked path.
 */
static inline int uleb8(const uint8_t **pp, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v, stop;

	if (!(p[0] & 0x80)) {
		*out = p[0];
		*pp = p + 1;
		return 1;
	}
	memcpy(&v, p, 8);
	stop = ~v & 0x8080808080808080ULL;
	if (!stop)
		return 0;
	v &= stop ^ (stop - 1);
	v = (v & 0x007f007f007f007fULL) | (v & 0x7f007f007f007f00ULL) >> 1;
	v = (v & 0x00003fff00003fffULL) | (v & 0x3fff00003fff0000ULL) >> 2;
	v = (v & 0x000000000fffffffULL) | (v & 0x0fffffff00000000ULL) >> 4;
	*out = v;
	*pp = p + (__builtin_ctzll(stop) >> 3) + 1;
	return 1;
}

/*
 * The common case of the event loop, an alloc, free or realloc event whose
 * numbers fit 8 bytes each, decoded from a local pointer when the window
 * holds any such event: the per-field window checks and stores of the
 * checked path were a third of the report's time on a service's stream.
 * 0 leaves the event, untouched, to the checked path (symtab events, the
 * epilogue, bad headers, long numbers, the window's last bytes).
 */
static int fast_event(struct luw_rd *r, struct luw_mp_event *ev)
{
	const uint8_t *p = r->p;
	uint8_t h;
	int ok = 1;

	if (r->end - p < MAX_EVENT)
		return 0;
	h = *p++;
	if ((h & 0xe0) || !(h & 3) || ((h >> 2) & 7) < LUW_ASOURCE_INT ||
	    ((h >> 2) & 7) > LUW_ASOURCE_TRACE)
		return 0;
	ev->header = h;
	ev->aevent = h & 3;
	ev->asource = (h >> 2) & 7;
	ev->addr = ev->line = ev->traceno = 0;
	ev->oaddr = ev->osize = ev->naddr = ev->nsize = 0;
	switch (ev->asource) {
	case LUW_ASOURCE_INT:
		break;
	case LUW_ASOURCE_LFUNC:
		ok = uleb8(&p, &ev->addr) && uleb8(&p, &ev->line);
		break;
	case LUW_ASOURCE_CFUNC:
		ok = uleb8(&p, &ev->addr);
		break;
	default:
		ok = uleb8(&p, &ev->traceno);
		break;
	}
	if (ok && (h & LUW_AEVENT_FREE))
		ok = uleb8(&p, &ev->oaddr) && uleb8(&p, &ev->osize);
	if (ok && (h & LUW_AEVENT_ALLOC))
		ok = uleb8(&p, &ev->naddr) && uleb8(&p, &ev->nsize);
	if (!ok)
		return 0;
	r->p = p;
	return 1;
}
#else
static int fast_event(struct luw_rd *r, struct luw_mp_event *ev)
{
	(void)r;
	(void)ev;
	return 0;
}
#endif

int luw_memprof_decode_body(struct luw_rd *r,
			    const struct luw_memprof_ops *ops, void *ctx)
{
	struct luw_prologue p;
	int rc;

	if (!luw_prologue_read(r, "ljm", LUW_LJM_VERSION, &p))
		return -1;
	if (ops->prologue && (rc = ops->prologue(ctx, &p)))
		return rc;

	for (;;) {
		struct luw_mp_event ev;
		uint8_t h;

		ev.offset = luw_rd_offset(r);
		if (fast_event(r, &ev)) {
			if (ops->event && (rc = ops->event(ctx, &ev)))
				return rc;
			continue;
		}
		h = luw_rd_u8(r, "event header or epilogue");
		if (luw_rd_failed(r))
			return -1;
		if (h == LUW_LJM_EPILOGUE) {
			if (ops->epilogue && (rc = ops->epilogue(ctx, ev.offset)))
				return rc;
			break;
		}
		if ((h & 0xe0) || ((h >> 2) & 7) < LUW_ASOURCE_INT ||
		    ((h >> 2) & 7) > LUW_ASOURCE_TRACE) {
			luw_rd_failf(r, ev.offset,
				     "event header 0x04..0x13 or 0x80 (found 0x%02x)",
				     h);
			return -1;
		}
		if (!read_event(r, h, &ev))
			return -1;
		if (ops->event && (rc = ops->event(ctx, &ev)))
			return rc;
	}
	if (!luw_rd_at_end(r)) {
		if (luw_rd_failed(r))
			return -1;
		luw_rd_failf(r, luw_rd_offset(r),
			     "end of stream after the epilogue");
		return -1;
	}
	return 0;
}

int luw_memprof_decode(struct luw_rd *r, const struct luw_memprof_ops *ops,
		       void *ctx)
{
	int rc = luw_symtab_decode(r, ops->prologue, ops->sym, ctx);

	return rc ? rc : luw_memprof_decode_body(r, ops, ctx);
}
