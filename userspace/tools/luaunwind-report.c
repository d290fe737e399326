/*
 * luaunwind-report: decode a Tarantool sysprof or memprof stream and
 * report it.  The work is in the library (sysprof_report.h,
 * memprof_report.h); this is option parsing and output.
 *
 * Built twice (userspace/CMakeLists.txt).  luaunwind-report itself, with
 * LUW_REPORT_LEAN, links only the stream readers: the .luw reader's
 * libraries (libdw, libelf, capstone, libstdc++) cost ~80k relocations,
 * ~400 page faults and ~2 ms of CPU at every start, as much as decoding a
 * small memprof stream.  A .luw record or a raw capture (--pid) is handed,
 * with the same arguments, to luaunwind-report-luw: this same source built
 * whole, installed in libexec/luaunwind/ (or next to the report in a build
 * tree).  Input already read from a pipe reaches it through a memfd
 * (util/handoff.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cli.h"
#include "util/handoff.h"
#include "output/flamegraph.h"
#include "streams/memprof_report.h"
#include "output/pprof.h"
#include "streams/reader.h"
#include "output/stacks.h"
#include "streams/symtab.h"
#include "streams/sysprof_report.h"
#ifndef LUW_REPORT_LEAN
#include "heap/heapreport.h"
#include "heap/heapsnap.h"
#include "record/file.h"
#include "record/report.h"
#include "record/symbolize.h"
#endif

#include "luaunwind_file.h"
#include "luaunwind_heap.h"

/* A .luw record's first bytes (luw_file_is_luw(), without its library). */
static int is_luw(const void *p, size_t n)
{
	return n >= 4 && !memcmp(p, LUWF_MAGIC, 4);
}

/* A heap snapshot's (luw_heapsnap_is(), without its library). */
static int is_heap(const void *p, size_t n)
{
	return n >= 4 && !memcmp(p, LUWH_MAGIC, 4);
}

/* The whole program, which the lean one hands .luw input to. */
#define FULL_NAME "luaunwind-report-luw"
/*
 * The input's descriptor, positioned at its first byte, when the lean
 * program handed it over (a pipe's bytes already read are in a memfd).
 */
#define FD_ENV "LUAUNWIND_REPORT_INPUT_FD"

#define PROG "luaunwind-report"

static const char usage[] =
	"usage: " PROG " [OPTION] FILE|-\n"
	"       " PROG " [OPTION] --diff OLD NEW\n"
	"Decode a sysprof or memprof stream written by Tarantool's LuaJIT,\n"
	"a luaunwind record (.luw) or a heap snapshot (luaunwind-ctl heap)\n"
	"(the kind is recognised from the stream itself).\n"
	"\n"
	"sysprof streams:\n"
	"  --folded      merged stacks, root first, \"a;b;c COUNT\" per line\n"
	"                (flamegraph.pl input; the default)\n"
	"  --compat      the lines of luajit-parse-sysprof (\"stack;<TAB>COUNT\")\n"
	"  --vmstates    samples per VM state\n"
	"  --svg OUT     the merged stacks as an interactive flame graph in OUT\n"
	"  --top N       the N heaviest stacks and frames with most self time\n"
	"  --pprof OUT   gzipped profile.proto (go tool pprof) into OUT\n"
	"memprof streams:\n"
	"  (default)     the report of luajit-parse-memprof\n"
	"  --leak-only   only its HEAP SUMMARY\n"
	"luaunwind record files (.luw, from luaunwind-ctl record):\n"
	"  --folded, --svg OUT, --vmstates, --top N, --pprof OUT   as for sysprof\n"
	"  --vm-frames   keep LuaJIT's own VM frames (folded away by default)\n"
	"  --by-pid      root each stack at its process, \"comm-PID\" (a record\n"
	"                of several -p)\n"
	"  --by-tid      root each stack at its thread, \"comm-PID/TID\"\n"
	"  --alloc       the allocation samples (record --alloc), each stack\n"
	"                weighted by the bytes it allocated, estimated\n"
	"  --off-cpu[=blocked|preempted]  the time threads spent off the CPU\n"
	"                (record --off-cpu or --wall), in ns, under the stack\n"
	"                they left from and a last frame: \"[blocked: SYSCALL]\"\n"
	"                or \"[preempted]\"; either kind alone with its name\n"
	"  --wall        running (CPU samples) and off-CPU time side by side,\n"
	"                in ns (record --wall)\n"
	"heap snapshots:\n"
	"  (default)     --top 20\n"
	"  --top N       by type, the N heaviest paths, the N largest objects\n"
	"  --folded, --svg OUT   reference paths weighted by bytes\n"
	"  --pprof OUT   inuse_objects and inuse_space\n"
	"  --diff OLD NEW        what grew from OLD to NEW, with the above\n"
	"  --pid PID     FILE is a raw capture (cat /dev/luaunwind > FILE):\n"
	"                name its frames against the live process PID\n"
	"\n"
	"  --help        show this help\n"
	"\n"
	"Exit status: 0 ok, 1 usage or I/O error, 2 bad or truncated stream\n"
	"(what was decoded is reported first).\n";

