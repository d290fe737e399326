// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU sample rings.
 *
 * Each session has one ring per CPU, allocated when its first attach
 * succeeds, for the CPUs online then; a CPU that comes online later gets
 * its ring from the hotplug callback below (a CPU that goes offline keeps
 * its ring: records may wait there).  They go when a reader has read end
 * of file (the targets gone, their records read), or with the session.
 * Ring memory is charged to the session's user, up to max_user_ring_kb; a
 * ring the hotplug callback adds is charged too but never refused
 * (refusing would drop samples there silently), so a user may go over by
 * the CPUs that came online.  A ring has exactly one producer, the
 * overflow handler running on that CPU (hardirq for cpu-clock, NMI for
 * cycles; the reaper's END records are written with interrupts off, so
 * they take the producer's place), and one consumer at a time, read()
 * under the session's read_lock.  head and tail are free running byte
 * counters: the producer owns head, the consumer owns tail, and each
 * publishes its counter with a release store after touching the data, so
 * no lock is ever taken in the handler.  Two handlers can still meet on
 * one CPU (a cycles NMI interrupting a cpu-clock hrtimer of another
 * target); the nest counter makes the inner one drop its sample instead of
 * corrupting the ring.
 *
 * Records are 8-byte aligned multiples of 8 and the ring size is a power of
 * two, so a record header never wraps; the body may, and is copied in two
 * pieces.  The handler builds most samples in the ring itself, where they
 * do not wrap (luw_ring_reserve()).
 *
 * Waking the reader costs the sampled CPU an interrupt (irq_work) and the
 * reader's CPU a wake-up, more than a sample's walk in a busy guest when
 * done for every record.  So, as perf's watermark does, the handler wakes
 * readers only when a ring's unread bytes reach a quarter of it, and the
 * session's flush work wakes them every LUW_FLUSH_MS when any ring holds
 * records: a reader waits at most that long for a record that came in.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/irq_work.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "luw.h"

static unsigned int ring_kb = 1024;
module_param(ring_kb, uint, 0444);
MODULE_PARM_DESC(ring_kb, "size of each per-CPU sample ring in KiB, a power of two (16..65536)");

static unsigned int max_user_ring_kb = 256 * 1024;
module_param(max_user_ring_kb, uint, 0644);
MODULE_PARM_DESC(max_user_ring_kb, "ring memory in KiB one user's sessions may have");

unsigned int luw_ring_bytes;

#define LUW_FLUSH_MS	100

/*
 * Sessions that have rings, for the hotplug callback.  Lock order: a
 * session's lock, then the CPU hotplug lock, then luw_rings_lock; the
 * callback holds the hotplug lock and takes luw_rings_lock alone.
 */
static DEFINE_MUTEX(luw_rings_lock);
static LIST_HEAD(luw_rings);
static int luw_cpuhp_state = -1;

static void luw_ring_wake_work(struct irq_work *w)
{
	struct luw_ring *r = container_of(w, struct luw_ring, wake);

	wake_up_interruptible(&r->s->wq);
}

static int luw_ring_data_alloc(struct luw_ring *r)
{
	void *data = __vmalloc(luw_ring_bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO);

	if (!data)
		return -ENOMEM;
	/* Pairs with READ_ONCE() in luw_ring_write(), _reserve(): zeroes first. */
	smp_store_release(&r->data, data);
	return 0;
}

/* A CPU comes online: a ring for it in every session that has rings. */
static int luw_ring_cpu_online(unsigned int cpu)
{
	struct luw_session *s;
	struct luw_ring *r;

	mutex_lock(&luw_rings_lock);
	list_for_each_entry(s, &luw_rings, ring_node) {
		r = per_cpu_ptr(s->rings, cpu);
		/* Without one, its samples there are counted as drops. */
		if (r->data || luw_ring_data_alloc(r))
			continue;
		s->ring_bytes += luw_ring_bytes;
		s->user->ring_bytes += luw_ring_bytes;
	}
	mutex_unlock(&luw_rings_lock);
	return 0;
}

int luw_ring_init(void)
{
	int ret;

	if (ring_kb < 16 || ring_kb > 65536 || !is_power_of_2(ring_kb)) {
		pr_err("luaunwind: ring_kb=%u: need a power of two in 16..65536\n",
		       ring_kb);
		return -EINVAL;
	}
	luw_ring_bytes = ring_kb * 1024;
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					"misc/luaunwind:online",
					luw_ring_cpu_online, NULL);
	if (ret < 0)
		return ret;
	luw_cpuhp_state = ret;
	return 0;
}

