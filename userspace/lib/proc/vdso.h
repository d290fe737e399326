/*
 * vdso: a process's [vdso], the one code mapping with no file behind it
 * that still is a whole ELF image, with its own .eh_frame and .dynsym.
 * Read out of the process into memory and opened with libelf, it gives
 * unwind tables (record/attach, unwind/livewalk) and symbols like any file.
 */
#ifndef LUW_PROC_VDSO_H
#define LUW_PROC_VDSO_H

#include <stddef.h>
#include <sys/types.h>

#include <libelf.h>

#include "proc/maps.h"

struct luw_vdso {
	void *img;	/* the copy of the mapping */
	size_t len;
	Elf *elf;	/* over img */
};

/* Whether mp is the [vdso]. */
int luw_vdso_is(const struct luw_map *mp);

/*
 * Copy the [vdso] mapped at mp out of pid and open it: 0, or -1 (too
 * large to be one, unreadable, not ELF) with *v empty.
 */
int luw_vdso_open(pid_t pid, const struct luw_map *mp, struct luw_vdso *v);
void luw_vdso_close(struct luw_vdso *v);

#endif
