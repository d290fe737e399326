/*
 * output/flamegraph.c (the SVG writer) and output/pprof.c (the pprof
 * writer) on real folded input: structure, escaping, determinism, and (for pprof) a protobuf decoder of our own
 * that reads the profile back into folded stacks.
 */
#include "output/flamegraph.h"
#include "output/pprof.h"
#include "output/stacks.h"
#include "testlib.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static struct luw_stacks *load(const char *dir, const char *file)
{
	struct luw_stacks *s = luw_stacks_new();
	char path[4096], err[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f || luw_stacks_read_folded(s, f, err, sizeof(err))) {
		fprintf(stderr, "%s: cannot load\n", path);
		exit(1);
	}
	fclose(f);
	return s;
}

static struct luw_stacks *from_text(const char *text)
{
	struct luw_stacks *s = luw_stacks_new();
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	char err[256];

	if (!f || luw_stacks_read_folded(s, f, err, sizeof(err))) {
		fprintf(stderr, "bad test text: %s\n", err);
		exit(1);
	}
	fclose(f);
	return s;
}

static char *svg_of(const struct luw_stacks *s,
		    const struct luw_flamegraph_opts *o, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	CHECK(f && luw_flamegraph_write(f, s, o) == 0, "flamegraph_write");
	fclose(f);
	return buf;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

/* Strict UTF-8 (no overlongs, no surrogates), as an XML parser wants. */
static int valid_utf8(const unsigned char *p, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = p[i], k, j;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
		if (!k || i + k > len)
			return 0;
		cp = c & (0x7f >> k);
		for (j = 1; j < k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) ||
		    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k;
	}
	return 1;
}

static void test_kind(void)
{
	static const struct {
		const char *name;
		enum luw_flamegraph_kind kind;
	} cases[] = {
		{ "outer @sw.lua:3", LUW_FRAME_LUA },
		{ "@main.lua:0", LUW_FRAME_LUA },
		{ "@main.lua:0 @main.lua:0", LUW_FRAME_LUA },
		{ "a@b @c/d.lua:120", LUW_FRAME_LUA },
		{ "TRACE_3 @payload.lua:5", LUW_FRAME_TRACE },
		{ "TRACE_12", LUW_FRAME_TRACE },
		{ "c_leaf", LUW_FRAME_HOST },
		{ "lj_BC_FUNCC:0x55f5a130029d", LUW_FRAME_HOST },
		{ "user@host:22", LUW_FRAME_HOST },
		{ "x @y.lua:", LUW_FRAME_HOST },
		{ "x @y.lua:12a", LUW_FRAME_HOST },
		{ "x @:12", LUW_FRAME_HOST },
		{ "", LUW_FRAME_HOST },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum luw_flamegraph_kind k = luw_flamegraph_kind(cases[i].name,
						       strlen(cases[i].name));

		CHECK(k == cases[i].kind, "'%s' is kind %d", cases[i].name, k);
	}
}

static void test_svg(const char *dir)
{
	struct luw_stacks *s = load(dir, "sample.folded");
	struct luw_flamegraph_opts o;
	char *a, *b;
	size_t la, lb;

	luw_flamegraph_defaults(&o);
	o.title = "T <&> \"q\" 'a'";
	a = svg_of(s, &o, &la);
	b = svg_of(s, &o, &lb);
	CHECK(la == lb && memcmp(a, b, la) == 0, "same input, other bytes");
	/* 35 distinct prefixes in sample.folded, plus the root. */
	CHECK(count_of(a, "<g class=\"f\"") == 36, "%zu boxes",
	      count_of(a, "<g class=\"f\""));
	CHECK(strstr(a, "data-total=\"1500\""), "total");
	CHECK(strstr(a, "data-name=\"all\" data-kind=\"root\" data-depth=\"0\" "
			"data-start=\"0\" data-samples=\"1500\""), "root box");
	CHECK(strstr(a, "data-name=\"c_leaf\" data-kind=\"host\" "
			"data-depth=\"11\""), "c_leaf box");
	CHECK(strstr(a, "<title>c_leaf (469 samples, 31.27%)</title>"),
	      "c_leaf title");
	CHECK(strstr(a, "data-name=\"check &quot;a&lt;b&quot; &amp;&amp; "
			"&apos;c&apos;&gt;d @esc.lua:1\" data-kind=\"lua\""),
	      "escaped name");
	CHECK(strstr(a, "data-name=\"std::vector&lt;int&gt;::push_back"
			"(int&amp;&amp;)\""), "escaped C++ name");
	CHECK(strstr(a, ">T &lt;&amp;&gt; &quot;q&quot; &apos;a&apos;</text>"),
	      "escaped title");
	CHECK(!strstr(a, "a<b") && !strstr(a, "<int>"), "raw '<' leaked");
	/* Self-contained: nothing fetched from elsewhere. */
	CHECK(!strstr(a, "href") && !strstr(a, "<!DOCTYPE") &&
	      !strstr(a, "@import") && !strstr(a, "url("), "external ref");
	CHECK(strstr(a, "]]></script>") && count_of(a, "]]>") == 1,
	      "script CDATA");
	free(a);
	free(b);
	luw_stacks_free(s);
}

