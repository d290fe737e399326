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
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "luw.h"

DEFINE_MUTEX(luw_lock);
LIST_HEAD(luw_sessions);

struct luw_session *luw_session_new(void)
{
	struct luw_session *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return NULL;
	INIT_LIST_HEAD(&s->targets);
	init_waitqueue_head(&s->wq);
	mutex_init(&s->read_lock);
	s->owner = current_euid();
	s->nref = 1;
	mutex_lock(&luw_lock);
	list_add_tail(&s->node, &luw_sessions);
	mutex_unlock(&luw_lock);
	return s;
}

/* Drop one reference; the last one ends the targets.  luw_lock held. */
void luw_session_put(struct luw_session *s)
{
	lockdep_assert_held(&luw_lock);
	if (--s->nref)
		return;
	list_del(&s->node);
	luw_targets_destroy(s);
	luw_ring_free(s);
	mutex_destroy(&s->read_lock);
	kfree(s);
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
		if (s->kept && uid_eq(s->owner, uid))
			return s;
	return NULL;
}

static bool luw_session_fresh(const struct luw_file *f)
{
	return !f->used && !f->s->nr_targets && !f->s->rings;
}

/*
 * opener: the credentials the file was opened with.  A kept session is
 * its owner's: the file must have been opened by that user as well as
 * held by them, or a descriptor handed between users would join one
 * user's file to the other's samples.
 */
int luw_session_join(struct luw_file *f, const struct luw_join *j,
		     const struct cred *opener)
{
	struct luw_session *to = NULL;
	struct file *other = NULL;
	int err = 0;

	if (j->flags & ~LUW_JOIN_FLAGS || j->reserved ||
	    (j->fd >= 0 && j->flags) || j->fd < -1)
		return -EINVAL;
	if (j->fd >= 0) {
		other = fget(j->fd);
		if (!other)
			return -EBADF;
	}

	mutex_lock(&luw_lock);
	if (other) {
		struct luw_file *of = other->private_data;

		if (!luw_is_device_file(other)) {
			err = -EBADF;
			goto out;
		}
		to = of->s;
	} else {
		if (!uid_eq(opener->euid, current_euid()) ||
		    !uid_eq(f->s->owner, current_euid())) {
			err = -EPERM;
			goto out;
		}
		to = luw_kept_of(current_euid());
		if (!to && !(j->flags & LUW_JOIN_CREATE)) {
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
	luw_session_put(f->s);
	f->s = to;
out:
	mutex_unlock(&luw_lock);
	if (other)
		fput(other);
	return err;
}

/*
 * A kept session ends once it has no target and no file: its owner
 * detached everything, or every target exited.  luw_lock held.
 */
void luw_session_unkeep_idle(void)
{
	struct luw_session *s, *tmp;

	lockdep_assert_held(&luw_lock);
	list_for_each_entry_safe(s, tmp, &luw_sessions, node) {
		if (s->kept && !s->nr_targets && s->nref == 1) {
			s->kept = false;
			luw_session_put(s);
		}
	}
}

/* Module unload: no file is open, so only kept sessions are left. */
void luw_session_exit(void)
{
	struct luw_session *s, *tmp;

	mutex_lock(&luw_lock);
	list_for_each_entry_safe(s, tmp, &luw_sessions, node) {
		WARN_ON(!s->kept || s->nref != 1);
		s->kept = false;
		s->nref = 1;
		luw_session_put(s);
	}
	mutex_unlock(&luw_lock);
}
