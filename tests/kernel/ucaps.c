/*
 * Drive the module's per-user caps (t_ucaps): print how many steps
 * succeeded and the errno name of the first that failed ("ok" if none):
 *   ucaps sessions N         open N files
 *   ucaps rings N PID        open N files and attach PID in each
 *   ucaps targets PID...     attach each PID in one file
 *   ucaps threads N          a target: N idle threads beside the main one
 * With "hold" first, keep every file open after printing, until killed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/luwdev.h"

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
