// SPDX-License-Identifier: GPL-2.0
/*
 * luaunwind.ko: the /dev/luaunwind misc device and its ioctl decoding.
 * The ABI is documented in include/luaunwind.h.
 */
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "luw.h"

static_assert(sizeof(struct luw_version) == LUW_VERSION_SIZE_VER0);
static_assert(sizeof(struct luw_attach) == LUW_ATTACH_SIZE_VER1);
static_assert(sizeof(struct luw_target) == LUW_TARGET_SIZE_VER0);
static_assert(sizeof(struct luw_unwind_table) == LUW_UNWIND_TABLE_SIZE_VER0);
static_assert(sizeof(struct luw_stats) == LUW_STATS_SIZE_VER0);
static_assert(sizeof(struct luw_list) == LUW_LIST_SIZE_VER0);
static_assert(sizeof(struct luw_sample) == 40);
static_assert(sizeof(struct luw_lua_frame) == 24);
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
		     LUW_FEAT_VMSTATE_ONLY;
	v.ring_bytes = luw_ring_bytes;
	v.max_targets = LUW_MAX_TARGETS;
	return luw_copy_out(u, &v);
}

static long luw_ioc_target(unsigned int cmd, void __user *u)
{
	struct luw_target t;
	int err;

	err = luw_copy_in(&t, sizeof(t), LUW_TARGET_SIZE_VER0, u);
	if (err)
		return err;
	if (t.flags || t.reserved)
		return -EINVAL;
	switch (cmd) {
	case LUW_IOC_DETACH:
		return luw_detach(t.pid);
	case LUW_IOC_START:
		return luw_start_stop(t.pid, true);
	default:
		return luw_start_stop(t.pid, false);
	}
}

static long luw_ioc_attach(void __user *u)
{
	struct luw_attach a;
	int err;

	err = luw_copy_in(&a, sizeof(a), LUW_ATTACH_SIZE_VER0, u);
	return err ?: luw_attach(&a);
}

static long luw_ioc_unwind_table(void __user *u)
{
	struct luw_unwind_table ut;
	int err;

	err = luw_copy_in(&ut, sizeof(ut), LUW_UNWIND_TABLE_SIZE_VER0, u);
	if (err)
		return err;
	if (ut.flags)
		return -EINVAL;
	return luw_upload_table(&ut);
}

static long luw_ioc_stats(void __user *u)
{
	struct luw_stats *s;
	long err;

	/* Too big for the stack. */
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	err = luw_copy_in(s, sizeof(*s), LUW_STATS_SIZE_VER0, u);
	if (!err && s->flags)
		err = -EINVAL;
	if (!err)
		err = luw_get_stats(s);
	if (!err)
		err = luw_copy_out(u, s);
	kfree(s);
	return err;
}

static long luw_ioc_list(void __user *u)
{
	struct luw_list l;
	int err;

	err = luw_copy_in(&l, sizeof(l), LUW_LIST_SIZE_VER0, u);
	if (err)
		return err;
	if (l.flags || (l.max && !l.pids_ptr))
		return -EINVAL;
	err = luw_list(&l, u64_to_user_ptr(l.pids_ptr));
	return err ?: luw_copy_out(u, &l);
}

static long luw_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *u = (void __user *)arg;

	switch (cmd) {
	case LUW_IOC_VERSION:
		return luw_ioc_version(u);
	case LUW_IOC_ATTACH:
		return luw_ioc_attach(u);
	case LUW_IOC_DETACH:
	case LUW_IOC_START:
	case LUW_IOC_STOP:
		return luw_ioc_target(cmd, u);
	case LUW_IOC_UNWIND_TABLE:
		return luw_ioc_unwind_table(u);
	case LUW_IOC_STATS:
		return luw_ioc_stats(u);
	case LUW_IOC_LIST:
		return luw_ioc_list(u);
	default:
		return -ENOTTY;
	}
}

static int luw_open(struct inode *inode, struct file *file)
{
	/* The device reads other processes' stacks: perf's own bar. */
	if (!perfmon_capable())
		return -EPERM;
	return stream_open(inode, file);
}

static ssize_t luw_read(struct file *file, char __user *buf, size_t len,
			loff_t *ppos)
{
	return luw_ring_read(buf, len, file->f_flags & O_NONBLOCK);
}

static const struct file_operations luw_fops = {
	.owner = THIS_MODULE,
	.open = luw_open,
	.read = luw_read,
	.poll = luw_ring_poll,
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
	err = misc_register(&luw_dev);
	if (err)
		goto out_sample;
	return 0;

out_sample:
	luw_sample_exit();
out_ring:
	luw_ring_exit();
	return err;
}

static void __exit luw_exit(void)
{
	misc_deregister(&luw_dev);
	luw_target_exit();
	luw_sample_exit();
	luw_ring_exit();
}

module_init(luw_init);
module_exit(luw_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("luaunwind developers");
MODULE_DESCRIPTION("Sample LuaJIT processes: merged host and Lua stacks");
