// SPDX-License-Identifier: GPL-2.0
/*
 * luaunwind.ko: the /dev/luaunwind misc device and its ioctl decoding.
 * The ABI is documented in include/luaunwind.h.
 */
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "luw.h"

static_assert(sizeof(struct luw_version) == LUW_VERSION_SIZE_VER1);
static_assert(sizeof(struct luw_attach) == LUW_ATTACH_SIZE_VER1);
static_assert(sizeof(struct luw_target) == LUW_TARGET_SIZE_VER0);
static_assert(sizeof(struct luw_unwind_table) == LUW_UNWIND_TABLE_SIZE_VER0);
static_assert(sizeof(struct luw_stats) == LUW_STATS_SIZE_VER5);
static_assert(sizeof(struct luw_alloc) == LUW_ALLOC_SIZE_VER0);
static_assert(sizeof(struct luw_alloc_tail) == 24);
static_assert(sizeof(struct luw_switch_tail) == 32);
static_assert(sizeof(struct luw_list) == LUW_LIST_SIZE_VER0);
static_assert(sizeof(struct luw_join) == LUW_JOIN_SIZE_VER0);
static_assert(sizeof(struct luw_end) == 24);
static_assert(sizeof(struct luw_sample) == 40);
static_assert(sizeof(struct luw_lua_frame) == 32);
static_assert(sizeof(struct luw_splice) == 8);
static_assert(sizeof(struct luw_lost) == 24);
static_assert(LUW_RECORD_MAX <= U16_MAX);

/*
 * Copy in an ioctl argument whose first field is its size: at least the
 * first version's size, and any tail this module does not know must be
 * zero (copy_struct_from_user() checks that).
 */
static int luw_copy_in(void *k, size_t ksize, size_t ver0, void __user *u)
{
	u32 usize;
	int err;

	if (get_user(usize, (u32 __user *)u))
		return -EFAULT;
	if (usize < ver0 || usize > PAGE_SIZE)
		return -EINVAL;
	err = copy_struct_from_user(k, ksize, u, usize);
	if (err == -E2BIG)
		err = -EINVAL;
	if (!err)
		*(u32 *)k = min_t(u32, usize, ksize);
	return err;
}

/* Copy back as much as the caller's version of the struct holds. */
static int luw_copy_out(void __user *u, const void *k)
{
	return copy_to_user(u, k, *(const u32 *)k) ? -EFAULT : 0;
}

static long luw_ioc_version(void __user *u)
{
	struct luw_version v;
	int err;

	err = luw_copy_in(&v, sizeof(v), LUW_VERSION_SIZE_VER0, u);
	if (err)
		return err;
	v.abi_version = LUW_ABI_VERSION;
	v.record_version = LUW_RECORD_VERSION;
	v.nr_cpus = nr_cpu_ids;
	v.features = LUW_FEAT_FP_UNWIND | LUW_FEAT_TABLE_UNWIND |
		     LUW_FEAT_CYCLES | LUW_FEAT_LUA_WALK |
		     LUW_FEAT_VMSTATE_ONLY | LUW_FEAT_SESSIONS |
		     LUW_FEAT_OFFCPU |
		     (IS_ENABLED(CONFIG_UPROBES) ? LUW_FEAT_ALLOC : 0);
	v.ring_bytes = luw_ring_bytes;
	v.max_targets = LUW_MAX_TARGETS;
	v.nr_targets = luw_nr_targets_now();
	return luw_copy_out(u, &v);
}

/*
 * The session a control command acts on, its lock held; ERR_PTR if a
 * fatal signal came while waiting for it.  Marks the file used: from now
 * on LUW_IOC_JOIN cannot swap its session, which the file's reference
 * keeps alive for the call.
 */
static struct luw_session *luw_lock_session(struct file *file)
{
	struct luw_session *s = luw_file_session(file->private_data);

	if (mutex_lock_killable(&s->lock))
		return ERR_PTR(-EINTR);
	return s;
}

static long luw_ioc_target(struct file *file, unsigned int nr,
			   void __user *u)
{
	struct luw_session *s;
	struct luw_target t;
	struct luw_grave g = LUW_GRAVE_INIT(g);
	int err;

	err = luw_copy_in(&t, sizeof(t), LUW_TARGET_SIZE_VER0, u);
	if (err)
		return err;
	if (t.flags || t.reserved)
		return -EINVAL;
	s = luw_lock_session(file);
	if (IS_ERR(s))
		return PTR_ERR(s);
	if (nr == _IOC_NR(LUW_IOC_DETACH))
		err = luw_detach(s, t.pid, &g);
	else
		err = luw_start_stop(s, t.pid, nr == _IOC_NR(LUW_IOC_START));
	mutex_unlock(&s->lock);
	luw_grave_release(&g);
	return err;
}

