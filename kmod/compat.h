/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels luaunwind.ko builds for.  An out-of-tree
 * module built for several kernel versions needs version checks; they live
 * here alone (kmod/Makefile lets checkpatch's LINUX_VERSION_CODE rule pass
 * for this file only).
 */
#ifndef LUW_COMPAT_H
#define LUW_COMPAT_H

#include <linux/sched/signal.h>
#include <linux/version.h>

/*
 * The lock exec takes while it replaces a process's program: a mutex
 * from 5.7, a rw_semaphore from 5.11 on.
 */
static inline int luw_exec_lock_killable(struct task_struct *task)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 11, 0)
	return down_read_killable(&task->signal->exec_update_lock);
#else
	return mutex_lock_killable(&task->signal->exec_update_mutex);
#endif
}

static inline void luw_exec_unlock(struct task_struct *task)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 11, 0)
	up_read(&task->signal->exec_update_lock);
#else
	mutex_unlock(&task->signal->exec_update_mutex);
#endif
}

#endif /* LUW_COMPAT_H */
