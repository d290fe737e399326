#include "output/pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/strbuf.h"

#include "output/flamegraph.h"

/* Wire types of protobuf. */
#define WT_VARINT 0
#define WT_LEN 2

/* Fields of profile.proto (see the grammar in pprof.h). */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	VALUETYPE_TYPE = 1,
	VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LOCATION_ID = 1,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* The first strings of the table, in this order. */
enum { STR_EMPTY, STR_SAMPLES, STR_COUNT, STR_CPU, STR_NANOSECONDS };

/* Messages are encoded into strbuf.h byte strings (their NUL unused). */
static void buf_raw(struct luw_strbuf *b, const void *data, size_t len)
{
	luw_strbuf_putn(b, data, len);
}

static void buf_varint(struct luw_strbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	buf_raw(b, tmp, n);
}

static void buf_uint(struct luw_strbuf *b, unsigned field, uint64_t v)
{
	buf_varint(b, (uint64_t)field << 3 | WT_VARINT);
	buf_varint(b, v);
}

static void buf_bytes(struct luw_strbuf *b, unsigned field, const void *data,
		      size_t len)
{
	buf_varint(b, (uint64_t)field << 3 | WT_LEN);
	buf_varint(b, len);
	buf_raw(b, data, len);
}

/* gzip stream onto a FILE. */
struct gz {
	z_stream z;
	FILE *out;
	uint8_t chunk[16384];
	int failed;
};

static void gz_feed(struct gz *g, const void *data, size_t len, int flush)
{
	if (g->failed)
		return;
	g->z.next_in = (Bytef *)data;
	g->z.avail_in = (uInt)len;
	do {
		int rc;
		size_t have;

		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		rc = deflate(&g->z, flush);
		if (rc == Z_STREAM_ERROR) {
			errno = EIO;
			g->failed = 1;
			return;
		}
		have = sizeof(g->chunk) - g->z.avail_out;
		if (have && fwrite(g->chunk, 1, have, g->out) != have) {
			g->failed = 1;
			return;
		}
	} while (g->z.avail_out == 0 ||
		 (flush == Z_FINISH && g->z.avail_in != 0));
}

/* Emit one top-level field (the profile message needs no length). */
static void gz_buf(struct gz *g, struct luw_strbuf *b)
{
	if (b->oom) {
		errno = ENOMEM;
		g->failed = 1;
	}
	gz_feed(g, b->p, b->len, Z_NO_FLUSH);
	b->len = 0;
}

struct ctx {
	const struct luw_stacks *s;
	const struct luw_pprof_opts *o;
	struct luw_stacks *strs;	/* interned id == string index */
	uint32_t *loc;			/* frame id -> location id, 0 unused */
	uint32_t nlocs;
	struct gz *gz;
	struct luw_strbuf top, msg, ids, vals, lab;
	int failed;
};

static int32_t str(struct ctx *c, const char *p, size_t len);

