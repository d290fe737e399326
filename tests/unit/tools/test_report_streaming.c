/*
 * Streaming: luaunwind-report's memory does not grow with the stream.
 *
 * luw-synth writes a stream of a fixed workload (a fixture's symbols and
 * stacks, repeated; tests/encoder/gen.h) into a pipe; luaunwind-report
 * decodes it from stdin; the report's peak RSS comes from wait4().  A
 * 100 MB stream must peak within SLACK_KB of a 5 MB one of the same
 * workload (memory is asserted, never time).  Both formats: memprof (the
 * full report) and sysprof (folded stacks).
 *
 *   test_report_streaming LUW_SYNTH LUAUNWIND_REPORT FIXTURES_DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define SMALL "5M"
#define LARGE "100M"
/* Allowed growth: allocator noise and one more doubling of a small table. */
#define SLACK_KB 4096

static const char *synth, *report, *fixtures;

/* Run argv with stdin in and stdout out; close_fd is closed in the child. */
static pid_t spawn(char *const argv[], int in, int out, const int close_fd[2])
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (!pid) {
		if (in >= 0 && dup2(in, STDIN_FILENO) < 0)
			_exit(127);
		if (out >= 0 && dup2(out, STDOUT_FILENO) < 0)
			_exit(127);
		/* Else the reader would hold the pipe's write end: no EOF. */
		close(close_fd[0]);
		close(close_fd[1]);
		execv(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Peak RSS in KiB of consumer reading a SIZE stream of fixture on stdin. */
static long peak_kb(const char *fixture, const char *size,
		    char *const consumer[])
{
	char path[4096];
	char *sargv[] = { (char *)synth, path, (char *)size, "-", "7", NULL };
	struct rusage ru;
	int fds[2], null, st_s, st_r;
	pid_t ps, pr;

	snprintf(path, sizeof(path), "%s/%s", fixtures, fixture);
	null = open("/dev/null", O_WRONLY);
	if (null < 0 || pipe(fds)) {
		perror("pipe");
		exit(1);
	}
	ps = spawn(sargv, -1, fds[1], fds);
	pr = spawn(consumer, fds[0], null, fds);
	close(fds[0]);
	close(fds[1]);
	close(null);
	if (waitpid(ps, &st_s, 0) != ps || wait4(pr, &st_r, 0, &ru) != pr) {
		perror("wait");
		exit(1);
	}
	CHECK(WIFEXITED(st_s) && !WEXITSTATUS(st_s),
	      "luw-synth %s %s failed (status 0x%x)", fixture, size, st_s);
	CHECK(WIFEXITED(st_r) && !WEXITSTATUS(st_r),
	      "%s %s on %s %s failed (status 0x%x)", consumer[0], consumer[1],
	      fixture, size, st_r);
	return st_s || st_r ? -1 : ru.ru_maxrss;
}

static void check(const char *fixture, const char *mode)
{
	char *argv[] = { (char *)report, (char *)mode, "-", NULL };
	long small, large;

	if (!mode)
		argv[1] = "-", argv[2] = NULL;
	small = peak_kb(fixture, SMALL, argv);
	large = peak_kb(fixture, LARGE, argv);
	if (small < 0 || large < 0)
		return;
	printf("%s %s: peak RSS %ld KiB at %s, %ld KiB at %s (%+ld KiB)\n",
	       fixture, mode ? mode : "(default)", small, SMALL, large, LARGE,
	       large - small);
	CHECK(large <= small + SLACK_KB, "%s %s: memory grows with the stream",
	      fixture, mode ? mode : "(default)");
}

/*
 * The measurement itself: a reader that keeps the last 64 MB it read
 * (tail -c) must be seen to grow, or the checks above prove nothing.
 */
static void control(void)
{
	char *argv[] = { "/usr/bin/tail", "-c", "64000000", NULL };
	long small, large;

	if (access(argv[0], X_OK))
		return;
	small = peak_kb("memprof_leak.bin", SMALL, argv);
	large = peak_kb("memprof_leak.bin", LARGE, argv);
	if (small < 0 || large < 0)
		return;
	printf("control: tail -c 64000000 peaks at %ld KiB at %s, %ld KiB at %s\n",
	       small, SMALL, large, LARGE);
	CHECK(large > small + 8 * SLACK_KB,
	      "control: the measurement does not see growth");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr,
			"usage: test_report_streaming LUW_SYNTH LUAUNWIND_REPORT FIXTURES\n");
		return 1;
	}
	synth = argv[1];
	report = argv[2];
	fixtures = argv[3];
	control();
	check("memprof_leak.bin", NULL);
	check("memprof_basic.bin", "--leak-only");
	check("sysprof_callchain.bin", "--folded");
	check("sysprof_callchain_jit.bin", "--compat");
	return luw_test_status("test_report_streaming");
}
