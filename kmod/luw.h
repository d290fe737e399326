/* SPDX-License-Identifier: GPL-2.0 */
/*
 * luaunwind.ko internals shared between its files.
 *
 *   main.c      misc device, file operations, ioctl decoding
 *   session.c   sessions: one per open file, shared only by LUW_IOC_JOIN
 *   target.c    attached processes: attach/detach, start/stop, unwind
 *               tables, stats
 *   reap.c      targets that exit or exec: tracepoint probes, the reaper
 *   alloc.c     allocation sampling: uprobes on the targets' allocators
 *   sample.c    the perf overflow handler: builds one record per sample
 *   hostwalk.c  host (C) stack walk: compact unwind tables, frame pointers
 *   hwstep.h    its step, inline in the two walks that take it per frame
 *   mergewalk.c   Lua stack walk merged with the host walk (the record body)
 *   ring.c      a session's per-CPU lock-free rings, read() and poll()
 *
 * Locking, in this order: a session's read_lock (its reader), its lock
 * (everything one session controls: its targets, their events, tables,
 * stats and its rings), then luw_lock, the global mutex (the session
 * and user lists, the counts behind the caps, what the exit and exec
 * probes look at), held only briefly and never across perf calls, user
 * copies or sleeps for memory.  The reaper, which holds luw_lock to find
 * sessions, only tries a session's lock (reap.c).  What a session's
 * lock holder ends (targets detached, exited or closed with their
 * session) is unlinked under both locks and released after they are
 * dropped (struct luw_grave): perf's teardown of the events and the RCU
 * grace period that follows stall no other session.  The handler takes
 * no lock: it reaches its target through the event's context pointer and
 * the session through the target, and both are freed only after the
 * target's events are released and an RCU grace period has passed.
 */
#ifndef LUW_KMOD_H
#define LUW_KMOD_H

#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/types.h>

#include "compat.h"

#include <luaunwind.h>
#include <luaunwind_layout.h>
#include "uwtable.h"

struct cred;
struct mm_struct;
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
	u64 reads;
	u64 read_bytes;
	u64 budget_cuts;
	u64 interrupts;
	u64 alloc_calls;
	u64 alloc_bytes;
	u64 alloc_samples;
	u64 alloc_ns;
	u64 switch_calls;
	u64 switch_records;	/* LUW_REC_SWITCH written */
	u64 switch_ns;
	/*
	 * Not a count (summed with the rest, and meaningless summed): bytes
	 * left before this CPU's next ALLOC record (alloc.c).
	 */
	u64 alloc_left;
	u64 vmstate[LUW_VMST_COUNT];
	u64 hist[LUW_HIST_BUCKETS];
	u64 reads_hist[LUW_HIST_BUCKETS];
};

/* One CPU's ring of a session: one producer (the handler on that CPU). */
struct luw_ring {
	u64 head;
	u64 tail;
	u32 lost;		/* drops not yet reported by a LOST record */
	int nest;
	u8 *data;
	struct irq_work wake;
	struct luw_session *s;
};

/*
 * What one effective uid holds in all its sessions, for the per-user caps
 * (module parameters max_user_*): counts under luw_lock, ring_bytes under
 * the rings' lock (ring.c).  Freed with the user's last session.  An
 * attach charges its target and events before it creates them, so that
 * the caps hold while it runs without luw_lock.
 */
struct luw_user {
	struct list_head node;		/* on luw_users */
	kuid_t uid;
	unsigned int sessions;
	unsigned int targets;
	unsigned int events;
	u64 ring_bytes;
};

/*
 * What a file reads from and controls.  nref counts the files using it,
 * plus one while it is its owner's kept session.  nref, kept, node,
 * pending and retired are under luw_lock; targets and nr_targets under
 * both locks (either suffices to read them); the rest under lock, but
 * for the rings, wq and the read side.
 */
struct luw_session {
	struct list_head node;		/* on luw_sessions, or a grave's */
	struct mutex lock;
	struct list_head targets;	/* struct luw_proc.node */
	unsigned int nr_targets;
	unsigned int nref;
	/*
	 * Targets unlinked and not yet released (in some luw_grave), plus
	 * one while the session is being ended: the session, its rings
	 * above all, lives until none is left.
	 */
	unsigned int pending;
	bool had_targets;		/* end of file needs one gone */
	bool kept;
	/* The opener's effective uid's, the owner, charged for everything. */
	struct luw_user *user;
	struct luw_tstats retired;	/* detached targets, folded in */
	u64 ended;			/* targets ended by exit or exec */
	/*
	 * From the first attach that succeeds until end of file is read: a
	 * ring for each CPU that was online then or came online since
	 * (ring_bytes of them).
	 */
	struct luw_ring __percpu *rings;
	struct list_head ring_node;	/* on ring.c's list, with rings */
	u64 ring_bytes;
	struct delayed_work flush;	/* with rings: ring.c */
	wait_queue_head_t wq;
	struct mutex read_lock;
	unsigned int read_next_cpu;
};

