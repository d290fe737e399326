/*
 * Test-harness workaround for QEMU's TCG, not for real machines: hold one
 * disabled per-task perf event for the whole guest boot, so that the
 * kernel's perf_sched_events static key stays enabled and is never
 * patched in and out of the scheduler while tests run.  Every per-task
 * event (luaunwind's, perf's) flips that key when it is the first or the
 * last one; the patching goes through int3 (text_poke_bp), and under TCG a
 * CPU was seen to execute the stale int3 afterwards: "Oops: int3" in
 * __schedule, in a 6.12 guest during t_fuzz (hundreds of attaches), and
 * once in kworker's __schedule right as keyhold itself opened its event.
 * So the one patch keyhold causes is made with every other CPU offline,
 * where no other CPU can be running the text being patched.
 *
 * The same for perf's key of context-switch software events (off-CPU,
 * LUW_ATTACH_OFFCPU), patched in and out of __schedule when the first is
 * created and the last released: a 5.10 guest flipping it (attach_cycles
 * -o) hung with both CPUs' interrupts off, one at asm_exc_int3+0x0 from
 * __schedule+0x1ca, where the patched jmp had been written (an NMI from
 * QEMU's monitor made it panic and print that).  t_offcpu, which creates
 * and releases such events, hung a CI guest with nothing on its console.
 * keyhold holds one such event too, disabled: the key counts events, not
 * enabled ones.
 *   keyhold      prints the pid of the process holding the events, which
 *                runs until killed, once the event is open and the CPUs
 *                are back online
 */
#include <glob.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Write "0" or "1" to every cpuN/online the guest has (cpu0 has none). */
static void cpus_online(const char *v)
{
	glob_t g;
	size_t i;

	if (glob("/sys/devices/system/cpu/cpu[0-9]*/online", 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "w");

		if (!f || fputs(v, f) == EOF || fclose(f) == EOF)
			fprintf(stderr, "keyhold: cannot write %s to %s\n", v,
				g.gl_pathv[i]);
	}
	globfree(&g);
}

int main(void)
{
	struct perf_event_attr a;
	int p[2];
	char ok;
	pid_t pid;

	if (pipe(p)) {
		perror("keyhold: pipe");
		return 1;
	}
	cpus_online("0");
	pid = fork();
	if (pid < 0) {
		perror("keyhold: fork");
		cpus_online("1");
		return 1;
	}
	if (pid == 0) {
		close(p[0]);
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.disabled = 1;
		if (syscall(SYS_perf_event_open, &a, 0, -1, -1, 0) < 0) {
			perror("keyhold: perf_event_open");
			return 1;
		}
		a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		if (syscall(SYS_perf_event_open, &a, 0, -1, -1, 0) < 0) {
			perror("keyhold: perf_event_open (context switches)");
			return 1;
		}
		if (write(p[1], "y", 1) != 1)
			return 1;
		close(p[1]);
		/* Hold the event, off the caller's $(...). */
		if (!freopen("/dev/null", "w", stdout))
			return 1;
		for (;;)
			pause();
	}
	close(p[1]);
	ok = 0;
	if (read(p[0], &ok, 1) != 1)
		ok = 0;
	cpus_online("1");
	if (ok != 'y')
		return 1;
	printf("%d\n", (int)pid);
	return 0;
}
