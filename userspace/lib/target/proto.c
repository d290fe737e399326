/*
 * proto: GCproto -> chunk/lines, ffid -> name.  See target/proto.h.
 */
#include "target/proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luajit/ffnames.h"
#include "target/obj.h"

#define CACHE_BITS 12

struct luw_proto_ctx {
	struct luw_lj_layout ly;
	struct luw_obj o;	/* reads through ly */
	struct luw_ffnames ff;
	struct luw_proto_info *slots;	/* open addressing, addr 0 = empty */
	unsigned int used;
};

struct luw_proto_ctx *luw_proto_new(pid_t pid, const struct luw_lj_layout *ly,
			const struct luw_ffnames *ff)
{
	struct luw_proto_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->slots = calloc(1u << CACHE_BITS, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->ly = *ly;
	luw_obj_init(&c->o, pid, &c->ly);
	if (ff)
		c->ff = *ff;
	else
		luw_ffnames_init(&c->ff, NULL);
	return c;
}

void luw_proto_free(struct luw_proto_ctx *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c);
}

static int load_proto(struct luw_proto_ctx *c, uint64_t pt, struct luw_proto_info *p)
{
	struct luw_obj_proto h;
	uint32_t len;
	char tmp[sizeof(p->chunk)];

	memset(p, 0, sizeof(*p));
	if (luw_obj_proto(&c->o, pt, &h) ||
	    luw_obj_str(&c->o, h.chunkname, tmp, sizeof(tmp), &len))
		return -1;
	p->sizebc = h.sizebc;
	p->firstline = (int32_t)h.firstline;
	p->numline = (int32_t)h.numline;
	p->lineinfo = h.lineinfo;
	/* As LuaJIT's tracebacks show it: "@file" is a file, "=x" is x. */
	if (tmp[0] == '@' || tmp[0] == '=')
		snprintf(p->chunk, sizeof(p->chunk), "%s", tmp + 1);
	else
		snprintf(p->chunk, sizeof(p->chunk), "[string \"%.*s\"]",
			 (int)strcspn(tmp, "\n") > 60 ? 60 : (int)strcspn(tmp, "\n"),
			 tmp);
	p->addr = pt;
	return 0;
}

int luw_proto_get(struct luw_proto_ctx *c, uint64_t pt, const struct luw_proto_info **out)
{
	unsigned int mask = (1u << CACHE_BITS) - 1;
	unsigned int h = (unsigned int)((pt >> 3) * 2654435761u) & mask, i;
	struct luw_proto_info tmp;

	if (!pt)
		return -1;
	for (i = 0; i <= mask; i++) {
		struct luw_proto_info *s = &c->slots[(h + i) & mask];

		if (s->addr == pt) {
			*out = s;
			return 0;
		}
		if (!s->addr)
			break;
	}
	if (load_proto(c, pt, &tmp))
		return -1;
	if (c->used >= mask / 2) {
		/* Full enough: start over rather than probe forever. */
		memset(c->slots, 0, (mask + 1) * sizeof(*c->slots));
		c->used = 0;
		i = 0;
	}
	for (;; i++) {
		struct luw_proto_info *s = &c->slots[(h + i) & mask];

		if (!s->addr) {
			*s = tmp;
			c->used++;
			*out = s;
			return 0;
		}
	}
}

int32_t luw_proto_line(struct luw_proto_ctx *c, uint64_t pt, uint64_t pc, int after)
{
	const struct luw_proto_info *p;
	uint64_t bc = pt + c->ly.pt_size, pos;

	if (luw_proto_get(c, pt, &p) || !pc || pc < bc || (pc - bc) % 4)
		return -1;
	pos = (pc - bc) / 4;
	if (after) {
		if (!pos)
			return -1;
		pos--;
	}
	/* lj_debug_line: position 0 is the function header. */
	if (pos > p->sizebc || !p->lineinfo)
		return -1;
	if (pos == p->sizebc)
		return p->firstline + p->numline;
	if (pos == 0)
		return p->firstline;
	pos--;
	if (p->numline < 256) {
		uint8_t d;

		return luw_obj_read(&c->o, p->lineinfo + pos, &d, 1) ? -1 : p->firstline + d;
	} else if (p->numline < 65536) {
		uint16_t d;

		return luw_obj_read(&c->o, p->lineinfo + 2 * pos, &d, 2) ? -1 : p->firstline + d;
	} else {
		uint32_t d;

		return luw_obj_read(&c->o, p->lineinfo + 4 * pos, &d, 4) ? -1 :
		       p->firstline + (int32_t)d;
	}
}

const char *luw_proto_ffname(const struct luw_proto_ctx *c, unsigned int ffid)
{
	return ffid < 2 ? NULL : luw_ffnames_get(&c->ff, ffid);
}

static void lineno(char *b, size_t n, int32_t l)
{
	if (l >= 0)
		snprintf(b, n, "%d", l);
	else
		snprintf(b, n, "?");
}

char *luw_proto_frame_str(struct luw_proto_ctx *c, const struct luw_lj_frame *f, char *buf,
		    size_t n)
{
	const struct luw_proto_info *p = NULL;
	const char *ff;
	char ln[16];

	switch (f->kind) {
	case LUW_LJF_LUA:
		if (luw_proto_get(c, f->proto, &p)) {
			snprintf(buf, n, "lua:?0x%llx", (unsigned long long)f->proto);
			break;
		}
		lineno(ln, sizeof(ln), luw_proto_line(c, f->proto, f->pc,
						 !(f->flags & LUW_LJF_PC_TRACE)));
		snprintf(buf, n, "lua:%s:%d:%s", p->chunk, p->firstline, ln);
		break;
	case LUW_LJF_FF:
		ff = luw_proto_ffname(c, f->ffid);
		if (ff)
			snprintf(buf, n, "ff:%s", ff);
		else
			snprintf(buf, n, "ff:#%u", f->ffid);
		break;
	case LUW_LJF_C:
		snprintf(buf, n, "c:0x%llx", (unsigned long long)f->pc);
		break;
	case LUW_LJF_TRACE:
		if (f->proto && !luw_proto_get(c, f->proto, &p)) {
			lineno(ln, sizeof(ln), luw_proto_line(c, f->proto, f->pc, 0));
			snprintf(buf, n, "trace:%u:%s:%s", f->trace, p->chunk, ln);
		} else {
			snprintf(buf, n, "trace:%u", f->trace);
		}
		break;
	default:
		snprintf(buf, n, "?");
	}
	return buf;
}