static void test_svg_bytes(void)
{
	/* Invalid UTF-8, control bytes, and a long multibyte name that
	 * must be cut between characters. */
	static const char text[] =
		"main;bad \xff\xfe\x01 name 5\n"
		"main;\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 30\n"
		"main;\xed\xa0\x80surrogate 1\n"
		"main 91\n";
	struct luw_stacks *s = from_text(text);
	struct luw_flamegraph_opts o;
	size_t len;
	char *svg;

	luw_flamegraph_defaults(&o);
	o.width = 300;
	svg = svg_of(s, &o, &len);
	CHECK(valid_utf8((const unsigned char *)svg, len), "invalid UTF-8");
	CHECK(strstr(svg, "data-name=\"bad \xef\xbf\xbd\xef\xbf\xbd"
			  "\xef\xbf\xbd name\""), "replacement characters");
	CHECK(strstr(svg, "\xc3\xa9..</text>"), "label cut at a character");
	CHECK(!memchr(svg, '\x01', len), "control byte leaked");
	free(svg);
	luw_stacks_free(s);
}

static void test_min_width(void)
{
	struct luw_stacks *s = from_text("a;b 100000\na;tiny 1\n");
	struct luw_flamegraph_opts o;
	char *svg;
	size_t len;

	luw_flamegraph_defaults(&o);
	svg = svg_of(s, &o, &len);
	CHECK(!strstr(svg, "data-name=\"tiny\""), "0.01 px box drawn");
	CHECK(count_of(svg, "<g class=\"f\"") == 3, "boxes");
	free(svg);
	o.min_width = 0;
	svg = svg_of(s, &o, &len);
	CHECK(strstr(svg, "data-name=\"tiny\""), "min_width 0 drops a box");
	free(svg);
	luw_stacks_free(s);

	s = luw_stacks_new();
	svg = svg_of(s, NULL, &len);
	CHECK(strstr(svg, "No samples") && strstr(svg, "data-total=\"0\"") &&
	      !strstr(svg, "<g class=\"f\""), "empty profile");
	free(svg);
	luw_stacks_free(s);
}

/* A small protobuf reader: enough of profile.proto to check the writer. */
struct pb {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t pb_varint(struct pb *b)
{
	uint64_t v = 0;
	int shift = 0;

