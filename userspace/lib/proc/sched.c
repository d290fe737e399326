#include "proc/sched.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/grow.h"

/*
 * The thread's sum_exec_runtime in ns: schedstat's first field
 * (CONFIG_SCHED_INFO), or else the "se.sum_exec_runtime" line of sched
 * (CONFIG_SCHED_DEBUG), in ms with six decimals -- the ns exactly.  A
 * kernel may have either: the debug kernel lane has only the second.
 */
static int read_runtime(pid_t pid, const char *tid, uint64_t *runtime)
{
	char path[320], line[256];
	uint64_t ms, frac;
	FILE *f;
	int ok = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, tid);
	f = fopen(path, "re");
	if (f) {
		ok = fscanf(f, "%" SCNu64, runtime) == 1;
		fclose(f);
		return ok ? 0 : -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%s/sched", (int)pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!ok && fgets(line, sizeof(line), f))
		ok = sscanf(line, "se.sum_exec_runtime : %" SCNu64 ".%6" SCNu64,
			    &ms, &frac) == 2;
	fclose(f);
	if (!ok)
		return -1;
	*runtime = ms * 1000000 + frac;
	return 0;
}

int luw_sched_thread_times(pid_t pid, struct luw_thread_time **v, size_t *n)
{
	struct luw_thread_time *out = NULL;
	size_t cap = 0, len = 0;
	struct dirent *de;
	char path[64];
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct luw_thread_time t;
		struct timespec ts;
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (de->d_name[0] == '.' || *end || tid <= 0)
			continue;
		if (read_runtime(pid, de->d_name, &t.runtime))
			continue;	/* ended meanwhile */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t.tid = (pid_t)tid;
		t.time = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		if (luw_grow((void **)&out, &cap, len + 1, sizeof(*out))) {
			closedir(d);
			free(out);
			errno = ENOMEM;
			return -1;
		}
		out[len++] = t;
	}
	closedir(d);
	*v = out;
	*n = len;
	return 0;
}
