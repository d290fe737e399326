/* SPDX-License-Identifier: GPL-2.0 */
/*
 * luaunwind.ko internals shared between its files.
 *
 *   main.c      misc device, file operations, ioctl decoding
 *   target.c    attached processes: attach/detach, start/stop, unwind
 *               tables, stats, reaping targets that exited
 *   sample.c    the perf overflow handler: builds one record per sample
 *   hostwalk.c  host (C) stack walk: compact unwind tables, frame pointers
 *   luawalk.c   Lua stack walk merged with the host walk (the record body)
 *   ring.c      per-CPU lock-free rings, read() and poll()
 */
#ifndef LUW_KMOD_H
#define LUW_KMOD_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

#include "compat.h"

#include <luaunwind.h>
#include <luaunwind_layout.h>
#include <luaunwind_unwind.h>

struct perf_event;
struct perf_sample_data;
struct pt_regs;

/* Per-CPU counters of one target; only the handler on that CPU writes. */
struct luw_tstats {
	u64 samples;
	u64 drops;
	u64 faults;
	u64 truncated;
	u64 skipped;
	u64 handler_ns;
	u64 handler_calls;
	u64 vmstate[LUW_VMST_COUNT];
	u64 hist[LUW_HIST_BUCKETS];
};

/* The unwind table of one executable mapping. */
struct luw_table {
	struct rcu_head rcu;
	u64 start;
	u64 end;
	u64 file_offset;
	const struct luw_uw_entry *ent;
	u32 nent;
	void *buf;		/* kvmalloc'ed header + entries */
};

/* All tables of a target, sorted by start; replaced whole, under RCU. */
struct luw_maps {
	struct rcu_head rcu;
	u32 n;
	struct luw_table *t[];
};

struct luw_proc {
	struct list_head node;		/* on luw_targets, under luw_lock */
	struct pid *pid;		/* the thread group; holds the pid ns */
	unsigned int ns_level;		/* attacher's pid namespace level */
	pid_t vpid;			/* pid as the attacher named it */
	bool dying;			/* handler: ignore from now on */
	bool running;
	u32 event;
	u64 vm_start;
	u64 vm_end;
	u64 interp_end;
	u64 g_hint;		/* from attach, 0 if none */
	u64 g_seen;		/* the G walks validated, or LUW_G_MANY */
	bool has_layout;
	struct luw_lj_layout ly;
	u16 max_host;
	u16 max_lua;
	bool vmstate_only;		/* LUW_ATTACH_VMSTATE_ONLY */
	struct perf_event **events;	/* one per CPU, NULL when offline */
	struct luw_tstats __percpu *stats;
	struct luw_maps __rcu *maps;
};

/* target.c */
extern struct mutex luw_lock;
void luw_target_exit(void);
int luw_attach(const struct luw_attach *a);
int luw_detach(pid_t pid);
int luw_start_stop(pid_t pid, bool start);
int luw_upload_table(const struct luw_unwind_table *u);
int luw_get_stats(struct luw_stats *s);
int luw_list(struct luw_list *l, s32 __user *pids);

/* sample.c */
void luw_overflow(struct perf_event *event, struct perf_sample_data *data,
		  struct pt_regs *regs);
int luw_sample_init(void);
void luw_sample_exit(void);

/* hostwalk.c: a cursor over the host frames, under rcu_read_lock() */
struct luw_hw {
	struct luw_uw_regs r;		/* the current frame */
	const struct luw_maps *m;
	u64 faults;
	bool table_used;
};

#define LUW_HW_NEXT	0	/* r is the caller now */
#define LUW_HW_END	1	/* outermost frame: complete */
#define LUW_HW_STOP	2	/* cannot go on: truncated */

void luw_hw_init(struct luw_hw *w, struct luw_proc *t, struct pt_regs *regs);
int luw_hw_step(struct luw_hw *w);
bool luw_hw_restart(struct luw_hw *w, u64 ip, u64 sp, u64 bp);
bool luw_hw_has_table(const struct luw_hw *w);
bool luw_hw_read(struct luw_hw *w, u64 addr, u64 *val);
void luw_hw_finish(struct luw_hw *w, bool complete, u8 *rflags, u64 *faults);
int luw_host_walk(struct luw_proc *t, struct pt_regs *regs, u64 *pcs,
		  unsigned int max, u8 *rflags, u64 *faults);

/* luawalk.c */
int luw_luawalk_init(void);
void luw_luawalk_exit(void);
u32 luw_merged_walk(struct luw_proc *t, struct pt_regs *regs,
		    struct luw_sample *s, u64 *faults);

/* ring.c */
extern unsigned int luw_ring_bytes;
int luw_ring_init(void);
void luw_ring_exit(void);
bool luw_ring_write(const void *rec, u32 size, u64 now);
ssize_t luw_ring_read(char __user *buf, size_t len, bool nonblock);
__poll_t luw_ring_poll(struct file *file, poll_table *wait);

#endif /* LUW_KMOD_H */
