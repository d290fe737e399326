/*
 * filecache: objects built from files, each built once.  The unwind
 * tables (cfi.c) and the symbol tables (elf/symbols.c) are costly to build and
 * asked for again and again (every mapping of every process, every
 * probe), so each keeps one of these.
 *
 * A path hits an entry when its file is the same one: same device,
 * inode, size and mtime.  A path to a file not seen yet whose GNU
 * build-id matches a built entry's (a copy, a bind mount, a
 * /proc/PID/map_files link) is remembered as another name of that entry
 * and gets the same object, unbuilt.  Objects live until
 * luw_filecache_clear.
 */
#ifndef LUW_ELF_FILECACHE_H
#define LUW_ELF_FILECACHE_H

#include <stddef.h>

struct luw_filecache_ent;

struct luw_filecache {
	/* Builds the object of the file at path; NULL with err set. */
	void *(*build)(const char *path, char *err, size_t errlen);
	void (*destroy)(void *obj);
	struct luw_filecache_ent *ents;	/* most recent first */
};

/* The object of path, built on first use; NULL with a message in err. */
void *luw_filecache_get(struct luw_filecache *c, const char *path, char *err,
		     size_t errlen);

/* Destroys every object and forgets every name. */
void luw_filecache_clear(struct luw_filecache *c);

/*
 * A module's cache: defines TYPE *GET(path, err, errlen) and void
 * CLEAR(void) over a cache of its own whose objects BUILD(path, err,
 * errlen) makes and DESTROY(obj) frees.
 */
#define LUW_FILECACHE_DEFINE(TYPE, GET, CLEAR, BUILD, DESTROY)		\
static void *GET##_build(const char *path, char *err, size_t errlen)	\
{									\
	return BUILD(path, err, errlen);				\
}									\
static void GET##_destroy(void *obj)					\
{									\
	DESTROY(obj);							\
}									\
static struct luw_filecache GET##_cache = { GET##_build, GET##_destroy, NULL }; \
TYPE *GET(const char *path, char *err, size_t errlen)			\
{									\
	return luw_filecache_get(&GET##_cache, path, err, errlen);		\
}									\
void CLEAR(void)							\
{									\
	luw_filecache_clear(&GET##_cache);					\
}

#endif
