#include "record/rotate.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/fail.h"

#define PREFIX	"luaunwind-"
#define SUFFIX	".luw"

int luw_rotate_next(struct luw_rotate *r, char *err, size_t errlen)
{
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];

	if (access(r->dir, W_OK | X_OK))
		return luw_fail(err, errlen, "--dir %s: %s", r->dir,
				strerror(errno));
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(r->final, sizeof(r->final), "%s/" PREFIX "%s" SUFFIX, r->dir,
		 stamp);
	snprintf(r->part, sizeof(r->part), "%s/." PREFIX "%s" SUFFIX ".part",
		 r->dir, stamp);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ours(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, PREFIX, sizeof(PREFIX) - 1) &&
	       n > sizeof(PREFIX SUFFIX) - 2 &&
	       !strcmp(name + n - (sizeof(SUFFIX) - 1), SUFFIX);
}

int luw_rotate_done(struct luw_rotate *r, char *err, size_t errlen)
{
	char **names = NULL, path[4200];
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (rename(r->part, r->final))
		return luw_fail(err, errlen, "%s: %s", r->final,
				strerror(errno));
	if (!r->keep)
		return 0;
	d = opendir(r->dir);
	if (!d)
		return luw_fail(err, errlen, "--dir %s: %s", r->dir,
				strerror(errno));
	while ((e = readdir(d))) {
		if (!ours(e->d_name))
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? 2 * cap : 64) *
						  sizeof(*names));

			if (!v) {
				rc = luw_fail(err, errlen, "out of memory");
				break;
			}
			names = v;
		}
		if (!(names[n] = strdup(e->d_name))) {
			rc = luw_fail(err, errlen, "out of memory");
			break;
		}
		n++;
	}
	closedir(d);
	if (!rc) {
		qsort(names, n, sizeof(*names), by_name);
		for (size_t i = 0; i + r->keep < n; i++) {
			snprintf(path, sizeof(path), "%s/%s", r->dir, names[i]);
			if (unlink(path) && errno != ENOENT) {
				rc = luw_fail(err, errlen, "%s: %s", path,
					      strerror(errno));
				break;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}
