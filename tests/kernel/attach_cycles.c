/*
 * ROUNDS attach/detach cycles on live, spinning targets at 4999 Hz, with a
 * reader draining the rings the whole time, so detaches race with samples
 * being taken and read.  Every call must succeed and nothing may stay
 * attached.
 *   attach_cycles [-o] ROUNDS PID...
 *     -o  attach with off-CPU switch records as well (LUW_ATTACH_OFFCPU)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/dev.h"

static volatile int done;
static long records_bytes;

static void *reader(void *arg)
{
	static uint64_t buf[65536 / 8];
	int fd = *(int *)arg;

	while (!done) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0)
			records_bytes += n;
		else
			usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds, fd, rd, npids, err, flags = 0;
	struct luw_stats st;
	pthread_t th;

	if (argc > 1 && !strcmp(argv[1], "-o")) {
		flags = LUW_ATTACH_OFFCPU;
		argv++;
		argc--;
	}
	if (argc < 3)
		return 2;
	rounds = atoi(argv[1]);
	npids = argc - 2;
	fd = luw_dev_open(0);
	rd = luw_dev_open(O_NONBLOCK);
	if (fd < 0 || rd < 0 || luw_dev_join(rd, fd, 0))
		return 1;
	pthread_create(&th, NULL, reader, &rd);
	for (int i = 0; i < rounds; i++) {
		int pid = atoi(argv[2 + i % npids]);
		struct luw_attach a = { .pid = pid, .sample_rate = 4999,
					  .flags = flags };

		err = luw_dev_attach(fd, &a);
		if (err) {
			fprintf(stderr, "round %d: attach %d: %s\n", i, pid, strerror(-err));
			return 1;
		}
		if (i % 10 == 0)
			usleep(2000);
		err = luw_dev_detach(fd, pid);
		if (err) {
			fprintf(stderr, "round %d: detach %d: %s\n", i, pid, strerror(-err));
			return 1;
		}
	}
	done = 1;
	pthread_join(th, NULL);
	err = luw_dev_stats(fd, 0, &st);
	if (err || st.nr_targets) {
		fprintf(stderr, "after %d rounds: stats %d, %u targets left\n",
			rounds, err, st.nr_targets);
		return 1;
	}
	printf("attach_cycles: %d rounds, %llu samples, %ld bytes read\n", rounds,
	       (unsigned long long)st.samples, records_bytes);
	return 0;
}
