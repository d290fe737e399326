/*
 * util/strbuf.c (and strbuf.h's inline appends) against C's own
 * formatting and a plain byte array: the numbers print as printf's
 * "%" PRId64, "%" PRIu64 and "%#" PRIx64 print them (the extremes and
 * 100,000 pseudo-random values each); a buffer grown by thousands of
 * appends of every size holds exactly the bytes appended, always
 * NUL-terminated inside its capacity; reset keeps the storage; a size no
 * allocation can meet fails, stays failed and changes nothing.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "testlib.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: reproducible values spread over all 64 bits. */
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dull;
}

/* A value with a random number of significant bits: every digit count. */
static uint64_t rnd_width(void)
{
	unsigned int bits = (unsigned int)(rnd() % 65);

	return bits == 64 ? rnd() : rnd() & ((1ull << bits) - 1);
}

enum fmt { DEC, UDEC, HEX };

/* b's text after putting v as fmt must be printf's. */
static void check_num(struct luw_strbuf *b, enum fmt f, uint64_t v)
{
	char want[32];

	luw_strbuf_reset(b);
	switch (f) {
	case DEC:
		luw_strbuf_putd(b, (int64_t)v);
		snprintf(want, sizeof(want), "%" PRId64, (int64_t)v);
		break;
	case UDEC:
		luw_strbuf_putu(b, v);
		snprintf(want, sizeof(want), "%" PRIu64, v);
		break;
	case HEX:
		luw_strbuf_putx(b, v);
		snprintf(want, sizeof(want), "%#" PRIx64, v);
		break;
	}
	CHECK(b->len == strlen(want) && !strcmp(b->p, want),
	      "format %d of 0x%" PRIx64 ": \"%s\" (%zu bytes), printf \"%s\"",
	      f, v, b->p ? b->p : "(null)", b->len, want);
}

static void test_numbers(void)
{
	static const uint64_t edge[] = {
		0, 1, 9, 10, 15, 16, 99, 100, 255, 256, 0x7fffffff,
		0x80000000ull, 0xffffffffull, 999999999999999999ull,
		1000000000000000000ull, (uint64_t)INT64_MAX,
		(uint64_t)INT64_MIN, (uint64_t)INT64_MIN + 1, UINT64_MAX - 1,
		UINT64_MAX,
	};
	struct luw_strbuf b;

	luw_strbuf_init(&b);
	for (int f = DEC; f <= HEX; f++) {
		for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
			check_num(&b, f, edge[i]);
		for (int i = 0; i < 100000; i++)
			check_num(&b, f, rnd_width());
	}
	/* Appends, not overwrites: numbers after text. */
	luw_strbuf_reset(&b);
	luw_strbuf_puts(&b, "f:");
	luw_strbuf_putd(&b, -42);
	luw_strbuf_putc(&b, ':');
	luw_strbuf_putx(&b, 0xbeef);
	CHECK(!strcmp(b.p, "f:-42:0xbeef"), "mixed appends: \"%s\"", b.p);
	CHECK(!luw_strbuf_failed(&b), "failed without a failure");
	luw_strbuf_free(&b);
	CHECK(!b.p && !b.len && !b.cap && !b.oom, "free leaves no storage");
}

/* Every prefix length and piece size, against a plain array. */
static void test_appends(void)
{
	enum { TOTAL = 1 << 20 };
	char *want = malloc(TOTAL), piece[600];
	struct luw_strbuf b;
	size_t n = 0, appends = 0;
	const char *p0;
	size_t cap0;

	CHECK(want, "out of memory");
	if (!want)
		return;
	luw_strbuf_init(&b);
	/* An empty append still leaves a NUL-terminated string. */
	luw_strbuf_putn(&b, "", 0);
	CHECK(b.p && b.len == 0 && b.p[0] == '\0' && b.cap > 0,
	      "empty append: p %p len %zu cap %zu", (void *)b.p, b.len, b.cap);
	while (n < TOTAL - sizeof(piece)) {
		size_t k = rnd() % sizeof(piece);

		for (size_t i = 0; i < k; i++)
			piece[i] = (char)(' ' + rnd() % 95);
		switch (rnd() % 3) {
		case 0:
			luw_strbuf_putn(&b, piece, k);
			break;
		case 1:
			piece[k] = '\0';
			luw_strbuf_puts(&b, piece);
			break;
		default:
			k = 1;
			luw_strbuf_putc(&b, piece[0]);
			break;
		}
		memcpy(want + n, piece, k);
		n += k;
		appends++;
		if (b.len != n || b.len >= b.cap || b.p[b.len] != '\0') {
			CHECK(0, "after %zu appends: len %zu (want %zu), cap %zu, "
			      "no NUL at len", appends, b.len, n, b.cap);
			break;
		}
	}
	CHECK(b.len == n && !memcmp(b.p, want, n),
	      "%zu bytes from %zu appends differ from the same bytes copied",
	      n, appends);
	/* Doubling: a megabyte of appends, few sizes in between. */
	CHECK(b.cap < 4 * (size_t)TOTAL, "capacity %zu for %zu bytes", b.cap, n);
	/* reset reuses the storage. */
	p0 = b.p;
	cap0 = b.cap;
	luw_strbuf_reset(&b);
	luw_strbuf_puts(&b, "again");
	CHECK(b.p == p0 && b.cap == cap0 && !strcmp(b.p, "again"),
	      "reset: storage %p cap %zu (was %p, %zu), \"%.10s\"",
	      (void *)b.p, b.cap, (void *)p0, cap0, b.p);
	luw_strbuf_free(&b);
	free(want);
}

/* A size no allocation can meet: failed, for good, nothing changed. */
static void test_failure(void)
{
	struct luw_strbuf b;

	luw_strbuf_init(&b);
	luw_strbuf_puts(&b, "kept");
	CHECK(luw_strbuf_grow(&b, SIZE_MAX) == -1 && luw_strbuf_failed(&b),
	      "grow by SIZE_MAX did not fail");
	CHECK(b.len == 4 && !strcmp(b.p, "kept"), "a failed grow changed \"%s\"",
	      b.p);
	luw_strbuf_puts(&b, "more");
	luw_strbuf_putd(&b, 7);
	CHECK(b.len == 4 && !strcmp(b.p, "kept") && luw_strbuf_failed(&b),
	      "appends after a failure: \"%s\", failed %d", b.p,
	      luw_strbuf_failed(&b));
	luw_strbuf_free(&b);

	/* len + need + 1 wraps to 0: refused, not taken as room enough. */
	luw_strbuf_init(&b);
	luw_strbuf_puts(&b, "12345");
	CHECK(luw_strbuf_grow(&b, SIZE_MAX - 5) == -1 && luw_strbuf_failed(&b) &&
	      b.len == 5, "a grow whose size wraps did not fail");
	luw_strbuf_free(&b);
	/* Just short of wrapping: more than any allocation. */
	luw_strbuf_init(&b);
	luw_strbuf_puts(&b, "12345");
	CHECK(luw_strbuf_grow(&b, SIZE_MAX - 6) == -1 && luw_strbuf_failed(&b) &&
	      b.len == 5, "a grow to SIZE_MAX bytes did not fail");
	luw_strbuf_free(&b);
	CHECK(!luw_strbuf_failed(&b), "free keeps the failure");
}

int main(void)
{
	test_numbers();
	test_appends();
	test_failure();
	if (luw_test_status("test_strbuf"))
		return 1;
	printf("test_strbuf: ok\n");
	return 0;
}
