/*
 * profile: one profile taken whole, as `luaunwind-ctl serve` hands it to
 * an HTTP client -- the processes selected attached in a session of its
 * own, recorded for a time into a private .luw file, reported by process
 * (stacks rooted at "comm-PID") into a gzipped profile.proto in memory,
 * and everything detached again whatever ends it.
 *
 * Kinds, and what the profile's samples count:
 *   cpu      samples and cpu/nanoseconds (the sampling period), as Go's
 *            /debug/pprof/profile
 *   off_cpu  off_cpu/nanoseconds: the time threads spent off the CPU
 *            under the stack they left from (record --off-cpu)
 *   allocs   alloc_objects/count and alloc_space/bytes, estimated from
 *            the allocation samples (record --alloc), as Go's allocs
 *   heap     inuse_objects/count and inuse_space/bytes: a heap snapshot
 *            of one process (heap/heaptake.h), walked while it runs (no
 *            pause: a scraper asks often), each object under its
 *            reference path, as Go's heap; no recording, no module
 */
#ifndef LUW_RECORD_PROFILE_H
#define LUW_RECORD_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/discover.h"

enum luw_profile_kind {
	LUW_PROFILE_CPU, LUW_PROFILE_OFFCPU, LUW_PROFILE_ALLOCS, LUW_PROFILE_HEAP
};

struct luw_profile_req {
	enum luw_profile_kind kind;
	double seconds;
	/* pid, or the selection sel (by comm, executable; everything
	 * LuaJIT when both are unset) */
	pid_t pid;
	struct luw_discover_sel sel;
	uint32_t freq;			/* CPU samples a second */
	const char *dir;		/* where the .luw file is made */
	/* Asked once a second (and at the start): nonzero ends the
	 * recording with LUW_PROFILE_CANCELLED (the client went away). */
	int (*cancelled)(void *ctx);
	void *ctx;
};

/* Why no profile came: the class of the error, for an HTTP status. */
enum luw_profile_status {
	LUW_PROFILE_OK,
	LUW_PROFILE_NOTFOUND,	/* no such process, or none selected */
	LUW_PROFILE_REFUSED,	/* not LuaJIT, or its layout not proven */
	LUW_PROFILE_CANCELLED,
	LUW_PROFILE_FAILED,	/* the device, a file, memory */
	LUW_PROFILE_BADREQ,	/* a heap profile of no single pid */
};

/*
 * Takes the profile q asks for.  LUW_PROFILE_OK with *out (malloc'd,
 * *outlen bytes) and a line saying what it holds in info; else the
 * status, with a message in err.
 */
enum luw_profile_status luw_profile_take(const struct luw_profile_req *q,
					 uint8_t **out, size_t *outlen,
					 char *info, size_t infolen,
					 char *err, size_t errlen);

#endif
