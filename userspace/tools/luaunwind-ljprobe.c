/*
 * luaunwind-ljprobe: the host-side proof of the Lua stack walk.
 *
 *   luaunwind-ljprobe [-n N] [-t TID] [-v] [--want STATE] PID
 *
 * Prints the detected target, layout and VM range, then takes N samples:
 * stops the thread with PTRACE_SEIZE + PTRACE_INTERRUPT, reads its
 * registers, and when the pc is in VM code or in the running trace walks
 * the Lua stack with kmod/ljwalk.c (the code the module runs) and
 * prints it; otherwise lets it run a moment and retries.  Always detaches.
 * --want STATE keeps only samples in that state (LFUNC, FFUNC, TRACE, ...).
 * --any also takes samples in C code called by the VM; without the host
 * unwinder's VM frame the walk then starts from G->cur_L and L->base.
 * --ffnames prints the fast-function names ("ff ID NAME"); with
 * --ff-from-tables they are read from the live library tables even when
 * DWARF or the build-id gave them (to compare the two).  --layout prints
 * the layout descriptor, field by field; --recovered what the machine code
 * gave (target/recover.h) and exits.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include "util/cli.h"
#include "target/ffscan.h"
#include "target/layout.h"
#include "target/proto.h"
#include "proc/mem.h"
#include "proc/ptrace.h"
#include "kmod/ljwalk.h"

#define PROG "luaunwind-ljprobe"

static const char *const vmst_names[LUW_VMST__MAX] = {
	"INTERP", "LFUNC", "FFUNC", "CFUNC", "GC", "EXIT", "RECORD", "OPT",
	"ASM", "TRACE", "UNKNOWN",
};

static const char *const status_names[LUW_LJW__MAX] = {
	"ok", "full", "no-G", "no-L", "bad-base", "fault", "bad-frame", "budget",
};

static const char usage[] =
	"usage: luaunwind-ljprobe [-n SAMPLES] [-t TID] [-v] "
	"[--want STATE] [--any] [--tries N] [--ffnames] "
	"[--ff-from-tables] [--layout] [--recovered] PID\n";

static void print_sample(struct luw_proto_ctx *sym, int idx, uint64_t ip,
			 const struct luw_lj_walk_out *o, int verbose,
			 pid_t pid, const struct luw_lj_layout *ly)
{
	char b[512];
	unsigned int i, s;

	printf("sample %d ip=0x%llx vmstate=%s raw=%d status=%s frames=%u "
	       "segs=%u coros=%u", idx, (unsigned long long)ip,
	       vmst_names[o->vmstate], o->vmstate_raw, status_names[o->status],
	       o->nframes, o->nsegs, o->coros);
	if (o->nframes && o->frames[0].kind == LUW_LJF_TRACE)
		printf(" trace=%u", o->frames[0].trace);
	printf("\n");
	/* Root first, flamegraph style; segments joined in walk order. */
	printf("stack %d ", idx);
	for (i = o->nframes; i-- > 0;)
		printf("%s%s", luw_proto_frame_str(sym, &o->frames[i], b, sizeof(b)),
		       i ? ";" : "");
	printf("\n");
	if (!verbose)
		return;
	for (s = 0; s < o->nsegs; s++) {
		const struct luw_lj_seg *g = &o->segs[s];

		uint64_t ret = 0;

		/* Who entered the activation: its C frame's return address. */
		if (g->cframe)
			luw_mem_read(pid, g->cframe + ly->cframe_size - 8,
				     &ret, 8);
		printf("  seg %u L=0x%llx cframe=0x%llx ret=0x%llx%s%s\n", s,
		       (unsigned long long)g->L, (unsigned long long)g->cframe,
		       (unsigned long long)ret,
		       g->flags & LUW_LJS_RESUMED ? " resumed" : "",
		       g->flags & LUW_LJS_TRACE ? " trace" : "");
		for (i = g->first; i < (unsigned int)g->first + g->count; i++)
			printf("    #%u %s link=%u%s\n", i,
			       luw_proto_frame_str(sym, &o->frames[i], b, sizeof(b)),
			       o->frames[i].link,
			       o->frames[i].flags & LUW_LJF_PC_EXACT ? " exact" : "");
	}
}

