#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>

#include "util/grow.h"

void luw_sb_free(struct luw_sb *b)
{
	free(b->p);
	luw_sb_init(b);
}

int luw_sb_grow(struct luw_sb *b, size_t need)
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

void luw_sb_putu(struct luw_sb *b, uint64_t v)
{
	char tmp[24], *q = tmp + sizeof(tmp);

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	luw_sb_putn(b, q, (size_t)(tmp + sizeof(tmp) - q));
}

void luw_sb_putd(struct luw_sb *b, int64_t v)
{
	if (v < 0) {
		luw_sb_putc(b, '-');
		luw_sb_putu(b, (uint64_t)0 - (uint64_t)v);
	} else {
		luw_sb_putu(b, (uint64_t)v);
	}
}

void luw_sb_putx(struct luw_sb *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[24], *q = tmp + sizeof(tmp);

	if (!v) {
		luw_sb_putc(b, '0');
		return;
	}
	while (v) {
		*--q = hex[v & 15];
		v >>= 4;
	}
	*--q = 'x';
	*--q = '0';
	luw_sb_putn(b, q, (size_t)(tmp + sizeof(tmp) - q));
}
