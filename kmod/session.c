// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: what one open file of /dev/luaunwind attaches, uploads and
 * reads.  A session is private to the file that opened it, as a perf
 * event fd is, and shared only on purpose (LUW_IOC_JOIN): with another
 * open file the caller holds, or as the caller's kept session, the one
 * per effective uid that outlives its files so that `luaunwind-ctl
 * attach` in one process and a reader in the next can meet.  Closing the
 * last file of a session that is not kept ends its targets: a killed
 * reader leaves nothing sampling.
 */
#include <linux/cred.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "luw.h"

DEFINE_MUTEX(luw_lock);
LIST_HEAD(luw_sessions);
static LIST_HEAD(luw_users);

/*
 * The per-user cap on open sessions (each may hold rings; target.c has
 * those on targets and events, ring.c on ring memory): so that one user
 * of a shared machine cannot take what the module has for all.  Root is
 * held to it too; the admin may change it at any time.
 */
static unsigned int max_user_sessions = 64;
module_param(max_user_sessions, uint, 0644);
MODULE_PARM_DESC(max_user_sessions, "open files of /dev/luaunwind one user may have");

/* The caller's user with one more session charged, or ERR_PTR. */
static struct luw_user *luw_user_charge(kuid_t uid)
{
	struct luw_user *u;

	lockdep_assert_held(&luw_lock);
	list_for_each_entry(u, &luw_users, node) {
		if (!uid_eq(u->uid, uid))
			continue;
		if (u->sessions >= READ_ONCE(max_user_sessions))
			return ERR_PTR(-EMFILE);
		u->sessions++;
		return u;
	}
	if (!READ_ONCE(max_user_sessions))
		return ERR_PTR(-EMFILE);
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return ERR_PTR(-ENOMEM);
	u->uid = uid;
	u->sessions = 1;
	list_add(&u->node, &luw_users);
	return u;
}

static void luw_user_uncharge(struct luw_user *u)
{
	lockdep_assert_held(&luw_lock);
	if (--u->sessions)
		return;
	WARN_ON(u->targets || u->events || u->ring_bytes);
	list_del(&u->node);
	kfree(u);
}

struct luw_session *luw_session_new(void)
{
	struct luw_session *s;
	struct luw_user *u;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&s->targets);
	INIT_LIST_HEAD(&s->ring_node);
	init_waitqueue_head(&s->wq);
	mutex_init(&s->read_lock);
	mutex_init(&s->lock);
	s->nref = 1;
	mutex_lock(&luw_lock);
	u = luw_user_charge(current_euid());
	if (!IS_ERR(u)) {
		s->user = u;
		list_add_tail(&s->node, &luw_sessions);
	}
	mutex_unlock(&luw_lock);
	if (IS_ERR(u)) {
		mutex_destroy(&s->lock);
		mutex_destroy(&s->read_lock);
		kfree(s);
		return ERR_CAST(u);
	}
	return s;
}

/*
 * Drop one reference, luw_lock held.  The last one takes the session off
 * luw_sessions to g's ending list, pinned there (one pending) until
 * luw_grave_release() has ended its targets under the session's lock.
 */
void luw_session_put(struct luw_session *s, struct luw_grave *g)
{
	lockdep_assert_held(&luw_lock);
	if (--s->nref)
		return;
	WRITE_ONCE(s->pending, s->pending + 1);
	list_move_tail(&s->node, &g->ending);
}

/*
 * One pending target (or the pin of luw_session_put()) is gone, luw_lock
 * held: the session goes to dead once it has neither files nor those.
 */
static void luw_session_unpend(struct luw_session *s, struct list_head *dead)
{
	lockdep_assert_held(&luw_lock);
	WRITE_ONCE(s->pending, s->pending - 1);
	if (s->pending)
		return;
	if (s->nref)
		luw_ring_wake(s);	/* end of file, maybe */
	else
		list_add_tail(&s->node, dead);
}

