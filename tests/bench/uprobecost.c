/*
 * luw-uprobecost: what a uprobe costs per hit on this CPU, with the
 * kernel's own counting handler in place of luaunwind.ko's.
 *
 *   luw-uprobecost PATH OFFSET -- CMD [ARG...]
 *   luw-uprobecost --none -- CMD [ARG...]
 *
 * Runs CMD as a child, with a counting uprobe on PATH at file offset
 * OFFSET (decimal or 0x hex) on it: a perf event of the uprobe PMU
 * (type from /sys/bus/event_source/devices/uprobe/type, config1 = PATH,
 * config2 = OFFSET), for the child only (pid = child, cpu = -1), counting,
 * never sampling.  Each hit takes the same path luaunwind.ko's allocator
 * probe takes -- the int3 trap, the single step of the displaced
 * instruction out of line, the return -- but runs perf's trace-event
 * handler (fill a small record, bump a counter) where ours would run.
 * --none runs CMD the same way without the event, for the baseline.
 *
 * Output, once CMD has exited 0, one line on stdout:
 *   user SECONDS sys SECONDS count HITS
 * the child's CPU time (wait4's rusage) and the event's count (0 with
 * --none).  Exit status: 0; 1 an error (CMD failed included); 2 usage;
 * 77 no uprobe PMU or no right to use it (the caller says "not available
 * on this machine" and goes on).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "luw-uprobecost"
#define UPROBE_TYPE "/sys/bus/event_source/devices/uprobe/type"
#define EXIT_USAGE 2
#define EXIT_UNAVAILABLE 77

static void usage(void)
{
	fprintf(stderr,
		"usage: " PROG " PATH OFFSET -- CMD [ARG...]\n"
		"       " PROG " --none -- CMD [ARG...]\n");
	exit(EXIT_USAGE);
}

/* The uprobe PMU's dynamic type, or -1 (errno set) when there is none. */
static int uprobe_type(void)
{
	FILE *f = fopen(UPROBE_TYPE, "r");
	int type, n;

	if (!f)
		return -1;
	n = fscanf(f, "%d", &type);
	fclose(f);
	if (n != 1) {
		errno = EINVAL;
		return -1;
	}
	return type;
}

/*
 * The errors that mean "this kernel or this user cannot have the event",
 * as opposed to a bad PATH or OFFSET: no PMU of that type (ENOENT, ENODEV),
 * no right to it (EACCES, EPERM: CAP_PERFMON, perf_event_paranoid), no
 * perf or no uprobes at all (ENOSYS, EOPNOTSUPP).  PATH is checked before
 * the call, so ENOENT here is the PMU's.
 */
static int unavailable(int err)
{
	return err == ENOENT || err == ENODEV || err == EACCES ||
	       err == EPERM || err == ENOSYS || err == EOPNOTSUPP;
}

/*
 * The counting uprobe on the stopped child.  The event is bound to the
 * task, not to the image it runs, so it survives the execvp: the probe
 * lands when the exec maps PATH.  Returns the fd, or exits.
 */
static int open_uprobe(pid_t pid, const char *path, uint64_t offset)
{
	struct perf_event_attr attr;
	int type, fd, err;

	type = uprobe_type();
	if (type < 0) {
		fprintf(stderr, PROG ": no uprobe PMU (%s: %s)\n", UPROBE_TYPE,
			strerror(errno));
		return -EXIT_UNAVAILABLE;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = 0;	/* bit 0 would make it a uretprobe */
	attr.config1 = (uint64_t)(uintptr_t)path;
	attr.config2 = offset;
	attr.inherit = 1;	/* CMD's threads, should it start any */
	fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = errno;
		fprintf(stderr, PROG ": perf_event_open(uprobe type %d, %s, 0x%" PRIx64 "): %s%s\n",
			type, path, offset, strerror(err),
			err == EACCES || err == EPERM ?
			" (needs root or CAP_PERFMON)" : "");
		return unavailable(err) ? -EXIT_UNAVAILABLE : -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	uint64_t offset = 0, count = 0;
	struct rusage ru;
	char **cmd, *end;
	int fd = -1, st, ret;
	pid_t pid;

	if (argc >= 4 && !strcmp(argv[1], "--none") && !strcmp(argv[2], "--")) {
		cmd = argv + 3;
	} else if (argc >= 5 && !strcmp(argv[3], "--")) {
		struct stat sb;

		path = argv[1];
		errno = 0;
		offset = strtoull(argv[2], &end, 0);
		if (errno || end == argv[2] || *end || argv[2][0] == '-') {
			fprintf(stderr, PROG ": bad offset %s\n", argv[2]);
			usage();
		}
		/* So that ENOENT from perf_event_open can only be the PMU's. */
		if (stat(path, &sb) < 0) {
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
			return 1;
		}
		if (!S_ISREG(sb.st_mode)) {
			fprintf(stderr, PROG ": %s: not a regular file\n", path);
			return 1;
		}
		if (offset >= (uint64_t)sb.st_size) {
			fprintf(stderr, PROG ": offset 0x%" PRIx64 " beyond %s\n",
				offset, path);
			return 1;
		}
		cmd = argv + 4;
	} else {
		usage();
	}

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror(PROG ": fork");
		return 1;
	}
	if (pid == 0) {
		/*
		 * Wait for the parent to open the event: no allocator call
		 * of CMD can happen before it is on.
		 */
		raise(SIGSTOP);
		execvp(cmd[0], cmd);
		fprintf(stderr, PROG ": %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}

	if (waitpid(pid, &st, WUNTRACED) < 0 || !WIFSTOPPED(st)) {
		fprintf(stderr, PROG ": the child did not stop\n");
		return 1;
	}
	if (path) {
		fd = open_uprobe(pid, path, offset);
		if (fd < 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -fd;
		}
	}
	kill(pid, SIGCONT);

	/* Without WUNTRACED: only the end, whatever stops it on the way. */
	while ((ret = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR)
		;
	if (ret < 0) {
		perror(PROG ": wait4");
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		if (WIFSIGNALED(st))
			fprintf(stderr, PROG ": %s killed by signal %d\n",
				cmd[0], WTERMSIG(st));
		else
			fprintf(stderr, PROG ": %s exited with status %d\n",
				cmd[0], WEXITSTATUS(st));
		return 1;
	}
	/* The task is gone; the event keeps its final count. */
	if (fd >= 0 && read(fd, &count, sizeof(count)) != sizeof(count)) {
		perror(PROG ": read the count");
		return 1;
	}
	printf("user %ld.%06ld sys %ld.%06ld count %" PRIu64 "\n",
	       (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
	       (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, count);
	return 0;
}