enum mode { M_DEFAULT, M_FOLDED, M_COMPAT, M_VMSTATES, M_LEAK, M_SVG, M_TOP,
	    M_PPROF };

static const char *svg_path;
static const char *pprof_path;
static size_t top_n;
static int diff;
static int vm_frames;
static int by_pid;
static int alloc;
/* Which off-CPU time: LUW_REPORT_OFF_* bits (record/report.h, which the
 * lean build does not include: OFF_* here), 0 none. */
#define OFF_BLOCKED	1
#define OFF_PREEMPTED	2
static int offcpu;
static int wall;
static long raw_pid;

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '" PROG " --help'.\n");
	return 1;
}

static int add_sym(void *ctx, const struct luw_sym *s)
{
	return !s->final && luw_symtab_add(ctx, s) ? 1 : 0;
}

static int stream_error(const char *file, const struct luw_reader *r)
{
	char msg[256];

	luw_reader_strerror(r, msg, sizeof(msg));
	fprintf(stderr, PROG ": %s: %s\n", file, msg);
	return 2;
}

/* The status of a decoded stream: out of memory (1), a bad or truncated
 * stream (2), else the output's. */
static int decoded(const char *file, const struct luw_reader *r, int rc, int oom,
		   int status)
{
	if (oom) {
		fprintf(stderr, PROG ": %s: out of memory\n", file);
		return 1;
	}
	if (rc && luw_reader_failed(r))
		return stream_error(file, r);
	return status;
}

static int finish_output(const char *file, int wrote_ok)
{
	if (!wrote_ok || fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, PROG ": %s: writing the report: %s\n", file,
			strerror(errno ? errno : EIO));
		return 1;
	}
	return 0;
}

