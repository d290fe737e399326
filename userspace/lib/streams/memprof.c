#include "streams/memprof.h"

#include <string.h>

static int read_event(struct luw_reader *r, uint8_t h, struct luw_mp_event *ev)
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
			return luw_reader_failf(r, ev->offset,
					    "symtab event of source 2..4 (header 0x%02x)",
					    h);
		ev->sym.offset = ev->offset;
		ev->sym.header = 0;
		return luw_symtab_read_sym_body(r, type[ev->asource], &ev->sym);
	}
	switch (ev->asource) {
	case LUW_ASOURCE_INT:
		break;
	case LUW_ASOURCE_LFUNC:
		ev->addr = luw_reader_uleb(r, "Lua function address (ULEB128)");
		ev->line = luw_reader_uleb(r, "Lua line (ULEB128)");
		break;
	case LUW_ASOURCE_CFUNC:
		ev->addr = luw_reader_uleb(r, "C function address (ULEB128)");
		break;
	default:
		ev->traceno = luw_reader_uleb(r, "trace number (ULEB128)");
		break;
	}
	if (ev->aevent & LUW_AEVENT_FREE) {
		ev->oaddr = luw_reader_uleb(r, "old address (ULEB128)");
		ev->osize = luw_reader_uleb(r, "old size (ULEB128)");
	}
	if (ev->aevent & LUW_AEVENT_ALLOC) {
		ev->naddr = luw_reader_uleb(r, "new address (ULEB128)");
		ev->nsize = luw_reader_uleb(r, "new size (ULEB128)");
	}
	return !luw_reader_failed(r);
}

/*
 * The common event, decoded from a local pointer when the window holds any
 * such event: the per-field window checks and stores of the checked path
 * were a third of the report's time on a service's stream.  0 leaves the
 * event, untouched, to the checked path.
 */
static int fast_event(struct luw_reader *r, struct luw_mp_event *ev)
{
	struct luw_mp_nums n;
	const uint8_t *p;
	uint8_t aevent;

	if (r->end - r->p < LUW_MP_MAX_EVENT ||
	    !(p = luw_mp_fast(r->p, &aevent, &n)))
		return 0;
	ev->header = *r->p;
	ev->aevent = aevent;
	ev->asource = (ev->header >> 2) & 7;
	ev->addr = n.addr;
	ev->line = n.line;
	ev->traceno = n.traceno;
	ev->oaddr = n.oaddr;
	ev->osize = n.osize;
	ev->naddr = n.naddr;
	ev->nsize = n.nsize;
	r->p = p;
	return 1;
}

int luw_memprof_next(struct luw_reader *r, struct luw_mp_event *ev)
{
	uint8_t h;

	ev->offset = luw_reader_offset(r);
	h = luw_reader_u8(r, "event header or epilogue");
	if (luw_reader_failed(r))
		return -1;
	if (h == LUW_LJM_EPILOGUE) {
		if (luw_reader_at_end(r))
			return 0;
		if (!luw_reader_failed(r))
			luw_reader_failf(r, luw_reader_offset(r),
				     "end of stream after the epilogue");
		return -1;
	}
	if ((h & 0xe0) || ((h >> 2) & 7) < LUW_ASOURCE_INT ||
	    ((h >> 2) & 7) > LUW_ASOURCE_TRACE) {
		luw_reader_failf(r, ev->offset,
			     "event header 0x04..0x13 or 0x80 (found 0x%02x)", h);
		return -1;
	}
	return read_event(r, h, ev) ? 1 : -1;
}

int luw_memprof_decode_body(struct luw_reader *r,
			    const struct luw_memprof_ops *ops, void *ctx)
{
	struct luw_prologue p;
	int rc;

	if (!luw_symtab_read_prologue(r, "ljm", LUW_LJM_VERSION, &p))
		return -1;
	if (ops->prologue && (rc = ops->prologue(ctx, &p)))
		return rc;

	for (;;) {
		struct luw_mp_event ev;
		uint8_t h;

		ev.offset = luw_reader_offset(r);
		if (fast_event(r, &ev)) {
			if (ops->event && (rc = ops->event(ctx, &ev)))
				return rc;
			continue;
		}
		h = luw_reader_u8(r, "event header or epilogue");
		if (luw_reader_failed(r))
			return -1;
		if (h == LUW_LJM_EPILOGUE) {
			if (ops->epilogue && (rc = ops->epilogue(ctx, ev.offset)))
				return rc;
			break;
		}
		if ((h & 0xe0) || ((h >> 2) & 7) < LUW_ASOURCE_INT ||
		    ((h >> 2) & 7) > LUW_ASOURCE_TRACE) {
			luw_reader_failf(r, ev.offset,
				     "event header 0x04..0x13 or 0x80 (found 0x%02x)",
				     h);
			return -1;
		}
		if (!read_event(r, h, &ev))
			return -1;
		if (ops->event && (rc = ops->event(ctx, &ev)))
			return rc;
	}
	if (!luw_reader_at_end(r)) {
		if (luw_reader_failed(r))
			return -1;
		luw_reader_failf(r, luw_reader_offset(r),
			     "end of stream after the epilogue");
		return -1;
	}
	return 0;
}

int luw_memprof_decode(struct luw_reader *r, const struct luw_memprof_ops *ops,
		       void *ctx)
{
	int rc = luw_symtab_decode(r, ops->prologue, ops->sym, ctx);

	return rc ? rc : luw_memprof_decode_body(r, ops, ctx);
}
