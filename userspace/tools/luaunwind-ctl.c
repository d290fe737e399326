/*
 * luaunwind-ctl: drive luaunwind.ko through /dev/luaunwind.
 *
 *   luaunwind-ctl version
 *   luaunwind-ctl attach PID [--freq HZ | --period N] [--event cpu-clock|cycles]
 *                            [--mode default|leaf|callchain] [--stopped]
 *                            [--max-host N] [--max-lua N] [--no-lua] [--no-tables]
 *   luaunwind-ctl detach PID
 *   luaunwind-ctl start [PID] | stop [PID]
 *   luaunwind-ctl status [PID]
 *   luaunwind-ctl record [-p PID]... [--children] [--all | --exe PATH |
 *                        --comm NAME] -o FILE [--duration S] [--freq HZ]
 *                        [--mode default|leaf|callchain]
 *                        [--alloc] [--alloc-interval BYTES] [--no-cpu]
 *                        [--off-cpu | --wall] [-- CMD ARGS...]
 *                        (-o FILE, or --every S --dir DIR [--keep N])
 *   luaunwind-ctl dump [--count N] [--duration S] [--nonblock] [--raw]
 *   luaunwind-ctl heap -p PID -o FILE [--live]
 *   luaunwind-ctl serve [--listen ADDR:PORT] [--token-file FILE]
 *                       [--max-seconds S] [--freq HZ]
 *
 * Sessions (include/luaunwind.h): attach puts the process in the caller's
 * kept session, which outlives this program; detach, start, stop, status,
 * dump and record without -p act on that session.  record -p PID records
 * in a session of its own, which ends with it (killed or not), unless PID
 * is in the kept session already: then it records that, as it is, and
 * leaves it attached.  Several -p record several processes into one file
 * (all of them in the kept session: that; else all in record's own).
 * --mode, as Tarantool's sysprof names them: callchain (the default) full
 * merged stacks; leaf the innermost host frame and the innermost Lua frame
 * only (--max-host 1 --max-lua 1: a Lua function alone where the host leaf
 * is the interpreter, else C code under the Lua C function that called
 * it); default no stacks at all, the module only counts (and writes) each
 * sample's VM state, which status shows.
 *
 * --all, --exe PATH and --comm NAME select processes instead of naming
 * them: every LuaJIT process, those running PATH, those whose command
 * name is NAME (target/discover.h); -p PID --children the -p processes
 * and their descendants.  Processes that appear while recording are
 * attached as they come (record/follow.h).  -- CMD ARGS starts CMD and
 * records it until it exits, attached before its first Lua where it can
 * be stopped there (record/launch.h).
 *
 * --alloc samples the allocations of the processes -p names as well (or,
 * with --no-cpu, instead of CPU time): a uprobe on each Lua universe's
 * allocator, and one record with the allocating stack per
 * --alloc-interval bytes requested on average (512 KiB by default; 1
 * records every allocation).  luaunwind-report --alloc reports them.
 *
 * --off-cpu records, instead of CPU samples, the stack of each thread of
 * the processes -p names every time it leaves its CPU (it blocks, or is
 * preempted), and what it takes to tell how long it stayed off;
 * --wall records both.  luaunwind-report --off-cpu and --wall report
 * them.
 *
 * --every S --dir DIR writes a whole .luw file every S seconds instead of
 * one, named by its start and renamed into place once complete, the
 * oldest beyond --keep N removed (record/rotate.h).
 *
 * record writes a .luw file (include/luaunwind_file.h; the loop is
 * lib/record/record.c): with -p it attaches first (and detaches at the end)
 * unless PID is attached already; without, it records what is attached.
 * It stops after --duration, on SIGINT/SIGTERM, or when every target has
 * exited.
 *
 * dump prints one line per record, until the session has no target left
 * (or --count, --duration, a signal), then the session's totals on stderr
 * ("samples=N drops=N targets=N ended=N"); --raw writes the records themselves
 * instead (the stream of include/luaunwind.h, for luaunwind-report --pid):
 *   sample pid=P tid=T cpu=C time=NS vmstate=NAME flags=0xF host=PC,PC,...
 *   (alloc ... nsize=N osize=N kind=K, switch ... runtime=NS nvcsw=N
 *   nivcsw=N syscall=NR state=S: the same with their tails)
 *   lost cpu=C count=N time=NS
 *   end pid=P reason=exit|exec time=NS
 *
 * serve answers HTTP requests for profiles as Go's net/http/pprof does
 * (serve/serve.h: the endpoints, the answers, the token), on
 * 127.0.0.1:6060 by default, until SIGINT or SIGTERM.
 *
 * Exit status: 0 ok, 1 any error, usage errors included.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "heap/heaptake.h"
#include "record/attach.h"
#include "record/follow.h"
#include "record/launch.h"
#include "util/cli.h"
#include "record/record.h"
#include "record/rotate.h"
#include "record/dev.h"
#include "serve/serve.h"

static const char usage_text[] =
	      "usage: luaunwind-ctl version\n"
	      "       luaunwind-ctl attach PID [--freq HZ | --period N]"
	      " [--event cpu-clock|cycles] [--mode default|leaf|callchain]"
	      " [--stopped] [--max-host N] [--max-lua N] [--no-lua]"
	      " [--no-tables]\n"
	      "       luaunwind-ctl detach PID\n"
	      "       luaunwind-ctl start [PID] | stop [PID]\n"
	      "       luaunwind-ctl status [PID]\n"
	      "       luaunwind-ctl record [-p PID]... [--children]"
	      " [--all | --exe PATH | --comm NAME] -o FILE\n"
	      "                            [--duration S] [--freq HZ]"
	      " [--mode default|leaf|callchain]\n"
	      "                            [--alloc] [--alloc-interval BYTES] [--no-cpu]"
	      " [--off-cpu | --wall]\n"
	      "                            [-- CMD ARGS...]\n"
	      "                            (-o FILE, or --every S --dir DIR [--keep N])\n"
	      "       luaunwind-ctl dump [--count N] [--duration S] [--nonblock] [--raw]\n"
	      "       luaunwind-ctl heap -p PID -o FILE [--live]\n"
	      "       luaunwind-ctl serve [--listen ADDR:PORT] [--token-file FILE]"
	      " [--max-seconds S] [--freq HZ]\n"
	      "       luaunwind-ctl [COMMAND] --help\n";

/* Each command's own usage, for COMMAND --help and its usage errors. */
static const struct {
	const char *cmd, *text;
} cmd_help[] = {
	{ "version",
	  "usage: luaunwind-ctl version\n"
	  "The module's ABI and record versions, CPUs, ring size, target limit,\n"
	  "features, and the targets attached in every session.\n" },
	{ "attach",
	  "usage: luaunwind-ctl attach PID [options]\n"
	  "Finds LuaJIT in PID, proves its layout, uploads unwind tables and\n"
	  "starts sampling, in your kept session (it outlives this program).\n"
	  "  --freq HZ          samples a second per thread (default 999)\n"
	  "  --period N         or one sample every N events\n"
	  "  --event E          cpu-clock (default) or cycles\n"
	  "  --mode M           callchain (whole stacks, default), leaf, default\n"
	  "  --max-host N       host frames at most\n"
	  "  --max-lua N        Lua frames at most\n"
	  "  --no-lua           host stacks only\n"
	  "  --no-tables        frame pointers only, no unwind tables\n"
	  "  --stopped          attach paused, until the start command\n"
	  "  --alloc            sample allocations too (a uprobe on allocf)\n"
	  "  --alloc-interval B one allocation record per B bytes (512 KiB)\n"
	  "  --no-cpu           no CPU samples (with --alloc or --off-cpu)\n"
	  "  --off-cpu          a record each time a thread leaves its CPU\n"
	  "  --wall             CPU samples and off-CPU records\n" },
	{ "detach",
	  "usage: luaunwind-ctl detach PID\n"
	  "Ends sampling of PID in your kept session.\n" },
	{ "start",
	  "usage: luaunwind-ctl start [PID]\n"
	  "Resumes sampling of PID (every target of your kept session without).\n" },
	{ "stop",
	  "usage: luaunwind-ctl stop [PID]\n"
	  "Pauses sampling of PID (every target of your kept session without).\n" },
	{ "status",
	  "usage: luaunwind-ctl status [PID]\n"
	  "The targets of your kept session and their counters (all of them\n"
	  "without PID): samples, drops, faults, VM states, handler time,\n"
	  "allocation probes, switch records.\n" },
	{ "record",
	  "usage: luaunwind-ctl record [-p PID]... [--children] -o FILE [options]\n"
	  "       luaunwind-ctl record --all | --exe PATH | --comm NAME -o FILE [options]\n"
	  "       luaunwind-ctl record -o FILE [options] -- CMD ARGS...\n"
	  "Records merged stacks into FILE (.luw) for luaunwind-report: of the\n"
	  "-p processes (attached for the recording unless attached already),\n"
	  "else of what your kept session has attached.\n"
	  "  -p PID             a process (again for more)\n"
	  "  --children         the -p processes and their descendants, new ones too\n"
	  "  --all              every LuaJIT process, new ones too\n"
	  "  --exe PATH         LuaJIT processes running PATH, new ones too\n"
	  "  --comm NAME        LuaJIT processes named NAME, new ones too\n"
	  "  -- CMD ARGS...     start CMD, record it from its first Lua until it\n"
	  "                     exits\n"
	  "  -o FILE            the recording\n"
	  "  --every S --dir DIR  instead of -o: a whole file every S seconds,\n"
	  "                     DIR/luaunwind-YYYYmmddTHHMMSSZ.luw\n"
	  "  --keep N           with --every: the newest N files only\n"
	  "  -d, --duration S   stop after S seconds (else Ctrl-C, or every\n"
	  "                     target gone)\n"
	  "  --freq HZ          samples a second per thread (default 999)\n"
	  "  --mode M           callchain (whole stacks, default), leaf, default\n"
	  "  --alloc            sample allocations too (a uprobe on allocf)\n"
	  "  --alloc-interval B one allocation record per B bytes (512 KiB)\n"
	  "  --no-cpu           no CPU samples (with --alloc or --off-cpu)\n"
	  "  --off-cpu          a record each time a thread leaves its CPU\n"
	  "  --wall             CPU samples and off-CPU records\n" },
	{ "dump",
	  "usage: luaunwind-ctl dump [options]\n"
	  "Prints the records of your kept session, a line each, until it has\n"
	  "no target left.\n"
	  "  --count N          stop after N samples\n"
	  "  --duration S       stop after S seconds\n"
	  "  --nonblock         stop when nothing is waiting\n"
	  "  --raw              the records themselves, not text\n" },
	{ "heap",
	  "usage: luaunwind-ctl heap -p PID -o FILE [--live]\n"
	  "A heap snapshot of every Lua universe of PID into FILE, from\n"
	  "userspace (no module needed); its threads are stopped for the walk.\n"
	  "  --live             walk it running, without stopping it\n" },
	{ "serve",
	  "usage: luaunwind-ctl serve [options]\n"
	  "Serves profiles over HTTP as Go's net/http/pprof does, each taken\n"
	  "when asked (record's selection by pid=, exe=, comm=; default every\n"
	  "LuaJIT process), until SIGINT or SIGTERM:\n"
	  "  /debug/pprof/profile?seconds=N   CPU\n"
	  "  /debug/pprof/offcpu?seconds=N    off-CPU time\n"
	  "  /debug/pprof/allocs?seconds=N    allocations\n"
	  "  /debug/pprof/heap?pid=PID        a heap snapshot (walked live)\n"
	  "  --listen ADDR:PORT  where (default 127.0.0.1:6060); any address\n"
	  "                     but loopback needs --token-file\n"
	  "  --token-file FILE  requests must carry Authorization: Bearer and\n"
	  "                     the token this file holds\n"
	  "  --max-seconds S    the longest profile served (default 60)\n"
	  "  --freq HZ          CPU samples a second per thread (default 99)\n" },
};

