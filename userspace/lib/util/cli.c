/*
 * cli: options and number arguments checked in whole.  See cli.h.
 */
#include "util/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int luw_cli_getopt(int argc, char **argv, const char *so,
		   const struct option *lo, const char *usage)
{
	int c = getopt_long(argc, argv, so, lo, NULL);

	if (c == 'h') {
		fputs(usage, stdout);
		exit(0);
	}
	if (c == '?' || c == ':') {
		fputs(usage, stderr);
		exit(1);
	}
	return c;
}

int luw_cli_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int luw_cli_int_arg(const char *prog, const char *what, const char *s,
		    int min, int max, int *out)
{
	long long v;

	if (luw_cli_int(s, min, max, &v)) {
		fprintf(stderr, "%s: bad %s '%s'\n", prog, what, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int luw_cli_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* NaN compares false with both bounds: refused on its own. */
	if (errno || end == s || *end || v != v || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int luw_cli_double_arg(const char *prog, const char *what, const char *s,
		       double min, double max, double *out)
{
	if (luw_cli_double(s, min, max, out)) {
		fprintf(stderr, "%s: bad %s '%s'\n", prog, what, s);
		return -1;
	}
	return 0;
}