	while (b->p < b->end && shift < 64) {
		uint8_t c = *b->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	b->bad = 1;
	return 0;
}

/* Next field: returns its number, sets *sub for length-delimited ones. */
static unsigned pb_field(struct pb *b, uint64_t *v, struct pb *sub)
{
	uint64_t key = pb_varint(b);

	if (b->bad)
		return 0;
	if ((key & 7) == 0) {
		*v = pb_varint(b);
	} else if ((key & 7) == 2) {
		uint64_t len = pb_varint(b);

		if (len > (uint64_t)(b->end - b->p)) {
			b->bad = 1;
			return 0;
		}
		sub->p = b->p;
		sub->end = b->p + len;
		sub->bad = 0;
		b->p += len;
	} else {
		b->bad = 1;
		return 0;
	}
	return (unsigned)(key >> 3);
}

struct decoded {
	char *strings[256];
	size_t nstrings;
	uint64_t fn_name[128], fn_file[128], loc_fn[128], loc_line[128];
	uint64_t period, duration, period_type[2], types[4];
	size_t ntypes;
	char *folded;	/* samples as "root;...;leaf count cpu\n" */
	size_t folded_len;
	FILE *out;
	int bad;
};

static void decode_sample(struct decoded *d, struct pb m)
{
	uint64_t ids[64], vals[4], v;
	size_t nid = 0, nval = 0, i;
	struct pb sub;
	unsigned f;

	while (m.p < m.end && (f = pb_field(&m, &v, &sub))) {
		struct pb *pk = &sub;

		if (f == 1)
			while (pk->p < pk->end && nid < 64)
				ids[nid++] = pb_varint(pk);
		if (f == 2)
			while (pk->p < pk->end && nval < 4)
				vals[nval++] = pb_varint(pk);
	}
	d->bad |= m.bad;
	/* Leaf first in the profile; root first in folded text. */
	for (i = nid; i-- > 0;) {
		uint64_t fn = ids[i] < 128 ? d->loc_fn[ids[i]] : 0;
		uint64_t name = fn < 128 ? d->fn_name[fn] : 0;

		fprintf(d->out, "%s%s", i + 1 < nid ? ";" : "",
			name < d->nstrings ? d->strings[name] : "?");
	}
	for (i = 0; i < nval; i++)
		fprintf(d->out, " %" PRIu64, vals[i]);
	fputc('\n', d->out);
}

static void decode(struct decoded *d, const uint8_t *p, size_t len)
{
	struct pb b = { p, p + len, 0 }, sub, s2;
	struct pb samples[64];
	size_t nsamples = 0, i;
	uint64_t v;
	unsigned f;

	memset(d, 0, sizeof(*d));
	while (b.p < b.end && (f = pb_field(&b, &v, &sub))) {
		uint64_t id = 0, a = 0, c = 0, line = 0;

		switch (f) {
		case 1:
		case 11:
			while (sub.p < sub.end && (f == 1 || f == 11)) {
				unsigned g = pb_field(&sub, &v, &s2);

				if (f == 1 && d->ntypes < 4)
					d->types[d->ntypes++] = v;
				if (f == 11 && g >= 1 && g <= 2)
					d->period_type[g - 1] = v;
				if (!g)
					break;
			}
			break;
		case 2:
			if (nsamples < 64)
				samples[nsamples++] = sub;
			break;
		case 4:
			while (sub.p < sub.end) {
				unsigned g = pb_field(&sub, &v, &s2);

				if (g == 1)
					id = v;
				if (g == 4) {
					while (s2.p < s2.end) {
						uint64_t w;
						struct pb s3;
						unsigned h = pb_field(&s2, &w, &s3);

						if (h == 1)
							a = w;
						if (h == 2)
							line = w;
						if (!h)
							break;
					}
				}
				if (!g)
					break;
			}
			if (id < 128) {
				d->loc_fn[id] = a;
				d->loc_line[id] = line;
			}
			break;
		case 5:
			while (sub.p < sub.end) {
				unsigned g = pb_field(&sub, &v, &s2);

				if (g == 1)
					id = v;
				if (g == 2)
					a = v;
				if (g == 4)
					c = v;
				if (!g)
					break;
			}
			if (id < 128) {
				d->fn_name[id] = a;
				d->fn_file[id] = c;
			}
			break;
		case 6:
			if (d->nstrings < 256)
				d->strings[d->nstrings++] =
					strndup((const char *)sub.p,
						(size_t)(sub.end - sub.p));
			break;
		case 10:
			d->duration = v;
			break;
		case 12:
			d->period = v;
			break;
		}
	}
	d->bad |= b.bad;
	/* Samples last: they refer to locations that may come later. */
	d->out = open_memstream(&d->folded, &d->folded_len);
	for (i = 0; i < nsamples; i++)
		decode_sample(d, samples[i]);
	fclose(d->out);
}

static void test_pprof(const char *dir)
{
	struct luw_stacks *s = load(dir, "sample.folded");
	struct luw_pprof_opts o = { .period_ns = 1000000, .duration_ns = 1500000000 };
	char *gz = NULL, *gz2 = NULL, *folded = NULL, *want = NULL;
	size_t gzlen, gzlen2, flen, wlen, i;
	static uint8_t raw[1 << 20];
	uLongf rawlen = sizeof(raw);
	z_stream z = { 0 };
	struct decoded d;
	FILE *f;
	char *line;

	f = open_memstream(&gz, &gzlen);
	CHECK(luw_pprof_write(f, s, &o) == 0, "pprof_write");
	fclose(f);
	f = open_memstream(&gz2, &gzlen2);
	CHECK(luw_pprof_write(f, s, &o) == 0, "pprof_write");
	fclose(f);
	CHECK(gzlen == gzlen2 && memcmp(gz, gz2, gzlen) == 0,
	      "same input, other bytes");
	CHECK(gzlen > 18 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b,
	      "not gzip");

	CHECK(inflateInit2(&z, 15 + 16) == Z_OK, "inflateInit2");
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END, "gzip stream incomplete");
	rawlen = sizeof(raw) - z.avail_out;
	inflateEnd(&z);

