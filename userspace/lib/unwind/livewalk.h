/*
 * livewalk: the host walk run from userspace on a live process.  Each
 * thread is stopped a moment with ptrace (proc/ptrace.h) and its C stack
 * walked with the lookup and step of kmod/uwtable.c -- the code the
 * module runs -- over the tables cfi.h builds from each executable
 * mapping's .eh_frame (the [vdso]'s from its image), frame pointers where
 * no table covers a pc.  It is the host-side proof of the table-driven
 * unwinder (luaunwind-hostunwind); the module's own walk, with its read
 * cache and budget, is kmod/hostwalk.c.
 *
 * Not thread-safe: it uses the tables' and symbols' process-global caches
 * (luw_cfi_cache_clear(), luw_symbols_cache_clear() empty them).
 */
#ifndef LUW_UNWIND_LIVEWALK_H
#define LUW_UNWIND_LIVEWALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kmod/uwtable.h"

struct luw_livewalk;

struct luw_livewalk_opts {
	int max_frames;		/* bound on a walk, >= 1 */
	int no_fp;		/* never fall back to frame pointers */
	/* Files named this (basename) walk by frame pointers: their table
	 * is ignored, to test the fallback.  NULL: none. */
	const char *fp_for;
	/* A table, symbols or thread that could not be had, one line with
	 * no newline; the walk goes on without.  NULL: not said. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

/* How a frame was left (struct luw_livewalk_frame's via). */
enum {
	LUW_LIVEWALK_OUTSIDE,	/* pc in no executable mapping: the last */
	LUW_LIVEWALK_NO_TABLE,	/* its file has no table: frame pointers */
	LUW_LIVEWALK_TABLE,	/* by the table's row e */
};

struct luw_livewalk_frame {
	struct luw_uw_regs r;	/* ip, sp, bp of the frame */
	int via;		/* LUW_LIVEWALK_* */
	/* LUW_LIVEWALK_TABLE: the row covering the pc, all zero (no rule)
	 * where none does */
	struct luw_uw_entry e;
	int fp;			/* the step fell back to frame pointers */
};

struct luw_livewalk_stack {
	pid_t tid;
	int n;
	struct luw_livewalk_frame *f;	/* innermost first; valid until the
					 * next walk */
	int complete;		/* the outermost frame was reached */
	const char *end;	/* "complete", else "truncated: WHY" */
};

/* What luw_livewalk_name() finds for a frame, for people. */
struct luw_livewalk_name {
	const char *mod;	/* file basename, mapping name, "[anon]", "?" */
	uint64_t off;		/* the pc's file offset in it */
	const char *sym;	/* the function, or NULL */
	uint64_t sym_off;	/* the pc's offset in it */
};

/* A walker for pid's threads, or NULL (out of memory). */
struct luw_livewalk *luw_livewalk_new(pid_t pid, const struct luw_livewalk_opts *o);
void luw_livewalk_free(struct luw_livewalk *w);

/*
 * (Re)read pid's mappings and the tables and symbols of their files, as
 * they are now: before each round of walks.  0, or -1 with a message in
 * err (the process is gone).
 */
int luw_livewalk_load(struct luw_livewalk *w, char *err, size_t errlen);

/*
 * Stop thread tid, walk its stack into *s, let it go (a signal that
 * arrived meanwhile delivered).  0, or -1 when the thread could not be
 * stopped (it exited, or ptrace was refused: warned) or out of memory.
 */
int luw_livewalk_thread(struct luw_livewalk *w, pid_t tid,
			struct luw_livewalk_stack *s);

/* The module, file offset and symbol of frame r of the last load. */
void luw_livewalk_name(const struct luw_livewalk *w, const struct luw_uw_regs *r,
		       struct luw_livewalk_name *n);

#endif
