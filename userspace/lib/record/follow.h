/*
 * follow: the processes a selection names (target/discover.h), attached
 * as they appear -- `record --all`, `--exe`, `--comm`, `-p PID
 * --children`.  The record loop scans once a second (record.h, follow):
 * a process that appeared since (an nginx reload's new workers) is
 * attached in the recording's session; one that exits, the module ends.
 *
 * A candidate that attach refuses is tried again at the next scans (a
 * process found before it has made its Lua state, or while it is still
 * loading its libraries); after LUW_FOLLOW_TRIES refusals its last reason
 * is logged and it is left alone.
 */
#ifndef LUW_RECORD_FOLLOW_H
#define LUW_RECORD_FOLLOW_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "record/attach.h"
#include "target/discover.h"

#define LUW_FOLLOW_TRIES	5

struct luw_follow_refused {
	pid_t pid;
	uint64_t starttime;	/* with pid, the process (procinfo.h) */
	unsigned int tries;
};

struct luw_follow {
	struct luw_discover_sel sel;
	const struct luw_attach_opts *ao;
	FILE *log;		/* a line per process attached or given up */
	struct luw_follow_refused *refused;
	size_t nrefused, cap;
};

/*
 * Attaches, in fd's session, every candidate of f->sel not in att yet
 * (luw_attach_run: tables uploaded, started), appending its attacher to
 * att (natt used, room for max).  Returns the new natt.
 */
unsigned int luw_follow_scan(struct luw_follow *f, int fd,
			     struct luw_attacher **att, unsigned int natt,
			     unsigned int max);

void luw_follow_free(struct luw_follow *f);

#endif
