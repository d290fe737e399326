#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>

#include "util/grow.h"

void luw_strbuf_free(struct luw_strbuf *b)
{
	free(b->p);
	luw_strbuf_init(b);
}

int luw_strbuf_grow(struct luw_strbuf *b, size_t need)
{
	void *p = b->p;

	/* need bytes past len, and strictly more: room for the NUL. */
	if (b->oom || need >= SIZE_MAX - b->len ||
	    luw_grow(&p, &b->cap, b->len + need + 1, 1)) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	return 0;
}

void luw_strbuf_putu(struct luw_strbuf *b, uint64_t v)
{
	char tmp[24], *q = tmp + sizeof(tmp);

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	luw_strbuf_putn(b, q, (size_t)(tmp + sizeof(tmp) - q));
}

void luw_strbuf_putd(struct luw_strbuf *b, int64_t v)
{
	if (v < 0) {
		luw_strbuf_putc(b, '-');
		luw_strbuf_putu(b, (uint64_t)0 - (uint64_t)v);
	} else {
		luw_strbuf_putu(b, (uint64_t)v);
	}
}

void luw_strbuf_putx(struct luw_strbuf *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[24], *q = tmp + sizeof(tmp);

	if (!v) {
		luw_strbuf_putc(b, '0');
		return;
	}
	while (v) {
		*--q = hex[v & 15];
		v >>= 4;
	}
	*--q = 'x';
	*--q = '0';
	luw_strbuf_putn(b, q, (size_t)(tmp + sizeof(tmp) - q));
}
