/*
 * Prints this CPU's TSC rate in kHz, measured against CLOCK_MONOTONIC_RAW,
 * for scripts/vm-run: a TCG guest's TSC is the host's, and the guest
 * kernel is told its rate (tsc_early_khz=) instead of calibrating it
 * against emulated timers on a vCPU the host may starve.
 *
 * Each of five windows of 50 ms is bracketed by a clock read taken
 * between two TSC reads; the pair of a window's ends whose TSC reads lie
 * closest together is kept, so that a preemption inside a bracket does
 * not count.  Prints the median of the five; exits 1, printing nothing,
 * when the windows disagree by more than 0.1% (no stable TSC to tell).
 *
 * usage: tsc-khz
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#define WINDOWS	5
#define TRIES	16

/* A clock read (ns) and the TSC at it, from the tightest of TRIES brackets. */
static void pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;
	struct timespec t;
	int i;

	for (i = 0; i < TRIES; i++) {
		uint64_t a = __rdtsc(), b;

		clock_gettime(CLOCK_MONOTONIC_RAW, &t);
		b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
			*tsc = a + (b - a) / 2;
		}
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	double khz[WINDOWS];
	uint64_t n0, t0, n1, t1;
	int i;

	for (i = 0; i < WINDOWS; i++) {
		pair(&n0, &t0);
		nanosleep(&nap, NULL);
		pair(&n1, &t1);
		if (n1 <= n0 || t1 <= t0)
			return 1;
		khz[i] = (double)(t1 - t0) * 1e6 / (double)(n1 - n0);
	}
	qsort(khz, WINDOWS, sizeof(khz[0]), cmp);
	if (khz[WINDOWS - 1] - khz[0] > khz[WINDOWS / 2] / 1000)
		return 1;
	printf("%.0f\n", khz[WINDOWS / 2]);
	return 0;
}
