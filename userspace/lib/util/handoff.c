/*
 * handoff: finding the sibling program, passing the input over exec and
 * taking it back.  See util/handoff.h.
 */
#include "util/handoff.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/cli.h"

#define LIBEXEC "/../libexec/luaunwind/"

int luw_handoff_path(const char *name, char *path, size_t size)
{
	static const char *const rel[] = { LIBEXEC, "/" };
	size_t c = strlen(name) + 1;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;
	size_t i;

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		size_t a = strlen(self), b = strlen(rel[i]);

		if (a + b + c > size)
			break;
		memcpy(path, self, a);
		memcpy(path + a, rel[i], b);
		memcpy(path + a + b, name, c);
		if (!access(path, X_OK))
			return 0;
	}
	/* Name the installed place in the message. */
	if (strlen(self) + sizeof(LIBEXEC) - 1 + c <= size)
		snprintf(path, size, "%s" LIBEXEC "%s", self, name);
	else
		snprintf(path, size, "%s", name);
	errno = ENOENT;
	return -1;
}

/* The n bytes at head and the rest of fd, in a memfd at offset 0. */
static int to_memfd(int fd, const void *head, size_t n)
{
	char buf[1 << 16];
	ssize_t got;
	int m;

	/* Named for whoever lists the sibling's descriptors. */
	snprintf(buf, sizeof(buf), "%s-input", program_invocation_short_name);
	m = memfd_create(buf, 0);
	if (m < 0)
		return -1;
	if (n && write(m, head, n) != (ssize_t)n)
		goto fail;
	while ((got = read(fd, buf, sizeof(buf))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (write(m, buf, (size_t)got) != got)
			goto fail;
	}
	if (lseek(m, 0, SEEK_SET) == 0)
		return m;
fail:
	close(m);
	return -1;
}

int luw_handoff_pass(const char *env, int fd, const void *head, size_t n)
{
	char num[16];

	if (lseek(fd, 0, SEEK_SET) != 0 && (fd = to_memfd(fd, head, n)) < 0)
		return -1;
	snprintf(num, sizeof(num), "%d", fd);
	return setenv(env, num, 1) ? -1 : 0;
}

int luw_handoff_take(const char *env, int *fd)
{
	const char *e = getenv(env);
	long long v;

	*fd = -1;
	if (!e)
		return 0;
	if (luw_cli_int(e, 0, INT_MAX, &v))
		return -1;
	*fd = (int)v;
	unsetenv(env);
	return 0;
}
