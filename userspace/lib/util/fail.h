/*
 * fail: how a library function here says what went wrong.  It returns
 * -1 and formats the reason into the caller's buffer (err, n); a NULL or
 * empty buffer takes nothing.
 */
#ifndef LUW_UTIL_FAIL_H
#define LUW_UTIL_FAIL_H

#include <stddef.h>

/* Formats into err (when given) and returns -1. */
int luw_fail(char *err, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
