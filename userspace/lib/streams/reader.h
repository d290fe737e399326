/*
 * Buffered, offset-tracking reader for LuaJIT profiler streams.
 *
 * Every stream the reader decodes (symtab, sysprof, memprof, luaunwind
 * records) is a sequence of <BYTE>, <ULEB128> and length-prefixed strings.
 * The reader keeps a window of the input in memory, so decoding uses
 * constant memory whatever the stream length, and it knows the absolute
 * offset of every byte, so a decoder can say exactly where a bad or
 * truncated stream stopped.
 *
 * Errors are sticky: the first failed read records the offset where the
 * item started and what was expected; every later read returns 0 and the
 * decoder checks luw_reader_failed() at its own item boundaries.
 */
#ifndef LUW_STREAMS_READER_H
#define LUW_STREAMS_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct luw_reader {
	const uint8_t *p;	/* next byte */
	const uint8_t *end;	/* end of the bytes in memory */
	uint64_t base;		/* stream offset of the window's first byte */
	const uint8_t *win;	/* window's first byte */
	int fd;			/* -1 for an in-memory stream */
	uint8_t *buf;		/* window storage when reading an fd */
	size_t cap;
	int eof;		/* no more bytes beyond end */
	int failed;
	uint64_t err_off;	/* offset of the item that failed */
	const char *err_what;	/* what was expected there */
	int err_eof;		/* the stream ended (vs. bad content) */
	int io_errno;		/* read(2) failure, 0 if none */
	char err_buf[128];	/* storage for a formatted err_what */
};

/* Read from a file descriptor (not closed by the reader). */
int luw_reader_open_fd(struct luw_reader *r, int fd);
/* Read from memory: the bytes must outlive the reader. */
void luw_reader_open_mem(struct luw_reader *r, const void *data, size_t len);
void luw_reader_close(struct luw_reader *r);

/* Slow paths: make at least n bytes available (0 when the stream is shorter). */
int luw_reader_fill(struct luw_reader *r, size_t n);
uint64_t luw_reader_uleb_slow(struct luw_reader *r, const char *what);

/*
 * Record a failure at offset off.  what names the expected item, e.g.
 * "sym-addr (ULEB128)"; eof says whether the stream ended there.
 * Only the first failure is kept.  Returns 0 for convenience.
 */
int luw_reader_fail(struct luw_reader *r, uint64_t off, const char *what, int eof);
/* Same with a formatted description of the expected item (not at EOF). */
int luw_reader_failf(struct luw_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline uint64_t luw_reader_offset(const struct luw_reader *r)
{
	return r->base + (uint64_t)(r->p - r->win);
}

static inline int luw_reader_failed(const struct luw_reader *r)
{
	return r->failed;
}

/* True at a clean end of stream (no bytes left, no failure). */
static inline int luw_reader_at_end(struct luw_reader *r)
{
	return !r->failed && r->p == r->end && !luw_reader_fill(r, 1);
}

static inline uint8_t luw_reader_u8(struct luw_reader *r, const char *what)
{
	if (r->p == r->end && !luw_reader_fill(r, 1)) {
		luw_reader_fail(r, luw_reader_offset(r), what, 1);
		return 0;
	}
	return *r->p++;
}

/* Unsigned LEB128, at most 64 bits; the slow path handles window edges. */
static inline uint64_t luw_reader_uleb(struct luw_reader *r, const char *what)
{
	if (r->end - r->p >= 10) {
		const uint8_t *p = r->p;
		uint64_t v = 0;
		unsigned int i;

		if (!(p[0] & 0x80)) {
			r->p = p + 1;
			return p[0];
		}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/*
		 * Up to 8 bytes at once (addresses take 6-7): find the last
		 * byte by its clear top bit, keep the bytes up to it and
		 * squeeze the 7-bit groups together in three steps, with no
		 * branch per byte.
		 */
		memcpy(&v, p, 8);
		{
			uint64_t stop = ~v & 0x8080808080808080ULL;

			if (stop) {
				v &= stop ^ (stop - 1);
				v = (v & 0x007f007f007f007fULL) |
				    (v & 0x7f007f007f007f00ULL) >> 1;
				v = (v & 0x00003fff00003fffULL) |
				    (v & 0x3fff00003fff0000ULL) >> 2;
				v = (v & 0x000000000fffffffULL) |
				    (v & 0x0fffffff00000000ULL) >> 4;
				r->p = p + (__builtin_ctzll(stop) >> 3) + 1;
				return v;
			}
			v = 0;
		}
#endif
		for (i = 0; i < 10; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				if (i == 9 && p[i] > 1)
					break;
				r->p = p + i + 1;
				return v;
			}
		}
	}
	return luw_reader_uleb_slow(r, what);
}

/*
 * string := string-len string-payload.  Makes the payload available
 * contiguously (the window grows for it, up to 64 MiB) and returns a pointer
 * into the window, valid until the next read, with its length in *len.
 * Returns NULL on failure.
 */
const char *luw_reader_string(struct luw_reader *r, size_t *len, const char *what);

/* Skip n bytes. */
int luw_reader_skip(struct luw_reader *r, uint64_t n, const char *what);

/* "offset N: expected WHAT" (or the I/O error) into buf. */
void luw_reader_strerror(const struct luw_reader *r, char *buf, size_t size);

#endif
