/*
 * Test-harness workaround for QEMU's TCG, not for real machines: hold one
 * disabled per-task perf event for the whole guest boot, so that the
 * kernel's perf_sched_events static key stays enabled and is never
 * patched in and out of the scheduler while tests run.  Every per-task
 * event (luaunwind's, perf's) flips that key when it is the first or the
 * last one; the patching goes through int3 (text_poke_bp), and under TCG a
 * CPU was seen to execute the stale int3 afterwards: "Oops: int3" in
 * __schedule, in a 6.12 guest during t_fuzz (hundreds of attaches).
 *   keyhold      (runs until killed)
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("keyhold: perf_event_open");
		return 1;
	}
	for (;;)
		pause();
}