void luw_ring_exit(void)
{
	if (luw_cpuhp_state >= 0)
		cpuhp_remove_state_nocalls(luw_cpuhp_state);
	luw_cpuhp_state = -1;
}

static bool luw_ring_any(struct luw_session *s)
{
	struct luw_ring __percpu *rings;
	bool any = false;
	int cpu;

	/* The rings may go at end of file: luw_ring_release_idle(). */
	rcu_read_lock();
	/* Pairs with the release in luw_ring_alloc(). */
	rings = smp_load_acquire(&s->rings);
	for_each_possible_cpu(cpu) {
		struct luw_ring *r;

		if (!rings)
			break;
		r = per_cpu_ptr(rings, cpu);
		/* Pairs with the release of head in luw_ring_publish(). */
		if (smp_load_acquire(&r->head) != READ_ONCE(r->tail)) {
			any = true;
			break;
		}
	}
	rcu_read_unlock();
	return any;
}

/* Records the handler did not wake anyone for: readers get them now. */
static void luw_ring_flush(struct work_struct *work)
{
	struct luw_session *s = container_of(to_delayed_work(work),
					     struct luw_session, flush);

	if (wq_has_sleeper(&s->wq) && luw_ring_any(s))
		wake_up_interruptible(&s->wq);
	schedule_delayed_work(&s->flush, msecs_to_jiffies(LUW_FLUSH_MS));
}

static void luw_rings_destroy(struct luw_ring __percpu *rings)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct luw_ring *r = per_cpu_ptr(rings, cpu);

		irq_work_sync(&r->wake);
		vfree(r->data);
	}
	free_percpu(rings);
}

/*
 * When the session's first attach has its events (they write nothing
 * until it succeeds); the session's lock held.  A reader of the session
 * may be waiting already: it sees the rings only once they are whole.
 * ENOMEM also when the user's rings would pass max_user_ring_kb.
 */
int luw_ring_alloc(struct luw_session *s)
{
	struct luw_ring __percpu *rings;
	u64 need, cap;
	int cpu, err = 0;

	lockdep_assert_held(&s->lock);
	if (s->rings)
		return 0;
	rings = alloc_percpu_gfp(struct luw_ring, GFP_KERNEL_ACCOUNT);
	if (!rings)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct luw_ring *r = per_cpu_ptr(rings, cpu);

		r->s = s;
		init_irq_work(&r->wake, luw_ring_wake_work);
	}
	cpus_read_lock();
	mutex_lock(&luw_rings_lock);
	need = (u64)num_online_cpus() * luw_ring_bytes;
	cap = (u64)READ_ONCE(max_user_ring_kb) * 1024;
	if (s->user->ring_bytes + need > cap)
		err = -ENOMEM;
	for_each_online_cpu(cpu) {
		if (err)
			break;
		err = luw_ring_data_alloc(per_cpu_ptr(rings, cpu));
	}
	if (!err) {
		s->ring_bytes = need;
		s->user->ring_bytes += need;
		list_add(&s->ring_node, &luw_rings);
		/* Pairs with the acquire in luw_ring_any(). */
		smp_store_release(&s->rings, rings);
		INIT_DELAYED_WORK(&s->flush, luw_ring_flush);
		schedule_delayed_work(&s->flush, msecs_to_jiffies(LUW_FLUSH_MS));
	}
	mutex_unlock(&luw_rings_lock);
	cpus_read_unlock();
	if (err)
		luw_rings_destroy(rings);
	return err;
}

/* No handler can write any more (the targets are gone), no file reads. */
static struct luw_ring __percpu *luw_ring_unpublish(struct luw_session *s)
{
	struct luw_ring __percpu *rings = s->rings;

	/* It re-arms itself: the sync cancel stops both. */
	cancel_delayed_work_sync(&s->flush);
	mutex_lock(&luw_rings_lock);
	list_del_init(&s->ring_node);
	s->user->ring_bytes -= s->ring_bytes;
	s->ring_bytes = 0;
	WRITE_ONCE(s->rings, NULL);
	mutex_unlock(&luw_rings_lock);
	return rings;
}

void luw_ring_free(struct luw_session *s)
{
	if (s->rings)
		luw_rings_destroy(luw_ring_unpublish(s));
}

static void luw_ring_put(struct luw_ring *r, u64 pos, const void *src, u32 n)
{
	u32 mask = luw_ring_bytes - 1;
	u32 off = pos & mask;
	u32 first = min_t(u32, n, luw_ring_bytes - off);

	memcpy(r->data + off, src, first);
	if (first < n)
		memcpy(r->data, (const u8 *)src + first, n - first);
}

