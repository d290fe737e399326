/*
 * luaunwind-hostunwind: the host-side proof of the table-driven unwinder.
 *
 * Stops each thread of a live process for a moment with ptrace, unwinds
 * its C stack with the compact tables built from .eh_frame (frame
 * pointers where no table covers a pc) using exactly the lookup and step
 * of kmod/uwtable.c that the kernel runs, prints the
 * symbolized stack and lets the thread go.  The walk is unwind/livewalk.h;
 * this is option parsing and output.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elf/symbols.h"
#include "proc/ptrace.h"
#include "unwind/cfi.h"
#include "unwind/livewalk.h"
#include "util/cli.h"

#define MAX_THREADS 4096

#define PROG "luaunwind-hostunwind"

static const char usage[] =
"usage: luaunwind-hostunwind [options] PID\n"
"       luaunwind-hostunwind --table FILE...\n"
"Stop each thread of PID briefly (ptrace), unwind its host stack with\n"
"compact tables built from .eh_frame, print it symbolized.\n"
"  -n, --probes N      probe N times (default 1)\n"
"  -i, --interval MS   wait between probes (default 20)\n"
"  -t, --tid TID       only this thread\n"
"  -m, --max-frames N  bound on the walk (default 128)\n"
"      --no-fp         never fall back to frame pointers\n"
"      --fp-for NAME   ignore the table of files named NAME: frame\n"
"                      pointers there (tests the fallback)\n"
"      --table         build the tables of the FILEs, print their\n"
"                      entries with timing, and exit\n"
"  -h, --help\n";

static void warn(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, PROG ": %s\n", msg);
}

static void print_frame(const struct luw_livewalk *w, int n,
			const struct luw_livewalk_frame *f)
{
	struct luw_livewalk_name nm;
	char rule[64];

	luw_livewalk_name(w, &f->r, &nm);
	printf("#%-3d 0x%016" PRIx64 " %s+0x%" PRIx64 " ", n, (uint64_t)f->r.ip,
	       nm.mod, nm.off);
	if (nm.sym)
		printf("%s+0x%" PRIx64, nm.sym, nm.sym_off);
	else
		printf("?");
	if (f->via == LUW_LIVEWALK_OUTSIDE) {
		printf(" -\n");
		return;
	}
	if (f->via == LUW_LIVEWALK_TABLE)
		luw_cfi_format(&f->e, rule, sizeof(rule));
	else
		snprintf(rule, sizeof(rule), "no table");
	printf(" [%s%s]\n", f->fp ? "fp; " : "", rule);
}

static int table_mode(char **files, int n)
{
	int rc = 0;

	for (int i = 0; i < n; i++) {
		struct timespec a, b, c;
		char err[512], rule[96];
		struct luw_cfi *t;
		struct luw_symbols *e;

		clock_gettime(CLOCK_MONOTONIC, &a);
		t = luw_cfi_build(files[i], err, sizeof(err));
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (!t) {
			fprintf(stderr, "luaunwind-hostunwind: %s\n", err);
			rc = 1;
			continue;
		}
		e = luw_symbols_load(files[i], err, sizeof(err));
		clock_gettime(CLOCK_MONOTONIC, &c);
		printf("table %s: %zu FDEs (%zu undecodable), %zu rows (%zu unsup, "
		       "%zu plt, %zu deref, %zu end; rbp at rbp+N in %zu; "
		       "r14 saved in %zu, lost in %zu) -> %u "
		       "entries + %u r14 rows, %zu bytes; built in %.2f ms; "
		       "%zu symbols loaded in %.2f ms%s%s\n",
		       files[i], t->st.fdes, t->st.fdes_bad, t->st.rows,
		       t->st.unsup, t->st.plt, t->st.deref, t->st.end,
		       t->st.rbp_rbp, t->st.r14_saved,
		       t->st.r14_undef, t->n, t->nr14, t->size,
		       (double)(b.tv_sec - a.tv_sec) * 1e3 +
		       (double)(b.tv_nsec - a.tv_nsec) / 1e6,
		       e ? e->nsyms : 0,
		       (double)(c.tv_sec - b.tv_sec) * 1e3 +
		       (double)(c.tv_nsec - b.tv_nsec) / 1e6,
		       e && e->debug_path ? " from " : "",
		       e && e->debug_path ? e->debug_path : "");
		for (uint32_t k = 0; k < t->n; k++) {
			luw_cfi_format(&t->ent[k], rule, sizeof(rule));
			printf("  %08x %s\n", t->ent[k].start, rule);
		}
		for (uint32_t k = 0; k < t->nr14; k++) {
			const struct luw_uw_r14 *x = &t->r14[k];

			if (x->rule == LUW_UW_R14_CFA)
				printf("  r14 %08x c%+d\n", x->start, x->off);
			else
				printf("  r14 %08x %s\n", x->start,
				       x->rule == LUW_UW_R14_SAME ? "same" : "u");
		}
		luw_symbols_free(e);
		luw_cfi_free(t);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "probes", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, 'i' },
		{ "tid", required_argument, NULL, 't' },
		{ "max-frames", required_argument, NULL, 'm' },
		{ "no-fp", no_argument, NULL, 'F' },
		{ "fp-for", required_argument, NULL, 'P' },
		{ "table", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct luw_livewalk_opts o = { .max_frames = 128, .warn = warn };
	int probes = 1, interval_ms = 20;
	int c, table = 0, probes_ok = 0, samples = 0, complete = 0;
	static pid_t tids[MAX_THREADS];
	struct luw_livewalk *w;
	pid_t pid, tid = 0;
	char err[512];
	int v;

	while ((c = luw_cli_getopt(argc, argv, "n:i:t:m:h", lopts, usage)) != -1) {
		switch (c) {
		case 'n':
			if (luw_cli_int_arg(PROG, "probe count", optarg,
					    1, INT_MAX, &probes))
				return 1;
			break;
		case 'i':
			if (luw_cli_int_arg(PROG, "interval", optarg,
					    0, INT_MAX, &interval_ms))
				return 1;
			break;
		case 't':
			if (luw_cli_int_arg(PROG, "TID", optarg,
					    1, INT_MAX, &v))
				return 1;
			tid = (pid_t)v;
			break;
		case 'm':
			if (luw_cli_int_arg(PROG, "frame count", optarg,
					    1, 100000, &o.max_frames))
				return 1;
			break;
		case 'F':
			o.no_fp = 1;
			break;
		case 'P':
			o.fp_for = optarg;
			break;
		case 'T':
			table = 1;
			break;
		}
	}
	if (table) {
		if (optind >= argc) {
			fputs(usage, stderr);
			return 1;
		}
		return table_mode(argv + optind, argc - optind);
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 1;
	}
	if (luw_cli_int_arg(PROG, "PID", argv[optind], 1, INT_MAX, &v))
		return 1;
	pid = (pid_t)v;
	if (kill(pid, 0) && errno == ESRCH) {
		fprintf(stderr, PROG ": no process %d\n", (int)pid);
		return 1;
	}
	w = luw_livewalk_new(pid, &o);
	if (!w) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}

	for (int p = 1; p <= probes; p++) {
		int nt = 1;

		if (luw_livewalk_load(w, err, sizeof(err))) {
			fprintf(stderr, PROG ": %s\n", err);
			break;
		}
		if (tid)
			tids[0] = tid;
		else
			nt = luw_ptrace_threads(pid, tids, MAX_THREADS);
		if (nt < 0) {
			fprintf(stderr, PROG ": process %d is gone\n", (int)pid);
			break;
		}
		for (int i = 0; i < nt; i++) {
			struct luw_livewalk_stack st;

			if (luw_livewalk_thread(w, tids[i], &st))
				continue;
			samples++;
			complete += st.complete;
			printf("probe %d tid %d frames %d end %s\n", p,
			       (int)st.tid, st.n, st.end);
			for (int k = 0; k < st.n; k++)
				print_frame(w, k, &st.f[k]);
		}
		probes_ok++;
		fflush(stdout);
		if (p < probes && interval_ms)
			nanosleep(&(struct timespec){ interval_ms / 1000,
						      (interval_ms % 1000) * 1000000L },
				  NULL);
	}
	printf("summary probes %d samples %d complete %d\n", probes_ok, samples,
	       complete);
	luw_livewalk_free(w);
	luw_cfi_cache_clear();
	luw_symbols_cache_clear();
	return samples ? 0 : 2;
}