/*
 * An open file: its session never changes once the file has read,
 * polled or attached (used), so a sleeping reader's wait queue stays.
 */
struct luw_file {
	struct luw_session *s;
	bool used;
};

u32 luw_sample_reads(void);

/* The unwind table of one executable mapping. */
struct luw_table {
	struct rcu_head rcu;
	u64 start;
	u64 end;
	u64 file_offset;
	u64 bytes;		/* of buf, counted against the module's cap */
	const struct luw_uw_entry *ent;
	const struct luw_uw_r14 *r14;
	u32 nent;
	u32 nr14;
	void *buf;		/* kvmalloc'ed header, entries, r14 rows */
	u32 *first;		/* the lookup index (uwtable.h) */
	u32 nfirst;
	u32 shift;
};

/* All tables of a target, sorted by start; replaced whole, under RCU. */
struct luw_maps {
	struct rcu_head rcu;
	u64 seq;		/* unique to this array, never 0 */
	u32 n;
	struct luw_table *t[];
};

struct luw_proc {
	struct list_head node;		/* on its session's targets */
	struct list_head watch;		/* on target.c's, for the probes */
	struct luw_session *sess;
	struct pid *pid;		/* the thread group; holds the pid ns */
	/*
	 * The program attached (mmgrab'ed, so the address is never reused
	 * while we compare against it): samples are taken only while
	 * current->mm is this one, never after an exec.
	 */
	struct mm_struct *mm;
	unsigned int ns_level;		/* attacher's pid namespace level */
	pid_t vpid;			/* pid as the attacher named it */
	bool dying;			/* handler: ignore from now on */
	bool running;
	bool offcpu;			/* LUW_ATTACH_OFFCPU */
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
	/* one per thread alive at attach; their children inherit copies */
	struct perf_event **events;
	unsigned int nr_events;
	struct luw_tstats __percpu *stats;
	struct luw_maps __rcu *maps;
	u64 table_bytes;		/* accounted in luw_table_bytes */
	/* Allocation probes (alloc.c), under the session's lock. */
	struct luw_aprobe *aprobes[LUW_MAX_ALLOCF];
	unsigned int nr_aprobes;
	u64 alloc_interval;		/* read by the probes' handler */
};

/*
 * What a holder of a session's lock or of luw_lock ended, released once
 * it has dropped them (luw_grave_release()): targets unlinked from their
 * sessions, sessions off luw_sessions whose last file went (ending: their
 * targets are yet to be unlinked), and sessions with no file and no such
 * target left (dead).  A session whose last file goes while some of its
 * targets wait in another grave is freed by the release of the last of
 * them.
 */
struct luw_grave {
	struct list_head targets;
	struct list_head ending;
	struct list_head dead;
};

#define LUW_GRAVE_INIT(name) \
	{ LIST_HEAD_INIT((name).targets), LIST_HEAD_INIT((name).ending), \
	  LIST_HEAD_INIT((name).dead) }

/* session.c */
extern struct mutex luw_lock;
extern struct list_head luw_sessions;
struct luw_session *luw_session_new(void);
void luw_session_put(struct luw_session *s, struct luw_grave *g);
void luw_grave_release(struct luw_grave *g);
struct luw_session *luw_file_session(struct luw_file *f);
int luw_session_join(struct luw_file *f, struct luw_file *other, u32 flags,
		     const struct cred *opener);
void luw_session_unkeep_idle(struct luw_grave *g);
void luw_session_exit(void);

/* target.c; the session's lock held where a session is passed */
int luw_attach_check(const struct luw_attach *a);
int luw_layout_copy(struct luw_lj_layout *ly, u64 uptr);
int luw_attach(struct luw_session *s, const struct luw_attach *a,
	       const struct luw_lj_layout *ly, const struct cred *opener);
int luw_detach(struct luw_session *s, pid_t pid, struct luw_grave *g);
int luw_start_stop(struct luw_session *s, pid_t pid, bool start);
int luw_alloc(struct luw_session *s, const struct luw_alloc *a);
struct luw_table *luw_table_load(const struct luw_unwind_table *u);
void luw_table_free(struct luw_table *tab);
int luw_table_install(struct luw_session *s, pid_t pid, struct luw_table *tab);
int luw_get_stats(struct luw_session *s, struct luw_stats *st);
u32 luw_list(struct luw_session *s, s32 *pids, u32 max);
void luw_targets_destroy(struct luw_session *s, struct luw_grave *g);
void luw_targets_reap(struct luw_session *s, struct list_head *ended);
void luw_targets_quiesce(struct list_head *list);
void luw_target_retire(struct luw_proc *t);
void luw_targets_free(struct list_head *list);
bool luw_target_watched(struct pid *tgid);
void luw_targets_thread_exit(struct task_struct *p);
u32 luw_nr_targets_now(void);

