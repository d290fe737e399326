/*
 * /proc/PID/maps: the mappings of a live process.
 *
 * Unwinding and symbolization key code by file offset (see
 * include/luaunwind_unwind.h), so what matters per mapping is its address
 * range, its file offset and the file behind it.
 */
#ifndef LUW_PROC_MAPS_H
#define LUW_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LUW_MAP_R 0x1
#define LUW_MAP_W 0x2
#define LUW_MAP_X 0x4
#define LUW_MAP_P 0x8	/* private (copy-on-write) */

struct luw_map {
	uint64_t start;
	uint64_t end;
	uint64_t offset;	/* file offset of start */
	uint64_t inode;
	unsigned int dev_major, dev_minor;
	unsigned int prot;	/* LUW_MAP_* */
	char *path;		/* "" for anonymous; "[stack]", "[vdso]"... */
	int deleted;		/* path ended in " (deleted)", stripped */
};

struct luw_maps {
	struct luw_map *v;	/* sorted by start, as the kernel lists them */
	size_t n;
};

/*
 * Parse the maps of pid (0 = self).  Returns 0, or -1 with errno set
 * (ENOENT: no such process; EINVAL: a line did not parse).
 */
int luw_maps_read(pid_t pid, struct luw_maps *m);
/* Parse maps text (NUL-terminated), e.g. a saved copy. */
int luw_maps_parse(const char *text, struct luw_maps *m);
void luw_maps_free(struct luw_maps *m);

/* The mapping holding addr, or NULL. */
const struct luw_map *luw_maps_find(const struct luw_maps *m, uint64_t addr);

/* File offset of addr inside mapping mp. */
static inline uint64_t luw_maps_fileoff(const struct luw_map *mp, uint64_t addr)
{
	return addr - mp->start + mp->offset;
}

/* Whether the mapping is backed by a regular file (not [vdso], anon...). */
int luw_maps_is_file(const struct luw_map *mp);

/*
 * A path that opens the very file mapped at mp in pid (0 = self), into
 * buf: the mapping's own path while it still names that file (same
 * inode); else the kernel's link /proc/PID/map_files/START-END, which
 * holds a deleted or replaced file and sees across mount namespaces (it
 * needs CAP_SYS_ADMIN); else the path inside the process's root,
 * /proc/PID/root/PATH, when that is the file.  0, or -1 when none is
 * (anonymous mappings, [vdso] and the like included).
 */
int luw_maps_file(pid_t pid, const struct luw_map *mp, char *buf, size_t len);

#endif
