/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * luaunwind: the /dev/luaunwind ioctl ABI and the sample record format.
 *
 * Shared by the kernel module (kmod/) and userspace
 * (userspace/lib/record/dev.c).
 *
 * Device and sessions
 * --------------------
 * /dev/luaunwind is a misc device, mode 0600.  open() needs CAP_PERFMON or
 * CAP_SYS_ADMIN (EPERM otherwise).  Each open file is a session of its
 * own, as a perf event fd is: the targets it attaches, their unwind
 * tables and the rings their samples go to belong to it, no other file
 * can see or touch them, and they end when the last file using the
 * session is closed (a killed `luaunwind-ctl record` leaves nothing
 * sampling).  A session is shared only on purpose, with LUW_IOC_JOIN:
 *  - with another open file of this module the caller holds (fd >= 0),
 *    e.g. a second descriptor for O_NONBLOCK reads;
 *  - with the caller's kept session (fd == -1): one per effective uid,
 *    which outlives its files.  LUW_JOIN_CREATE makes the file's own
 *    session the kept one when the caller has none (this is what
 *    `luaunwind-ctl attach` does; `detach`, `status`, `dump` and `record`
 *    without -p join it).  A kept session ends when its last target is
 *    detached or gone and no file uses it.
 *
 * A target is sampled while its threads run the program that was
 * attached: a target that exits, or execs another program, ends (when
 * its last thread exits or the exec completes; the module's reaper runs
 * then) with an END record in its session's rings; no sample is
 * ever taken of the new program.  Attaching asks what ptrace read access
 * would (PTRACE_MODE_READ_REALCREDS, as perf does): the caller's real uid
 * and gid equal the target's real, effective and saved ones and the
 * target is dumpable (SUID_DUMP_USER), or the caller has CAP_SYS_PTRACE
 * over the target's user namespace (and its mm's, when not dumpable).
 * Yama restricts ptrace attach only, not read access, so it does not
 * apply here either.  The check runs under the target's exec lock, so
 * it is made against the program that will be sampled, and for every
 * thread of it.  Both the caller and the file's opener must pass it and
 * hold CAP_PERFMON (or CAP_SYS_ADMIN): a descriptor handed to another
 * process (SCM_RIGHTS, inheritance) lends neither side more than it has.
 * For the same reason a kept session is joined (fd == -1) only through a
 * file its caller opened under the same effective uid (EPERM otherwise).
 * The LSM hooks perf_event_open() and ptrace read access call
 * (security_perf_event_open, security_ptrace_access_check) are not
 * exported to modules, so SELinux or AppArmor policy on perf and ptrace
 * is not consulted; capability checks go through the LSMs as ever.
 *
 * ioctl conventions
 * -----------------
 * Every argument is a struct whose first field is its size in bytes, set
 * by the caller to sizeof() of the struct it was compiled with.  Commands
 * are told apart by their type (LUW_IOC_MAGIC) and number alone: the size
 * that _IOW() encodes into the command is ignored, so a program built
 * against an older, shorter struct keeps working.  A size smaller than the
 * first published version of that struct is EINVAL; a larger one is
 * accepted when every byte the module does not know is zero (so old
 * modules run new programs that leave new fields unset), else EINVAL.
 * Unknown bits in any flags field are EINVAL, never ignored; so are
 * non-zero reserved fields.  A pointer the module cannot read or write is
 * EFAULT; a command number that is not listed here is ENOTTY.
 *
 *   LUW_IOC_VERSION      kernel fills struct luw_version.
 *   LUW_IOC_ATTACH       start sampling every thread of a process (threads
 *                        created later included) in this session: one
 *                        perf event per thread, which ticks only while
 *                        that thread runs.  A thread created while the
 *                        attach is under way may be missed (as by perf
 *                        record -p), never counted twice.  ESRCH
 *                        no such process, EBUSY already attached in this
 *                        session, ENOSPC too many targets
 *                        (LUW_MAX_TARGETS in all) or threads
 *                        (LUW_MAX_THREADS), EAGAIN threads created faster
 *                        than they can be listed, EPERM the caller or
 *                        the opener lacks CAP_PERFMON or ptrace read
 *                        access, EOPNOTSUPP the event cannot be created
 *                        (no PMU), EINVAL a rate outside the bounds
 *                        below.  The admin's
 *                        kernel.perf_event_max_sample_rate is perf's to
 *                        enforce (not exported to modules): perf
 *                        throttles the events past it, as any other.
 *   LUW_IOC_DETACH       stop and forget one target (ESRCH: not attached
 *                        in this session).
 *   LUW_IOC_UNWIND_TABLE hand over the compact unwind table of one
 *                        executable mapping of a target (format in
 *                        luaunwind_unwind.h); replaces any table for the
 *                        same range.  ENOMEM also when the module's tables
 *                        would exceed LUW_MAX_TABLES_BYTES in all.
 *   LUW_IOC_START/STOP   enable/disable sampling of one target (pid) or of
 *                        all of the session's (pid 0); attach can leave it
 *                        stopped.  A stopped target's events still tick
 *                        (counted in interrupts, no sample taken).
 *   LUW_IOC_STATS        counters of one target (pid) or of the whole
 *                        session, detached targets included (pid 0).
 *   LUW_IOC_LIST         pids of the session's targets.
 *   LUW_IOC_ALLOC        sample the allocations of one Lua universe of an
 *                        attached target (struct luw_alloc): a uprobe on its
 *                        allocator, the function at allocf (G->allocf), and
 *                        about every `interval` bytes requested an ALLOC
 *                        record (below).  The breakpoint is put only into
 *                        the target's address space, never into other
 *                        processes mapping the same file (a child the
 *                        target forks drops its inherited copy at its
 *                        first hit), and goes with the target (detach,
 *                        exit, exec, close, rmmod).  Universes sharing an
 *                        allocator share its probe; the interval is the
 *                        target's, the last one given.  START and STOP
 *                        govern these records as samples.  EINVAL: allocf
 *                        is not in an executable mapping of a file (code
 *                        made at run time cannot be probed) or interval
 *                        is out of bounds; ESRCH: not attached here, or
 *                        exited; ENOSPC: LUW_MAX_ALLOCF allocators already;
 *                        EOPNOTSUPP: a kernel without CONFIG_UPROBES.
 *   LUW_IOC_JOIN         share a session (see above).  ENOENT: no kept
 *                        session and no LUW_JOIN_CREATE; EBADF: fd is not
 *                        an open /dev/luaunwind; EBUSY: this file has
 *                        attached, read or polled already (its session
 *                        stays its own).  Holding an open file is what
 *                        lets a caller share it, as with any descriptor;
 *                        with LUW_JOIN_CREATE and a kept session already
 *                        there, the file joins that one.
 *
 * read(), poll()
 * --------------
 * Samples land in the session's per-CPU rings (module parameter ring_kb,
 * per CPU; allocated at the session's first attach).  read() copies out
 * as many whole records as fit in the buffer, draining the rings in CPU
 * order, so records are ordered by time only within one CPU; it never
 * returns part of a record.  A buffer too small for the next record is
 * EINVAL (LUW_RECORD_MAX always suffices).  With nothing to read it
 * blocks, or returns EAGAIN under O_NONBLOCK; once the session has had
 * targets and has none left, and its rings are empty, it returns 0 (end
 * of file), and so does a read of 0 bytes.  poll() reports EPOLLIN when a
 * record is waiting, EPOLLHUP at end of file.  A sleeping reader is woken
 * when a ring holds a quarter of its size unread, and otherwise within
 * 100 ms of a record coming in (not for each record: a wake-up per
 * sample costs the sampled CPU an interrupt); a reader that wants records
 * sooner polls with a timeout and reads with O_NONBLOCK.  A full ring drops the sample
 * (counted in drops) and the next record written to that ring is a LOST
 * record.
 *
 * Record stream
 * -------------
 * Everything is little-endian (x86-64 only), every record starts on an
 * 8-byte boundary and its size is a multiple of 8.
 *
 * stream         := record*
 * record         := sample | alloc | switch | lost | end
 *
 * sample         := sample-header host-frame{nhost} lua-frame{nlua}
 *                   splice{nsplice}
 * sample-header  := size type rflags vmstate pad nhost nlua nsplice
 *                   pid tid cpu trace reserved time
 * size           := <U16: bytes in the whole record, header included>
 * type           := <U8: LUW_REC_SAMPLE>
 * rflags         := <U8: LUW_RF_* bits>
 * vmstate        := <U8: LUW_VMST_*>
 * pad            := <U8: 0>
 * nhost          := <U16: host frames, innermost first>
 * nlua           := <U16: Lua frames, innermost first>
 * nsplice        := <U16: splice points>
 * pid            := <U32: process id, in the attacher's pid namespace>
 * tid            := <U32: thread id, same namespace>
 * cpu            := <U32: CPU the sample was taken on>
 * trace          := <U32: number of the running JIT trace when vmstate
 *                    is LUW_VMST_TRACE, else 0>
 * reserved       := <U32: 0>
 * time           := <U64: CLOCK_MONOTONIC, ns>
 * host-frame     := <U64: pc>  the interrupted user pc first, then one
 *                   return address per caller frame
 *
 * lua-frame      := addr line pc ffid kind lflags trace func
 * addr           := <U64: in the target's address space: the GCproto of
 *                    a Lua function (LUW_LF_LUA) or of the function where
 *                    a trace starts (LUW_LF_TRACE, 0 if unreadable); the
 *                    GCfunc of a C or fast function>
 * line           := <U32: current line, 0 when not known (the module
 *                    always writes 0: userspace reads lineinfo)>
 * pc             := <U32: bytecode index into the proto, 0 when not
 *                    known.  LUA: LuaJIT's convention, the instruction
 *                    after the one running (frame links and the
 *                    interpreter's PC register point past it), unless
 *                    LUW_LFF_PC_AT says it is the instruction itself (the
 *                    start of the trace running above); TRACE: the
 *                    trace's start instruction>
 * ffid           := <U8: fast-function id for LUW_LF_FFUNC, else 0>
 * kind           := <U8: LUW_LF_*>
 * lflags         := <U16: LUW_LFF_* bits>
 * trace          := <U32: trace number for LUW_LF_TRACE, else 0>
 * func           := <U64: LUW_LF_LUA: the closure (GCfunc) the frame runs,
 *                    which a tail call replaces in the frame while the
 *                    caller's call site stays; 0 for other kinds>
 *
 * splice         := host-first host-count lua-first lua-count
 * host-first     := <U16: index of the innermost host frame that runs VM
 *                    code (interpreter or trace) for this Lua segment>
 * host-count     := <U16: host frames from host-first that are this VM
 *                    activation's own; may be 0 (no VM frame was found)>
 * lua-first      := <U16: index of the segment's innermost Lua frame>
 * lua-count      := <U16: Lua frames in the segment>
 *
 * alloc          := sample-header host-frame{nhost} lua-frame{nlua}
 *                   splice{nsplice} alloc-tail
 *                   the stack of a thread entering its universe's
 *                   allocator, as a sample's (type LUW_REC_ALLOC; pc, the
 *                   first host frame, is the allocator's entry)
 * alloc-tail     := nsize osize akind pad{7}
 * nsize          := <U64: bytes requested>
 * osize          := <U64: bytes of the block resized, 0 for a new one>
 * akind          := <U8: LUW_ALLOC_NEW (ptr NULL), LUW_ALLOC_GROW or
 *                    LUW_ALLOC_SHRINK (a block resized)>
 * An allocation is recorded when it crosses the countdown of its CPU's
 * bytes, which then starts again from a fresh draw of an exponential
 * distribution whose mean is the interval: each byte requested is
 * sampled with probability 1/interval, independently of the others, so
 * an allocation of nsize bytes is recorded with probability
 * p = 1 - exp(-nsize / interval).  A reader estimates what was allocated
 * by weighting each record by 1/p: 1/p allocations, nsize/p bytes (as
 * pprof's heap profiles scale).  Frees (nsize 0) are not recorded.
 *
 * switch         := sample-header host-frame{nhost} lua-frame{nlua}
 *                   splice{nsplice} switch-tail
 *                   a thread of the target leaving its CPU (type
 *                   LUW_REC_SWITCH; with LUW_ATTACH_OFFCPU): its stack
 *                   as a sample's, taken from the user registers saved
 *                   on entry to the kernel (rflags LUW_RF_KERNEL), time
 *                   the moment it left
 * switch-tail    := runtime nvcsw nivcsw syscall sstate pad{3}
 * runtime        := <U64: the thread's CPU time until now, ns (the
 *                    scheduler's sum_exec_runtime)>
 * nvcsw          := <U64: its voluntary context switches, this one
 *                    included if it is one>
 * nivcsw         := <U64: its involuntary ones, likewise>
 * syscall        := <S32: the system call it is in (x86-64 numbers), -1
 *                    for none (a fault, an interrupt, user mode)>
 * sstate         := <U8: LUW_SWITCH_BLOCKED (its state was not running:
 *                    it waits), LUW_SWITCH_PREEMPTED (still runnable), or
 *                    LUW_SWITCH_EXIT: not a switch but the thread's exit
 *                    (sched_process_exit; its events are gone before its
 *                    last switch out), no frames, the counts of its last
 *                    switch, the runtime as the scheduler last updated it
 *                    (the slice it runs then is not in it: at most a
 *                    tick)>
 *                   A switch of a thread on its way out (PF_EXITING,
 *                   its memory may be gone) has no frames either.
 * Time off the CPU: between two switch records of one thread, it ran
 * only for the difference of their runtimes, so it was off the CPU for
 * (time2 - time1) - (runtime2 - runtime1), from the first one's stack.
 * Which way it left is the counter that moved between them (nvcsw:
 * blocked; nivcsw: preempted); sstate says it for a thread's first
 * record (a task preempted while it prepared to wait is counted
 * involuntary though its state is not running).  When the counters moved
 * by more than one in all (by any, up to an exit record), switches went
 * unrecorded (perf throttled the event, or a ring was full) and the
 * interval belongs to no one stack.
 * The last record of a thread still there ends at the reader's stop,
 * where its runtime is /proc/PID/task/TID/schedstat's first field.
 *
 * lost           := size type pad{5} count cpu time
 * size           := <U16: sizeof(struct luw_lost)>
 * type           := <U8: LUW_REC_LOST>
 * count          := <U32: samples dropped on this CPU since the last
 *                    record that made it into the ring>
 * time           := <U64: when the loss was noticed, CLOCK_MONOTONIC ns>
 *
 * end            := size type reason pad{4} pid reserved time
 * size           := <U16: sizeof(struct luw_end)>
 * type           := <U8: LUW_REC_END>
 * reason         := <U8: LUW_END_EXIT | LUW_END_EXEC>
 * pid            := <U32: the target, as attach named it>
 * reserved       := <U32: 0>
 * time           := <U64: when the module noticed, CLOCK_MONOTONIC ns>
 * The last record of a target that exited or exec'd; none after
 * LUW_IOC_DETACH (the caller knows).  Records of one target written before
 * its end record may still follow it from other CPUs' rings.
 *
 * A target attached with LUW_ATTACH_VMSTATE_ONLY gets samples with
 * nhost, nlua and nsplice all 0: the header alone, with vmstate and trace
 * as above, and only LUW_RF_KERNEL and LUW_RF_FAULT among the rflags (the
 * walk is cut short on purpose, so no TRUNC bit; a vmstate that could not
 * be read is LUW_VMST_UNKNOWN).
 *
 * Merging (how a reader builds one stack from a sample): walk the host
 * frames innermost first; when index host-first of a splice is reached,
 * emit that splice's Lua frames (innermost first) instead of its
 * host-count VM frames, then continue with the host frames after them.
 * Splices are sorted by host-first and do not overlap; Lua segments are
 * disjoint and in the same order.  A splice with host-first == nhost puts
 * its segment below every host frame (the host walk stopped early).  The
 * C function that entered the VM (lua_pcall, lj_vm_call's caller...) stays
 * a host frame after the segment; a lua_CFunction called from Lua appears
 * once, as a host frame above the segment that called it.
 *
 * How the module builds them (kmod/mergewalk.c): host frames are walked
 * innermost first.  A frame whose pc is in the interpreter
 * ([vm_start, interp_end) of attach), or in the machine code of the
 * running JIT trace, is a VM activation: the Lua stack is walked once, at
 * the first such frame (kmod/ljwalk.h), and its segments are spliced
 * in order, one per activation, each with host-count 1.  The host walk
 * does not unwind through VM code: it goes on from the caller of the VM
 * entry that started the activation, read from the entry's C frame.  So
 * the host frames after a splice are that entry's caller (lua_pcall ...),
 * or, for a coroutine resumed from Lua, the resumer's VM frame, which the
 * next splice replaces.  lj_vm_ffi_call ([interp_end, vm_end)) is an
 * ordinary host frame.  A segment's innermost lua_CFunction frame is not
 * written when host frames precede the splice (they hold its C code); a
 * fast function stays a Lua frame.  Segments left when the host walk ends
 * go into one last splice at host-first == nhost, host-count 0; when no
 * VM frame was found and the host walk stopped early, the Lua stack of
 * G->cur_L is walked from L->base and spliced there too.  In a trace
 * sample the first Lua frame is LUW_LF_TRACE, the frames below it are the
 * trace's protos.  The host walk ends, LUW_RF_HOST_TRUNC, where no frame
 * can be vouched for: at an interpreter pc whose rsp holds no VM C frame
 * (a VM entry's prologue or an exit's epilogue, where the interpreter's
 * fixed frame is not set up), and at trace code that G does not name as
 * running (no unwind rule, no frame pointer there).  Every user read of
 * a sample counts against LUW_SAMPLE_READS (or the module's sample_reads)
 * and LUW_SAMPLE_FAULTS; a walk
 * that reaches either ends, flagged truncated.
 * rflags LUW_RF_LUA_TRUNC: the Lua walk was cut short or
 * failed (no valid G, L or base: a layout that does not fit), vmstate is
 * then what could be read, else LUW_VMST_UNKNOWN.
 */
#ifndef _LUAUNWIND_H
#define _LUAUNWIND_H

#include <linux/ioctl.h>
#include <linux/types.h>

#include "luaunwind_layout.h"
#include "luaunwind_unwind.h"

#define LUW_DEVICE		"/dev/luaunwind"
/*
 * 2: Lua walk, attach version 1; 3: sessions, magic 0xE8, END records;
 * 4: an event per thread, stats version 2
 */
#define LUW_ABI_VERSION		5	/* 5: LUW_IOC_ALLOC, stats version 4 */
/* 2: LUW_REC_END; 3: LUW_REC_ALLOC; 4: LUW_REC_SWITCH; 5: lua-frame's func */
#define LUW_RECORD_VERSION	5

#define LUW_MAX_TARGETS		64	/* in all sessions together */
#define LUW_MAX_THREADS		4096	/* threads of one target at attach */
#define LUW_MAX_HOST_FRAMES	128
#define LUW_MAX_LUA_FRAMES	128
#define LUW_MAX_SPLICES		32
/* Largest unwind table accepted for one mapping. */
#define LUW_MAX_TABLE_BYTES	(64U << 20)
/* Unwind tables (mappings) per target. */
#define LUW_MAX_MAPPINGS	256
/* Unwind table bytes of all targets together. */
#define LUW_MAX_TABLES_BYTES	(512U << 20)
/*
 * One sample's user-memory read requests, every walk and scan together
 * (each a word or a short block, at most 64 bytes), and the faults it may
 * take (reads that failed): a walk that reaches either ends there, flagged
 * truncated (a hostile or garbage stack costs at most this much).  The module's
 * parameter sample_reads may lower the first, as perf_event_max_stack
 * does perf's stacks.
 */
#define LUW_SAMPLE_READS	1024
#define LUW_SAMPLE_FAULTS	16

/*
 * VM states (enum luw_vmstate, LUW_VMST_INTERP ... LUW_VMST_UNKNOWN) are
 * defined with the layout descriptor; LUW_VMST_UNKNOWN means no layout, or
 * G could not be read.
 */
#define LUW_VMST_COUNT		LUW_VMST__MAX

/* ---- version ---------------------------------------------------------- */

#define LUW_FEAT_FP_UNWIND	(1ULL << 0)	/* frame-pointer host walk */
#define LUW_FEAT_TABLE_UNWIND	(1ULL << 1)	/* LUW_IOC_UNWIND_TABLE */
#define LUW_FEAT_CYCLES		(1ULL << 2)	/* LUW_EVENT_CYCLES accepted */
/* attach takes a layout descriptor: samples carry Lua frames, splices */
#define LUW_FEAT_LUA_WALK	(1ULL << 3)
/* LUW_ATTACH_VMSTATE_ONLY accepted */
#define LUW_FEAT_VMSTATE_ONLY	(1ULL << 4)
/* per-file sessions, LUW_IOC_JOIN, END records, stats version 1 */
#define LUW_FEAT_SESSIONS	(1ULL << 5)
/* LUW_IOC_ALLOC: the kernel has uprobes */
#define LUW_FEAT_ALLOC		(1ULL << 6)
/* LUW_ATTACH_OFFCPU: switch records */
#define LUW_FEAT_OFFCPU		(1ULL << 7)

struct luw_version {
	__u32 size;
	__u32 abi_version;	/* out: LUW_ABI_VERSION */
	__u32 record_version;	/* out: LUW_RECORD_VERSION */
	__u32 nr_cpus;		/* out: possible CPUs (rings) */
	__u64 features;		/* out: LUW_FEAT_* */
	__u32 ring_bytes;	/* out: size of each per-CPU ring */
	__u32 max_targets;	/* out: LUW_MAX_TARGETS */
	/* ---- end of version 0 ---- */
	/* out: targets attached now, every session's (a count only) */
	__u32 nr_targets;
	__u32 reserved;		/* 0 */
};
#define LUW_VERSION_SIZE_VER0	32
#define LUW_VERSION_SIZE_VER1	40

/* ---- attach ----------------------------------------------------------- */

#define LUW_EVENT_CPU_CLOCK	0	/* software hrtimer, works everywhere */
#define LUW_EVENT_CYCLES	1	/* hardware cycles, needs a PMU */

/* sample_rate is a period: ns for cpu-clock, cycles for LUW_EVENT_CYCLES */
#define LUW_ATTACH_PERIOD	(1U << 0)
#define LUW_ATTACH_STOPPED	(1U << 1)	/* do not start sampling yet */
/*
 * Count VM states only (sysprof's DEFAULT mode): every sample is still
 * written and counted per vmstate, but as a bare header (nhost, nlua and
 * nsplice 0; see "Record stream").  The walk goes only as deep as reading
 * the vmstate needs, whatever max_host_frames and max_lua_frames say.
 */
#define LUW_ATTACH_VMSTATE_ONLY	(1U << 2)
/*
 * No CPU sampling: no sampling event is created (event and sample_rate
 * are still checked); the target is attached for its allocation probes
 * (LUW_IOC_ALLOC) or its switch records (LUW_ATTACH_OFFCPU) alone.
 */
#define LUW_ATTACH_NO_EVENTS	(1U << 3)
/*
 * Off-CPU: a context-switch event per thread too (period 1, inherited
 * as the sampling events are), whose handler writes a switch record
 * each time a thread of the target leaves its CPU.
 */
#define LUW_ATTACH_OFFCPU	(1U << 4)
#define LUW_ATTACH_FLAGS	(LUW_ATTACH_PERIOD | LUW_ATTACH_STOPPED | \
				 LUW_ATTACH_VMSTATE_ONLY | LUW_ATTACH_NO_EVENTS | \
				 LUW_ATTACH_OFFCPU)

/*
 * Rate bounds.  Past the admin's perf_event_max_sample_rate perf
 * throttles the events (luaunwind-ctl refuses such a rate, as perf record
 * does).
 */
#define LUW_FREQ_MAX		100000	/* Hz */
#define LUW_PERIOD_MIN_NS	10000	/* 100 kHz */
#define LUW_PERIOD_MAX_NS	10000000000ULL	/* 0.1 Hz */
#define LUW_CYCLES_PERIOD_MIN	100000ULL
#define LUW_CYCLES_PERIOD_MAX	(1ULL << 40)

struct luw_attach {
	__u32 size;
	__u32 flags;		/* LUW_ATTACH_* */
	__s32 pid;		/* process (thread group) to sample */
	__u32 event;		/* LUW_EVENT_* */
	__u64 sample_rate;	/* Hz, or a period with LUW_ATTACH_PERIOD */
	__u64 vm_start;		/* VM code range [vm_start, vm_end): the */
	__u64 vm_end;		/* interpreter, 0/0 when not known */
	/*
	 * struct luw_lj_layout (luaunwind_layout.h) of the target's LuaJIT,
	 * layout_size == its size; 0/0: no Lua walk, host frames only.  With
	 * a layout, vm_start < vm_end is required.  The module checks the
	 * descriptor's structure and bounds (EINVAL), not that it matches
	 * the process: userspace validates it against live memory first.
	 */
	__u64 layout_ptr;
	__u32 layout_size;
	__u16 max_host_frames;	/* 0: LUW_MAX_HOST_FRAMES */
	__u16 max_lua_frames;	/* 0: LUW_MAX_LUA_FRAMES */
	/* ---- end of version 0 (56 bytes) ---- */
	/*
	 * [vm_start, interp_end) is the interpreter (one fixed frame of
	 * cframe_size), [interp_end, vm_end) lj_vm_ffi_call (an ordinary
	 * frame).  0 (or a version 0 struct): vm_end.
	 */
	__u64 interp_end;
	/*
	 * A global_State userspace validated in the target, 0 if none.
	 * Builds without GC64 do not keep DISPATCH in a register inside
	 * JIT traces, so a trace sample needs G from elsewhere: this hint,
	 * or the G the module last found in an interpreter sample.
	 */
	__u64 g_hint;
};
#define LUW_ATTACH_SIZE_VER0	56
#define LUW_ATTACH_SIZE_VER1	72

/* ---- detach, start, stop ---------------------------------------------- */

struct luw_target {
	__u32 size;
	__u32 flags;		/* none defined: 0 */
	__s32 pid;		/* 0 for start/stop: every target */
	__u32 reserved;		/* 0 */
};
#define LUW_TARGET_SIZE_VER0	16

/* ---- unwind table for one mapping ------------------------------------- */

struct luw_unwind_table {
	__u32 size;
	__u32 flags;		/* none defined: 0 */
	__s32 pid;		/* attached target */
	__u32 table_size;	/* bytes at table_ptr, <= LUW_MAX_TABLE_BYTES */
	__u64 start;		/* executable mapping [start, end) in the */
	__u64 end;		/* target, page aligned */
	__u64 file_offset;	/* file offset mapped at start (maps column 3) */
	__u64 table_ptr;	/* struct luw_uw_hdr + entries */
};
#define LUW_UNWIND_TABLE_SIZE_VER0	48

/* ---- stats ------------------------------------------------------------ */

/*
 * Handler time histogram: bucket b < 8 counts exactly b ns; above, each
 * power of two is split in four: b = 8 + 4 * (msb - 3) + next two bits,
 * where msb is the index of the highest set bit of the time in ns.  The
 * last bucket also takes everything longer.
 */
#define LUW_HIST_BUCKETS	128

static inline __u64 luw_hist_lower(unsigned int b)
{
	unsigned int msb;

	if (b < 8)
		return b;
	msb = (b - 8) / 4 + 3;
	return (1ULL << msb) | ((__u64)((b - 8) & 3) << (msb - 2));
}

struct luw_stats {
	__u32 size;
	__u32 flags;		/* none defined: 0 */
	__s32 pid;		/* one target, or 0: everything since load */
	__u32 nr_targets;	/* out: targets attached now */
	__u64 samples;		/* out: samples written to a ring */
	__u64 drops;		/* out: samples lost to a full ring */
	__u64 faults;		/* out: user reads that faulted */
	__u64 truncated;	/* out: walks cut short (bound, bad frame) */
	/* out: hits on a target thread that could not be sampled */
	__u64 skipped;
	__u64 handler_ns;	/* out: total time in the handler */
	__u64 handler_calls;	/* out: handler runs on a target thread */
	__u64 vmstate[16];	/* out: samples per LUW_VMST_* */
	__u64 hist[LUW_HIST_BUCKETS];	/* out: handler time, see above */
	/* ---- end of version 0 ---- */
	__u64 reads;		/* out: read requests of every sample */
	__u64 read_bytes;	/* out: bytes those reads asked for */
	/* out: samples cut short by LUW_SAMPLE_READS or LUW_SAMPLE_FAULTS */
	__u64 budget_cuts;
	__u64 ended;		/* out: targets ended by exit or exec */
	/* out: reads per sample, bucketed as hist (the count for ns) */
	__u64 reads_hist[LUW_HIST_BUCKETS];
	/* ---- end of version 1 ---- */
	/*
	 * out: every run of the handler for the target's events, whatever
	 * it did: handler_calls plus the hits of a stopped or exec'd target
	 * (and, before 5.13, of processes it forked).  A target that does
	 * not run costs none.
	 */
	__u64 interrupts;
	__u64 thread_events;	/* out: threads given an event at attach */
	/* ---- end of version 2 ---- */
	/*
	 * out: perf's enabled and running times (ns) of the events of the
	 * targets attached now, summed over their threads: enabled while a
	 * thread ran, running while its event was on the counter as well.
	 * running < enabled when a hardware event (cycles) shared the PMU
	 * with others and was multiplexed: it sampled that much less.
	 * cpu-clock events are never multiplexed.
	 */
	__u64 time_enabled;
	__u64 time_running;
	/* ---- end of version 3 ---- */
	/* out: allocator calls the probes saw, frees included */
	__u64 alloc_calls;
	__u64 alloc_bytes;	/* out: bytes those calls requested */
	__u64 alloc_samples;	/* out: ALLOC records written */
	__u64 alloc_ns;		/* out: time in the probe's handler */
	/*
	 * out: the mean interval of the target's ALLOC records (bytes), 0
	 * when it is not probed; with pid 0, the one all the targets
	 * probed now share, 0 when they differ or none is probed.
	 */
	__u64 alloc_interval;
	/* ---- end of version 4 ---- */
	/*
	 * out: runs of the off-CPU handler (a target thread switched out,
	 * LUW_ATTACH_OFFCPU), the SWITCH records they and the exits wrote,
	 * and the time in that handler.
	 */
	__u64 switch_calls;
	__u64 switch_records;
	__u64 switch_ns;
};
#define LUW_STATS_SIZE_VER0	(72 + 16 * 8 + LUW_HIST_BUCKETS * 8)
#define LUW_STATS_SIZE_VER1	(LUW_STATS_SIZE_VER0 + 32 + \
				 LUW_HIST_BUCKETS * 8)
#define LUW_STATS_SIZE_VER2	(LUW_STATS_SIZE_VER1 + 16)
#define LUW_STATS_SIZE_VER3	(LUW_STATS_SIZE_VER2 + 16)
#define LUW_STATS_SIZE_VER4	(LUW_STATS_SIZE_VER3 + 40)
#define LUW_STATS_SIZE_VER5	(LUW_STATS_SIZE_VER4 + 24)

/* ---- list ------------------------------------------------------------- */

struct luw_list {
	__u32 size;
	__u32 flags;		/* none defined: 0 */
	__u32 max;		/* in: room at pids_ptr, in pids */
	__u32 count;		/* out: targets attached (may exceed max) */
	__u64 pids_ptr;		/* __s32 array */
};
#define LUW_LIST_SIZE_VER0	24

/* ---- join ------------------------------------------------------------- */

/* No kept session: make this file's session the caller's kept one. */
#define LUW_JOIN_CREATE		(1U << 0)
#define LUW_JOIN_FLAGS		LUW_JOIN_CREATE

struct luw_join {
	__u32 size;
	__u32 flags;		/* LUW_JOIN_*; only with fd == -1 */
	__s32 fd;		/* an open /dev/luaunwind, or -1: kept */
	__u32 reserved;		/* 0 */
};
#define LUW_JOIN_SIZE_VER0	16

/* ---- allocation probes ------------------------------------------------ */

#define LUW_MAX_ALLOCF		16	/* allocators probed per target */
#define LUW_ALLOC_INTERVAL_MIN	1ULL	/* every allocation */
#define LUW_ALLOC_INTERVAL_MAX	(1ULL << 40)

struct luw_alloc {
	__u32 size;
	__u32 flags;		/* none defined: 0 */
	__s32 pid;		/* attached target */
	__u32 reserved;		/* 0 */
	__u64 allocf;		/* the allocator, an address in the target */
	__u64 interval;		/* mean bytes between two records */
};
#define LUW_ALLOC_SIZE_VER0	32

/* ---- commands --------------------------------------------------------- */

/*
 * Not in Documentation/userspace-api/ioctl/ioctl-number.rst (0xb7, used
 * up to ABI 2, is nsfs's NSIO).
 */
#define LUW_IOC_MAGIC		0xE8
#define LUW_IOC_VERSION		_IOWR(LUW_IOC_MAGIC, 0x00, struct luw_version)
#define LUW_IOC_ATTACH		_IOW(LUW_IOC_MAGIC, 0x01, struct luw_attach)
#define LUW_IOC_DETACH		_IOW(LUW_IOC_MAGIC, 0x02, struct luw_target)
#define LUW_IOC_UNWIND_TABLE	_IOW(LUW_IOC_MAGIC, 0x03, struct luw_unwind_table)
#define LUW_IOC_START		_IOW(LUW_IOC_MAGIC, 0x04, struct luw_target)
#define LUW_IOC_STOP		_IOW(LUW_IOC_MAGIC, 0x05, struct luw_target)
#define LUW_IOC_STATS		_IOWR(LUW_IOC_MAGIC, 0x06, struct luw_stats)
#define LUW_IOC_LIST		_IOWR(LUW_IOC_MAGIC, 0x07, struct luw_list)
#define LUW_IOC_JOIN		_IOW(LUW_IOC_MAGIC, 0x08, struct luw_join)
#define LUW_IOC_ALLOC		_IOW(LUW_IOC_MAGIC, 0x09, struct luw_alloc)

/* ---- records ---------------------------------------------------------- */

#define LUW_REC_SAMPLE		1
#define LUW_REC_LOST		2
#define LUW_REC_END		3
#define LUW_REC_ALLOC		4
#define LUW_REC_SWITCH		5

#define LUW_ALLOC_NEW		1
#define LUW_ALLOC_GROW		2
#define LUW_ALLOC_SHRINK	3

#define LUW_SWITCH_BLOCKED	1
#define LUW_SWITCH_PREEMPTED	2
#define LUW_SWITCH_EXIT		3

#define LUW_END_EXIT		1	/* every thread of the target exited */
#define LUW_END_EXEC		2	/* the target exec'd another program */

/* Hit in kernel mode: host frames start at the user registers saved on
 * entry to the kernel.
 */
#define LUW_RF_KERNEL		(1U << 0)
#define LUW_RF_HOST_TRUNC	(1U << 1)	/* host walk cut short */
#define LUW_RF_LUA_TRUNC	(1U << 2)	/* Lua walk cut short */
#define LUW_RF_FAULT		(1U << 3)	/* a user read faulted */
#define LUW_RF_HOST_TABLE	(1U << 4)	/* unwind tables were used */

struct luw_sample {
	__u16 size;
	__u8 type;
	__u8 flags;		/* LUW_RF_* */
	__u8 vmstate;		/* LUW_VMST_* */
	__u8 pad;
	__u16 nhost;
	__u16 nlua;
	__u16 nsplice;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u32 trace;
	__u32 reserved;
	__u64 time;
};

/* Lua frame kinds. */
#define LUW_LF_LUA		1	/* Lua function: addr = GCproto */
#define LUW_LF_C		2	/* lua_CFunction: addr = GCfunc */
#define LUW_LF_FFUNC		3	/* fast function: addr = GCfunc, ffid */
#define LUW_LF_TRACE		4	/* running trace, above its protos */

#define LUW_LFF_TAIL		(1U << 0)	/* entered by a tail call */
#define LUW_LFF_PCALL		(1U << 1)	/* protected (pcall) frame */
#define LUW_LFF_CONT		(1U << 2)	/* continuation frame */
#define LUW_LFF_VARARG		(1U << 3)	/* below a vararg frame */
/* First frame of a coroutine resumed by the next segment. */
#define LUW_LFF_COROUTINE	(1U << 4)
/* pc is the instruction itself, not the one after it (see pc). */
#define LUW_LFF_PC_AT		(1U << 5)

struct luw_lua_frame {
	__u64 addr;
	__u32 line;
	__u32 pc;
	__u8 ffid;
	__u8 kind;
	__u16 flags;
	__u32 trace;
	__u64 func;
};

struct luw_splice {
	__u16 host_first;
	__u16 host_count;
	__u16 lua_first;
	__u16 lua_count;
};

struct luw_lost {
	__u16 size;
	__u8 type;
	__u8 pad[5];
	__u32 count;
	__u32 cpu;
	__u64 time;
};

struct luw_alloc_tail {
	__u64 nsize;
	__u64 osize;
	__u8 kind;		/* LUW_ALLOC_* */
	__u8 pad[7];
};

struct luw_switch_tail {
	__u64 runtime;
	__u64 nvcsw;
	__u64 nivcsw;
	__s32 syscall;
	__u8 state;		/* LUW_SWITCH_* */
	__u8 pad[3];
};

struct luw_end {
	__u16 size;
	__u8 type;
	__u8 reason;		/* LUW_END_* */
	__u8 pad[4];
	__u32 pid;
	__u32 reserved;
	__u64 time;
};

#define LUW_RECORD_MAX	(sizeof(struct luw_sample) +			\
			 LUW_MAX_HOST_FRAMES * 8 +			\
			 LUW_MAX_LUA_FRAMES * sizeof(struct luw_lua_frame) + \
			 LUW_MAX_SPLICES * sizeof(struct luw_splice) +	\
			 LUW_TAIL_MAX)
/* The largest record tail. */
#define LUW_TAIL_MAX	(sizeof(struct luw_switch_tail) > sizeof(struct luw_alloc_tail) ? \
			 sizeof(struct luw_switch_tail) : sizeof(struct luw_alloc_tail))

#endif /* _LUAUNWIND_H */
