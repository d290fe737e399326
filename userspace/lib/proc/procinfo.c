#include "proc/procinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void luw_procinfo_comm(pid_t pid, char *buf, size_t n)
{
	char path[64];
	ssize_t got = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		got = read(fd, buf, n - 1);
		close(fd);
	}
	buf[got > 0 ? got : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

void luw_procinfo_exe(pid_t pid, char *buf, size_t n)
{
	char path[64];
	ssize_t got;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	got = readlink(path, buf, n - 1);
	buf[got > 0 ? got : 0] = 0;
}

int luw_procinfo_stat(pid_t pid, struct luw_procinfo_stat *st)
{
	char path[64], buf[1024], *p, *end;
	unsigned long long v = 0;
	ssize_t got;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0) {
		errno = got ? errno : ENOENT;
		return -1;
	}
	buf[got] = 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2]) {
		errno = EINVAL;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->state = p[2];
	p += 3;
	/* Fields 4 (ppid) to 22 (starttime), after the state (3). */
	for (field = 4; field <= 22; field++) {
		errno = 0;
		v = strtoull(p, &end, 10);
		if (end == p || errno) {
			errno = EINVAL;
			return -1;
		}
		if (field == 4)
			st->ppid = (pid_t)v;
		p = end;
	}
	st->starttime = v;
	return 0;
}
