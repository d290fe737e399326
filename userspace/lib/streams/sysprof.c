#include "streams/sysprof.h"

#include <stdlib.h>

#include "util/grow.h"

static const char *const vmstate_names[LUW_VMST__MAX] = {
	"INTERP", "LFUNC", "FFUNC", "CFUNC", "GC",
	"EXIT", "RECORD", "OPT", "ASM", "TRACE",
};

const char *luw_sysprof_vmstate_name(unsigned int vmstate)
{
	return vmstate < LUW_VMST__MAX ? vmstate_names[vmstate] : NULL;
}

struct sp_state {
	struct luw_sp_frame *lua;
	size_t caplua;
	uint64_t *host;
	size_t caphost;
};

static int read_lua_stack(struct luw_reader *r, struct sp_state *st,
			  struct luw_sp_sample *s)
{
	size_t n = 0;

	for (;;) {
		uint64_t off = luw_reader_offset(r);
		uint8_t h = luw_reader_u8(r, "Lua frame header");
		struct luw_sp_frame *f;

		if (luw_reader_failed(r))
			return -1;
		if (h == LUW_FRAME_LUA_LAST)
			break;
		if (h < LUW_FRAME_LFUNC || h > LUW_FRAME_FFUNC) {
			luw_reader_failf(r, off,
				     "Lua frame header 1, 2, 3 or 0x80 (found 0x%02x)",
				     h);
			return -1;
		}
		if (n == LUW_SP_MAX_FRAMES) {
			luw_reader_failf(r, off, "at most %d Lua frames",
				     LUW_SP_MAX_FRAMES);
			return -1;
		}
		if (luw_grow((void **)&st->lua, &st->caplua, n + 1, sizeof(*f)))
			return -2;
		f = &st->lua[n++];
		f->type = h;
		f->line = 0;
		switch (h) {
		case LUW_FRAME_LFUNC:
			f->addr = luw_reader_uleb(r, "Lua function address (ULEB128)");
			f->line = luw_reader_uleb(r, "Lua function line (ULEB128)");
			break;
		case LUW_FRAME_CFUNC:
			f->addr = luw_reader_uleb(r, "C function address (ULEB128)");
			break;
		default:
			f->addr = luw_reader_uleb(r, "fast function id (ULEB128)");
			break;
		}
	}
	s->lua = st->lua;
	s->nlua = n;
	return 0;
}

static int read_host_stack(struct luw_reader *r, struct sp_state *st,
			   struct luw_sp_sample *s)
{
	size_t n = 0;

	for (;;) {
		uint64_t off = luw_reader_offset(r);
		uint64_t pc = luw_reader_uleb(r, "host frame address (ULEB128)");

		if (luw_reader_failed(r))
			return -1;
		if (!pc)
			break;
		if (n == LUW_SP_MAX_FRAMES) {
			luw_reader_failf(r, off, "at most %d host frames",
				     LUW_SP_MAX_FRAMES);
			return -1;
		}
		if (luw_grow((void **)&st->host, &st->caphost, n + 1, sizeof(pc)))
			return -2;
		st->host[n++] = pc;
	}
	s->host = st->host;
	s->nhost = n;
	return 0;
}

static int decode_body(struct luw_reader *r, const struct luw_sysprof_ops *ops,
		       void *ctx, struct sp_state *st)
{
	struct luw_prologue p;
	struct luw_sym sym;
	int rc;

	if (!luw_symtab_read_prologue(r, "ljp", LUW_LJP_VERSION, &p))
		return -1;
	if (ops->prologue && (rc = ops->prologue(ctx, &p)))
		return rc;

	for (;;) {
		struct luw_sp_sample s;
		uint64_t off = luw_reader_offset(r);
		uint8_t h = luw_reader_u8(r, "sample header or epilogue");

		if (luw_reader_failed(r))
			return -1;
		if (h == LUW_LJP_EPILOGUE) {
			if (ops->epilogue && (rc = ops->epilogue(ctx, off)))
				return rc;
			break;
		}
		if (h >= LUW_LJP_SYM_LFUNC && h <= LUW_LJP_SYM_TRACE) {
			sym.offset = off;
			sym.header = h;
			if (!luw_symtab_read_sym_body(r, h - LUW_LJP_SYM_LFUNC, &sym))
				return -1;
			if (ops->sym && (rc = ops->sym(ctx, &sym)))
				return rc;
			continue;
		}
		if (h >= LUW_VMST__MAX)
			return luw_reader_failf(r, off,
					    "sample header 0..12 or 0x80 (found 0x%02x)",
					    h) - 1;
		s.vmstate = h;
		s.offset = off;
		s.lua = NULL;
		s.nlua = 0;
		s.host = NULL;
		s.nhost = 0;
		s.traceno = s.trace_addr = s.trace_line = 0;
		switch (h) {
		case LUW_VMST_TRACE:
			s.traceno = luw_reader_uleb(r, "trace number (ULEB128)");
			s.trace_addr = luw_reader_uleb(r, "trace function address (ULEB128)");
			s.trace_line = luw_reader_uleb(r, "trace line (ULEB128)");
			if (luw_reader_failed(r))
				return -1;
			break;
		case LUW_VMST_LFUNC:
		case LUW_VMST_FFUNC:
		case LUW_VMST_CFUNC:
			if ((rc = read_lua_stack(r, st, &s)))
				return rc;
			/* fallthrough */
		default:
			if ((rc = read_host_stack(r, st, &s)))
				return rc;
			break;
		}
		if (ops->sample && (rc = ops->sample(ctx, &s)))
			return rc;
	}
	if (!luw_reader_at_end(r)) {
		if (luw_reader_failed(r))
			return -1;
		return luw_reader_failf(r, luw_reader_offset(r),
				    "end of stream after the epilogue") - 1;
	}
	return 0;
}

int luw_sysprof_decode_body(struct luw_reader *r,
			    const struct luw_sysprof_ops *ops, void *ctx)
{
	struct sp_state st = { 0 };
	int rc = decode_body(r, ops, ctx, &st);

	free(st.lua);
	free(st.host);
	return rc;
}

int luw_sysprof_decode(struct luw_reader *r, const struct luw_sysprof_ops *ops,
		       void *ctx)
{
	int rc = luw_symtab_decode(r, ops->prologue, ops->sym, ctx);

	return rc ? rc : luw_sysprof_decode_body(r, ops, ctx);
}
