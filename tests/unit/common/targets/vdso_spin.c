/*
 * Target for the host unwinder tests: a loop that lives in the [vdso]
 * (clock_gettime never enters the kernel), so most probes stop in code
 * that has no file behind it, only the image the kernel maps.
 */
#include <stdio.h>
#include <time.h>

volatile long sink;

__attribute__((noinline, noclone)) void spin_clock(void)
{
	struct timespec ts;

	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;)
		spin_clock();
}