/* The usage --help and usage errors print: the command's, once known. */
static const char *cur_usage = usage_text;

static void set_usage(const char *cmd)
{
	for (size_t i = 0; i < sizeof(cmd_help) / sizeof(cmd_help[0]); i++)
		if (!strcmp(cmd, cmd_help[i].cmd))
			cur_usage = cmd_help[i].text;
}

static void usage(void)
{
	fputs(cur_usage, stderr);
	exit(1);
}

/* A whole decimal number in [0, max], else a usage error. */
static long long num(const char *s, const char *what, long long max)
{
	long long v;

	if (luw_cli_int(s, 0, max, &v)) {
		fprintf(stderr, "luaunwind-ctl: bad %s '%s'\n", what, s);
		exit(1);
	}
	return v;
}

static pid_t pid_arg(const char *s)
{
	return (pid_t)num(s, "pid", INT_MAX);
}

/*
 * getopt_long over a command's arguments (argv[0] is the command):
 * --help prints the usage and exits 0, an unknown option or a missing
 * argument is a usage error.  The options come back one by one.
 */
static int next_opt(int argc, char **argv, const struct option *lo,
		    const char *so)
{
	return luw_cli_getopt(argc, argv, so, lo, cur_usage);
}

/* A command without options: its positional arguments start at optind. */
static void no_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};

	while (next_opt(argc, argv, lo, "h") != -1)
		usage();
}

