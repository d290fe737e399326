/*
 * Target with many threads: waits until the file argv[2] exists (so the
 * tracer can attach first), then starts argv[1] threads that spin for
 * argv[3] seconds or until that file is removed, whichever comes first,
 * and exits.  With argv[4] = "leader-exit" the main thread leaves with
 * pthread_exit() right after starting them; with "wait-gone" it exits
 * only once the kernel has released them (/proc/self/task holds it
 * alone), not while they are still on their way out.
 *   spin_threads N GO_FILE SECONDS [leader-exit|wait-gone]
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds;
static const char *go;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
	volatile unsigned long x = 0;
	double end = now() + seconds;

	(void)arg;
	/* The go file is looked at every ~10 ms of spinning or so. */
	while (now() < end && !access(go, F_OK))
		for (int k = 0; k < 100; k++)
			for (int i = 0; i < 100000; i++)
				x++;
	return NULL;
}

/* Threads of this process the kernel still lists. */
static int tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int n;
	pthread_t *t;

	if (argc < 4)
		return 2;
	n = atoi(argv[1]);
	seconds = atof(argv[3]);
	go = argv[2];
	t = calloc((size_t)n, sizeof(*t));
	while (access(argv[2], F_OK))
		usleep(10000);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, spin, NULL))
			return 1;
	if (argc > 4 && !strcmp(argv[4], "leader-exit"))
		pthread_exit(NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (argc > 4 && !strcmp(argv[4], "wait-gone"))
		while (tasks() > 1)
			usleep(10000);
	return 0;
}
