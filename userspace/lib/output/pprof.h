/*
 * pprof output: aggregated stacks as a gzip-compressed profile.proto,
 * the format of `go tool pprof`, Pyroscope and Grafana.
 *
 * The protobuf is encoded by hand; only the parts below are written.
 * Field numbers are those of profile.proto (package perftools.profiles).
 * Every message field is written as tag, length, bytes; numbers as
 * varints (wire type 0); repeated numbers packed (wire type 2).
 *
 *   file      := gzip(profile)
 *   profile   := sample_type{2} sample* mapping{0} location* function*
 *                string_table+ time_nanos? duration_nanos? period_type
 *                period default_sample_type?
 *   sample_type    = 1 ValueType     "samples"/"count", then
 *                                    "cpu"/"nanoseconds" when period > 0;
 *                                    or [aux_type/aux_unit]
 *                                    count_type/count_unit
 *   sample         = 2 Sample
 *   location       = 4 Location
 *   function       = 5 Function
 *   string_table   = 6 string        [0] is "", as pprof requires
 *   time_nanos     = 9 int64         wall clock at the start, if known
 *   duration_nanos = 10 int64        if known
 *   period_type    = 11 ValueType    "cpu"/"nanoseconds", or count_type
 *   period         = 12 int64        ns between samples (may be 0)
 *
 *   ValueType := type(1: string index) unit(2: string index)
 *   Sample    := location_id(1: packed uint64, LEAF FIRST)
 *                value(2: packed int64: count [, count * period];
 *                                  or [aux,] count)
 *                label(3: Label)*  from the labels callback, if any
 *   Label     := key(1: string index) str(2: string index) | num(3: int64)
 *   Location  := id(1: uint64 > 0) line(4: Line)
 *   Line      := function_id(1: uint64) line(2: int64, 0 if unknown)
 *   Function  := id(1: uint64 > 0) name(2: string index)
 *                system_name(3: string index) filename(4: string index)
 *                start_line(5: int64)
 *
 * One Function and one Location per distinct frame text used by a stack,
 * so `pprof -traces` and `-raw` show the folded frames unchanged.  A Lua
 * frame "name @chunk:line" also gets chunk as its file and line as its
 * line, for pprof's source and line views.
 */
#ifndef LUW_OUTPUT_PPROF_H
#define LUW_OUTPUT_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "output/stacks.h"

#define LUW_PPROF_MAX_LABELS	8

/* A sample's label: key with a string, or with a number when str is NULL. */
struct luw_pprof_label {
	const char *key, *str;
	int64_t num;
};

struct luw_pprof_opts {
	/* Time per sample; 0: counts only.  With count_type, the period
	 * in that type's unit instead (an allocation profile's sampling
	 * interval in bytes), not a time. */
	uint64_t period_ns;
	uint64_t duration_ns;	/* length of the recording; 0: unknown */
	int64_t time_ns;	/* start, ns since the Unix epoch; 0: unknown */
	/* Other kinds of profile (a heap): the count's sample type and
	 * unit instead of samples/count and cpu/nanoseconds, also the
	 * period's; with aux_type, a first sample type holding each stack's
	 * second value (luw_stacks_add2), as Go's heap profiles put
	 * inuse_objects before inuse_space. */
	const char *count_type, *count_unit;
	const char *aux_type, *aux_unit;
	/*
	 * The labels of a sample, from its stack's root frame (root, len:
	 * in a report by process, "comm-PID"): up to max into out, how
	 * many returned.  NULL: none.
	 */
	size_t (*labels)(void *ctx, const char *root, size_t len,
			 struct luw_pprof_label *out, size_t max);
	void *labels_ctx;
};

/* Write s to out as gzipped profile.proto.  0, or -1 with errno. */
int luw_pprof_write(FILE *out, const struct luw_stacks *s,
		    const struct luw_pprof_opts *o);

#endif
