/*
 * record: the loop of `luaunwind-ctl record`: read /dev/luaunwind, name
 * what the samples use while the processes live (symbolize.h), and write
 * a .luw file (include/luaunwind_file.h) that is complete whatever ends
 * the recording: the duration, a signal (the caller's stop flag), every
 * target exiting, or a write error (then the error is reported, and the
 * file still ends with what was written).
 *
 * Every second it uploads unwind tables for mappings that appeared since
 * (attach.h: dlopen, ffi.load) and notes processes that exited.
 *
 * Also the loop of `luaunwind-ctl dump` (luw_record_dump): the same
 * device read, each record handed to the caller instead of a file.
 */
#ifndef LUW_RECORD_RECORD_H
#define LUW_RECORD_RECORD_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct luw_attacher;

struct luw_rec_opts {
	const char *path;		/* the .luw file to write */
	double duration;		/* seconds; <= 0: until stopped */
	uint32_t freq;			/* noted in the file, 0 unknown */
	/* Processes being sampled and their attach state (refreshes);
	 * natt == 0: whatever the module has attached now. */
	struct luw_attacher **att;
	unsigned int natt;
	/* The session began with this recording (record -p): its counters
	 * and rings started empty, so the file's stats count from zero, the
	 * window its records cover, not from the first read of them. */
	int fresh;
	/* Off-CPU was asked for (LUW_ATTACH_OFFCPU): at the stop, each
	 * live thread's runtime goes into the file (threadend), as it does
	 * when switch records were read (a kept session's). */
	int offcpu;
	/*
	 * Processes that appear while recording (follow.h): each tick
	 * calls follow with the session's fd and att (room for
	 * LUW_MAX_TARGETS); it attaches those that appeared, appends their
	 * attachers and returns the new count, which the recording then
	 * names and refreshes as the first ones.  With follow, the
	 * recording may start with no process, and ends when every process
	 * attached has exited only if the nroots processes at roots have
	 * too (-p PID --children: the parents, which may start more); with
	 * none (a name or an executable: more may come), only by duration
	 * or stop.
	 */
	unsigned int (*follow)(void *ctx, int fd, struct luw_attacher **att,
			       unsigned int natt);
	void *follow_ctx;
	const pid_t *roots;
	unsigned int nroots;
	volatile sig_atomic_t *stop;	/* set by the caller's signal handler */
	FILE *progress;			/* one live line, NULL: quiet */
};

struct luw_rec_result {
	uint64_t records;	/* sample records written */
	uint64_t allocs;	/* ALLOC records written */
	uint64_t switches;	/* SWITCH records written */
	uint64_t lost;		/* samples the rings dropped (LOST records) */
	uint64_t bytes;		/* file size */
	double seconds;
	int targets_gone;	/* stopped because every target exited */
	/* Followed processes that exited before their maps could be read:
	 * their samples are left out, as nothing in them can be named. */
	unsigned int unnamed;
};

/*
 * Record from the open device fd.  0; -1 with a message in err (the file
 * could not be created, a write failed, the device failed).
 */
int luw_record(int fd, const struct luw_rec_opts *o, struct luw_rec_result *res,
	       char *err, size_t errlen);

/*
 * The dump of `luaunwind-ctl dump`: the records of the session fd reads
 * (opened O_NONBLOCK), handed one by one to o->record as they come, until
 * the session has no target left, o->count samples, o->duration seconds,
 * *o->stop, or with o->nonblock nothing waiting.  0; -1 with a message in
 * err (the read failed, or returned a malformed record: those before it
 * were handed over).
 */
struct luw_dev_rec;

struct luw_record_dump_opts {
	long long count;		/* samples; < 0: no bound */
	double duration;		/* seconds; < 0: no bound */
	int nonblock;			/* end when nothing is waiting */
	volatile sig_atomic_t *stop;	/* set by the caller's signal handler */
	void (*record)(void *ctx, const struct luw_dev_rec *r);
	void *ctx;
};

int luw_record_dump(int fd, const struct luw_record_dump_opts *o, char *err,
		    size_t errlen);

#endif