/* --mode NAME, sysprof's names; see the top of this file. */
static void set_mode(struct luw_attach_opts *o, const char *m)
{
	if (luw_attach_mode(o, m)) {
		fprintf(stderr, "luaunwind-ctl: unknown mode '%s'"
			" (default, leaf or callchain)\n", m);
		usage();
	}
}

/*
 * The device; checked: refused when the module writes another record
 * version than this build reads (version, which reports the module's,
 * asks without the check).
 */
static int open_dev_as(int flags, int checked)
{
	int fd = checked ? luw_dev_open(flags) : luw_dev_open_unchecked(flags);

	if (fd == -EPROTO) {
		unsigned int have = 0;
		int raw = luw_dev_open_unchecked(flags);

		if (raw >= 0) {
			luw_dev_check(raw, &have);
			close(raw);
		}
		fprintf(stderr, "luaunwind-ctl: %s: the loaded luaunwind.ko writes"
			" record version %u, this luaunwind-ctl reads %u: load"
			" the luaunwind.ko built with it\n", LUW_DEVICE,
			have, LUW_RECORD_VERSION);
		exit(1);
	}
	if (fd < 0) {
		fprintf(stderr, "luaunwind-ctl: %s: %s%s\n", LUW_DEVICE,
			strerror(-fd),
			fd == -ENOENT ? " (the module is not loaded: "
					"insmod kmod/luaunwind.ko)" :
			fd == -EPERM || fd == -EACCES ? " (needs root: "
					"CAP_PERFMON or CAP_SYS_ADMIN)" : "");
		exit(1);
	}
	return fd;
}

static int open_dev(int flags)
{
	return open_dev_as(flags, 1);
}

/*
 * The device, in the caller's kept session; create: make one if there is
 * none.  Without one (and no create) the file keeps a session of its own,
 * which has no target: status shows none, dump reads end of file.
 */
static int open_kept(int flags, int create)
{
	int fd = open_dev(flags);
	int err = luw_dev_join(fd, -1, create ? LUW_JOIN_CREATE : 0);

	if (err && !(err == -ENOENT && !create)) {
		fprintf(stderr, "luaunwind-ctl: joining the kept session: %s\n",
			strerror(-err));
		exit(1);
	}
	return fd;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "luaunwind-ctl: %s: %s\n", what, strerror(-err));
	return 1;
}

static int cmd_version(int fd)
{
	struct luw_version v;
	int err = luw_dev_version(fd, &v);

	if (err)
		return fail("version", err);
	printf("abi=%u record=%u cpus=%u ring_bytes=%u max_targets=%u features=0x%llx"
	       " all_targets=%u\n",
	       v.abi_version, v.record_version, v.nr_cpus, v.ring_bytes,
	       v.max_targets, (unsigned long long)v.features, v.nr_targets);
	return 0;
}

/*
 * What is recorded besides (or instead of) CPU samples, as attach and
 * record take it: allocations, off-CPU time.
 */
#define KIND_OPTIONS \
	{ "alloc", no_argument, NULL, 'A' }, \
	{ "alloc-interval", required_argument, NULL, 'I' }, \
	{ "no-cpu", no_argument, NULL, 'C' }, \
	{ "off-cpu", no_argument, NULL, 'O' }, \
	{ "wall", no_argument, NULL, 'W' }

#define ALLOC_DEFAULT_INTERVAL (512 << 10)

static int wall;	/* --wall given */

/* 1 when c was one of KIND_OPTIONS, now in o; else 0. */
static int kind_opt(int c, struct luw_attach_opts *o)
{
	switch (c) {
	case 'A':
		if (!o->alloc_interval)
			o->alloc_interval = ALLOC_DEFAULT_INTERVAL;
		return 1;
	case 'I':
		o->alloc_interval = (uint64_t)num(optarg, "allocation interval",
						  (long long)LUW_ALLOC_INTERVAL_MAX);
		if (!o->alloc_interval) {
			fprintf(stderr, "luaunwind-ctl: an allocation interval "
				"of 0 bytes\n");
			exit(1);
		}
		return 1;
	case 'C':
		o->flags |= LUW_ATTACH_NO_EVENTS;
		return 1;
	case 'O':
		o->flags |= LUW_ATTACH_OFFCPU | LUW_ATTACH_NO_EVENTS;
		return 1;
	case 'W':
		o->flags |= LUW_ATTACH_OFFCPU;
		wall = 1;
		return 1;
	}
	return 0;
}

/* After the options: --no-cpu needs --alloc or --off-cpu; --wall is
 * CPU samples and off-CPU time both. */
static void kind_check(const struct luw_attach_opts *o)
{
	if ((o->flags & LUW_ATTACH_NO_EVENTS) && !o->alloc_interval &&
	    !(o->flags & LUW_ATTACH_OFFCPU)) {
		fprintf(stderr, "luaunwind-ctl: --no-cpu samples nothing "
			"without --alloc or --off-cpu\n");
		exit(1);
	}
	if (wall && (o->flags & LUW_ATTACH_NO_EVENTS)) {
		fprintf(stderr, "luaunwind-ctl: --wall records CPU samples "
			"too: not with --no-cpu or --off-cpu\n");
		exit(1);
	}
}

