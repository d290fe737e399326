/* A single-threaded CPU burner: spin [SECONDS]; forever without one. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	volatile unsigned long x = 0;
	double secs = argc > 1 ? atof(argv[1]) : -1;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (;;) {
		for (int i = 0; i < 1000000; i++)
			x++;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (secs >= 0 && (double)(b.tv_sec - a.tv_sec) +
				 (double)(b.tv_nsec - a.tv_nsec) / 1e9 >= secs)
			return 0;
	}
}
