/*
 * fail: the reason into the caller's buffer.  See fail.h.
 */
#include "util/fail.h"

#include <stdarg.h>
#include <stdio.h>

int luw_fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (err && n) {
		va_start(ap, fmt);
		vsnprintf(err, n, fmt, ap);
		va_end(ap);
	}
	return -1;
}
