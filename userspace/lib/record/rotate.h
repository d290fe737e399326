/*
 * rotate: `record --every S --dir DIR --keep N`, one complete recording
 * per interval, as a lab collects them without a server (perf record
 * --switch-output does the same for perf.data).  Each is written as
 * DIR/.luaunwind-STAMP.luw.part and renamed to DIR/luaunwind-STAMP.luw
 * once its end section is written, so a file with the final name is
 * always whole, whatever happens to the recorder; STAMP is the interval's
 * start, UTC, YYYYmmddTHHMMSSZ (the names sort as the times do).  After
 * each rename the oldest of DIR's luaunwind-*.luw beyond N are removed
 * (N 0: none).
 */
#ifndef LUW_RECORD_ROTATE_H
#define LUW_RECORD_ROTATE_H

#include <stddef.h>

struct luw_rotate {
	const char *dir;
	unsigned int keep;
	char part[4200], final[4200];
};

/* The names of the interval starting now, in r->part and r->final.  0,
 * or -1 with a message in err (DIR is not a writable directory). */
int luw_rotate_next(struct luw_rotate *r, char *err, size_t errlen);

/* r->part renamed to r->final, then the oldest beyond keep removed.  0,
 * or -1 with a message in err. */
int luw_rotate_done(struct luw_rotate *r, char *err, size_t errlen);

#endif