/*
 * Publish the record of size bytes at head: its bytes are visible before
 * the new head.  The unread bytes just reached a quarter of the ring (tail
 * as the producer last saw it): wake readers now rather than at the next
 * flush.  irq_work is NMI safe; wake_up() from NMI is not.
 */
static void luw_ring_publish(struct luw_ring *r, u64 head, u64 tail, u32 size)
{
	/* Pairs with the acquire of head in luw_ring_drain(). */
	smp_store_release(&r->head, head + size);
	if (head + size - tail >= luw_ring_bytes / 4 &&
	    head - tail < luw_ring_bytes / 4 && wq_has_sleeper(&r->s->wq))
		irq_work_queue(&r->wake);
}

/*
 * Called with preemption off: by the handler (alloc.c's with interrupts
 * on, the samples nested in it skipped by sample.c's busy flag), or with
 * interrupts off by the reaper for an END record.  Returns false when
 * the record was dropped (ring full or nested writer); the caller counts
 * it.
 */
bool luw_ring_write(struct luw_session *s, const void *rec, u32 size, u64 now)
{
	struct luw_ring *r = this_cpu_ptr(s->rings);
	u64 head, tail, need;
	bool ok = false;

	if (++r->nest > 1)
		goto out;
	/* Keep the ring's use inside the guard (sample.c says why). */
	barrier();
	/* A CPU whose ring could not be allocated when it came online. */
	if (unlikely(!READ_ONCE(r->data)))
		goto out;
	head = r->head;
	/* Pairs with the release of tail in luw_ring_drain(): the reader is
	 * done with the bytes before tail before we overwrite them.
	 */
	tail = smp_load_acquire(&r->tail);
	need = size + (r->lost ? sizeof(struct luw_lost) : 0);
	if (luw_ring_bytes - (head - tail) < need) {
		r->lost++;
		goto out;
	}
	if (r->lost) {
		struct luw_lost l = {
			.size = sizeof(l),
			.type = LUW_REC_LOST,
			.count = r->lost,
			.cpu = smp_processor_id(),
			.time = now,
		};

		luw_ring_put(r, head, &l, sizeof(l));
		head += sizeof(l);
		r->lost = 0;
	}
	luw_ring_put(r, head, rec, size);
	luw_ring_publish(r, head, tail, size);
	ok = true;
out:
	barrier();
	r->nest--;
	return ok;
}

/*
 * Room at the head of this CPU's ring for the handler to build a record of
 * up to LUW_RECORD_MAX bytes in place, instead of in its scratch and then
 * copied here (a copy of every sample's bytes): when that room is free,
 * does not wrap (a record is built as one run of bytes) and no LOST record
 * waits to go first.  That is all but the samples that come when head is
 * within LUW_RECORD_MAX of the ring's end, or the ring nearly full; for
 * them NULL, and luw_ring_write() with its copy and its drop count.  The
 * room is the producer's, past head, so the reader never looks at it.  On
 * success the ring stays held (its nest count) until luw_ring_commit().
 * Preemption off: the perf handlers, or alloc.c's probe, whose interrupts
 * stay on but whose samples nested in it sample.c's busy flag skips.
 */
void *luw_ring_reserve(struct luw_session *s)
{
	struct luw_ring *r = this_cpu_ptr(s->rings);
	u64 head, tail;
	u8 *data;
	u32 off;

	if (++r->nest > 1)
		goto busy;
	barrier();
	data = READ_ONCE(r->data);
	if (unlikely(!data) || r->lost)
		goto busy;
	head = r->head;
	off = head & (luw_ring_bytes - 1);
	if (off + LUW_RECORD_MAX > luw_ring_bytes)
		goto busy;
	/* Pairs with the release of tail in luw_ring_drain(). */
	tail = smp_load_acquire(&r->tail);
	if (luw_ring_bytes - (head - tail) < LUW_RECORD_MAX)
		goto busy;
	return data + off;
busy:
	barrier();
	r->nest--;
	return NULL;
}

/* The record built in luw_ring_reserve()'s room, of size bytes, published. */
void luw_ring_commit(struct luw_session *s, u32 size)
{
	struct luw_ring *r = this_cpu_ptr(s->rings);

	luw_ring_publish(r, r->head, READ_ONCE(r->tail), size);
	barrier();
	r->nest--;
}

/*
 * Copy whole records of one ring to buf; returns bytes copied, or a
 * negative errno when nothing could be copied.
 */
