#include "target/discover.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf.h"
#include "elf/filecache.h"
#include "proc/maps.h"
#include "proc/procinfo.h"
#include "target/layout.h"

/* What is kept per file: whether it holds the interpreter. */
struct vmfile {
	int has_vm;
};

static struct vmfile *vmfile_build(const char *path, char *err, size_t n)
{
	struct vmfile *v = calloc(1, sizeof(*v));
	uint64_t s, ie, e;
	uint32_t cfa;
	char why[256];
	Elf *elf;
	int fd;

	if (!v) {
		snprintf(err, n, "out of memory");
		return NULL;
	}
	elf = luw_elf_open(path, &fd, err, n);
	if (!elf) {
		free(v);
		return NULL;
	}
	v->has_vm = !luw_layout_vm_fde(elf, &s, &ie, &e, &cfa, why,
				       sizeof(why));
	elf_end(elf);
	close(fd);
	return v;
}

static void vmfile_free(struct vmfile *v)
{
	free(v);
}

LUW_FILECACHE_DEFINE(struct vmfile, luw_discover_vmfile, luw_discover_clear,
		     vmfile_build, vmfile_free)

int luw_discover_luajit(pid_t pid)
{
	struct luw_maps maps;
	int found = 0;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return -1;
	}
	if (luw_maps_read(pid, &maps))
		return -1;
	for (size_t i = 0; i < maps.n && !found; i++) {
		const struct luw_map *m = &maps.v[i];
		struct vmfile *v;
		char p[4200], err[256];

		if (!(m->prot & LUW_MAP_X) || m->path[0] != '/')
			continue;
		/* The same file as the mapping before: seen. */
		if (i && maps.v[i - 1].inode == m->inode &&
		    !strcmp(maps.v[i - 1].path, m->path) &&
		    (maps.v[i - 1].prot & LUW_MAP_X))
			continue;
		if (luw_maps_file(pid, m, p, sizeof(p)))
			continue;
		v = luw_discover_vmfile(p, err, sizeof(err));
		found = v && v->has_vm;
	}
	luw_maps_free(&maps);
	return found;
}

static int same_file(pid_t pid, const char *exe)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	return !stat(path, &a) && !stat(exe, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* pid is one of the roots or below one: up its parents, at most 256. */
static int under(pid_t pid, const pid_t *roots, size_t n)
{
	for (int depth = 0; depth < 256 && pid > 0; depth++) {
		struct luw_procinfo_stat st;

		for (size_t i = 0; i < n; i++)
			if (roots[i] == pid)
				return 1;
		if (luw_procinfo_stat(pid, &st))
			return 0;
		pid = st.ppid;
	}
	return 0;
}

int luw_discover_match(pid_t pid, const struct luw_discover_sel *sel)
{
	if (sel->comm) {
		char comm[64];

		luw_procinfo_comm(pid, comm, sizeof(comm));
		if (strcmp(comm, sel->comm))
			return 0;
	}
	if (sel->exe && !same_file(pid, sel->exe))
		return 0;
	if (sel->nroots && !under(pid, sel->roots, sel->nroots))
		return 0;
	return 1;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int luw_discover_scan(const struct luw_discover_sel *sel, pid_t *out,
		      size_t max)
{
	pid_t self = getpid();
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		char *end;
		long v;
		pid_t pid;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		v = strtol(d->d_name, &end, 10);
		if (*end || v <= 0 || v == self)
			continue;
		pid = (pid_t)v;
		if (!luw_discover_match(pid, sel) || luw_discover_luajit(pid) != 1)
			continue;
		if (n < max)
			out[n] = pid;
		n++;
	}
	closedir(dir);
	qsort(out, n < max ? n : max, sizeof(*out), cmp_pid);
	return (int)n;
}
