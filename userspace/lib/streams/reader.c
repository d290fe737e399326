#include "streams/reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Initial window size.  The window grows on demand to hold one string
 * contiguously (chunk names of generated code can be megabytes long), but
 * never beyond LUW_RD_WINDOW_MAX, so a corrupt length cannot make the
 * reader allocate without bound.
 */
#define LUW_RD_WINDOW (1u << 18)
#define LUW_RD_WINDOW_MAX (64u << 20)

/* Make room for n contiguous bytes from r->p; 0 when n is beyond the cap. */
static int luw_reader_grow(struct luw_reader *r, size_t n)
{
	size_t have = (size_t)(r->end - r->p), cap = r->cap;
	uint8_t *buf;

	if (n > LUW_RD_WINDOW_MAX)
		return 0;
	while (cap < n)
		cap *= 2;
	if (cap > LUW_RD_WINDOW_MAX)
		cap = LUW_RD_WINDOW_MAX;
	memmove(r->buf, r->p, have);
	r->base += (uint64_t)(r->p - r->win);
	buf = realloc(r->buf, cap);
	if (!buf) {
		r->win = r->p = r->buf;
		r->end = r->buf + have;
		return 0;
	}
	r->buf = buf;
	r->cap = cap;
	r->win = r->p = buf;
	r->end = buf + have;
	return 1;
}

int luw_reader_open_fd(struct luw_reader *r, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->cap = LUW_RD_WINDOW;
	r->buf = malloc(r->cap);
	if (!r->buf)
		return -1;
	r->p = r->end = r->win = r->buf;
	return 0;
}

void luw_reader_open_mem(struct luw_reader *r, const void *data, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->win = r->p = data;
	r->end = r->p + len;
	r->eof = 1;
}

void luw_reader_close(struct luw_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->p = r->end = r->win = NULL;
}

int luw_reader_fill(struct luw_reader *r, size_t n)
{
	size_t have = (size_t)(r->end - r->p);

	while (have < n) {
		ssize_t got;

		if (r->eof || r->failed)
			return 0;
		if (n > r->cap && !luw_reader_grow(r, n))
			return 0;
		if ((size_t)(r->p - r->buf) + n > r->cap) {
			/* Slide the unread tail to the front of the window. */
			memmove(r->buf, r->p, have);
			r->base += (uint64_t)(r->p - r->win);
			r->win = r->p = r->buf;
			r->end = r->buf + have;
		}
		got = read(r->fd, (uint8_t *)r->end,
			   r->cap - (size_t)(r->end - r->buf));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			r->io_errno = errno;
			luw_reader_fail(r, luw_reader_offset(r), "readable input", 0);
			return 0;
		}
		if (got == 0) {
			r->eof = 1;
			return 0;
		}
		r->end += got;
		have += (size_t)got;
	}
	return 1;
}

int luw_reader_fail(struct luw_reader *r, uint64_t off, const char *what, int eof)
{
	if (!r->failed) {
		r->failed = 1;
		r->err_off = off;
		r->err_what = what;
		r->err_eof = eof;
	}
	return 0;
}

int luw_reader_failf(struct luw_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return 0;
	va_start(ap, fmt);
	vsnprintf(r->err_buf, sizeof(r->err_buf), fmt, ap);
	va_end(ap);
	return luw_reader_fail(r, off, r->err_buf, 0);
}

uint64_t luw_reader_uleb_slow(struct luw_reader *r, const char *what)
{
	uint64_t off = luw_reader_offset(r), v = 0;
	unsigned int i;

	for (i = 0; i < 10; i++) {
		uint8_t b;

		if (r->p == r->end && !luw_reader_fill(r, 1))
			return luw_reader_fail(r, off, what, !r->io_errno);
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (i == 9 && b > 1)
				break;
			return v;
		}
	}
	return luw_reader_fail(r, off, what, 0);
}

const char *luw_reader_string(struct luw_reader *r, size_t *len, const char *what)
{
	uint64_t off = luw_reader_offset(r), n;
	const char *s;

	n = luw_reader_uleb(r, what);
	if (r->failed)
		return NULL;
	if (n > (uint64_t)(r->end - r->p) && !luw_reader_fill(r, (size_t)n)) {
		/* Beyond the window's cap, or the stream ends inside it. */
		if (r->fd >= 0 && n > r->cap)
			luw_reader_failf(r, off, "%s (%llu bytes long, limit %u)",
				     what, (unsigned long long)n,
				     LUW_RD_WINDOW_MAX);
		else
			luw_reader_fail(r, off, what, !r->io_errno);
		return NULL;
	}
	s = (const char *)r->p;
	r->p += n;
	*len = (size_t)n;
	return s;
}

int luw_reader_skip(struct luw_reader *r, uint64_t n, const char *what)
{
	uint64_t off = luw_reader_offset(r);

	while (n) {
		size_t have = (size_t)(r->end - r->p);

		if (!have && !luw_reader_fill(r, 1))
			return luw_reader_fail(r, off, what, !r->io_errno);
		have = (size_t)(r->end - r->p);
		if (have > n)
			have = (size_t)n;
		r->p += have;
		n -= have;
	}
	return 1;
}

void luw_reader_strerror(const struct luw_reader *r, char *buf, size_t size)
{
	if (r->io_errno)
		snprintf(buf, size, "offset %llu: read error: %s",
			 (unsigned long long)r->err_off, strerror(r->io_errno));
	else if (r->err_eof)
		snprintf(buf, size, "offset %llu: stream ends, expected %s",
			 (unsigned long long)r->err_off, r->err_what);
	else
		snprintf(buf, size, "offset %llu: expected %s",
			 (unsigned long long)r->err_off, r->err_what);
}