	decode(&d, raw, rawlen);
	CHECK(!d.bad, "protobuf does not parse");
	CHECK(d.nstrings > 5 && strcmp(d.strings[0], "") == 0,
	      "string_table[0] must be empty");
	/* Two ValueTypes, their type and unit strings in order. */
	CHECK(d.ntypes == 4 && strcmp(d.strings[d.types[0]], "samples") == 0 &&
	      strcmp(d.strings[d.types[1]], "count") == 0 &&
	      strcmp(d.strings[d.types[2]], "cpu") == 0 &&
	      strcmp(d.strings[d.types[3]], "nanoseconds") == 0,
	      "sample_type: %zu strings", d.ntypes);
	CHECK(strcmp(d.strings[d.period_type[0]], "cpu") == 0 &&
	      strcmp(d.strings[d.period_type[1]], "nanoseconds") == 0,
	      "period_type");
	CHECK(d.period == 1000000 && d.duration == 1500000000,
	      "period %" PRIu64 " duration %" PRIu64, d.period, d.duration);

	/* Samples, read back, are the folded stacks with count and ns. */
	f = open_memstream(&want, &wlen);
	luw_stacks_write_folded(s, f);
	fclose(f);
	f = open_memstream(&folded, &flen);
	for (line = strtok(want, "\n"); line; line = strtok(NULL, "\n")) {
		uint64_t n = strtoull(strrchr(line, ' ') + 1, NULL, 10);

		fprintf(f, "%s %" PRIu64 "\n", line, n * 1000000);
	}
	fclose(f);
	CHECK(strcmp(folded, d.folded) == 0, "samples differ:\n%s\nwant:\n%s",
	      d.folded, folded);

	/* Lua frames carry their chunk and line. */
	for (i = 1; i < 128; i++) {
		uint64_t fn = d.loc_fn[i];

		if (fn && strcmp(d.strings[d.fn_name[fn]], "outer @sw.lua:3") == 0)
			break;
	}
	CHECK(i < 128 && strcmp(d.strings[d.fn_file[d.loc_fn[i]]], "sw.lua") == 0 &&
	      d.loc_line[i] == 3, "Lua source of 'outer @sw.lua:3'");
	for (i = 0; i < d.nstrings; i++)
		free(d.strings[i]);
	free(d.folded);
	free(folded);
	free(want);
	free(gz);
	free(gz2);
	luw_stacks_free(s);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
		return 2;
	}
	test_kind();
	test_svg(argv[1]);
	test_svg_bytes();
	test_min_width();
	test_pprof(argv[1]);
	if (luw_test_status("test_flamegraph"))
		return 1;
	printf("test_flamegraph: all checks passed\n");
	return 0;
}
