/*
 * file: .luw sections in and out.  See record/file.h and
 * include/luaunwind_file.h.
 */
#include "record/file.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"

/* x86-64 only (like the record format): native order is little-endian. */

void luw_file_buf_free(struct luw_file_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void luw_file_put(struct luw_file_buf *b, const void *p, size_t n)
{
	void *np = b->p;

	if (b->oom)
		return;
	if (n > SIZE_MAX - b->n || luw_grow(&np, &b->cap, b->n + n, 1)) {
		b->oom = 1;
		return;
	}
	b->p = np;
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

void luw_file_put_u32(struct luw_file_buf *b, uint32_t v)
{
	luw_file_put(b, &v, 4);
}

void luw_file_put_u64(struct luw_file_buf *b, uint64_t v)
{
	luw_file_put(b, &v, 8);
}

void luw_file_put_strn(struct luw_file_buf *b, const char *s, size_t n)
{
	luw_file_put_u32(b, (uint32_t)n);
	luw_file_put(b, s, n);
}

void luw_file_put_str(struct luw_file_buf *b, const char *s)
{
	luw_file_put_strn(b, s ? s : "", s ? strlen(s) : 0);
}

static int wr(struct luw_file_writer *w, const void *p, size_t n)
{
	if (w->err)
		return -1;
	if (n && fwrite(p, 1, n, w->f) != n) {
		w->err = errno ? errno : EIO;
		return -1;
	}
	w->off += n;
	return 0;
}

int luw_file_writer_init(struct luw_file_writer *w, FILE *f)
{
	uint32_t h[4] = { 0, LUWF_VERSION, 0, 0 };

	memset(w, 0, sizeof(*w));
	w->f = f;
	memcpy(h, LUWF_MAGIC, 4);
	return wr(w, h, sizeof(h));
}

int luw_file_write_section(struct luw_file_writer *w, uint32_t type, const void *p,
		       size_t n)
{
	static const uint8_t zero[8];
	uint32_t h[2] = { type, (uint32_t)n };

	if (n > LUWF_SECTION_MAX) {
		if (!w->err)
			w->err = EFBIG;
		return -1;
	}
	if (wr(w, h, sizeof(h)) || wr(w, p, n) || wr(w, zero, (8 - n % 8) % 8))
		return -1;
	return 0;
}

int luw_file_write_buf(struct luw_file_writer *w, uint32_t type, struct luw_file_buf *b)
{
	int rc;

	if (b->oom) {
		if (!w->err)
			w->err = ENOMEM;
		luw_file_buf_reset(b);
		return -1;
	}
	rc = luw_file_write_section(w, type, b->p, b->n);
	luw_file_buf_reset(b);
	return rc;
}

int luw_file_write_end(struct luw_file_writer *w)
{
	if (luw_file_write_section(w, LUWF_SEC_END, NULL, 0))
		return -1;
	if (fflush(w->f)) {
		w->err = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

int luw_file_read_fd(int fd, struct luw_file *f)
{
	return luw_file_read_rest(fd, NULL, 0, f);
}

int luw_file_read_rest(int fd, const void *head, size_t n, struct luw_file *f)
{
	size_t cap = n + (1 << 16);
	uint8_t *p = malloc(cap);

	memset(f, 0, sizeof(*f));
	if (!p)
		return -1;
	if (n)
		memcpy(p, head, n);
	for (;;) {
		ssize_t got;

		if (luw_grow((void **)&p, &cap, n + 1, 1)) {
			free(p);
			return -1;
		}
		got = read(fd, p + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			free(p);
			errno = e;
			return -1;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	f->data = p;
	f->size = n;
	return 0;
}

void luw_file_from_mem(struct luw_file *f, uint8_t *data, size_t size)
{
	memset(f, 0, sizeof(*f));
	f->data = data;
	f->size = size;
}

void luw_file_close(struct luw_file *f)
{
	free(f->data);
	memset(f, 0, sizeof(*f));
}

int luw_file_is_luw(const void *p, size_t n)
{
	return n >= 4 && !memcmp(p, LUWF_MAGIC, 4);
}

int luw_file_check_header(struct luw_file *f, char *err, size_t errlen)
{
	uint32_t h[4];

	if (f->size < LUWF_HEADER_SIZE) {
		snprintf(err, errlen, "offset %zu: file ends inside the %d-byte header",
			 f->size, LUWF_HEADER_SIZE);
		return -1;
	}
	memcpy(h, f->data, sizeof(h));
	if (!luw_file_is_luw(f->data, f->size)) {
		snprintf(err, errlen, "offset 0: not a .luw file (no 'LUWF' magic)");
		return -1;
	}
	if (h[1] < LUWF_VERSION_MIN || h[1] > LUWF_VERSION) {
		snprintf(err, errlen,
			 "offset 4: .luw version %u, this reader knows %u to %u",
			 h[1], LUWF_VERSION_MIN, LUWF_VERSION);
		return -1;
	}
	if (h[2] || h[3]) {
		snprintf(err, errlen, "offset 8: unknown header flags 0x%x/0x%x",
			 h[2], h[3]);
		return -1;
	}
	f->version = h[1];
	return 0;
}

int luw_file_next(const struct luw_file *f, uint64_t *off, struct luw_file_sec *s,
	      char *err, size_t errlen)
{
	uint64_t o = *off, padded;
	uint32_t h[2];

	if (o + 8 > f->size) {
		snprintf(err, errlen,
			 "offset %llu: file ends without its end section (cut short?)",
			 (unsigned long long)o);
		return -1;
	}
	memcpy(h, f->data + o, 8);
	if (h[1] > LUWF_SECTION_MAX) {
		snprintf(err, errlen, "offset %llu: section size %u is too large",
			 (unsigned long long)o, h[1]);
		return -1;
	}
	padded = ((uint64_t)h[1] + 7) & ~7ULL;
	if (o + 8 + padded > f->size) {
		snprintf(err, errlen,
			 "offset %llu: section of type %u needs %u bytes, the file has %llu (cut short?)",
			 (unsigned long long)o, h[0], h[1],
			 (unsigned long long)(f->size - o - 8));
		return -1;
	}
	s->type = h[0];
	s->off = o;
	s->p = f->data + o + 8;
	s->size = h[1];
	*off = o + 8 + padded;
	if (h[0] == LUWF_SEC_END) {
		if (h[1]) {
			snprintf(err, errlen, "offset %llu: end section is not empty",
				 (unsigned long long)o);
			return -1;
		}
		return 0;
	}
	return 1;
}

static const uint8_t *take(struct luw_file_cur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return NULL;
	}
	c->p += n;
	return p;
}

uint32_t luw_file_get_u32(struct luw_file_cur *c)
{
	const uint8_t *p = take(c, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return v;
}

uint64_t luw_file_get_u64(struct luw_file_cur *c)
{
	const uint8_t *p = take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

const char *luw_file_get_str(struct luw_file_cur *c, size_t *len)
{
	uint32_t n = luw_file_get_u32(c);
	const uint8_t *p = take(c, n);

	*len = p ? n : 0;
	return p ? (const char *)p : "";
}
