/*
 * procinfo: what /proc says of a process as a whole -- its command name,
 * its executable, and from /proc/PID/stat its parent, state and start.
 *
 *   /proc/PID/stat := pid " (" comm ") " state " " ppid ... (field 22:
 *                     starttime, clock ticks after boot)
 *
 * comm may hold spaces and parentheses: the fields after it are counted
 * from its last ')'.  A pid and its starttime name one process for the
 * machine's uptime; a pid alone may be reused.
 */
#ifndef LUW_PROC_PROCINFO_H
#define LUW_PROC_PROCINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct luw_procinfo_stat {
	pid_t ppid;
	char state;		/* R, S, D, Z, X, ... */
	uint64_t starttime;	/* clock ticks after boot */
};

/* /proc/PID/comm without its newline into buf (n > 0); "" when gone. */
void luw_procinfo_comm(pid_t pid, char *buf, size_t n);

/* The target of /proc/PID/exe into buf (n > 0); "" when it has none
 * (a kernel thread) or is gone or unreadable. */
void luw_procinfo_exe(pid_t pid, char *buf, size_t n);

/* /proc/PID/stat's fields above.  0; -1 with errno (ENOENT: gone). */
int luw_procinfo_stat(pid_t pid, struct luw_procinfo_stat *st);

#endif
