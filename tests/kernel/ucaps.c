/*
 * Drive the module's per-user caps (t_ucaps): print how many steps
 * succeeded and the errno name of the first that failed ("ok" if none):
 *   ucaps sessions N         open N files
 *   ucaps rings N PID        open N files and attach PID in each
 *   ucaps targets PID...     attach each PID in one file
 *   ucaps threads N          a target: N idle threads beside the main one
 *   ucaps reuse A B C        attach A and B, each in a file of its own,
 *                            kill both, read each file to end of file and
 *                            keep it open, then attach C in a third file
 * With "hold" first, keep every file open after printing, until killed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/dev.h"

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int attach(int fd, int pid)
{
	struct luw_attach a = { .sample_rate = 99, .pid = pid };

	return luw_dev_attach(fd, &a);
}

/* Read fd to end of file: 0, or a negative errno (-ETIME: 30 s passed). */
static int read_to_eof(int fd)
{
	static char buf[1 << 16];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		if (poll(&p, 1, 30000) == 0)
			return -ETIME;
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return -errno;
	}
}

static int reuse(char **pids, int *done)
{
	int fd[3], i, err;

	for (i = 0; i < 3; i++) {
		fd[i] = luw_dev_open(0);
		if (fd[i] < 0)
			return fd[i];
		if (i == 2)
			break;
		err = attach(fd[i], atoi(pids[i]));
		if (err)
			return err;
		++*done;
	}
	kill(atoi(pids[0]), SIGKILL);
	kill(atoi(pids[1]), SIGKILL);
	for (i = 0; i < 2; i++) {
		err = read_to_eof(fd[i]);
		if (err)
			return err;
		++*done;
	}
	err = attach(fd[2], atoi(pids[2]));
	if (!err)
		++*done;
	return err;
}

int main(int argc, char **argv)
{
	int hold = 0, done = 0, err = 0, i, n, fd = -1;

	if (argc > 1 && !strcmp(argv[1], "hold")) {
		hold = 1;
		argc--;
		argv++;
	}
	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "sessions") || !strcmp(argv[1], "rings")) {
		n = atoi(argv[2]);
		if (!strcmp(argv[1], "rings") && argc < 4)
			return 2;
		for (i = 0; i < n && !err; i++) {
			fd = luw_dev_open(0);
			if (fd < 0)
				err = fd;
			else if (argc > 3)
				err = attach(fd, atoi(argv[3]));
			if (!err)
				done++;
		}
	} else if (!strcmp(argv[1], "reuse")) {
		if (argc < 5)
			return 2;
		err = reuse(argv + 2, &done);
	} else if (!strcmp(argv[1], "threads")) {
		pthread_attr_t at;
		pthread_t th;

		/* Small stacks: thousands of threads in a small guest. */
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 64 << 10);
		n = atoi(argv[2]);
		for (i = 0; i < n && !err; i++)
			err = -pthread_create(&th, &at, idle, NULL);
		if (!err)
			done = n;
		hold = !err;
	} else if (!strcmp(argv[1], "targets")) {
		fd = luw_dev_open(0);
		if (fd < 0) {
			printf("0 open:%s\n", strerrorname_np(-fd));
			return 1;
		}
		for (i = 2; i < argc && !err; i++) {
			err = attach(fd, atoi(argv[i]));
			if (!err)
				done++;
		}
	} else {
		return 2;
	}
	printf("%d %s\n", done, err ? strerrorname_np(-err) : "ok");
	fflush(stdout);
	while (hold)
		pause();
	return 0;
}