/* alloc.c */
struct luw_aprobe;
int luw_alloc_add(struct luw_proc *t, const struct luw_alloc *a);
void luw_alloc_release(struct list_head *targets);
void luw_alloc_free(struct luw_proc *t);

/* offcpu.c */
void luw_switch_out(struct perf_event *event, struct perf_sample_data *data,
		    struct pt_regs *regs);
void luw_switch_exit(struct luw_proc *t);

/* reap.c */
void luw_reap_soon(void);
int luw_reap_init(void);
void luw_reap_exit(void);

/* sample.c */
void luw_overflow(struct perf_event *event, struct perf_sample_data *data,
		  struct pt_regs *regs);
void luw_sample_emit(struct luw_proc *t, struct pt_regs *regs,
		     struct luw_tstats *st, u8 type, const void *tail,
		     unsigned int len, bool walk);
bool luw_unwalkable(struct task_struct *task);
int luw_sample_init(void);
void luw_sample_exit(void);

/*
 * hostwalk.c: the table, entry and r14 row a frame's pc was found to
 * have (luw_hw_lookup()).
 */
struct luw_step_memo {
	u64 seq;			/* luw_maps.seq, 0 empty */
	u64 key;			/* luw_uw_key() */
	const struct luw_table *tab;
	const struct luw_uw_entry *e;
	const struct luw_uw_r14 *x;	/* once x_found */
	bool x_found;
};

/* hostwalk.c: a cursor over the host frames, under rcu_read_lock() */
struct luw_hw {
	struct luw_uw_regs r;		/* the current frame */
	const struct luw_maps *m;
	struct luw_cost *cost;
	bool table_used;
	/*
	 * Follow r14 through the CFI (luw_hw_r14()): only until the Lua
	 * walk no longer needs it, each step's r14 row lookup and read
	 * being the price.
	 */
	bool want_r14;
	/*
	 * The interrupted frame's lookup, kept apart from the CPU's step
	 * memo: its pc is wherever the thread was, seldom the same twice,
	 * and there it would evict a return address at every sample.
	 */
	struct luw_step_memo leaf;
};

#define LUW_HW_NEXT	0	/* r is the caller now */
#define LUW_HW_END	1	/* outermost frame: complete */
#define LUW_HW_STOP	2	/* cannot go on: truncated */

int luw_hostwalk_init(void);
void luw_hostwalk_exit(void);
void luw_hw_init(struct luw_hw *w, struct luw_proc *t, struct pt_regs *regs,
		 struct luw_cost *cost);
bool luw_hw_restart(struct luw_hw *w, u64 ip, u64 sp, u64 bp);
bool luw_hw_in_vmseq(struct luw_hw *w);
bool luw_hw_r14(const struct luw_hw *w, u64 *r14);
void luw_hw_finish(struct luw_hw *w, bool complete, u8 *rflags);

/* A word of the thread's memory, a request of the walk's sample. */
static inline bool luw_hw_read(struct luw_hw *w, u64 addr, u64 *val)
{
	return !luw_walk_read(w->cost, addr, val, sizeof(*val));
}

int luw_host_walk(struct luw_proc *t, struct pt_regs *regs, u64 *pcs,
		  unsigned int max, u8 *rflags, struct luw_cost *cost);

/* mergewalk.c */
int luw_mergewalk_init(void);
void luw_mergewalk_exit(void);
u32 luw_merged_walk(struct luw_proc *t, struct pt_regs *regs,
		    struct luw_sample *s, struct luw_cost *cost);

/* ring.c */
extern unsigned int luw_ring_bytes;
int luw_ring_init(void);
void luw_ring_exit(void);
int luw_ring_alloc(struct luw_session *s);
void luw_ring_free(struct luw_session *s);
bool luw_ring_write(struct luw_session *s, const void *rec, u32 size, u64 now);
void *luw_ring_reserve(struct luw_session *s);
void luw_ring_commit(struct luw_session *s, u32 size);
ssize_t luw_ring_read(struct luw_session *s, char __user *buf, size_t len,
		      bool nonblock);
__poll_t luw_ring_poll(struct luw_session *s, struct file *file,
		       poll_table *wait);
void luw_ring_wake(struct luw_session *s);

#endif /* LUW_KMOD_H */
