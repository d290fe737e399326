#include "record/follow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/procinfo.h"
#include "record/dev.h"
#include "util/grow.h"

static int in_att(pid_t pid, struct luw_attacher **att, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (luw_attach_pid(att[i]) == pid)
			return 1;
	return 0;
}

/* The refusals of this process so far; NULL when none or out of memory. */
static struct luw_follow_refused *refusals(struct luw_follow *f, pid_t pid,
					   uint64_t start, int add)
{
	for (size_t i = 0; i < f->nrefused; i++) {
		struct luw_follow_refused *r = &f->refused[i];

		if (r->pid != pid)
			continue;
		if (r->starttime != start) {
			/* The pid names another process now. */
			r->starttime = start;
			r->tries = 0;
		}
		return r;
	}
	if (!add || luw_grow((void **)&f->refused, &f->cap, f->nrefused + 1,
			     sizeof(*f->refused)))
		return NULL;
	f->refused[f->nrefused] = (struct luw_follow_refused){ pid, start, 0 };
	return &f->refused[f->nrefused++];
}

unsigned int luw_follow_scan(struct luw_follow *f, int fd,
			     struct luw_attacher **att, unsigned int natt,
			     unsigned int max)
{
	pid_t found[LUW_MAX_TARGETS * 4];
	int n = luw_discover_scan(&f->sel, found,
				  sizeof(found) / sizeof(found[0]));

	for (int i = 0; i < n && i < (int)(sizeof(found) / sizeof(found[0])); i++) {
		struct luw_follow_refused *r;
		struct luw_procinfo_stat st;
		char err[1024], desc[1024];
		pid_t pid = found[i];
		int errnum = 0;

		if (in_att(pid, att, natt) || luw_dev_has(fd, pid) ||
		    luw_procinfo_stat(pid, &st))
			continue;
		r = refusals(f, pid, st.starttime, 0);
		if (r && r->tries >= LUW_FOLLOW_TRIES)
			continue;
		if (natt >= max) {
			if (f->log && (r = refusals(f, pid, st.starttime, 1))) {
				r->tries = LUW_FOLLOW_TRIES;
				fprintf(f->log, "luaunwind-ctl: pid %d not "
					"recorded: %u processes already\n",
					(int)pid, max);
			}
			continue;
		}
		if (luw_attach_run(fd, pid, f->ao, &att[natt], &errnum, err,
				   sizeof(err))) {
			r = refusals(f, pid, st.starttime, 1);
			if (r && ++r->tries == LUW_FOLLOW_TRIES && f->log)
				fprintf(f->log, "luaunwind-ctl: pid %d not "
					"recorded: %s\n", (int)pid, err);
			continue;
		}
		if (f->log) {
			luw_attach_describe(att[natt], desc, sizeof(desc));
			fprintf(f->log, "luaunwind-ctl: attached %s\n", desc);
		}
		natt++;
	}
	return natt;
}

void luw_follow_free(struct luw_follow *f)
{
	free(f->refused);
	f->refused = NULL;
	f->nrefused = f->cap = 0;
}
