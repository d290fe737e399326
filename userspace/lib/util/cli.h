/*
 * cli: what every program's command line shares.  The programs parse
 * with getopt_long; a usage error (unknown option, missing argument, a
 * number that is not one) exits 1, --help prints the usage and exits 0.
 * A number argument is checked in whole: strtoll/strtod must take every
 * character, without overflow, and the value must lie in [min, max].
 */
#ifndef LUW_UTIL_CLI_H
#define LUW_UTIL_CLI_H

#include <getopt.h>

/*
 * getopt_long(argc, argv, so, lo) with the handling every program
 * shares: 'h' (--help) prints usage on stdout and exits 0; an unknown
 * option or a missing argument (getopt has named it on stderr) prints
 * usage on stderr and exits 1.  Any other option comes back; -1 at the
 * end of the options.
 */
int luw_cli_getopt(int argc, char **argv, const char *so,
		   const struct option *lo, const char *usage);

/* The decimal integer in s: 0 with *out set, or -1 (*out untouched). */
int luw_cli_int(const char *s, long long min, long long max, long long *out);

/*
 * An int argument in [min, max] into *out: 0, or -1 after
 * "PROG: bad WHAT 'S'" on stderr (the caller exits 1).
 */
int luw_cli_int_arg(const char *prog, const char *what, const char *s,
		    int min, int max, int *out);

/* The same for a decimal (floating-point) number; NaN is not one. */
int luw_cli_double(const char *s, double min, double max, double *out);
int luw_cli_double_arg(const char *prog, const char *what, const char *s,
		       double min, double max, double *out);

#endif
