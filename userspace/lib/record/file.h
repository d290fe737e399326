/*
 * luwfile: write and read .luw record files (grammar in
 * include/luaunwind_file.h).
 *
 * Writing: a growable byte buffer builds one section's payload, the
 * writer frames it (type, size, padding) and appends it to a FILE.
 * Reading: the whole file is taken into memory (its samples section are
 * then 8-byte aligned, as luw_dev_next() wants), and an iterator walks the
 * sections; a cut or damaged file stops it with a message that names the
 * byte offset, after every complete section before that point.
 */
#ifndef LUW_RECORD_FILE_H
#define LUW_RECORD_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "luaunwind_file.h"

/* ---- building a payload ----------------------------------------------- */

struct luw_file_buf {
	uint8_t *p;
	size_t n, cap;
	int oom;		/* sticky: a put ran out of memory */
};

void luw_file_buf_free(struct luw_file_buf *b);
static inline void luw_file_buf_reset(struct luw_file_buf *b) { b->n = 0; b->oom = 0; }
void luw_file_put(struct luw_file_buf *b, const void *p, size_t n);
void luw_file_put_u32(struct luw_file_buf *b, uint32_t v);
void luw_file_put_u64(struct luw_file_buf *b, uint64_t v);
/* A string: U32 length, then the bytes; NULL is "". */
void luw_file_put_str(struct luw_file_buf *b, const char *s);
void luw_file_put_strn(struct luw_file_buf *b, const char *s, size_t n);

/* ---- writer ----------------------------------------------------------- */

struct luw_file_writer {
	FILE *f;
	uint64_t off;		/* bytes written so far */
	int err;		/* sticky errno of the first failed write */
};

/* Writes the header.  0, or -1 with w->err set. */
int luw_file_writer_init(struct luw_file_writer *w, FILE *f);
/* Appends one section (payload + padding); 0 or -1 (w->err). */
int luw_file_write_section(struct luw_file_writer *w, uint32_t type, const void *p,
		       size_t n);
/* The payload in b as a section, then resets b; an OOM b is ENOMEM. */
int luw_file_write_buf(struct luw_file_writer *w, uint32_t type, struct luw_file_buf *b);
/* The end section and a flush: the file is complete after this. */
int luw_file_write_end(struct luw_file_writer *w);

/* ---- reader ----------------------------------------------------------- */

struct luw_file {
	uint8_t *data;		/* the whole file, malloc'd (8-aligned) */
	size_t size;
	uint32_t version;
};

struct luw_file_sec {
	uint32_t type;
	uint64_t off;		/* file offset of the section header */
	const uint8_t *p;	/* payload */
	size_t size;
};

/*
 * Reads all of fd into f.  0; -1 with errno (I/O, ENOMEM).  The magic is
 * not checked here: luw_file_check_header() does that.
 */
int luw_file_read_fd(int fd, struct luw_file *f);
/* The same after the n bytes at head, read from fd already. */
int luw_file_read_rest(int fd, const void *head, size_t n, struct luw_file *f);
/* Takes over a malloc'd buffer. */
void luw_file_from_mem(struct luw_file *f, uint8_t *data, size_t size);
void luw_file_close(struct luw_file *f);

/* Whether the first bytes are the .luw magic. */
int luw_file_is_luw(const void *p, size_t n);

/* Checks the header.  0, or -1 with a message in err. */
int luw_file_check_header(struct luw_file *f, char *err, size_t errlen);

/*
 * The section at *off (start with LUWF_HEADER_SIZE): 1 and *off moved
 * past it; 0 at the end section (the file is complete); -1 when the
 * bytes at *off are not a whole section (the file was cut or damaged),
 * with a message naming the offset in err.
 */
int luw_file_next(const struct luw_file *f, uint64_t *off, struct luw_file_sec *s,
	      char *err, size_t errlen);

/* ---- reading a payload ------------------------------------------------- */

struct luw_file_cur {
	const uint8_t *p, *end;
	int bad;		/* sticky: read past the end */
};

static inline void luw_file_cur_init(struct luw_file_cur *c, const struct luw_file_sec *s)
{
	c->p = s->p;
	c->end = s->p + s->size;
	c->bad = 0;
}
uint32_t luw_file_get_u32(struct luw_file_cur *c);
uint64_t luw_file_get_u64(struct luw_file_cur *c);
/* A string: pointer into the file (not NUL-terminated) and its length. */
const char *luw_file_get_str(struct luw_file_cur *c, size_t *len);

#endif
