/*
 * filecache: build once per file, share across names of one build.
 * See filecache.h.
 */
#include "elf/filecache.h"

#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/debugfile.h"
#include "elf/elf.h"

struct luw_filecache_ent {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	uint8_t build_id[LUW_BUILD_ID_MAX];
	size_t build_id_len;
	void *obj;
	int owner;		/* 0: another name of an older entry's obj */
	struct luw_filecache_ent *next;
};

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static size_t path_build_id(const char *path, uint8_t *id, size_t cap)
{
	int fd;
	size_t len;
	Elf *elf = luw_elf_open(path, &fd, NULL, 0);

	if (!elf)
		return 0;
	len = luw_debugfile_build_id(elf, id, cap);
	elf_end(elf);
	close(fd);
	return len;
}

void *luw_filecache_get(struct luw_filecache *c, const char *path, char *err,
		     size_t errlen)
{
	struct luw_filecache_ent *e, *n;
	struct stat st;

	if (stat(path, &st)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (e = c->ents; e; e = e->next)
		if (e->dev == st.st_dev && e->ino == st.st_ino &&
		    e->size == (uint64_t)st.st_size &&
		    e->mtime_ns == mtime_ns(&st))
			return e->obj;
	n = calloc(1, sizeof(*n));
	if (!n) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	n->dev = st.st_dev;
	n->ino = st.st_ino;
	n->size = (uint64_t)st.st_size;
	n->mtime_ns = mtime_ns(&st);
	n->build_id_len = path_build_id(path, n->build_id, sizeof(n->build_id));
	for (e = c->ents; e && n->build_id_len; e = e->next)
		if (e->build_id_len == n->build_id_len &&
		    !memcmp(e->build_id, n->build_id, n->build_id_len)) {
			n->obj = e->obj;
			break;
		}
	if (!n->obj) {
		n->obj = c->build(path, err, errlen);
		if (!n->obj) {
			free(n);
			return NULL;
		}
		n->owner = 1;
	}
	n->next = c->ents;
	c->ents = n;
	return n->obj;
}

void luw_filecache_clear(struct luw_filecache *c)
{
	while (c->ents) {
		struct luw_filecache_ent *n = c->ents->next;

		if (c->ents->owner)
			c->destroy(c->ents->obj);
		free(c->ents);
		c->ents = n;
	}
}