static ssize_t luw_ring_drain(struct luw_ring *r, char __user *buf, size_t len)
{
	u32 mask = luw_ring_bytes - 1;
	/* Pairs with the release of head in luw_ring_publish(). */
	u64 head = smp_load_acquire(&r->head);
	u64 tail = r->tail;
	size_t done = 0;
	int err = 0;

	while (tail != head) {
		u32 off = tail & mask;
		u16 size = *(u16 *)(r->data + off);
		u32 first;

		if (size < 8 || size > LUW_RECORD_MAX || (size & 7) ||
		    size > head - tail) {
			/* Cannot happen; resynchronise rather than loop. */
			pr_err_ratelimited("luaunwind: corrupt ring, %llu bytes dropped\n",
					   head - tail);
			tail = head;
			break;
		}
		if (size > len - done) {
			err = -EINVAL;
			break;
		}
		first = min_t(u32, size, luw_ring_bytes - off);
		if (copy_to_user(buf + done, r->data + off, first) ||
		    (first < size &&
		     copy_to_user(buf + done + first, r->data, size - first))) {
			err = -EFAULT;
			break;
		}
		done += size;
		tail += size;
	}
	/* Hand the copied bytes back to the producer, after copying them. */
	smp_store_release(&r->tail, tail);
	return done ?: err;
}

/*
 * End of file: the session had targets and none is left to write.  Before
 * its first attach a reader waits (another file of the session may attach);
 * a target attached later makes it readable again.
 */
static bool luw_ring_eof(struct luw_session *s)
{
	/*
	 * pending: a target unlinked is released (and its counts folded
	 * into the session's) after the locks are dropped, and a handler
	 * that began before may still write; end of file waits for both.
	 */
	return READ_ONCE(s->had_targets) && !READ_ONCE(s->nr_targets) &&
	       !READ_ONCE(s->pending) && !luw_ring_any(s);
}

/* Someone may wait for records that will not come: the last target went. */
void luw_ring_wake(struct luw_session *s)
{
	wake_up_interruptible(&s->wq);
}

/*
 * End of file was read: the session's targets are gone and their records
 * read, so its rings go back (a later attach allocates new ones).  Another
 * reader is kept out by read_lock, an attach by the session's lock; poll
 * and the end-of-file checks look at the rings under RCU (luw_ring_any()).
 */
static void luw_ring_release_idle(struct luw_session *s)
{
	struct luw_ring __percpu *rings = NULL;

	/* A reader that reads end of file again: nothing left to free. */
	if (!READ_ONCE(s->rings))
		return;
	mutex_lock(&s->read_lock);
	mutex_lock(&s->lock);
	if (s->rings && luw_ring_eof(s))
		rings = luw_ring_unpublish(s);
	mutex_unlock(&s->lock);
	mutex_unlock(&s->read_lock);
	if (!rings)
		return;
	synchronize_rcu();
	luw_rings_destroy(rings);
}

ssize_t luw_ring_read(struct luw_session *s, char __user *buf, size_t len,
		      bool nonblock)
{
	unsigned int ncpu = nr_cpu_ids, i;
	ssize_t done = 0, n;
	int err;

	if (!len)
		return 0;
	for (;;) {
		/* Pairs with the release in luw_ring_alloc(). */
		struct luw_ring __percpu *rings = smp_load_acquire(&s->rings);

		if (mutex_lock_interruptible(&s->read_lock))
			return -ERESTARTSYS;
		for (i = 0; rings && i < ncpu; i++) {
			unsigned int cpu = (s->read_next_cpu + i) % ncpu;

			if (!cpu_possible(cpu))
				continue;
			n = luw_ring_drain(per_cpu_ptr(rings, cpu),
					   buf + done, len - done);
			if (n < 0) {
				if (done)
					break;
				mutex_unlock(&s->read_lock);
				return n;
			}
			done += n;
		}
		/* Start with the next CPU next time, so none starves. */
		s->read_next_cpu = (s->read_next_cpu + 1) % ncpu;
		mutex_unlock(&s->read_lock);
		if (done)
			return done;
		if (luw_ring_eof(s)) {
			luw_ring_release_idle(s);
			return 0;
		}
		if (nonblock)
			return -EAGAIN;
		err = wait_event_interruptible(s->wq, luw_ring_any(s) ||
						      luw_ring_eof(s));
		if (err)
			return err;
	}
}

__poll_t luw_ring_poll(struct luw_session *s, struct file *file,
		       poll_table *wait)
{
	poll_wait(file, &s->wq, wait);
	if (luw_ring_any(s))
		return EPOLLIN | EPOLLRDNORM;
	return luw_ring_eof(s) ? EPOLLHUP : 0;
}