static int cmd_attach(int argc, char **argv)
{
	static const struct option lo[] = {
		KIND_OPTIONS,
		{ "stopped", no_argument, NULL, 's' },
		{ "no-lua", no_argument, NULL, 'L' },
		{ "no-tables", no_argument, NULL, 'T' },
		{ "freq", required_argument, NULL, 'f' },
		{ "period", required_argument, NULL, 'p' },
		{ "max-host", required_argument, NULL, 'H' },
		{ "max-lua", required_argument, NULL, 'l' },
		{ "mode", required_argument, NULL, 'm' },
		{ "event", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct luw_attach_opts o = { .sample_rate = 999 };
	struct luw_attacher *att;
	char err[1024], desc[1024];
	int c, errnum, fd, rc;
	pid_t pid;

	while ((c = next_opt(argc, argv, lo, "h")) != -1) {
		if (kind_opt(c, &o))
			continue;
		switch (c) {
		case 's':
			o.flags |= LUW_ATTACH_STOPPED;
			break;
		case 'L':
			o.no_lua = 1;
			break;
		case 'T':
			o.no_tables = 1;
			break;
		case 'f':
			o.sample_rate = num(optarg, "frequency", UINT32_MAX);
			o.flags &= ~LUW_ATTACH_PERIOD;
			break;
		case 'p':
			o.sample_rate = num(optarg, "period", UINT64_MAX >> 1);
			o.flags |= LUW_ATTACH_PERIOD;
			break;
		case 'H':
			o.max_host_frames = (uint16_t)num(optarg, "frame count",
							  UINT16_MAX);
			break;
		case 'l':
			o.max_lua_frames = (uint16_t)num(optarg, "frame count",
							 UINT16_MAX);
			break;
		case 'm':
			set_mode(&o, optarg);
			break;
		case 'e':
			if (!strcmp(optarg, "cpu-clock"))
				o.event = LUW_EVENT_CPU_CLOCK;
			else if (!strcmp(optarg, "cycles"))
				o.event = LUW_EVENT_CYCLES;
			else
				usage();
			break;
		}
	}
	if (optind != argc - 1)
		usage();
	kind_check(&o);
	pid = pid_arg(argv[optind]);
	/* Options first: a usage error says so, loaded module or not. */
	fd = open_kept(0, 1);
	rc = luw_attach_run(fd, pid, &o, &att, &errnum, err, sizeof(err));
	close(fd);
	if (rc) {
		fprintf(stderr, "luaunwind-ctl: %s%s\n", err,
			o.no_lua || errnum ? "" :
			" (--no-lua samples host stacks only)");
		return 1;
	}
	luw_attach_describe(att, desc, sizeof(desc));
	printf("attached %s\n", desc);
	luw_attach_free(att);
	return 0;
}

static void print_stats(const struct luw_stats *s)
{
	printf("samples=%llu drops=%llu faults=%llu truncated=%llu skipped=%llu"
	       " handler_calls=%llu handler_ns_median=%llu handler_ns_p99=%llu"
	       " handler_ns_mean=%llu"
	       " reads_median=%llu reads_p99=%llu reads_max=%llu read_bytes=%llu"
	       " budget_cuts=%llu ended=%llu interrupts=%llu"
	       " thread_events=%llu time_enabled=%llu time_running=%llu\n",
	       (unsigned long long)s->samples, (unsigned long long)s->drops,
	       (unsigned long long)s->faults, (unsigned long long)s->truncated,
	       (unsigned long long)s->skipped,
	       (unsigned long long)s->handler_calls,
	       (unsigned long long)luw_dev_hist_quantile(s->hist, 0.5),
	       (unsigned long long)luw_dev_hist_quantile(s->hist, 0.99),
	       (unsigned long long)(s->handler_calls ?
				    s->handler_ns / s->handler_calls : 0),
	       (unsigned long long)luw_dev_hist_quantile(s->reads_hist, 0.5),
	       (unsigned long long)luw_dev_hist_quantile(s->reads_hist, 0.99),
	       (unsigned long long)luw_dev_hist_max(s->reads_hist),
	       (unsigned long long)s->read_bytes,
	       (unsigned long long)s->budget_cuts,
	       (unsigned long long)s->ended,
	       (unsigned long long)s->interrupts,
	       (unsigned long long)s->thread_events,
	       (unsigned long long)s->time_enabled,
	       (unsigned long long)s->time_running);
	printf("vmstates");
	for (unsigned int i = 0; i < LUW_VMST_COUNT; i++)
		printf(" %s=%llu", luw_dev_vmstate_name(i),
		       (unsigned long long)s->vmstate[i]);
	printf("\n");
	/* After the two lines scripts read by number: counters, vmstates. */
	printf("alloc calls=%llu bytes=%llu samples=%llu handler_ns_mean=%llu\n",
	       (unsigned long long)s->alloc_calls,
	       (unsigned long long)s->alloc_bytes,
	       (unsigned long long)s->alloc_samples,
	       (unsigned long long)(s->alloc_calls ?
				    s->alloc_ns / s->alloc_calls : 0));
	printf("switch calls=%llu records=%llu handler_ns_mean=%llu\n",
	       (unsigned long long)s->switch_calls,
	       (unsigned long long)s->switch_records,
	       (unsigned long long)(s->switch_calls ?
				    s->switch_ns / s->switch_calls : 0));
	if (s->time_running < s->time_enabled)
		printf("multiplexed: the events counted %.1f%% of the time"
		       " their threads ran\n",
		       100.0 * (double)s->time_running / (double)s->time_enabled);
}

static int cmd_status(int fd, pid_t pid)
{
	struct luw_stats s;
	pid_t pids[LUW_MAX_TARGETS];
	int n, err;

	if (!pid) {
		n = luw_dev_list(fd, pids, LUW_MAX_TARGETS);
		if (n < 0)
			return fail("list", n);
		printf("targets=%d", n);
		for (int i = 0; i < n && i < LUW_MAX_TARGETS; i++)
			printf("%s%d", i ? "," : " pids=", (int)pids[i]);
		printf("\n");
	}
	err = luw_dev_stats(fd, pid, &s);
	if (err)
		return fail("stats", err);
	print_stats(&s);
	return 0;
}

static volatile sig_atomic_t stop_dump;

static void on_signal(int sig)
{
	(void)sig;
	stop_dump = 1;
}

static void print_record(const struct luw_dev_rec *r)
{
	const struct luw_sample *s = r->sample;

	if (r->type == LUW_REC_LOST) {
		printf("lost cpu=%u count=%u time=%llu\n", r->lost->cpu,
		       r->lost->count, (unsigned long long)r->lost->time);
		return;
	}
	if (r->type == LUW_REC_END) {
		printf("end pid=%u reason=%s time=%llu\n", r->end->pid,
		       r->end->reason == LUW_END_EXEC ? "exec" : "exit",
		       (unsigned long long)r->end->time);
		return;
	}
	printf("%s pid=%u tid=%u cpu=%u time=%llu vmstate=%s flags=0x%x",
	       r->sw ? "switch" : r->alloc ? "alloc" : "sample",
	       s->pid, s->tid, s->cpu, (unsigned long long)s->time,
	       luw_dev_vmstate_name(s->vmstate), s->flags);
	if (r->alloc)
		printf(" nsize=%llu osize=%llu kind=%u",
		       (unsigned long long)r->alloc->nsize,
		       (unsigned long long)r->alloc->osize, r->alloc->kind);
	if (r->sw)
		printf(" runtime=%llu nvcsw=%llu nivcsw=%llu syscall=%d state=%u",
		       (unsigned long long)r->sw->runtime,
		       (unsigned long long)r->sw->nvcsw,
		       (unsigned long long)r->sw->nivcsw, r->sw->syscall,
		       r->sw->state);
	printf(" host=");
	for (unsigned int i = 0; i < s->nhost; i++)
		printf("%s0x%" PRIx64, i ? "," : "", r->host[i]);
	if (s->nlua) {
		printf(" lua=");
		for (unsigned int i = 0; i < s->nlua; i++)
			printf("%s%u:0x%llx:%u:%u", i ? "," : "", r->lua[i].kind,
			       (unsigned long long)r->lua[i].addr,
			       r->lua[i].pc, r->lua[i].line);
	}
	if (s->nsplice) {
		printf(" splice=");
		for (unsigned int i = 0; i < s->nsplice; i++)
			printf("%s%u+%u:%u+%u", i ? "," : "",
			       r->splice[i].host_first, r->splice[i].host_count,
			       r->splice[i].lua_first, r->splice[i].lua_count);
	}
	printf("\n");
}

/* One record of dump: its line, or with --raw its bytes. */
static void dump_record(void *raw, const struct luw_dev_rec *r)
{
	if (*(const int *)raw)
		fwrite(r->sample ? (const void *)r->sample :
		       r->lost ? (const void *)r->lost : (const void *)r->end,
		       r->size, 1, stdout);
	else
		print_record(r);
}

static int cmd_dump(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "nonblock", no_argument, NULL, 'n' },
		{ "raw", no_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct luw_record_dump_opts o = {
		.count = -1, .duration = -1, .stop = &stop_dump,
		.record = dump_record,
	};
	char err[256];
	int c, fd, rc = 0, raw = 0;

	o.ctx = &raw;
	while ((c = next_opt(argc, argv, lo, "h")) != -1) {
		if (c == 'n')
			o.nonblock = 1;
		else if (c == 'r')
			raw = 1;
		else if (c == 'c')
			o.count = num(optarg, "count", LLONG_MAX);
		else if (c == 'd')
			o.duration = (double)num(optarg, "duration", INT_MAX);
	}
	if (optind != argc)
		usage();
	fd = open_dev(O_NONBLOCK);
	rc = luw_dev_join(fd, -1, 0);
	if (rc) {
		close(fd);
		if (rc != -ENOENT)
			return fail("dump: joining the kept session", rc);
		fprintf(stderr, "luaunwind-ctl: dump: nothing is attached "
			"(luaunwind-ctl attach PID first)\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (luw_record_dump(fd, &o, err, sizeof(err))) {
		fprintf(stderr, "luaunwind-ctl: %s\n", err);
		rc = 1;
	}
	fflush(stdout);
	if (!rc) {
		struct luw_stats st;

		/* The session's totals, as perf record ends with its own. */
		if (!luw_dev_stats(fd, 0, &st))
			fprintf(stderr, "luaunwind-ctl: dump: samples=%llu "
				"drops=%llu targets=%u ended=%llu\n",
				(unsigned long long)st.samples,
				(unsigned long long)st.drops, st.nr_targets,
				(unsigned long long)st.ended);
	}
	close(fd);
	return rc;
}

/* SIGINT or SIGTERM came: record and serve end what they do. */
static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

/* on_stop for SIGINT and SIGTERM, without SA_RESTART: a blocking call
 * returns EINTR, and the loop sees the flag. */
static void catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/*
 * record -- CMD: start CMD (record/launch.h) and attach it in fd's
 * session, before its first Lua where launch could stop it there, else
 * as soon as attach succeeds.  0 with *a and *pid; 1 after saying why
 * (the program is killed: it was to be recorded).
 */
static int launch(char **cmdv, int fd, const struct luw_attach_opts *ao,
		  struct luw_attacher **a, pid_t *pid)
{
	struct luw_launch l;
	char err[1024];
	int errnum, r, st;

	if (luw_launch_start(cmdv, &l, err, sizeof(err))) {
		fprintf(stderr, "luaunwind-ctl: %s\n", err);
		return 1;
	}
	*pid = l.pid;
	if (l.at_lua) {
		r = luw_attach_run(fd, l.pid, ao, a, &errnum, err, sizeof(err));
		luw_launch_release(&l);
	} else {
		/* Polled: the first tries may come before its first
		 * lua_State. */
		fprintf(stderr, "luaunwind-ctl: %s: its LuaJIT exports no "
			"entry to stop at (lua_call, lua_pcall, lua_cpcall, "
			"lua_resume): attaching as soon as it can be, its "
			"first Lua may be missed\n", cmdv[0]);
		luw_launch_release(&l);
		for (int i = 0;; i++) {
			r = luw_attach_run(fd, l.pid, ao, a, &errnum, err,
					   sizeof(err));
			if (!r || i == 6000 || waitpid(l.pid, &st, WNOHANG))
				break;
			usleep(10000);
		}
	}
	if (r) {
		fprintf(stderr, "luaunwind-ctl: %s (pid %d): %s; killed\n",
			cmdv[0], (int)l.pid, err);
		kill(l.pid, SIGKILL);
		waitpid(l.pid, &st, 0);
		return 1;
	}
	luw_attach_describe(*a, err, sizeof(err));
	fprintf(stderr, "luaunwind-ctl: attached %s%s%s\n", err,
		l.at_lua ? ", before its first Lua, at " : "",
		l.at_lua ? l.entry : "");
	return 0;
}

/*
 * The exit of record -- CMD's program, said as perf record says it; a
 * program the recording ended before (--duration, a signal) runs on.
 */
static void reap(const char *cmd, pid_t pid)
{
	int st;
	pid_t r = waitpid(pid, &st, WNOHANG);

	if (!r)
		fprintf(stderr, "luaunwind-ctl: %s (pid %d) runs on, no "
			"longer recorded\n", cmd, (int)pid);
	if (r != pid)
		return;
	if (WIFEXITED(st) && WEXITSTATUS(st))
		fprintf(stderr, "luaunwind-ctl: %s exited with status %d\n",
			cmd, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		fprintf(stderr, "luaunwind-ctl: %s killed by signal %d\n",
			cmd, WTERMSIG(st));
}

/* The attachers a following record has made so far (record.h, follow). */
static unsigned int follow_natt;

static unsigned int follow_tick(void *ctx, int fd, struct luw_attacher **att,
				unsigned int natt)
{
	follow_natt = luw_follow_scan(ctx, fd, att, natt, LUW_MAX_TARGETS);
	return follow_natt;
}

/*
 * --all, --exe, --comm select processes by what they are; --children
 * the -p processes and their descendants.  Into f's selection; 0, or 1
 * after saying what is wrong.
 */
static int follow_check(struct luw_follow *f, int all, int children,
			const pid_t *pids, unsigned int npid)
{
	if (children && !npid) {
		fprintf(stderr, "luaunwind-ctl: --children needs -p PID\n");
		return 1;
	}
	if (children && (all || f->sel.exe || f->sel.comm)) {
		fprintf(stderr, "luaunwind-ctl: --children is for -p alone, "
			"not with --all, --exe or --comm\n");
		return 1;
	}
	if (npid && !children && (all || f->sel.exe || f->sel.comm)) {
		fprintf(stderr, "luaunwind-ctl: -p names processes; --all, "
			"--exe and --comm select them: one or the other\n");
		return 1;
	}
	if (all && (f->sel.exe || f->sel.comm)) {
		fprintf(stderr, "luaunwind-ctl: --all selects every LuaJIT "
			"process: not with --exe or --comm\n");
		return 1;
	}
	if (f->sel.exe && access(f->sel.exe, F_OK)) {
		fprintf(stderr, "luaunwind-ctl: --exe %s: %s\n", f->sel.exe,
			strerror(errno));
		return 1;
	}
	if (children) {
		f->sel.roots = pids;
		f->sel.nroots = npid;
	}
	return 0;
}

/*
 * record: the loop is record.c; this parses options and says what went on.
 * Several -p record their processes together, into one file (e.g. every
 * worker of one nginx master): when each is in the kept session already,
 * that session is recorded as it is and they stay attached; otherwise
 * each is attached in a session of this file's own, and all of them are
 * detached when the record ends.  The file names each process's frames
 * against that process.  A target that cannot be attached ends the
 * record before it starts.
 */
/* What a finished recording holds, a line on stderr. */
static void say_recorded(const char *path, const struct luw_rec_result *res,
			 const struct luw_attach_opts *ao)
{
	fprintf(stderr, "luaunwind-ctl: %s: %llu samples, ", path,
		(unsigned long long)res->records);
	if (ao->alloc_interval)
		fprintf(stderr, "%llu allocation samples, ",
			(unsigned long long)res->allocs);
	if (res->switches)
		fprintf(stderr, "%llu switches, ",
			(unsigned long long)res->switches);
	fprintf(stderr, "%llu lost, %.1f s%s\n", (unsigned long long)res->lost,
		res->seconds, res->targets_gone ? " (every target exited)" : "");
	if (res->unnamed)
		fprintf(stderr, "luaunwind-ctl: %u process%s exited before "
			"%s could be read: %s samples left out\n",
			res->unnamed, res->unnamed == 1 ? "" : "es",
			res->unnamed == 1 ? "its maps" : "their maps",
			res->unnamed == 1 ? "its" : "their");
}

/*
 * record --every S --dir DIR [--keep N]: one whole file an interval
 * (record/rotate.h) until o->duration in all, a signal, or every target
 * gone.  The session, its targets and what follows them go on from one
 * file to the next; each file names what its own samples use.  0, or 1
 * after saying why.
 */
static int record_every(int fd, struct luw_rec_opts *o, struct luw_rotate *r,
			double every, const struct luw_attach_opts *ao)
{
	double left = o->duration;
	struct luw_rec_result res;
	char err[1024];

	for (;;) {
		if (luw_rotate_next(r, err, sizeof(err)))
			break;
		o->path = r->part;
		o->duration = left > 0 && left < every ? left : every;
		if (luw_record(fd, o, &res, err, sizeof(err)) ||
		    luw_rotate_done(r, err, sizeof(err)))
			break;
		say_recorded(r->final, &res, ao);
		if (left > 0 && (left -= o->duration) <= 0)
			return 0;
		if (stopping || res.targets_gone)
			return 0;
		/* The next file counts from its own first read. */
		o->fresh = 0;
		if (o->follow)
			o->natt = follow_natt;
	}
	fprintf(stderr, "luaunwind-ctl: record: %s\n", err);
	return 1;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "freq", required_argument, NULL, 'f' },
		{ "mode", required_argument, NULL, 'm' },
		KIND_OPTIONS,
		{ "all", no_argument, NULL, 'a' },
		{ "exe", required_argument, NULL, 'e' },
		{ "comm", required_argument, NULL, 'c' },
		{ "children", no_argument, NULL, 'k' },
		{ "every", required_argument, NULL, 'E' },
		{ "dir", required_argument, NULL, 'D' },
		{ "keep", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct luw_rec_opts o = { .stop = &stopping };
	struct luw_rotate rot = { 0 };
	long long every = 0;
	struct luw_follow fw = { .log = stderr };
	int all = 0, children = 0;
	char **cmdv = NULL;
	struct luw_attach_opts ao = { .sample_rate = 999 };
	struct luw_rec_result res;
	struct luw_attacher *att[LUW_MAX_TARGETS];
	char err[1024];
	pid_t pids[LUW_MAX_TARGETS];
	unsigned int npid = 0, natt = 0, kept = 0;
	int c, fd, rc, errnum = 0, owned;

	while ((c = next_opt(argc, argv, lo, "hp:o:d:")) != -1) {
		if (kind_opt(c, &ao))
			continue;
		if (c == 'p') {
			pid_t pid = pid_arg(optarg);

			if (!pid)
				usage();
			for (unsigned int j = 0; j < npid; j++)
				if (pids[j] == pid) {
					fprintf(stderr, "luaunwind-ctl: pid %d given twice\n",
						(int)pid);
					return 1;
				}
			if (npid == LUW_MAX_TARGETS) {
				fprintf(stderr, "luaunwind-ctl: at most %d processes\n",
					LUW_MAX_TARGETS);
				return 1;
			}
			pids[npid++] = pid;
		} else if (c == 'o') {
			o.path = optarg;
		} else if (c == 'd') {
			o.duration = (double)num(optarg, "duration", INT_MAX);
		} else if (c == 'f') {
			ao.sample_rate = num(optarg, "frequency", UINT32_MAX);
		} else if (c == 'm') {
			set_mode(&ao, optarg);
		} else if (c == 'a') {
			all = 1;
		} else if (c == 'e') {
			fw.sel.exe = optarg;
		} else if (c == 'c') {
			fw.sel.comm = optarg;
		} else if (c == 'k') {
			children = 1;
		} else if (c == 'E') {
			every = num(optarg, "every", INT_MAX);
		} else if (c == 'D') {
			rot.dir = optarg;
		} else if (c == 'K') {
			rot.keep = (unsigned int)num(optarg, "keep", INT_MAX);
		}
	}
	if (optind < argc) {
		/* -- CMD ARGS: getopt stopped at the "--". */
		if (strcmp(argv[optind - 1], "--"))
			usage();
		cmdv = argv + optind;
	}
	if (every ? o.path || !rot.dir : !o.path || rot.dir || rot.keep) {
		if (every || rot.dir || rot.keep)
			fprintf(stderr, "luaunwind-ctl: --every S --dir DIR "
				"[--keep N] write a file an interval, instead "
				"of -o FILE\n");
		usage();
	}
	kind_check(&ao);
	if (follow_check(&fw, all, children, pids, npid))
		return 1;
	if (cmdv && (npid || all || fw.sel.exe || fw.sel.comm)) {
		fprintf(stderr, "luaunwind-ctl: -- CMD starts the process to "
			"record: not with -p, --all, --exe or --comm\n");
		return 1;
	}
	if (cmdv) {
		fd = open_dev(0);
		if (launch(cmdv, fd, &ao, &att[0], &pids[0])) {
			close(fd);
			return 1;
		}
		natt = npid = 1;
		owned = 1;
		goto record;
	}
	for (unsigned int i = 0; i < npid; i++)
		if (kill(pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "luaunwind-ctl: no process %d\n",
				(int)pids[i]);
			return 1;
		}
	fd = open_kept(0, 0);
	for (unsigned int i = 0; i < npid; i++)
		kept += luw_dev_has(fd, pids[i]);
	/* All in the kept session (luaunwind-ctl attach): record them as
	 * they are, and leave them attached.  Else attach every one in a
	 * session of this file's own. */
	owned = (npid && kept < npid) || fw.sel.exe || fw.sel.comm || all ||
		children;
	if ((ao.alloc_interval || (ao.flags & LUW_ATTACH_OFFCPU)) && !owned) {
		fprintf(stderr, "luaunwind-ctl: --alloc, --off-cpu and --wall "
			"are for the processes this record attaches: name them "
			"with -p (and not all attached already)\n");
		close(fd);
		return 1;
	}
	if (owned) {
		close(fd);
		fd = open_dev(0);
	}
	/* With --children the -p processes are parents, attached below
	 * with their children if they run LuaJIT. */
	for (unsigned int i = 0; i < npid && !children; i++) {
		int r = owned ? luw_attach_run(fd, pids[i], &ao, &att[natt],
					       &errnum, err, sizeof(err)) :
				luw_attach_open(pids[i], 1, &att[natt], err,
					     sizeof(err));

		if (r) {
			/* Closing fd ends the session, and every target
			 * attached in it so far. */
			fprintf(stderr, "luaunwind-ctl: %s\n", err);
			while (natt)
				luw_attach_free(att[--natt]);
			close(fd);
			return 1;
		}
		if (owned) {
			char desc[1024];

			luw_attach_describe(att[natt], desc, sizeof(desc));
			fprintf(stderr, "luaunwind-ctl: attached %s\n", desc);
		}
		natt++;
	}
	if (all || fw.sel.exe || fw.sel.comm || children) {
		/* What the selection selects now, and later as it comes. */
		fw.ao = &ao;
		natt = luw_follow_scan(&fw, fd, att, natt, LUW_MAX_TARGETS);
		follow_natt = natt;
		o.follow = follow_tick;
		o.follow_ctx = &fw;
		if (children) {
			o.roots = pids;
			o.nroots = npid;
		}
		if (!natt)
			fprintf(stderr, "luaunwind-ctl: no LuaJIT process "
				"selected yet: waiting for one\n");
	}
record:
	if (npid || o.follow) {
		o.att = att;
		o.natt = natt;
		o.freq = (uint32_t)ao.sample_rate;
		o.fresh = owned;
		o.offcpu = !!(ao.flags & LUW_ATTACH_OFFCPU);
	}
	catch_stop();
	o.progress = isatty(STDERR_FILENO) ? stderr : NULL;
	if (every)
		rc = record_every(fd, &o, &rot, (double)every, &ao);
	else if (!(rc = luw_record(fd, &o, &res, err, sizeof(err))))
		say_recorded(o.path, &res, &ao);
	if (o.follow)
		natt = follow_natt;
	for (unsigned int i = 0; i < natt; i++) {
		if (owned)
			luw_dev_detach(fd, luw_attach_pid(att[i]));
		luw_attach_free(att[i]);
	}
	luw_follow_free(&fw);
	close(fd);
	if (cmdv)
		reap(cmdv[0], pids[0]);
	if (rc && !every) {
		fprintf(stderr, "luaunwind-ctl: record: %s\n", err);
		return 1;
	}
	return rc ? 1 : 0;
}

/*
 * heap: a heap snapshot of one process into FILE (heap/heaptake.h), from
 * userspace: no module needed.  The target's threads are stopped for the
 * walk unless --live.
 */
static int cmd_heap(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "live", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct luw_heapwalk_opts o = { 0 };
	struct luw_heapsnap s;
	const char *path = NULL;
	uint64_t objects = 0, bytes = 0, total = 0, unreached = 0;
	char err[1024];
	pid_t pid = 0;
	FILE *f;
	int c, rc;

	while ((c = next_opt(argc, argv, lo, "hp:o:")) != -1) {
		if (c == 'p')
			pid = pid_arg(optarg);
		else if (c == 'o')
			path = optarg;
		else if (c == 'l')
			o.live = 1;
	}
	if (!pid || !path || optind != argc)
		usage();
	o.progress = stderr;
	if (luw_heaptake_run(pid, &o, &s, err, sizeof(err))) {
		fprintf(stderr, "luaunwind-ctl: heap of process %d: %s\n",
			(int)pid, err);
		luw_heapsnap_free(&s);
		return 1;
	}
	f = fopen(path, "wb");
	rc = !f || luw_heapsnap_write(&s, f);
	if (f && fclose(f))
		rc = 1;
	if (rc) {
		fprintf(stderr, "luaunwind-ctl: %s: %s\n", path, strerror(errno));
		luw_heapsnap_free(&s);
		return 1;
	}
	for (uint32_t i = 0; i < s.nunis; i++) {
		objects += s.unis[i].objects;
		bytes += s.unis[i].bytes + s.unis[i].internal;
		total += s.unis[i].gc_total;
		unreached += s.unis[i].unreached_bytes;
	}
	fprintf(stderr, "luaunwind-ctl: %s: heap of %s-%d, %u universe%s: %llu "
		"objects, %llu bytes with the VM's own (%llu unreachable); "
		"gc.total %llu; ", path, s.comm, (int)pid, s.nunis,
		s.nunis == 1 ? "" : "s", (unsigned long long)objects,
		(unsigned long long)bytes, (unsigned long long)unreached,
		(unsigned long long)total);
	if (o.live)
		fprintf(stderr, "walked live in %.1f ms\n", s.walk_ns / 1e6);
	else
		fprintf(stderr, "paused %.1f ms\n", s.pause_ns / 1e6);
	luw_heapsnap_free(&s);
	return 0;
}

static int cmd_serve(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 't' },
		{ "max-seconds", required_argument, NULL, 'm' },
		{ "freq", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct luw_serve_opts o = { .listen = "127.0.0.1:6060",
				    .max_seconds = 60, .freq = 99,
				    .log = stderr };
	char dir[] = "/tmp/luaunwind-serve.XXXXXX", err[1024];
	int c, rc;

	while ((c = next_opt(argc, argv, lo, "h")) != -1) {
		if (c == 'l')
			o.listen = optarg;
		else if (c == 't')
			o.token_file = optarg;
		else if (c == 'm')
			o.max_seconds = (double)num(optarg, "max-seconds",
						    86400);
		else if (c == 'F')
			o.freq = (uint32_t)num(optarg, "frequency",
					       UINT32_MAX);
	}
	if (optind != argc)
		usage();
	/* The recordings in progress, in a directory of this server's. */
	if (!mkdtemp(dir)) {
		fprintf(stderr, "luaunwind-ctl: serve: %s: %s\n", dir,
			strerror(errno));
		return 1;
	}
	o.dir = dir;
	catch_stop();
	/* A client gone mid-answer is its own business. */
	signal(SIGPIPE, SIG_IGN);
	rc = luw_serve_run(&o, &stopping, err, sizeof(err));
	rmdir(dir);
	if (rc) {
		fprintf(stderr, "luaunwind-ctl: serve: %s\n", err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int fd, rc;
	pid_t pid;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_text, stdout);
		return 0;
	}
	cmd = argv[1];
	set_usage(cmd);
	/* Each command parses its own options: argv[0] is its name. */
	argc--;
	argv++;
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc, argv);
	if (!strcmp(cmd, "record"))
		return cmd_record(argc, argv);
	if (!strcmp(cmd, "attach"))
		return cmd_attach(argc, argv);
	if (!strcmp(cmd, "heap"))
		return cmd_heap(argc, argv);
	if (!strcmp(cmd, "serve"))
		return cmd_serve(argc, argv);
	/* A usage error is one whether or not the module is loaded. */
	no_opts(argc, argv);
	argc -= optind;
	argv += optind;
	if (!(!strcmp(cmd, "version") && argc == 0) &&
	    !(!strcmp(cmd, "detach") && argc == 1) &&
	    !((!strcmp(cmd, "status") || !strcmp(cmd, "start") ||
	       !strcmp(cmd, "stop")) && argc <= 1))
		usage();

	pid = argc > 0 ? pid_arg(argv[0]) : 0;

	fd = strcmp(cmd, "version") ? open_kept(0, 0) : open_dev_as(0, 0);
	if (!strcmp(cmd, "version")) {
		rc = cmd_version(fd);
	} else if (!strcmp(cmd, "detach")) {
		int err = luw_dev_detach(fd, pid);

		rc = err ? fail("detach", err) : 0;
	} else if (!strcmp(cmd, "start") || !strcmp(cmd, "stop")) {
		int err = cmd[2] == 'a' ? luw_dev_start(fd, pid) :
					  luw_dev_stop(fd, pid);

		rc = err ? fail(cmd, err) : 0;
	} else {
		rc = cmd_status(fd, pid);
	}
	close(fd);
	return rc;
}