static long luw_ioc_attach(struct file *file, void __user *u)
{
	struct luw_lj_layout *ly = NULL;
	struct luw_session *s;
	struct luw_attach a;
	int err;

	err = luw_copy_in(&a, sizeof(a), LUW_ATTACH_SIZE_VER0, u);
	if (!err)
		err = luw_attach_check(&a);
	if (err)
		return err;
	/*
	 * The layout is copied before any lock is taken: the pointer may be
	 * into memory that takes long to fault in (FUSE, userfaultfd).
	 */
	if (a.layout_size) {
		ly = kmalloc(sizeof(*ly), GFP_KERNEL);
		if (!ly)
			return -ENOMEM;
		err = luw_layout_copy(ly, a.layout_ptr);
	}
	if (!err) {
		s = luw_lock_session(file);
		err = PTR_ERR_OR_ZERO(s);
	}
	if (!err) {
		err = luw_attach(s, &a, ly, file->f_cred);
		mutex_unlock(&s->lock);
	}
	/* An exit or exec the probes saw before the target was theirs. */
	if (!err)
		luw_reap_soon();
	kfree(ly);
	return err;
}

static long luw_ioc_unwind_table(struct file *file, void __user *u)
{
	struct luw_unwind_table ut;
	struct luw_table *tab;
	struct luw_session *s;
	int err;

	err = luw_copy_in(&ut, sizeof(ut), LUW_UNWIND_TABLE_SIZE_VER0, u);
	if (err)
		return err;
	if (ut.flags)
		return -EINVAL;
	/* Copy and check the table before taking the lock: it may be big. */
	tab = luw_table_load(&ut);
	if (IS_ERR(tab))
		return PTR_ERR(tab);
	s = luw_lock_session(file);
	if (IS_ERR(s)) {
		luw_table_free(tab);
		return PTR_ERR(s);
	}
	err = luw_table_install(s, ut.pid, tab);
	mutex_unlock(&s->lock);
	return err;
}

static long luw_ioc_alloc(struct file *file, void __user *u)
{
	struct luw_session *s;
	struct luw_alloc a;
	int err;

	err = luw_copy_in(&a, sizeof(a), LUW_ALLOC_SIZE_VER0, u);
	if (err)
		return err;
	s = luw_lock_session(file);
	if (IS_ERR(s))
		return PTR_ERR(s);
	err = luw_alloc(s, &a);
	mutex_unlock(&s->lock);
	return err;
}

static long luw_ioc_stats(struct file *file, void __user *u)
{
	struct luw_session *s;
	struct luw_stats *st;
	long err;

	/* Too big for the stack. */
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	err = luw_copy_in(st, sizeof(*st), LUW_STATS_SIZE_VER0, u);
	if (!err && st->flags)
		err = -EINVAL;
	if (!err) {
		/* Only size and pid are input: the rest starts from zero. */
		u32 size = st->size;
		s32 pid = st->pid;

		memset(st, 0, sizeof(*st));
		st->size = size;
		st->pid = pid;
		s = luw_lock_session(file);
		err = PTR_ERR_OR_ZERO(s);
	}
	if (!err) {
		err = luw_get_stats(s, st);
		mutex_unlock(&s->lock);
	}
	if (!err)
		err = luw_copy_out(u, st);
	kfree(st);
	return err;
}

static long luw_ioc_list(struct file *file, void __user *u)
{
	struct luw_session *s;
	struct luw_list l;
	s32 *pids;
	int err;

	err = luw_copy_in(&l, sizeof(l), LUW_LIST_SIZE_VER0, u);
	if (err)
		return err;
	if (l.flags || (l.max && !l.pids_ptr))
		return -EINVAL;
	pids = kcalloc(LUW_MAX_TARGETS, sizeof(*pids), GFP_KERNEL);
	if (!pids)
		return -ENOMEM;
	s = luw_lock_session(file);
	if (IS_ERR(s)) {
		kfree(pids);
		return PTR_ERR(s);
	}
	l.count = luw_list(s, pids, LUW_MAX_TARGETS);
	mutex_unlock(&s->lock);
	if (copy_to_user(u64_to_user_ptr(l.pids_ptr), pids,
			 min(l.count, l.max) * sizeof(*pids)))
		err = -EFAULT;
	kfree(pids);
	return err ?: luw_copy_out(u, &l);
}

static const struct file_operations luw_fops;

