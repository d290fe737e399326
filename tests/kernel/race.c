/*
 * Races among the control paths of one session, for KASAN and lockdep
 * (the debug kernel lane) and the kernel-log check of every lane:
 *   race PID SECONDS
 * For SECONDS, threads of this process attach PID, replace its unwind
 * table, detach it, read stats and the list, and read records, all on one
 * file; another attaches short-lived children that exit at once (the
 * reaper ends them while tables are uploaded to them), and another opens
 * files, joins them to the first and closes them.  Then the module must
 * still work: a clean attach, stats and detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/dev.h"
#include "onetab.h"

static int fd;
static pid_t target;
static volatile int stop;
static pid_t no_child;
static struct one_entry_table tab;

static void *attacher(void *arg)
{
	(void)arg;
	while (!stop) {
		struct luw_attach a = { .pid = target, .sample_rate = 4999 };

		luw_dev_attach(fd, &a);
	}
	return NULL;
}

static void *uploader(void *arg)
{
	pid_t *pid = arg;

	while (!stop)
		luw_dev_upload_table(fd, *pid ? *pid : target, 0x400000,
				    0x401000, 0, &tab, sizeof(tab));
	return NULL;
}

static void *detacher(void *arg)
{
	(void)arg;
	while (!stop) {
		luw_dev_detach(fd, target);
		usleep(1000);
	}
	return NULL;
}

static void *watcher(void *arg)
{
	struct luw_stats s;
	pid_t pids[LUW_MAX_TARGETS];

	(void)arg;
	while (!stop) {
		luw_dev_stats(fd, 0, &s);
		luw_dev_stats(fd, target, &s);
		luw_dev_list(fd, pids, LUW_MAX_TARGETS);
	}
	return NULL;
}

static void *reader(void *arg)
{
	static char buf[1 << 16];
	int rd = luw_dev_open(O_NONBLOCK);

	(void)arg;
	if (rd < 0 || luw_dev_join(rd, fd, 0))
		return NULL;
	while (!stop)
		if (read(rd, buf, sizeof(buf)) < 0)
			usleep(500);
	close(rd);
	return NULL;
}

static void *joiner(void *arg)
{
	(void)arg;
	while (!stop) {
		int j = luw_dev_open(0);

		if (j >= 0) {
			luw_dev_join(j, fd, 0);
			close(j);
		}
	}
	return NULL;
}

/* Children that live a few ms: attached, given tables, reaped. */
static void *spawner(void *arg)
{
	pid_t *child = arg;

	while (!stop) {
		pid_t c = fork();
		struct luw_attach a = { .sample_rate = 4999 };

		if (c == 0) {
			usleep(2000 + rand() % 5000);
			_exit(0);
		}
		if (c < 0)
			continue;
		a.pid = c;
		luw_dev_attach(fd, &a);
		*child = c;
		waitpid(c, NULL, 0);
		usleep(rand() % 200000);	/* the reaper runs every 100 ms */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn[])(void *) = { attacher, uploader, detacher, watcher,
				  reader, joiner, spawner, uploader };
	pthread_t th[sizeof(fn) / sizeof(fn[0])];
	struct luw_attach a = { .sample_rate = 99 };
	struct luw_stats s;
	pid_t child = 0;
	int r;

	if (argc < 3)
		return 2;
	target = atoi(argv[1]);
	fd = luw_dev_open(0);
	if (fd < 0)
		return 1;
	one_entry_table_init(&tab);
	/* uploader 1 replaces the target's table, uploader 7 a child's. */
	for (unsigned int i = 0; i < sizeof(fn) / sizeof(fn[0]); i++)
		pthread_create(&th[i], NULL, fn[i],
			       fn[i] == spawner || i == 7 ? (void *)&child :
			       fn[i] == uploader ? (void *)&no_child : NULL);
	sleep(atoi(argv[2]));
	stop = 1;
	for (unsigned int i = 0; i < sizeof(fn) / sizeof(fn[0]); i++)
		pthread_join(th[i], NULL);

	luw_dev_detach(fd, target);
	a.pid = target;
	r = luw_dev_attach(fd, &a);
	if (r || luw_dev_stats(fd, target, &s) || luw_dev_detach(fd, target)) {
		fprintf(stderr, "race: the module does not work after the races: %s\n",
			strerror(-r));
		return 1;
	}
	printf("race: ok\n");
	return 0;
}
