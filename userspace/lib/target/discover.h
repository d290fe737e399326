/*
 * discover: the LuaJIT processes of this machine, as `record --all`,
 * `--exe`, `--comm` and `-p PID --children` select them.
 *
 * A process is a candidate when one of its executable file mappings holds
 * LuaJIT's interpreter FDE (layout.h, luw_layout_vm_fde), the first thing
 * attach looks for, whatever the file is called: a static, stripped host
 * is found as libluajit is.  Whether a file holds one is worked out once
 * per file (elf/filecache.h).  A candidate is no more than that: attach
 * still proves a layout against the live process, or refuses it with the
 * check that failed.
 */
#ifndef LUW_TARGET_DISCOVER_H
#define LUW_TARGET_DISCOVER_H

#include <stddef.h>
#include <sys/types.h>

struct luw_discover_sel {
	/* Runs this file (/proc/PID/exe is it: same device and inode);
	 * NULL: any. */
	const char *exe;
	const char *comm;	/* /proc/PID/comm is this; NULL: any */
	/* Only these processes and their descendants (nroots of them);
	 * nroots 0: any. */
	const pid_t *roots;
	size_t nroots;
};

/*
 * Whether pid is selected by sel (its name, executable and parents), not
 * yet whether it runs LuaJIT.  1 or 0 (gone: 0).
 */
int luw_discover_match(pid_t pid, const struct luw_discover_sel *sel);

/*
 * Whether pid maps an object with LuaJIT's interpreter: 1, 0 (none, or a
 * kernel thread), -1 with errno when its mappings cannot be read (gone:
 * ENOENT, not ours: EACCES).
 */
int luw_discover_luajit(pid_t pid);

/*
 * The candidates sel selects, in ascending pid order, this process and
 * its threads' group left out: into out (room for max), the count found
 * (which may exceed max); -1 with errno when /proc cannot be read.
 */
int luw_discover_scan(const struct luw_discover_sel *sel, pid_t *out,
		      size_t max);

/* Forgets what was worked out of each file. */
void luw_discover_clear(void);

#endif
