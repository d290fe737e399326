/*
 * Whether attaching or closing a large session stalls another session's
 * ioctls (t_closestall): a child attaches PID (a process of many threads:
 * one perf event each) in a session of its own and closes it, timing one
 * of the two; meanwhile the parent, in another session, issues
 * LUW_IOC_STATS back to back.  Had the attach or the close held a lock
 * the STATS call needs for its whole run (the module's global lock,
 * once), no STATS call could begin and end while it runs.
 *   closestall attach|close PID
 *       prints "op_us=N within=W stats=K max_stats_us=M": W of the K
 *       calls began and ended during the attach or close, which took N
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/dev.h"

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* How the child ended, for a failure's message. */
static const char *child_status(pid_t child)
{
	static char buf[64];
	int st;

	if (waitpid(child, &st, 0) != child)
		return "not waited for";
	if (WIFSIGNALED(st))
		snprintf(buf, sizeof(buf), "signal %d", WTERMSIG(st));
	else
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(st));
	return buf;
}

int main(int argc, char **argv)
{
	struct luw_attach a = { .sample_rate = 99 };
	int ready[2], go[2], res[2], fd, mine, r;
	long long t0, t1, worst = 0, n = 0, end = 0, within = 0;
	long long span[2] = { -1, -1 };
	static long long calls[1 << 20][2];
	struct luw_stats st;
	bool attach;
	pid_t child;
	char c;

	if (argc != 3 || (strcmp(argv[1], "attach") && strcmp(argv[1], "close")))
		return 2;
	attach = !strcmp(argv[1], "attach");
	/* A child gone early: EPIPE and a message, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	a.pid = atoi(argv[2]);
	if (pipe(ready) || pipe(go) || pipe(res) || (child = fork()) < 0) {
		printf("pipe/fork: %s\n", strerrorname_np(errno));
		return 1;
	}
	if (!child) {
		fd = luw_dev_open(0);
		r = fd < 0 || attach ? fd : luw_dev_attach(fd, &a);
		c = r < 0 ? 'x' : 'o';
		if (write(ready[1], &c, 1) != 1 || r < 0)
			_exit(3);
		if (read(go[0], &c, 1) != 1)
			_exit(4);
		span[0] = now_us();
		if (attach)
			r = luw_dev_attach(fd, &a);
		else
			close(fd);
		span[1] = now_us();
		if (r < 0)
			span[0] = span[1] = -2;
		if (write(res[1], span, sizeof(span)) != sizeof(span))
			_exit(5);
		_exit(0);
	}
	mine = luw_dev_open(0);
	if (mine < 0 || read(ready[0], &c, 1) != 1 || c != 'o') {
		printf("%s failed\n", attach ? "open" : "attach");
		return 1;
	}
	if (write(go[1], "g", 1) != 1) {
		printf("child gone before it began\n");
		return 1;
	}
	/* Until the close is over, and as long again after it. */
	for (;;) {
		t0 = now_us();
		r = luw_dev_stats(mine, 0, &st);
		t1 = now_us() - t0;
		if (r) {
			printf("stats: %s\n", strerrorname_np(-r));
			return 1;
		}
		if (n < (long long)(sizeof(calls) / sizeof(calls[0]))) {
			calls[n][0] = t0;
			calls[n][1] = t0 + t1;
		}
		n++;
		if (t1 > worst)
			worst = t1;
		if (span[0] < 0) {
			struct timespec z = { 0, 0 };
			fd_set fds;

			FD_ZERO(&fds);
			FD_SET(res[0], &fds);
			if (pselect(res[0] + 1, &fds, NULL, NULL, &z, NULL) > 0) {
				if (read(res[0], span, sizeof(span)) !=
				    sizeof(span)) {
					printf("child gone: %s\n",
					       child_status(child));
					return 1;
				}
				if (span[0] == -2) {
					printf("attach failed\n");
					return 1;
				}
				end = span[1] + (span[1] - span[0]);
			}
		} else if (now_us() >= end) {
			break;
		}
	}
	waitpid(child, NULL, 0);
	for (long long i = 0; i < n && i < (long long)(sizeof(calls) /
						  sizeof(calls[0])); i++)
		within += calls[i][0] > span[0] && calls[i][1] < span[1];
	printf("op_us=%lld within=%lld stats=%lld max_stats_us=%lld\n",
	       span[1] - span[0], within, n, worst);
	return 0;
}
