#include "encoder.h"

#include <stdlib.h>
#include <string.h>

/* Flush to the FILE past this many bytes: keeps streaming writes small. */
#define ENC_CHUNK (256u << 10)

void luw_enc_init_mem(struct luw_enc *e)
{
	memset(e, 0, sizeof(*e));
}

void luw_enc_init_file(struct luw_enc *e, FILE *out)
{
	memset(e, 0, sizeof(*e));
	e->out = out;
}

static void flush(struct luw_enc *e)
{
	if (!e->out || !e->len || e->failed)
		return;
	if (fwrite(e->buf, 1, e->len, e->out) != e->len)
		e->failed = 1;
	e->flushed += e->len;
	e->len = 0;
}

int luw_enc_finish(struct luw_enc *e)
{
	flush(e);
	if (e->out && fflush(e->out))
		e->failed = 1;
	return e->failed ? -1 : 0;
}

void luw_enc_free(struct luw_enc *e)
{
	free(e->buf);
	e->buf = NULL;
	e->len = e->cap = 0;
}

/* Room for n more bytes; 0, or -1 (and failed) on ENOMEM. */
static int room(struct luw_enc *e, size_t n)
{
	size_t nc;
	uint8_t *q;

	if (e->failed)
		return -1;
	if (e->out && e->len >= ENC_CHUNK)
		flush(e);
	if (e->len + n <= e->cap)
		return 0;
	nc = e->cap ? e->cap : 4096;
	while (nc < e->len + n)
		nc *= 2;
	q = realloc(e->buf, nc);
	if (!q) {
		e->failed = 1;
		return -1;
	}
	e->buf = q;
	e->cap = nc;
	return 0;
}

void luw_enc_u8(struct luw_enc *e, uint8_t v)
{
	if (room(e, 1))
		return;
	e->buf[e->len++] = v;
}

unsigned int luw_enc_uleb_size(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void luw_enc_uleb(struct luw_enc *e, uint64_t v)
{
	uint8_t *p;

	if (room(e, 10))
		return;
	p = e->buf + e->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	e->len = (size_t)(p - e->buf);
}

void luw_enc_string(struct luw_enc *e, const char *s, size_t len)
{
	luw_enc_uleb(e, len);
	if (!len || room(e, len))
		return;
	memcpy(e->buf + e->len, s, len);
	e->len += len;
}

void luw_enc_prologue(struct luw_enc *e, const struct luw_prologue *p)
{
	int i;

	for (i = 0; i < 3; i++)
		luw_enc_u8(e, (uint8_t)p->magic[i]);
	luw_enc_u8(e, p->version);
	for (i = 0; i < 3; i++)
		luw_enc_u8(e, p->reserved[i]);
}

void luw_enc_sym_body(struct luw_enc *e, const struct luw_sym *s)
{
	switch (s->type) {
	case LUW_SYM_LFUNC:
		luw_enc_uleb(e, s->addr);
		luw_enc_string(e, s->name, s->name_len);
		luw_enc_uleb(e, s->line);
		break;
	case LUW_SYM_CFUNC:
		luw_enc_uleb(e, s->addr);
		luw_enc_string(e, s->name, s->name_len);
		break;
	case LUW_SYM_TRACE:
		luw_enc_uleb(e, s->traceno);
		luw_enc_uleb(e, s->addr);
		luw_enc_uleb(e, s->line);
		break;
	default:
		/* Not a type the grammar has: the caller's bug. */
		e->failed = 1;
		break;
	}
}

void luw_enc_sym(struct luw_enc *e, const struct luw_sym *s)
{
	luw_enc_u8(e, s->header);
	if (!s->final)
		luw_enc_sym_body(e, s);
}

void luw_enc_sp_sample(struct luw_enc *e, const struct luw_sp_sample *s)
{
	size_t i;

	luw_enc_u8(e, s->vmstate);
	switch (s->vmstate) {
	case LUW_VMST_TRACE:
		luw_enc_uleb(e, s->traceno);
		luw_enc_uleb(e, s->trace_addr);
		luw_enc_uleb(e, s->trace_line);
		return;
	case LUW_VMST_LFUNC:
	case LUW_VMST_FFUNC:
	case LUW_VMST_CFUNC:
		for (i = 0; i < s->nlua; i++) {
			const struct luw_sp_frame *f = &s->lua[i];

			luw_enc_u8(e, f->type);
			luw_enc_uleb(e, f->addr);
			if (f->type == LUW_FRAME_LFUNC)
				luw_enc_uleb(e, f->line);
		}
		luw_enc_u8(e, LUW_FRAME_LUA_LAST);
		break;
	default:
		break;
	}
	for (i = 0; i < s->nhost; i++)
		luw_enc_uleb(e, s->host[i]);
	luw_enc_uleb(e, 0);
}

void luw_enc_mp_event(struct luw_enc *e, const struct luw_mp_event *ev)
{
	luw_enc_u8(e, ev->header);
	if (ev->aevent == LUW_AEVENT_SYMTAB) {
		luw_enc_sym_body(e, &ev->sym);
		return;
	}
	switch (ev->asource) {
	case LUW_ASOURCE_INT:
		break;
	case LUW_ASOURCE_LFUNC:
		luw_enc_uleb(e, ev->addr);
		luw_enc_uleb(e, ev->line);
		break;
	case LUW_ASOURCE_CFUNC:
		luw_enc_uleb(e, ev->addr);
		break;
	default:
		luw_enc_uleb(e, ev->traceno);
		break;
	}
	if (ev->aevent & LUW_AEVENT_FREE) {
		luw_enc_uleb(e, ev->oaddr);
		luw_enc_uleb(e, ev->osize);
	}
	if (ev->aevent & LUW_AEVENT_ALLOC) {
		luw_enc_uleb(e, ev->naddr);
		luw_enc_uleb(e, ev->nsize);
	}
}

void luw_enc_epilogue(struct luw_enc *e)
{
	luw_enc_u8(e, 0x80);
}

/* --- Re-encoding callbacks ---------------------------------------------- */

static int cb_prologue(void *ctx, const struct luw_prologue *p)
{
	luw_enc_prologue(ctx, p);
	return 0;
}

static int cb_sym(void *ctx, const struct luw_sym *s)
{
	luw_enc_sym(ctx, s);
	return 0;
}

static int cb_sample(void *ctx, const struct luw_sp_sample *s)
{
	luw_enc_sp_sample(ctx, s);
	return 0;
}

static int cb_event(void *ctx, const struct luw_mp_event *ev)
{
	luw_enc_mp_event(ctx, ev);
	return 0;
}

static int cb_epilogue(void *ctx, uint64_t offset)
{
	(void)offset;
	luw_enc_epilogue(ctx);
	return 0;
}

const struct luw_sysprof_ops luw_enc_sysprof_ops = {
	.prologue = cb_prologue,
	.sym = cb_sym,
	.sample = cb_sample,
	.epilogue = cb_epilogue,
};

const struct luw_memprof_ops luw_enc_memprof_ops = {
	.prologue = cb_prologue,
	.sym = cb_sym,
	.event = cb_event,
	.epilogue = cb_epilogue,
};