static int write_svg(const char *file, const struct luw_stacks *stacks)
{
	FILE *svg = fopen(svg_path, "w");
	struct luw_flamegraph_opts o;

	luw_flamegraph_defaults(&o);
	o.subtitle = file;
	if (alloc) {
		o.title = "Allocations";
		o.count_name = "bytes";
	} else if (wall) {
		o.title = "Wall-clock time: on and off the CPU";
		o.count_name = "ns";
	} else if (offcpu) {
		o.title = "Off-CPU time";
		o.count_name = "ns";
	}
	if (!svg || luw_flamegraph_write(svg, stacks, &o) || fclose(svg)) {
		fprintf(stderr, PROG ": %s: %s\n", svg_path, strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * Merged stacks out as the mode asks: a flame graph, pprof (po gives the
 * sampling period and times where the input knows them), the heaviest
 * stacks, or folded text.
 */
static int write_stacks(const char *file, const struct luw_stacks *stacks,
			enum mode mode, const struct luw_pprof_opts *po)
{
	FILE *out;

	switch (mode) {
	case M_SVG:
		return write_svg(file, stacks);
	case M_PPROF:
		out = fopen(pprof_path, "wb");
		if (!out || luw_pprof_write(out, stacks, po) || fclose(out)) {
			fprintf(stderr, PROG ": %s: %s\n", pprof_path,
				strerror(errno));
			return 1;
		}
		return 0;
	case M_TOP:
		return finish_output(file, !luw_stacks_write_top(stacks, stdout,
								 top_n,
								 alloc ? "bytes" :
								 offcpu ? "ns" : NULL));
	default:
		return finish_output(file,
				     !luw_stacks_write_folded(stacks, stdout));
	}
}

static int report_sysprof(const char *file, struct luw_reader *r,
			  struct luw_symtab *st, enum mode mode)
{
	enum luw_sysprof_report_mode m = mode == M_COMPAT     ? LUW_SPR_COMPAT
			      : mode == M_VMSTATES ? LUW_SPR_VMSTATES
						   : LUW_SPR_FOLDED;
	struct luw_stacks *stacks = NULL;
	struct luw_sysprof_report *rep;
	int rc, status = 0;

	if (m == LUW_SPR_FOLDED && !(stacks = luw_stacks_new()))
		goto oom;
	rep = luw_sysprof_report_new(m, st, stacks);
	if (!rep) {
		luw_stacks_free(stacks);
		goto oom;
	}
	rc = luw_sysprof_decode_body(r, &luw_sysprof_report_ops, rep);
	if (m == LUW_SPR_FOLDED) {
		/* The stream names no sampling interval: pprof gets none. */
		struct luw_pprof_opts po = { 0 };

		status = write_stacks(file, stacks, mode, &po);
	} else {
		status = finish_output(file, !luw_sysprof_report_write(rep, stdout));
	}
	status = decoded(file, r, rc, luw_sysprof_report_oom(rep) || rc == -2, status);
	luw_sysprof_report_free(rep);
	luw_stacks_free(stacks);
	return status;
oom:
	fprintf(stderr, PROG ": %s: out of memory\n", file);
	return 1;
}

static int report_memprof(const char *file, struct luw_reader *r,
			  struct luw_symtab *st, enum mode mode)
{
	struct luw_memprof_report *rep = luw_memprof_report_new(st);
	int rc, status;

	if (!rep) {
		fprintf(stderr, PROG ": %s: out of memory\n", file);
		return 1;
	}
	rc = luw_memprof_report_decode_body(r, rep);
	status = finish_output(file, !luw_memprof_report_write(rep, mode == M_LEAK,
						   stdout));
	status = decoded(file, r, rc, luw_memprof_report_oom(rep), status);
	luw_memprof_report_free(rep);
	return status;
}

#ifdef LUW_REPORT_LEAN
/*
 * Run the whole program on the same arguments (a .luw record, a raw
 * capture): fd >= 0 is the input, n bytes of it already read into head.
 * Returns only on failure, with the exit status.
 */
static int run_full(char **argv, const char *file, int fd, const void *head,
		    size_t n)
{
	char path[PATH_MAX];

	if (luw_handoff_path(FULL_NAME, path, sizeof(path))) {
		fprintf(stderr, PROG ": %s: record files are read by %s: %s\n",
			file, path, strerror(errno));
		return 1;
	}
	if (fd >= 0 && luw_handoff_pass(FD_ENV, fd, head, n)) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
		return 1;
	}
	execv(path, argv);
	fprintf(stderr, PROG ": %s: record files are read by %s: %s\n", file,
		path, strerror(errno));
	return 1;
}
#else
_Static_assert(OFF_BLOCKED == LUW_REPORT_OFF_BLOCKED &&
	       OFF_PREEMPTED == LUW_REPORT_OFF_PREEMPTED, "report.h's bits");

/* A .luw record file (or a raw capture turned into one), all in f. */
static int report_luw(const char *file, struct luw_file *f, enum mode mode)
{
	struct luw_report_opts o = { .keep_vm = vm_frames, .by_pid = by_pid,
				     .alloc = alloc, .offcpu = offcpu,
				     .wall = wall };
	struct luw_report_result res;
	struct luw_stacks *stacks = luw_stacks_new();
	char err[512];
	int rc, status = 0;

	if (!stacks) {
		fprintf(stderr, PROG ": %s: out of memory\n", file);
		return 1;
	}
	rc = luw_report_run(f, &o, stacks, &res, err, sizeof(err));
	if (rc == 1) {
		fprintf(stderr, PROG ": %s: %s\n", file, err);
		luw_stacks_free(stacks);
		return 1;
	}
	if (mode == M_VMSTATES) {
		status = finish_output(file,
				       !luw_report_write_vmstates(&res, stdout));
	} else if (mode == M_COMPAT || mode == M_LEAK) {
		status = usage_error("%s", "record files take --folded, --svg, "
				     "--vmstates, --top, --pprof, --vm-frames");
	} else {
		struct luw_pprof_opts po;

		luw_report_pprof_opts(&o, &res, &po);
		status = write_stacks(file, stacks, mode, &po);
	}
	if (alloc && rc != 1) {
		/* The estimate beside the probes' exact count, as a check
		 * of the scaling (and of a sampling rate): they agree
		 * within sampling error. */
		fprintf(stderr, PROG ": %s: %llu allocation records: an "
			"estimated %.0f bytes in %.0f allocations", file,
			(unsigned long long)res.records, res.alloc_bytes,
			res.alloc_objects);
		if (res.probe_counted)
			fprintf(stderr, "; the probes counted %llu bytes in "
				"%llu calls, frees included",
				(unsigned long long)res.probe_bytes,
				(unsigned long long)res.probe_calls);
		fputc('\n', stderr);
	}
	if (offcpu && rc != 1) {
		/* What the pairing found, shown or not: the user can tell
		 * time the report left out from time there was none of. */
		fprintf(stderr, PROG ": %s: %llu switch records: %.3f s "
			"blocked, %.3f s preempted, %.3f s with switches not "
			"recorded", file, (unsigned long long)res.switches,
			res.off_ns[LUW_OFF_BLOCKED] / 1e9,
			res.off_ns[LUW_OFF_PREEMPTED] / 1e9,
			res.off_ns[LUW_OFF_UNKNOWN] / 1e9);
		fprintf(stderr, "; the threads ran %.3f s between their "
			"switches (the scheduler's count)",
			res.pairs.run_ns / 1e9);
		if (wall)
			fprintf(stderr, "; %.3f s on the CPU (its runs, placed by the samples)",
				res.cpu_ns / 1e9);
		if (res.pairs.open || res.pairs.bad)
			fprintf(stderr, "; %llu intervals without an end, "
				"%llu inconsistent, left out",
				(unsigned long long)res.pairs.open,
				(unsigned long long)res.pairs.bad);
		fputc('\n', stderr);
	}
	if (res.bad)
		fprintf(stderr, PROG ": %s: %llu records skipped (splices that "
			"break the rule, or allocations of a process with no "
			"interval)\n",
			file, (unsigned long long)res.bad);
	if (rc == 2) {
		fprintf(stderr, PROG ": %s: %s\n", file, err);
		status = 2;
	}
	luw_stacks_free(stacks);
	return status;
}

/* A heap snapshot file read whole: 0, 2 when cut short (reported
 * anyway), 1 when it could not be read at all. */
static int heap_load(const char *file, int fd, const void *head, size_t n,
		     struct luw_heapsnap *s)
{
	struct luw_file f;
	char err[256];
	int rc;

	if (luw_file_read_rest(fd, head, n, &f)) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
		return 1;
	}
	rc = luw_heapsnap_read(s, f.data, f.size, err, sizeof(err));
	luw_file_close(&f);
	if (rc)
		fprintf(stderr, PROG ": %s: %s\n", file, err);
	return rc < 0 ? 1 : rc ? 2 : 0;
}

/* A heap snapshot, or with --diff the growth from old to it. */
static int report_heap(const char *file, int fd, const void *head, size_t n,
		       const char *old_file, enum mode mode)
{
	struct luw_heapsnap s, old;
	struct luw_stacks *stacks = NULL;
	struct luw_pprof_opts po = { .count_type = "inuse_space",
				     .count_unit = "bytes",
				     .aux_type = "inuse_objects",
				     .aux_unit = "count" };
	int st = heap_load(file, fd, head, n, &s), st_old = 0, rc = 0;

	memset(&old, 0, sizeof(old));
	if (st == 1)
		goto out;
	if (old_file) {
		int ofd = open(old_file, O_RDONLY);

		if (ofd < 0) {
			fprintf(stderr, PROG ": %s: %s\n", old_file, strerror(errno));
			st = 1;
			goto out;
		}
		st_old = heap_load(old_file, ofd, NULL, 0, &old);
		close(ofd);
		if (st_old == 1) {
			st = 1;
			goto out;
		}
	}
	if (mode == M_DEFAULT || mode == M_TOP) {
		size_t k = mode == M_TOP ? top_n : 20;

		rc = old_file ? luw_heapreport_diff(&old, &s, NULL, stdout, k) :
				luw_heapreport_top(&s, stdout, k);
		rc = finish_output(file, !rc);
	} else if (mode == M_FOLDED || mode == M_SVG || mode == M_PPROF) {
		stacks = luw_stacks_new();
		if (!stacks ||
		    (old_file ? luw_heapreport_diff(&old, &s, stacks, NULL, 0) :
				luw_heapreport_stacks(&s, stacks))) {
			fprintf(stderr, PROG ": %s: %s\n", file, errno == EOVERFLOW ?
				"its byte counts add up past 2^64 (a damaged file)" :
				strerror(errno));
			rc = 1;
		} else if (mode == M_SVG) {
			FILE *svg = fopen(svg_path, "w");
			struct luw_flamegraph_opts o;

			luw_flamegraph_defaults(&o);
			o.title = old_file ? "Heap growth" : "Heap";
			o.subtitle = file;
			o.count_name = "bytes";
			if (!svg || luw_flamegraph_write(svg, stacks, &o) ||
			    fclose(svg)) {
				fprintf(stderr, PROG ": %s: %s\n", svg_path,
					strerror(errno));
				rc = 1;
			}
		} else {
			po.time_ns = (int64_t)s.time_ns;
			rc = write_stacks(file, stacks, mode, &po);
		}
	} else {
		rc = usage_error("%s", "heap snapshots take --top, --folded, "
				 "--svg, --pprof and --diff");
	}
	if (!st)
		st = st_old;
	if (rc)
		st = rc;
out:
	luw_stacks_free(stacks);
	luw_heapsnap_free(&s);
	luw_heapsnap_free(&old);
	return st;
}

/* A .luw record file, the n bytes at head of it already read from fd. */
static int report_luw_fd(const char *file, int fd, const void *head, size_t n,
			 enum mode mode)
{
	struct luw_file f;
	int status;

	if (luw_file_read_rest(fd, head, n, &f)) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
		return 1;
	}
	status = report_luw(file, &f, mode);
	luw_file_close(&f);
	return status;
}

