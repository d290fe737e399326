/* /proc/PID/maps parsing. */
#include "proc/maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/grow.h"

static int parse_line(char *line, struct luw_map *mp)
{
	char perms[5];
	int pathpos = -1;
	size_t len;
	char *path;

	memset(mp, 0, sizeof(*mp));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &mp->start, &mp->end, perms, &mp->offset, &mp->dev_major,
		   &mp->dev_minor, &mp->inode, &pathpos) != 7 || pathpos < 0 ||
	    strlen(perms) != 4 || mp->end <= mp->start)
		return -1;
	mp->prot = (perms[0] == 'r' ? LUW_MAP_R : 0) |
		   (perms[1] == 'w' ? LUW_MAP_W : 0) |
		   (perms[2] == 'x' ? LUW_MAP_X : 0) |
		   (perms[3] == 'p' ? LUW_MAP_P : 0);
	path = line + pathpos;
	len = strlen(path);
	/* The kernel pads before the path; a path may itself hold spaces. */
	while (*path == ' ')
		path++, len--;
	if (len >= 10 && strcmp(path + len - 10, " (deleted)") == 0) {
		mp->deleted = 1;
		len -= 10;
	}
	mp->path = strndup(path, len);
	return mp->path ? 0 : -1;
}

int luw_maps_parse(const char *text, struct luw_maps *m)
{
	size_t cap = 0;
	const char *p = text;

	m->v = NULL;
	m->n = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line;
		int rc;

		if (len == 0) {
			p += nl ? 1 : 0;
			if (!nl)
				break;
			continue;
		}
		if (luw_grow((void **)&m->v, &cap, m->n + 1, sizeof(*m->v)))
			goto fail;
		line = strndup(p, len);
		if (!line)
			goto fail;
		rc = parse_line(line, &m->v[m->n]);
		free(line);
		if (rc) {
			errno = EINVAL;
			goto fail;
		}
		m->n++;
		p += len + (nl ? 1 : 0);
	}
	return 0;
fail:
	luw_maps_free(m);
	return -1;
}

int luw_maps_read(pid_t pid, struct luw_maps *m)
{
	char path[64];
	char *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int rc;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)
		return -1;
	for (;;) {
		size_t got;

		if (luw_grow((void **)&buf, &cap, len + 4096, 1)) {
			free(buf);
			fclose(f);
			return -1;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return -1;
	}
	fclose(f);
	buf[len] = '\0';
	rc = luw_maps_parse(buf, m);
	free(buf);
	return rc;
}

void luw_maps_free(struct luw_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

const struct luw_map *luw_maps_find(const struct luw_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

int luw_maps_is_file(const struct luw_map *mp)
{
	return mp->path[0] == '/' && mp->inode != 0;
}

static int same_file(const char *path, const struct luw_map *mp)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == mp->inode;
}

int luw_maps_file(pid_t pid, const struct luw_map *mp, char *buf, size_t len)
{
	char proc[32];

	if (!luw_maps_is_file(mp))
		return -1;
	if (pid)
		snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	else
		snprintf(proc, sizeof(proc), "/proc/self");
	if (!mp->deleted && same_file(mp->path, mp) &&
	    (size_t)snprintf(buf, len, "%s", mp->path) < len)
		return 0;
	snprintf(buf, len, "%s/map_files/%" PRIx64 "-%" PRIx64, proc,
		 mp->start, mp->end);
	if (!access(buf, R_OK))
		return 0;
	/* A path that names another file by now is no way to the mapped one. */
	if (!mp->deleted && (size_t)snprintf(buf, len, "%s/root%s", proc,
					     mp->path) < len &&
	    same_file(buf, mp))
		return 0;
	return -1;
}