static int64_t clamp(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int mark(void *vc, const int32_t *frames, size_t n, uint64_t count)
{
	struct ctx *c = vc;
	size_t i;

	(void)count;
	for (i = 0; i < n; i++)
		if (!c->loc[frames[i]])
			c->loc[frames[i]] = ++c->nlocs;
	return 0;
}

static int put_sample2(void *vc, const int32_t *frames, size_t n,
		       uint64_t count, uint64_t aux)
{
	struct ctx *c = vc;
	size_t i;

	c->ids.len = c->vals.len = c->msg.len = 0;
	for (i = n; i-- > 0;)
		buf_varint(&c->ids, c->loc[frames[i]]);
	if (c->o->aux_type)
		buf_varint(&c->vals, (uint64_t)clamp(aux));
	buf_varint(&c->vals, (uint64_t)clamp(count));
	if (c->o->period_ns && !c->o->count_type) {
		uint64_t ns = count > UINT64_MAX / c->o->period_ns
				      ? UINT64_MAX
				      : count * c->o->period_ns;

		buf_varint(&c->vals, (uint64_t)clamp(ns));
	}
	buf_bytes(&c->msg, SAMPLE_LOCATION_ID, c->ids.p, c->ids.len);
	buf_bytes(&c->msg, SAMPLE_VALUE, c->vals.p, c->vals.len);
	if (c->o->labels && n) {
		struct luw_pprof_label l[LUW_PPROF_MAX_LABELS];
		size_t k = c->o->labels(c->o->labels_ctx,
					luw_stacks_name(c->s, frames[0]),
					luw_stacks_name_len(c->s, frames[0]), l,
					LUW_PPROF_MAX_LABELS);

		for (i = 0; i < k && i < LUW_PPROF_MAX_LABELS; i++) {
			c->lab.len = 0;
			buf_uint(&c->lab, LABEL_KEY,
				 (uint64_t)str(c, l[i].key, strlen(l[i].key)));
			if (l[i].str)
				buf_uint(&c->lab, LABEL_STR,
					 (uint64_t)str(c, l[i].str,
						       strlen(l[i].str)));
			else
				buf_uint(&c->lab, LABEL_NUM, (uint64_t)l[i].num);
			buf_bytes(&c->msg, SAMPLE_LABEL, c->lab.p, c->lab.len);
			if (c->lab.oom)
				c->msg.oom = 1;
		}
	}
	if (c->ids.oom || c->vals.oom)
		c->msg.oom = 1;
	buf_bytes(&c->top, PROFILE_SAMPLE, c->msg.p, c->msg.len);
	if (c->msg.oom)
		c->top.oom = 1;
	gz_buf(c->gz, &c->top);
	return c->gz->failed ? -1 : 0;
}

static void value_type(struct ctx *c, unsigned field, uint64_t type,
		       uint64_t unit)
{
	c->msg.len = 0;
	buf_uint(&c->msg, VALUETYPE_TYPE, type);
	buf_uint(&c->msg, VALUETYPE_UNIT, unit);
	buf_bytes(&c->top, field, c->msg.p, c->msg.len);
	if (c->msg.oom)
		c->top.oom = 1;
}

/*
 * "name @chunk:line", "@chunk:line", "TRACE_n @chunk:line": the chunk and
 * the line.  Returns 0 when the frame names no Lua source.
 */
static int lua_source(const char *name, size_t len, const char **chunk,
		      size_t *chunk_len, uint64_t *line)
{
	size_t at, colon, i;

	/* luw_flamegraph_kind() checks the "@chunk:line" suffix of Lua frames;
	 * a trace names where it starts the same way. */
	if (luw_flamegraph_kind(name, len) == LUW_FRAME_TRACE) {
		for (at = len; at > 0 && name[at - 1] != '@'; at--)
			;
		if (at < 2 || luw_flamegraph_kind(name + at - 1, len - at + 1) !=
				      LUW_FRAME_LUA)
			return 0;
	} else if (luw_flamegraph_kind(name, len) != LUW_FRAME_LUA) {
		return 0;
	}
	for (at = len; name[at - 1] != '@'; at--)
		;
	for (colon = len; name[colon - 1] != ':'; colon--)
		;
	*chunk = name + at;
	*chunk_len = colon - 1 - at;
	*line = 0;
	for (i = colon; i < len && *line < UINT64_MAX / 10 - 10; i++)
		*line = *line * 10 + (uint64_t)(name[i] - '0');
	return 1;
}

static int32_t str(struct ctx *c, const char *p, size_t len)
{
	int32_t id = luw_stacks_intern(c->strs, p, len);

	if (id < 0)
		c->failed = 1;
	return id < 0 ? 0 : id;
}

static void put_tables(struct ctx *c)
{
	size_t nn = luw_stacks_nnames(c->s), i;
	uint32_t *by_loc = calloc(c->nlocs + 1, sizeof(*by_loc));

	if (!by_loc) {
		c->failed = 1;
		return;
	}
	for (i = 0; i < nn; i++)
		if (c->loc[i])
			by_loc[c->loc[i]] = (uint32_t)i;
	/* Locations and functions in id order, so the output is stable. */
	for (i = 1; i <= c->nlocs && !c->gz->failed; i++) {
		int32_t f = (int32_t)by_loc[i];
		const char *name = luw_stacks_name(c->s, f), *chunk;
		size_t len = luw_stacks_name_len(c->s, f), chunk_len;
		uint64_t line = 0, sname = (uint64_t)str(c, name, len);
		uint64_t file = STR_EMPTY;
		struct luw_strbuf *m = &c->msg, *l = &c->ids;

		if (lua_source(name, len, &chunk, &chunk_len, &line))
			file = (uint64_t)str(c, chunk, chunk_len);
		l->len = m->len = 0;
		buf_uint(l, LINE_FUNCTION_ID, i);
		if (line)
			buf_uint(l, LINE_LINE, line);
		buf_uint(m, LOCATION_ID, i);
		buf_bytes(m, LOCATION_LINE, l->p, l->len);
		buf_bytes(&c->top, PROFILE_LOCATION, m->p, m->len);
		m->len = 0;
		buf_uint(m, FUNCTION_ID, i);
		buf_uint(m, FUNCTION_NAME, sname);
		buf_uint(m, FUNCTION_SYSTEM_NAME, sname);
		if (file != STR_EMPTY)
			buf_uint(m, FUNCTION_FILENAME, file);
		buf_bytes(&c->top, PROFILE_FUNCTION, m->p, m->len);
		if (l->oom || m->oom)
			c->top.oom = 1;
		gz_buf(c->gz, &c->top);
	}
	free(by_loc);
	for (i = 0; i < luw_stacks_nnames(c->strs) && !c->gz->failed; i++) {
		buf_bytes(&c->top, PROFILE_STRING_TABLE,
			  luw_stacks_name(c->strs, (int32_t)i),
			  luw_stacks_name_len(c->strs, (int32_t)i));
		/* Strings can be large: flush each one. */
		gz_buf(c->gz, &c->top);
	}
}

int luw_pprof_write(FILE *out, const struct luw_stacks *s,
		    const struct luw_pprof_opts *opts)
{
	static const char *const fixed[] = { "", "samples", "count", "cpu",
					     "nanoseconds" };
	struct luw_pprof_opts none = { 0 };
	struct gz *gz = calloc(1, sizeof(*gz));
	uint64_t ctype = STR_CPU, cunit = STR_NANOSECONDS;
	struct ctx c = { 0 };
	size_t i;
	int ret = -1, zinit = 0;

	c.s = s;
	c.o = opts ? opts : &none;
	c.gz = gz;
	c.strs = luw_stacks_new();
	c.loc = calloc(luw_stacks_nnames(s) + 1, sizeof(*c.loc));
	if (!gz || !c.strs || !c.loc)
		goto out;
	gz->out = out;
	/* windowBits 15 + 16: a gzip wrapper with no name and mtime 0, so
	 * the same profile gives the same bytes. */
	if (deflateInit2(&gz->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16,
			 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		goto out;
	}
	zinit = 1;
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		str(&c, fixed[i], strlen(fixed[i]));
	if (luw_stacks_each(s, mark, &c))
		goto out;

	if (c.o->count_type) {
		ctype = (uint64_t)str(&c, c.o->count_type, strlen(c.o->count_type));
		cunit = (uint64_t)str(&c, c.o->count_unit, strlen(c.o->count_unit));
		if (c.o->aux_type)
			value_type(&c, PROFILE_SAMPLE_TYPE,
				   (uint64_t)str(&c, c.o->aux_type, strlen(c.o->aux_type)),
				   (uint64_t)str(&c, c.o->aux_unit, strlen(c.o->aux_unit)));
		value_type(&c, PROFILE_SAMPLE_TYPE, ctype, cunit);
	} else {
		value_type(&c, PROFILE_SAMPLE_TYPE, STR_SAMPLES, STR_COUNT);
		if (c.o->period_ns)
			value_type(&c, PROFILE_SAMPLE_TYPE, STR_CPU, STR_NANOSECONDS);
	}
	gz_buf(gz, &c.top);
	if (luw_stacks_each2(s, NULL, put_sample2, &c))
		goto out;
	put_tables(&c);
	if (c.o->time_ns)
		buf_uint(&c.top, PROFILE_TIME_NANOS, (uint64_t)c.o->time_ns);
	if (c.o->duration_ns)
		buf_uint(&c.top, PROFILE_DURATION_NANOS,
			 (uint64_t)clamp(c.o->duration_ns));
	value_type(&c, PROFILE_PERIOD_TYPE, ctype, cunit);
	buf_uint(&c.top, PROFILE_PERIOD, (uint64_t)clamp(c.o->period_ns));
	gz_buf(gz, &c.top);
	gz_feed(gz, NULL, 0, Z_FINISH);
	if (c.failed) {
		errno = ENOMEM;
		goto out;
	}
	if (!gz->failed && !ferror(out))
		ret = 0;
out:
	if (zinit)
		deflateEnd(&gz->z);
	free(c.top.p);
	free(c.msg.p);
	free(c.ids.p);
	free(c.vals.p);
	free(c.lab.p);
	free(c.loc);
	luw_stacks_free(c.strs);
	free(gz);
	return ret;
}
