/*
 * heapsnap: a heap snapshot in memory, and its file (include/luaunwind_heap.h).
 *
 * The walk (heap/heapwalk.h) builds one: labels and path nodes interned as it
 * goes, objects added to the group of their (node, type); the report
 * (heap/heapreport.h) reads one back from a file.
 */
#ifndef LUW_HEAP_HEAPSNAP_H
#define LUW_HEAP_HEAPSNAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/kvmap.h"
#include "luaunwind_heap.h"

struct luw_heapsnap_node {
	uint32_t parent, label;
};

struct luw_heapsnap_group {
	uint32_t node, type;
	uint64_t objects, bytes;
};

struct luw_heapsnap_big {
	uint64_t addr, bytes;
	uint32_t node, type;
};

struct luw_heapsnap_uni {
	uint64_t g, gc_total, objects, bytes, internal;
	uint64_t unreached_objects, unreached_bytes;
	uint64_t skipped, unsized, dangling;
	uint32_t root;
	uint64_t type_objects[LUWH_NTYPES], type_bytes[LUWH_NTYPES];
};

#define LUW_HEAPSNAP_LARGEST 100
#define LUW_HEAPSNAP_LABEL_MAX 256	/* longer labels are cut */

struct luw_heapsnap {
	/* meta */
	uint32_t pid, flags;
	uint64_t time_ns, pause_ns, walk_ns;
	char *comm, *exe, *build_id, *ljkind, *layout;

	char **labels;
	uint32_t nlabels;
	size_t labcap;
	struct luw_heapsnap_node *nodes;	/* [0] is the root */
	uint32_t nnodes;
	size_t nodecap;
	struct luw_heapsnap_group *groups;
	size_t ngroups, groupcap;
	struct luw_heapsnap_big big[LUW_HEAPSNAP_LARGEST];
	uint32_t nbig;
	struct luw_heapsnap_uni *unis;
	uint32_t nunis;
	size_t unicap;

	struct luw_kvmap labmap, nodemap, groupmap;	/* for the look-ups */
	int oom;
};

/* An empty snapshot (one root node).  0, or -1 on ENOMEM. */
int luw_heapsnap_init(struct luw_heapsnap *s);
void luw_heapsnap_free(struct luw_heapsnap *s);
/* Sets a meta string (copied). */
void luw_heapsnap_meta(struct luw_heapsnap *s, char **field, const char *v);

/* The id of label text[0..len), interned; UINT32_MAX on ENOMEM. */
uint32_t luw_heapsnap_label(struct luw_heapsnap *s, const char *text, size_t len);
/* The node under parent stepping by label; 0 on ENOMEM (s->oom). */
uint32_t luw_heapsnap_node(struct luw_heapsnap *s, uint32_t parent, uint32_t label);
/* Look-ups that add nothing: the id of label text[0..len) or UINT32_MAX;
 * the node under parent stepping by label or 0; the group of objects of
 * type at node or NULL. */
uint32_t luw_heapsnap_label_find(const struct luw_heapsnap *s, const char *text,
				 size_t len);
uint32_t luw_heapsnap_child(const struct luw_heapsnap *s, uint32_t parent,
			    uint32_t label);
const struct luw_heapsnap_group *
luw_heapsnap_group(const struct luw_heapsnap *s, uint32_t node, uint32_t type);
/* Adds objects of type at node, of bytes in all. */
void luw_heapsnap_add(struct luw_heapsnap *s, uint32_t node, uint32_t type,
		      uint64_t objects, uint64_t bytes);
/* Offers one object to the largest ones. */
void luw_heapsnap_offer(struct luw_heapsnap *s, uint64_t addr, uint32_t node,
			uint32_t type, uint64_t bytes);
/* A new universe record, zeroed; NULL on ENOMEM. */
struct luw_heapsnap_uni *luw_heapsnap_uni(struct luw_heapsnap *s);

/* The name of an object type: "table", "string", ... */
const char *luw_heapsnap_type_name(uint32_t type);

/* Writes s to out: 0, or -1 with errno. */
int luw_heapsnap_write(const struct luw_heapsnap *s, FILE *out);

/*
 * Reads a snapshot file of len bytes at data into s (initialised here).
 * 0 when whole; 1 when it is cut short or damaged: what came before is
 * in s and err says at which byte offset the file stopped making sense;
 * -1 on ENOMEM or a file that is no snapshot (err says).
 */
int luw_heapsnap_read(struct luw_heapsnap *s, const uint8_t *data, size_t len,
		      char *err, size_t errlen);

/* 1 when data starts like a snapshot file. */
int luw_heapsnap_is(const uint8_t *data, size_t len);

#endif