static long luw_ioc_join(struct file *file, void __user *u)
{
	struct file *other = NULL;
	struct luw_join j;
	int err;

	err = luw_copy_in(&j, sizeof(j), LUW_JOIN_SIZE_VER0, u);
	if (err)
		return err;
	if (j.flags & ~LUW_JOIN_FLAGS || j.reserved ||
	    (j.fd >= 0 && j.flags) || j.fd < -1)
		return -EINVAL;
	if (j.fd >= 0) {
		other = fget(j.fd);
		if (!other)
			return -EBADF;
		/* Only another file of this device has a session to join. */
		if (other->f_op != &luw_fops) {
			fput(other);
			return -EBADF;
		}
	}
	err = luw_session_join(file->private_data,
			       other ? other->private_data : NULL, j.flags,
			       file->f_cred);
	if (other)
		fput(other);
	return err;
}

/*
 * Commands are told apart by type and number only: the size _IOW()
 * encodes is that of the caller's struct, which the struct's own size
 * field already versions (a program built against an older, shorter
 * struct would otherwise get ENOTTY).
 */
static long luw_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *u = (void __user *)arg;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != LUW_IOC_MAGIC)
		return -ENOTTY;
	switch (nr) {
	case _IOC_NR(LUW_IOC_VERSION):
		return luw_ioc_version(u);
	case _IOC_NR(LUW_IOC_ATTACH):
		return luw_ioc_attach(file, u);
	case _IOC_NR(LUW_IOC_DETACH):
	case _IOC_NR(LUW_IOC_START):
	case _IOC_NR(LUW_IOC_STOP):
		return luw_ioc_target(file, nr, u);
	case _IOC_NR(LUW_IOC_UNWIND_TABLE):
		return luw_ioc_unwind_table(file, u);
	case _IOC_NR(LUW_IOC_STATS):
		return luw_ioc_stats(file, u);
	case _IOC_NR(LUW_IOC_LIST):
		return luw_ioc_list(file, u);
	case _IOC_NR(LUW_IOC_JOIN):
		return luw_ioc_join(file, u);
	case _IOC_NR(LUW_IOC_ALLOC):
		return luw_ioc_alloc(file, u);
	default:
		return -ENOTTY;
	}
}

static int luw_open(struct inode *inode, struct file *file)
{
	struct luw_file *f;
	int err;

	/* The device reads other processes' stacks: perf's own bar. */
	if (!perfmon_capable())
		return -EPERM;
	err = stream_open(inode, file);
	if (err)
		return err;
	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	f->s = luw_session_new();
	if (IS_ERR(f->s)) {
		err = PTR_ERR(f->s);
		kfree(f);
		return err;
	}
	file->private_data = f;
	return 0;
}

static int luw_release(struct inode *inode, struct file *file)
{
	struct luw_file *f = file->private_data;
	struct luw_grave g = LUW_GRAVE_INIT(g);

	mutex_lock(&luw_lock);
	luw_session_put(f->s, &g);
	/* A kept session whose attach failed has nothing to keep. */
	luw_session_unkeep_idle(&g);
	mutex_unlock(&luw_lock);
	luw_grave_release(&g);
	kfree(f);
	return 0;
}

static ssize_t luw_read(struct file *file, char __user *buf, size_t len,
			loff_t *ppos)
{
	return luw_ring_read(luw_file_session(file->private_data), buf, len,
			     file->f_flags & O_NONBLOCK);
}

static __poll_t luw_poll(struct file *file, poll_table *wait)
{
	return luw_ring_poll(luw_file_session(file->private_data), file, wait);
}

static const struct file_operations luw_fops = {
	.owner = THIS_MODULE,
	.open = luw_open,
	.release = luw_release,
	.read = luw_read,
	.poll = luw_poll,
	.unlocked_ioctl = luw_ioctl,
	/* Every struct has the same layout for 32-bit callers. */
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice luw_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "luaunwind",
	.fops = &luw_fops,
	.mode = 0600,
};

static int __init luw_init(void)
{
	int err;

	err = luw_ring_init();
	if (err)
		return err;
	err = luw_sample_init();
	if (err)
		goto out_ring;
	err = luw_reap_init();
	if (err)
		goto out_sample;
	err = misc_register(&luw_dev);
	if (err)
		goto out_reap;
	return 0;

out_reap:
	luw_reap_exit();
out_sample:
	luw_sample_exit();
out_ring:
	luw_ring_exit();
	return err;
}

static void __exit luw_exit(void)
{
	/* No file is open (each holds a module reference): kept sessions. */
	misc_deregister(&luw_dev);
	luw_reap_exit();
	luw_session_exit();
	/* Table frees queued by uploads run module code: let them finish. */
	rcu_barrier();
	luw_sample_exit();
	luw_ring_exit();
}

module_init(luw_init);
module_exit(luw_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("luaunwind developers");
MODULE_DESCRIPTION("Sample LuaJIT processes: merged host and Lua stacks");