/* --layout: every field, for comparing builds. */
static void print_layout(const struct luw_lj_layout *ly)
{
	unsigned int i;

	/* Every field of the list but the header (size, version), flags
	 * in hex. */
#define PRINT_M(type, name, ctype, member) \
	printf("layout.%s = %lld\n", #name, (long long)ly->name);
#define PRINT_V(type, name, value)					\
	if (strcmp(#name, "size") && strcmp(#name, "version") &&	\
	    strcmp(#name, "flags"))					\
		PRINT_M(type, name, , );
	printf("layout.flags = 0x%x\n", ly->flags);
	LUW_LJ_LAYOUT_FIELDS(PRINT_M, PRINT_V)
#undef PRINT_M
#undef PRINT_V
	for (i = 0; i < ly->n_vmst && i < LUW_LJ_MAX_RAW_VMST; i++)
		printf("layout.vmst_map[%u] = %u\n", i, ly->vmst_map[i]);
}

/* --recovered: the fields target/recover.c read from the machine code. */
static void print_recovered(const struct luw_layout_target *t)
{
	const struct luw_recover_result *r = &t->rec;
#define REC_ROW(name) { #name, r->name },
#define REC_ROW_O(name, label) { label, r->name },
	const struct { const char *n; int v; } f[] = {
		LUW_RECOVER_FIELDS(REC_ROW, REC_ROW, REC_ROW_O)
	};
#undef REC_ROW
#undef REC_ROW_O
	size_t i;
	int k;

	if (t->why_rec[0]) {
		printf("recovered: none: %s\n", t->why_rec);
		return;
	}
	printf("recovered: ref_size %d\n", r->ref_size);
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v != LUW_LJR_NONE)
			printf("rec.%s = %d\n", f[i].n, f[i].v);
	printf("sites: %u dispatches, %u loads of L->base, %u of pt->k, "
	       "%d jit.util functions\n", r->nvote_disp, r->nvote_base,
	       r->nvote_kbase, r->ncheck_fns);
	if (r->have_vmstate)
		printf("rec.disp.vmstate = %d\n", r->vmstate_disp);
	if (r->have_jtrace)
		printf("rec.disp.jtrace = %d\n", r->jtrace_disp);
	if (r->have_jitbase)
		printf("rec.disp.jitbase = %d\n", r->jitbase_disp);
	if (r->have_tmpbufl)
		printf("rec.disp.tmpbufl = %d\n", r->tmpbufl_disp);
	for (k = 0; k < r->ndisp; k++)
		printf("rec.disp.arg1 = %d (%u calls)\n", r->disp[k],
		       r->disp_count[k]);
}

static int want_state(const char *w, int st)
{
	return !w || !strcmp(w, vmst_names[st]);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "tries", required_argument, NULL, 'T' },
		{ "want", required_argument, NULL, 'W' },
		{ "any", no_argument, NULL, 'a' },
		{ "layout", no_argument, NULL, 'L' },
		{ "recovered", no_argument, NULL, 'R' },
		{ "ffnames", no_argument, NULL, 'F' },
		{ "ff-from-tables", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int nsamples = 1, verbose = 0, tries = 2000, i, got = 0, rc = 0, any = 0;
	int c, v;
	int ffdump = 0, fftables = 0, lydump = 0, recdump = 0;
	const char *want = NULL;
	pid_t pid = 0, tid = 0;
	struct luw_layout_target *t;
	struct luw_proto_ctx *sym;
	char err[4096];
	struct luw_lj_frame frames[256];
	struct luw_lj_seg segs[32];
	uint64_t g_hint = 0;

	while ((c = luw_cli_getopt(argc, argv, "n:t:vh", lopts, usage)) != -1) {
		switch (c) {
		case 'n':
			if (luw_cli_int_arg(PROG, "sample count", optarg,
					    0, INT_MAX, &nsamples))
				return 1;
			break;
		case 't':
			if (luw_cli_int_arg(PROG, "TID", optarg,
					    1, INT_MAX, &v))
				return 1;
			tid = (pid_t)v;
			break;
		case 'T':
			if (luw_cli_int_arg(PROG, "try count", optarg,
					    0, INT_MAX, &tries))
				return 1;
			break;
		case 'W': want = optarg; break;
		case 'a': any = 1; break;
		case 'L': lydump = 1; break;
		case 'R': recdump = 1; break;
		case 'F': ffdump = 1; break;
		case 'X': fftables = 1; break;
		case 'v': verbose = 1; break;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 1;
	}
	if (luw_cli_int_arg(PROG, "PID", argv[optind], 1, INT_MAX, &v))
		return 1;
	pid = (pid_t)v;
	if (!tid)
		tid = pid;
	t = calloc(1, sizeof(*t));
	if (!t)
		return 1;
	if (recdump) {
		/* What the machine code says, whatever the layout's source. */
		if (luw_layout_open(pid, t, err, sizeof(err))) {
			fprintf(stderr, "luaunwind-ljprobe: %s\n", err);
			free(t);
			return 2;
		}
		print_recovered(t);
		free(t);
		return 0;
	}
	if (luw_layout_attach(pid, t, err, sizeof(err))) {
		fprintf(stderr, "luaunwind-ljprobe: %s\n", err);
		free(t);
		return 2;
	}
	printf("target: pid %d kind %s path %s build-id %s\n", (int)pid, t->kind,
	       t->path, t->build_id[0] ? t->build_id : "none");
	printf("layout: %s (%s, %s)\n", t->layout_name,
	       t->layout.flags & LUW_LJ_F_GC64 ? "GC64" : "32-bit refs",
	       t->src == LUW_LJL_SRC_DWARF ? "dwarf" :
	       t->src == LUW_LJL_SRC_KNOWN ? "known build-id" :
	       t->src == LUW_LJL_SRC_CODE ? "machine code + live process" :
	       "validated guess");
	if (fftables && luw_ffscan_names(t, err, sizeof(err))) {
		fprintf(stderr, "luaunwind-ljprobe: names from tables: %s\n",
			err);
		free(t);
		return 2;
	}
	/* Which round of checks passed (target/layout.c, "Reading a running target"). */
	printf("checks: passed in round %d%s%s%s\n", t->rounds,
	       t->why_round1[0] ? " (the round before: " : "", t->why_round1,
	       t->why_round1[0] ? ")" : "");
	printf("ffnames: %u from %s\n", t->ff.count,
	       t->ff.src[0] ? t->ff.src : "nowhere");
	printf("vm: 0x%llx-0x%llx interp-end 0x%llx cframe %u\n",
	       (unsigned long long)t->vm_start, (unsigned long long)t->vm_end,
	       (unsigned long long)t->interp_end, t->fde_cfa);
	for (i = 0; i < t->nstates; i++)
		printf("state: G=0x%llx\n", (unsigned long long)t->states[i]);
	if (lydump)
		print_layout(&t->layout);
	for (i = 0; ffdump && i < LUW_FF_MAX; i++)
		if (luw_ffnames_get(&t->ff, (unsigned int)i))
			printf("ff %d %s\n", i,
			       luw_ffnames_get(&t->ff, (unsigned int)i));
	fflush(stdout);
	if (t->nstates == 1)
		g_hint = t->states[0];
	sym = luw_proto_new(pid, &t->layout, &t->ff);
	if (!sym) {
		free(t);
		return 1;
	}
	if (nsamples == 0)
		goto out;
	if (luw_ptrace_seize(tid)) {
		fprintf(stderr, "luaunwind-ljprobe: ptrace seize %d: %s\n", (int)tid,
			strerror(errno));
		rc = 2;
		goto out;
	}
	srand((unsigned int)getpid());
	for (i = 0; i < tries && got < nsamples; i++) {
		struct user_regs_struct u;
		struct luw_lj_walk_out o;
		int st = luw_ptrace_stop(tid);

		if (st == LUW_PTRACE_GONE) {
			fprintf(stderr, "luaunwind-ljprobe: target exited\n");
			rc = 2;
			goto out;
		}
		if (st < 0) {
			fprintf(stderr, "luaunwind-ljprobe: interrupt: %s\n",
				strerror(errno));
			rc = 2;
			break;
		}
		if (luw_ptrace_getregs(tid, &u)) {
			rc = 2;
			break;
		}
		memset(&o, 0, sizeof(o));
		o.frames = frames;
		o.max_frames = sizeof(frames) / sizeof(frames[0]);
		o.segs = segs;
		o.max_segs = sizeof(segs) / sizeof(segs[0]);
		luw_layout_walk(t, &t->layout, &u, g_hint, &o);
		if (luw_layout_caught(t, u.rip, &o, any) &&
		    want_state(want, o.vmstate)) {
			print_sample(sym, got, u.rip, &o, verbose, pid,
				     &t->layout);
			got++;
		}
		/*
		 * Let it run between samples; a random pause avoids locking
		 * onto the program's period.
		 */
		if (luw_ptrace_cont(tid, 0)) {
			rc = 2;
			break;
		}
		usleep(200 + (unsigned int)(rand() % 1800));
	}
	luw_ptrace_release(tid);
	printf("samples: %d of %d wanted, %d stops\n", got, nsamples, i);
	if (got < nsamples && !rc)
		rc = 3;
out:
	luw_proto_free(sym);
	free(t);
	return rc;
}
