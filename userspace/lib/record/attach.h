/*
 * attach: everything luaunwind.ko needs to sample one process with Lua
 * stacks, worked out from userspace.
 *
 *   1. luw_attach_open: find LuaJIT in the process (target/layout: VM code range,
 *      build-id, layout from DWARF or the known table, validated against
 *      every live global_State).  A process without LuaJIT, or whose
 *      layout is unknown, is refused with a message naming the binary and
 *      its build-id.  Without Lua (want_lua 0) only host stacks.
 *   2. luw_attach_fill: the attach request's VM range, layout and G hint.
 *   3. luw_attach_upload: a compact unwind table (cfi.c) for every executable
 *      file mapping (and the [vdso]) not uploaded yet.  Called once after
 *      attach, then periodically by whoever keeps recording, so libraries
 *      loaded later (dlopen, ffi.load) get tables too.
 *
 * luw_attach_run does 1-3 in the right order: attach stopped, upload,
 * start, so no early sample runs without tables.
 */
#ifndef LUW_RECORD_ATTACH_H
#define LUW_RECORD_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "luaunwind.h"

struct luw_attacher;

struct luw_attach_opts {
	uint32_t flags;		/* LUW_ATTACH_STOPPED, LUW_ATTACH_PERIOD */
	uint32_t event;		/* LUW_EVENT_* */
	uint64_t sample_rate;	/* Hz, or a period; 0: 999 Hz */
	uint16_t max_host_frames;
	uint16_t max_lua_frames;
	int no_lua;		/* host stacks only */
	int no_tables;		/* frame pointers only */
	/*
	 * Allocation sampling (LUW_IOC_ALLOC) of every universe's
	 * allocator, about one ALLOC record per alloc_interval bytes; 0:
	 * none.  With LUW_ATTACH_NO_EVENTS in flags, no CPU samples.
	 */
	uint64_t alloc_interval;
};

/*
 * What sysprof's mode NAME asks of the module, set in *o: "callchain"
 * full stacks, "leaf" the innermost host and Lua frame only, "default" no
 * stacks, the VM state of each sample only.  0, or -1 for another name.
 */
int luw_attach_mode(struct luw_attach_opts *o, const char *name);

/* Step 1.  0, or -1 with a message in err. */
int luw_attach_open(pid_t pid, int want_lua, struct luw_attacher **out, char *err,
		 size_t errlen);

/* Step 2: fills vm_*, interp_end, layout_ptr/size, g_hint of *req. */
void luw_attach_fill(const struct luw_attacher *a, struct luw_attach *req);

/* The layout that luw_attach_fill hands over (tests mutate it); NULL without
 * Lua.
 */
struct luw_lj_layout *luw_attach_layout(struct luw_attacher *a);

/*
 * Step 3: tables for the executable mappings that appeared since the last
 * call.  Returns how many were uploaded (0: nothing new), or -1 with a
 * message when the process or the device is gone.  A mapping whose table
 * cannot be built (no .eh_frame, unreadable file) is skipped and counted
 * in *skipped (may be NULL); its frames fall back to frame pointers.
 */
int luw_attach_upload(struct luw_attacher *a, int fd, unsigned int *skipped, char *err,
		   size_t errlen);

/* Steps 1-3 and start.  0, or -1 with a message (errno-style in *errnum
 * when the ioctl failed, else 0).
 */
int luw_attach_run(int fd, pid_t pid, const struct luw_attach_opts *o,
		   struct luw_attacher **out, int *errnum, char *err, size_t errlen);

/* One line describing the target: binary, build-id, layout, VM range. */
void luw_attach_describe(const struct luw_attacher *a, char *buf, size_t len);

pid_t luw_attach_pid(const struct luw_attacher *a);
/* What step 1 found and proved; NULL without Lua. */
struct luw_layout_target;
const struct luw_layout_target *luw_attach_target(const struct luw_attacher *a);
void luw_attach_free(struct luw_attacher *a);

#endif
