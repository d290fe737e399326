/*
 * luwreport: a .luw record file (include/luaunwind_file.h) into merged,
 * named stacks.
 *
 * The file is taken in whole: the first pass indexes every name section,
 * the second merges each sample record (merge.h) and names its frames:
 *   host       the symbol; module+0xFILEOFFSET without one; 0xPC outside
 *              every mapping
 *   Lua        "name @chunk:firstline", "@chunk:firstline" without a name,
 *              "@?0xPROTO" when the proto could not be read
 *   fast func  its name ("string.rep"), "[ffid N]" unknown
 *   C func     the symbol of its lua_CFunction, "[C 0xGCFUNC]" unknown
 *   trace      "TRACE_n @chunk:line" where it starts, "TRACE_n" unknown
 * With by_pid each stack starts with a frame "comm-PID" of its process
 * (a recording of several processes, as perf script names tasks), or
 * "comm-PID/TID" of its thread.
 * A sample left with no frame (every host frame was VM code, no Lua
 * frame) counts as "[VMSTATE]", e.g. "[INTERP]".  ';' in a name becomes
 * ':' and control characters '?', so frames survive the folded format.
 */
#ifndef LUW_RECORD_REPORT_H
#define LUW_RECORD_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/file.h"
#include "record/offcpu.h"
#include "output/stacks.h"

struct luw_report_opts {
	int keep_vm;		/* --vm-frames */
	int by_pid;		/* 1 (--by-pid): each stack rooted at "comm-PID";
				 * 2 (--by-tid): at "comm-PID/TID" */
	/*
	 * 1 (--alloc): the ALLOC records instead of the CPU samples, each
	 * stack's count the bytes it allocated and its second value
	 * (luw_stacks_add2) the allocations, both estimated (luaunwind.h:
	 * a record of nsize bytes stands for 1/p allocations of nsize).
	 */
	int alloc;
	/*
	 * Off-CPU (LUW_REC_SWITCH records paired by offcpu.h), each stack's
	 * count in ns, its innermost frame how the thread was off:
	 * "[blocked: SYSCALL]" ("[blocked]" outside a syscall),
	 * "[preempted]"; time whose stack is unknown (switches went
	 * unrecorded) under "[off-cpu: switches not recorded]".
	 * LUW_REPORT_OFF_* bits: which of them.
	 */
	int offcpu;
	/*
	 * With offcpu: running time too (wall-clock time: running and off
	 * the CPU side by side), in ns: each run between two switches of a
	 * thread its exact CPU time (the runtimes' difference), shared
	 * evenly among the thread's CPU samples taken in it, or with none
	 * put at the stack it ended in; samples outside every run the
	 * switches bound (before a thread's first, a thread that never left
	 * its CPU) the sampling period each.  The stacks' second value: the
	 * off-CPU part.
	 */
	int wall;
};

#define LUW_REPORT_OFF_BLOCKED		(1 << 0)
#define LUW_REPORT_OFF_PREEMPTED	(1 << 1)
#define LUW_REPORT_OFF_ALL		(LUW_REPORT_OFF_BLOCKED | LUW_REPORT_OFF_PREEMPTED)

struct luw_report_result {
	uint64_t records;	/* sample (or with alloc, ALLOC) records merged */
	uint64_t alloc_interval;	/* the first process's, 0: no
					 * allocation sampling */
	double alloc_bytes;	/* with alloc: the estimate of all allocated */
	double alloc_objects;	/* ... and of the allocations */
	/* The probes' exact counters for the recording (its stats section;
	 * all 0 in a file that has none): calls of the allocators, frees
	 * included, and the bytes they requested. */
	int probe_counted;
	uint64_t probe_calls, probe_bytes, probe_samples;
	uint64_t lost;		/* samples reported lost (LOST records) */
	uint64_t bad;		/* records whose splices break the rule (or,
				 * with alloc, of a process the file gives no
				 * interval for) */
	uint64_t vmstate[16];	/* per LUW_VMST_* (luaunwind.h) */
	uint64_t duration_ns;	/* from the stats section, else span of
				 * the sample times */
	uint32_t freq;		/* of the first process section, 0 unknown */
	int64_t start_ns;	/* realtime start, 0 unknown */
	int complete;		/* the end section was reached */
	/* With offcpu: ns off the CPU by LUW_OFF_* (offcpu.h; [0] unused)
	 * in all the pairing found, shown or not; with wall, ns on the CPU
	 * reported; the pairing's counts. */
	uint64_t off_ns[4];
	uint64_t cpu_ns;
	uint64_t switches;
	struct luw_offcpu_count pairs;
};

/*
 * Report f into stacks.  0 when the whole file was read; 2 when it is cut
 * or damaged (what came before is reported; err names the offset); 1 on
 * out of memory.
 */
int luw_report_run(const struct luw_file *f, const struct luw_report_opts *o,
		 struct luw_stacks *stacks, struct luw_report_result *res,
		 char *err, size_t errlen);

/*
 * pprof's options for what o reported into res: the sample types (CPU
 * samples and their period; alloc_objects and alloc_space with the
 * sampling interval as period; off_cpu, or wall and off_cpu, in ns), the
 * duration and the start.
 */
struct luw_pprof_opts;
void luw_report_pprof_opts(const struct luw_report_opts *o,
			   const struct luw_report_result *res,
			   struct luw_pprof_opts *po);

/* "samples\tN" then "NAME\tN" per VM state. */
int luw_report_write_vmstates(const struct luw_report_result *res, FILE *out);

#endif