/* Release what g holds; no lock held.  Sleeps. */
void luw_grave_release(struct luw_grave *g)
{
	struct luw_session *s, *tmp;
	struct luw_proc *t;

	list_for_each_entry(s, &g->ending, node) {
		mutex_lock(&s->lock);
		luw_targets_destroy(s, g);
		mutex_unlock(&s->lock);
	}
	luw_targets_quiesce(&g->targets);
	/* Not the sessions' locks: one may be held long (an attach). */
	if (!list_empty(&g->targets) || !list_empty(&g->ending)) {
		mutex_lock(&luw_lock);
		list_for_each_entry(t, &g->targets, node) {
			luw_target_retire(t);
			luw_session_unpend(t->sess, &g->dead);
		}
		list_for_each_entry_safe(s, tmp, &g->ending, node) {
			list_del_init(&s->node);
			luw_session_unpend(s, &g->dead);
		}
		mutex_unlock(&luw_lock);
	}
	luw_targets_free(&g->targets);
	list_for_each_entry_safe(s, tmp, &g->dead, node) {
		/* No target is left to write to the rings. */
		luw_ring_free(s);
		mutex_lock(&luw_lock);
		luw_user_uncharge(s->user);
		mutex_unlock(&luw_lock);
		mutex_destroy(&s->lock);
		mutex_destroy(&s->read_lock);
		kfree(s);
	}
}

/* The session a file reads from; from now on it never changes. */
struct luw_session *luw_file_session(struct luw_file *f)
{
	if (!READ_ONCE(f->used)) {
		mutex_lock(&luw_lock);
		f->used = true;
		mutex_unlock(&luw_lock);
	}
	return f->s;
}

static struct luw_session *luw_kept_of(kuid_t uid)
{
	struct luw_session *s;

	list_for_each_entry(s, &luw_sessions, node)
		if (s->kept && uid_eq(s->user->uid, uid))
			return s;
	return NULL;
}

static bool luw_session_fresh(const struct luw_file *f)
{
	return !f->used && !f->s->nr_targets && !f->s->rings;
}

/*
 * Join other's session (another open file of the device), or with other
 * NULL the caller's kept session (flags: LUW_JOIN_CREATE).  opener: the
 * credentials f was opened with.  A kept session is its owner's: the file
 * must have been opened by that user as well as held by them, or a
 * descriptor handed between users would join one user's file to the
 * other's samples.
 */
int luw_session_join(struct luw_file *f, struct luw_file *other, u32 flags,
		     const struct cred *opener)
{
	struct luw_session *to = NULL;
	struct luw_grave g = LUW_GRAVE_INIT(g);
	int err = 0;

	mutex_lock(&luw_lock);
	if (other) {
		to = other->s;
	} else {
		if (!uid_eq(opener->euid, current_euid()) ||
		    !uid_eq(f->s->user->uid, current_euid())) {
			err = -EPERM;
			goto out;
		}
		to = luw_kept_of(current_euid());
		if (!to && !(flags & LUW_JOIN_CREATE)) {
			err = -ENOENT;
			goto out;
		}
		if (!to) {
			/* This file's own session becomes the kept one. */
			f->s->kept = true;
			f->s->nref++;
			goto out;
		}
	}
	if (to == f->s)
		goto out;
	if (!luw_session_fresh(f)) {
		err = -EBUSY;
		goto out;
	}
	to->nref++;
	luw_session_put(f->s, &g);
	f->s = to;
out:
	mutex_unlock(&luw_lock);
	luw_grave_release(&g);
	return err;
}

/*
 * A kept session ends once it has no target and no file: its owner
 * detached everything, or every target exited.  luw_lock held.
 */
void luw_session_unkeep_idle(struct luw_grave *g)
{
	struct luw_session *s, *tmp;

	lockdep_assert_held(&luw_lock);
	list_for_each_entry_safe(s, tmp, &luw_sessions, node) {
		if (s->kept && !s->nr_targets && s->nref == 1) {
			s->kept = false;
			luw_session_put(s, g);
		}
	}
}

/* Module unload: no file is open, so only kept sessions are left. */
void luw_session_exit(void)
{
	struct luw_session *s, *tmp;
	struct luw_grave g = LUW_GRAVE_INIT(g);

	mutex_lock(&luw_lock);
	list_for_each_entry_safe(s, tmp, &luw_sessions, node) {
		WARN_ON(!s->kept || s->nref != 1);
		s->kept = false;
		s->nref = 1;
		luw_session_put(s, &g);
	}
	mutex_unlock(&luw_lock);
	luw_grave_release(&g);
}
