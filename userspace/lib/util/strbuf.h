/*
 * Growable byte string for report text and frame names.
 *
 * Reports build many short names per event; the buffer is reused, so the
 * steady state allocates nothing.  Allocation failure is sticky: later
 * appends do nothing and luw_strbuf_failed() says so, which lets callers check
 * once per record instead of once per append.
 */
#ifndef LUW_UTIL_STRBUF_H
#define LUW_UTIL_STRBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct luw_strbuf {
	char *p;
	size_t len;
	size_t cap;
	int oom;
};

static inline void luw_strbuf_init(struct luw_strbuf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

void luw_strbuf_free(struct luw_strbuf *b);
int luw_strbuf_grow(struct luw_strbuf *b, size_t need);

static inline void luw_strbuf_reset(struct luw_strbuf *b)
{
	b->len = 0;
}

static inline int luw_strbuf_failed(const struct luw_strbuf *b)
{
	return b->oom;
}

static inline void luw_strbuf_putn(struct luw_strbuf *b, const char *s, size_t n)
{
	/* Failed: nothing more, even what would fit (no text with a hole). */
	if (b->oom || (b->cap - b->len <= n && luw_strbuf_grow(b, n + 1)))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void luw_strbuf_puts(struct luw_strbuf *b, const char *s)
{
	luw_strbuf_putn(b, s, strlen(s));
}

static inline void luw_strbuf_putc(struct luw_strbuf *b, char c)
{
	luw_strbuf_putn(b, &c, 1);
}

/* Decimal, as Lua's "%d" prints an integer-valued number. */
void luw_strbuf_putd(struct luw_strbuf *b, int64_t v);
void luw_strbuf_putu(struct luw_strbuf *b, uint64_t v);
/* "0x..." lowercase, as C's "%#llx" (so 0 prints as "0"). */
void luw_strbuf_putx(struct luw_strbuf *b, uint64_t v);

#endif
