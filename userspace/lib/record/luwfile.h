/*
 * luwfile: write and read .luw record files (grammar in
 * include/luaunwind_file.h).
 *
 * Writing: a growable byte buffer builds one section's payload, the
 * writer frames it (type, size, padding) and appends it to a FILE.
 * Reading: the whole file is taken into memory (its samples section are
 * then 8-byte aligned, as luwdev_next() wants), and an iterator walks the
 * sections; a cut or damaged file stops it with a message that names the
 * byte offset, after every complete section before that point.
 */
#ifndef LUW_RECORD_LUWFILE_H
#define LUW_RECORD_LUWFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "luaunwind_file.h"

/* ---- building a payload ----------------------------------------------- */

struct luwf_buf {
	uint8_t *p;
	size_t n, cap;
	int oom;		/* sticky: a put ran out of memory */
};

void luwf_buf_free(struct luwf_buf *b);
static inline void luwf_buf_reset(struct luwf_buf *b) { b->n = 0; b->oom = 0; }
void luwf_put(struct luwf_buf *b, const void *p, size_t n);
void luwf_put_u32(struct luwf_buf *b, uint32_t v);
void luwf_put_u64(struct luwf_buf *b, uint64_t v);
/* A string: U32 length, then the bytes; NULL is "". */
void luwf_put_str(struct luwf_buf *b, const char *s);
void luwf_put_strn(struct luwf_buf *b, const char *s, size_t n);

/* ---- writer ----------------------------------------------------------- */

struct luwf_writer {
	FILE *f;
	uint64_t off;		/* bytes written so far */
	int err;		/* sticky errno of the first failed write */
};

/* Writes the header.  0, or -1 with w->err set. */
int luwf_writer_init(struct luwf_writer *w, FILE *f);
/* Appends one section (payload + padding); 0 or -1 (w->err). */
int luwf_write_section(struct luwf_writer *w, uint32_t type, const void *p,
		       size_t n);
/* The payload in b as a section, then resets b; an OOM b is ENOMEM. */
int luwf_write_buf(struct luwf_writer *w, uint32_t type, struct luwf_buf *b);
/* The end section and a flush: the file is complete after this. */
int luwf_write_end(struct luwf_writer *w);

/* ---- reader ----------------------------------------------------------- */

struct luwf_file {
	uint8_t *data;		/* the whole file, malloc'd (8-aligned) */
	size_t size;
	uint32_t version;
};

struct luwf_sec {
	uint32_t type;
	uint64_t off;		/* file offset of the section header */
	const uint8_t *p;	/* payload */
	size_t size;
};

/*
 * Reads all of fd into f.  0; -1 with errno (I/O, ENOMEM).  The magic is
 * not checked here: luwf_check_header() does that.
 */
int luwf_read_fd(int fd, struct luwf_file *f);
/* Takes over a malloc'd buffer. */
void luwf_from_mem(struct luwf_file *f, uint8_t *data, size_t size);
void luwf_close(struct luwf_file *f);

/* Whether the first bytes are the .luw magic. */
int luwf_is_luw(const void *p, size_t n);

/* Checks the header.  0, or -1 with a message in err. */
int luwf_check_header(struct luwf_file *f, char *err, size_t errlen);

/*
 * The section at *off (start with LUWF_HEADER_SIZE): 1 and *off moved
 * past it; 0 at the end section (the file is complete); -1 when the
 * bytes at *off are not a whole section (the file was cut or damaged),
 * with a message naming the offset in err.
 */
int luwf_next(const struct luwf_file *f, uint64_t *off, struct luwf_sec *s,
	      char *err, size_t errlen);

/* ---- reading a payload ------------------------------------------------- */

struct luwf_cur {
	const uint8_t *p, *end;
	int bad;		/* sticky: read past the end */
};

static inline void luwf_cur_init(struct luwf_cur *c, const struct luwf_sec *s)
{
	c->p = s->p;
	c->end = s->p + s->size;
	c->bad = 0;
}
uint32_t luwf_get_u32(struct luwf_cur *c);
uint64_t luwf_get_u64(struct luwf_cur *c);
/* A string: pointer into the file (not NUL-terminated) and its length. */
const char *luwf_get_str(struct luwf_cur *c, size_t *len);

#endif
