/*
 * A workload's own profiler (t_rec_shapes), loaded through the FFI: a
 * SIGPROF timer on the process CPU clock counts, at each expiry, the part
 * of the workload the process is in, which the workload stores in
 * selfprof_phase before it enters that part.  luaunwind's samples of the
 * same run are compared with these counts.  Both sample the process's CPU
 * clock, so both see the same time, whatever the host takes from a guest
 * (a stretch of it counts in the clock but yields one sample of either).
 */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#define SELFPROF_PHASES 3

volatile int selfprof_phase;
volatile unsigned long selfprof_hits[SELFPROF_PHASES];

static void on_prof(int sig)
{
	int p = selfprof_phase;

	(void)sig;
	if (p >= 0 && p < SELFPROF_PHASES)
		selfprof_hits[p]++;
}

/* Every usec of the process's CPU time; 0 or -1 (errno) as setitimer. */
int selfprof_start(long usec)
{
	struct itimerval it = { { 0, usec }, { 0, usec } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL))
		return -1;
	return setitimer(ITIMER_PROF, &it, NULL);
}

int selfprof_stop(void)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	return setitimer(ITIMER_PROF, &it, NULL);
}