static int report_raw(const char *file, int fd, enum mode mode)
{
	struct luw_file raw, luw;
	uint8_t *mem;
	size_t len;
	char err[1024];
	int rc, status;

	if (luw_file_read_fd(fd, &raw)) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
		return 1;
	}
	rc = luw_symbolize_raw((pid_t)raw_pid, raw.data, raw.size, &mem, &len, err,
			  sizeof(err));
	luw_file_close(&raw);
	if (rc < 0) {
		fprintf(stderr, PROG ": %s: %s\n", file, err);
		return 2;
	}
	if (rc > 0)
		fprintf(stderr, PROG ": pid %ld: %s; naming host frames only\n",
			raw_pid, err);
	luw_file_from_mem(&luw, mem, len);
	status = report_luw(file, &luw, mode);
	luw_file_close(&luw);
	return status;
}

#endif

enum { OPT_FOLDED = 256, OPT_COMPAT, OPT_VMSTATES, OPT_LEAK, OPT_VMFRAMES,
       OPT_BYPID, OPT_BYTID, OPT_PID, OPT_TOP, OPT_PPROF, OPT_SVG,
       OPT_DIFF, OPT_ALLOC, OPT_OFFCPU, OPT_WALL };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "compat", no_argument, NULL, OPT_COMPAT },
		{ "vmstates", no_argument, NULL, OPT_VMSTATES },
		{ "leak-only", no_argument, NULL, OPT_LEAK },
		{ "vm-frames", no_argument, NULL, OPT_VMFRAMES },
		{ "by-pid", no_argument, NULL, OPT_BYPID },
		{ "by-tid", no_argument, NULL, OPT_BYTID },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "alloc", no_argument, NULL, OPT_ALLOC },
		{ "off-cpu", optional_argument, NULL, OPT_OFFCPU },
		{ "wall", no_argument, NULL, OPT_WALL },
		{ NULL, 0, NULL, 0 },
	};
	enum mode mode = M_DEFAULT;
	const char *file = NULL, *old_file = NULL;
	struct luw_symtab *st;
	struct luw_reader r;
	int c, li = 0, fd, status, kind, whole;

	opterr = 0;	/* our messages, which name the option as given */
	while ((c = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
		const char *a = argv[optind - 1];
		enum mode m = M_DEFAULT;
		long long v;

		switch (c) {
		case 'h':
			fputs(usage, stdout);
			return 0;
		case OPT_FOLDED: m = M_FOLDED; break;
		case OPT_COMPAT: m = M_COMPAT; break;
		case OPT_VMSTATES: m = M_VMSTATES; break;
		case OPT_LEAK: m = M_LEAK; break;
		case OPT_VMFRAMES: vm_frames = 1; continue;
		case OPT_BYPID: by_pid = 1; continue;
		case OPT_BYTID: by_pid = 2; continue;
		case OPT_DIFF: diff = 1; continue;
		case OPT_ALLOC: alloc = 1; continue;
		case OPT_OFFCPU:
			if (!optarg)
				offcpu = OFF_BLOCKED | OFF_PREEMPTED;
			else if (!strcmp(optarg, "blocked"))
				offcpu = OFF_BLOCKED;
			else if (!strcmp(optarg, "preempted"))
				offcpu = OFF_PREEMPTED;
			else
				return usage_error("--off-cpu takes blocked or "
						   "preempted, not '%s'", optarg);
			continue;
		case OPT_WALL:
			wall = 1;
			offcpu = OFF_BLOCKED | OFF_PREEMPTED;
			continue;
		case OPT_PID:
			if (luw_cli_int(optarg, 1, INT_MAX, &v))
				return usage_error("bad number '%s'", optarg);
			raw_pid = (long)v;
			continue;
		case OPT_TOP:
			if (luw_cli_int(optarg, 1, LLONG_MAX, &v))
				return usage_error("bad number '%s'", optarg);
			top_n = (size_t)v;
			m = M_TOP;
			break;
		case OPT_PPROF:
			pprof_path = optarg;
			m = M_PPROF;
			break;
		case OPT_SVG:
			svg_path = optarg;
			m = M_SVG;
			break;
		case ':':
			return usage_error("%s needs an argument", a);
		default:
			return usage_error("unknown option '%s'", a);
		}
		if (mode != M_DEFAULT && mode != m)
			return usage_error("'--%s' conflicts with an earlier option",
					   longopts[li].name);
		mode = m;
	}
	if (alloc && offcpu)
		return usage_error("%s", "--alloc and --off-cpu (or --wall) "
				   "are two reports: one at a time");
	if (diff && optind < argc)
		old_file = argv[optind++];
	if (optind < argc)
		file = argv[optind++];
	if (diff && !file)
		return usage_error("%s", "--diff takes two heap snapshots, OLD NEW");
	if (optind < argc)
		return usage_error("more than one input ('%s')", argv[optind]);
	if (!file)
		return usage_error("%s", "no input file");

#ifdef LUW_REPORT_LEAN
	if (raw_pid)
		return run_full(argv, file, -1, NULL, 0);
#else
	/* Input the lean program handed over (its descriptor, at 0). */
	int efd;

	if (luw_handoff_take(FD_ENV, &efd)) {
		fprintf(stderr, PROG ": bad %s '%s'\n", FD_ENV, getenv(FD_ENV));
		return 1;
	}
#endif
	if (!strcmp(file, "-")) {
		fd = STDIN_FILENO;
#ifndef LUW_REPORT_LEAN
	} else if (efd >= 0) {
		fd = efd;
#endif
	} else {
		fd = open(file, O_RDONLY);
		if (fd < 0) {
			fprintf(stderr, PROG ": %s: %s\n", file,
				strerror(errno));
			return 1;
		}
	}
#ifndef LUW_REPORT_LEAN
	if (efd >= 0 && fd == STDIN_FILENO && dup2(efd, fd) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
		return 1;
	}
	if (raw_pid) {
		status = report_raw(file, fd, mode);
		if (fd != STDIN_FILENO)
			close(fd);
		return status;
	}
#endif
	st = luw_symtab_new();
	if (!st || luw_reader_open_fd(&r, fd)) {
		fprintf(stderr, PROG ": %s: out of memory\n", file);
		luw_symtab_free(st);
		return 1;
	}

	/* A heap snapshot or a .luw record: taken in whole, by the whole
	 * program, with the bytes already read.  --diff is for heap
	 * snapshots only. */
	whole = r.end - r.p >= 4 || luw_reader_fill(&r, 4) ?
		(is_heap(r.p, (size_t)(r.end - r.p)) ? 'h' :
		 is_luw(r.p, (size_t)(r.end - r.p)) ? 'l' : 0) : 0;
	if (whole || diff) {
		if (diff && whole != 'h')
			status = usage_error("%s: --diff takes heap snapshots", file);
		else
#ifdef LUW_REPORT_LEAN
			status = run_full(argv, file, fd, r.p, (size_t)(r.end - r.p));
		(void)old_file;
#else
			status = whole == 'h' ?
				report_heap(file, fd, r.p, (size_t)(r.end - r.p),
					    old_file, mode) :
				report_luw_fd(file, fd, r.p, (size_t)(r.end - r.p),
					      mode);
#endif
		luw_reader_close(&r);
		luw_symtab_free(st);
		if (fd != STDIN_FILENO)
			close(fd);
		return status;
	}
	kind = luw_symtab_decode(&r, NULL, add_sym, st);
	if (kind > 0) {
		fprintf(stderr, PROG ": %s: out of memory\n", file);
		status = 1;
	} else if (kind < 0) {
		status = luw_reader_failed(&r) && r.io_errno && r.err_off == 0
				 ? (fprintf(stderr, PROG ": %s: %s\n", file,
					    strerror(r.io_errno)), 1)
				 : stream_error(file, &r);
	} else if (r.end - r.p < 3 && !luw_reader_fill(&r, 3)) {
		luw_reader_fail(&r, luw_reader_offset(&r), "'ljp' or 'ljm' prologue",
			    !r.io_errno);
		status = stream_error(file, &r);
	} else if (!memcmp(r.p, "ljp", 3)) {
		if (mode == M_LEAK)
			status = usage_error("%s",
					     "--leak-only is for memprof streams");
		else
			status = report_sysprof(file, &r, st, mode);
	} else if (!memcmp(r.p, "ljm", 3)) {
		if (mode != M_DEFAULT && mode != M_LEAK)
			status = usage_error("%s",
					     "memprof streams take no option but --leak-only");
		else
			status = report_memprof(file, &r, st, mode);
	} else {
		luw_reader_fail(&r, luw_reader_offset(&r), "'ljp' or 'ljm' prologue", 0);
		status = stream_error(file, &r);
	}
	luw_reader_close(&r);
	luw_symtab_free(st);
	if (fd != STDIN_FILENO)
		close(fd);
	return status;
}
