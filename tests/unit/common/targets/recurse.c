/*
 * Target for the host unwinder tests: deep mutual recursion whose frames
 * take every shape gcc gives at -O2: plain rsp-based frames (rec_a), a
 * large fixed frame (rec_b), an alloca frame that needs rbp as the CFA
 * base even with -fomit-frame-pointer (rec_c), and a leaf that spins.
 * Each level works a little before it recurses, so probes land at every
 * depth and in prologues and epilogues, not only in the leaf.
 *
 * usage: recurse [THREADS]   runs forever in main and THREADS threads.
 */
#include <alloca.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define DEPTH 60
#define NOINL __attribute__((noinline, noclone))

volatile unsigned long sink;

NOINL unsigned long leaf_spin(int n)
{
	unsigned long s = 0;

	for (int i = 0; i < n; i++)
		s += (unsigned long)i * sink;
	return s;
}

NOINL unsigned long rec_a(int depth);

NOINL unsigned long rec_b(int depth)
{
	volatile char buf[4096];

	buf[depth & 4095] = (char)depth;
	return rec_a(depth - 1) + (unsigned long)buf[depth & 4095];
}

NOINL unsigned long rec_c(int depth)
{
	volatile char *p = alloca(16 + (depth & 63));

	p[depth & 15] = (char)depth;
	return rec_a(depth - 1) + (unsigned long)p[depth & 15];
}

NOINL unsigned long rec_a(int depth)
{
	unsigned long w;

	if (depth <= 0)
		return leaf_spin(200000);
	w = leaf_spin(2000);
	switch (depth % 3) {
	case 0:
		return rec_b(depth) + w;
	case 1:
		return rec_c(depth) + w;
	default:
		return rec_a(depth - 1) + w + 1;
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (;;)
		sink += rec_a(DEPTH);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 0;

	for (int i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_main, NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		sink += rec_a(DEPTH);
}
