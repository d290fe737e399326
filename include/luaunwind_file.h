/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * luaunwind: the .luw record file written by `luaunwind-ctl record` and
 * read by `luaunwind-report`.
 *
 * A .luw file holds the raw sample records exactly as /dev/luaunwind
 * returned them (grammar in luaunwind.h) together with everything needed
 * to name their frames after the process is gone: its mappings, the
 * symbol of every sampled host pc, the Lua prototypes, C functions and
 * traces the samples refer to, and the fast-function names of its VM.
 *
 * The recorder resolves names while the process lives and appends them as
 * it goes, so sections come in any order and a symbol section may follow
 * the samples that use it; a reader takes in the whole file before
 * naming anything.  Only the end section makes a file complete: a file
 * without one was cut short (the recorder was killed, the disk filled)
 * and a reader says so, with the offset where it stopped, after
 * reporting what it could decode.
 *
 * Everything is little-endian.  The header is 16 bytes, every section
 * starts on an 8-byte boundary and its payload is padded with zero bytes
 * to a multiple of 8, so the records of a samples section keep the
 * alignment the record grammar promises.
 *
 * file           := header section* end
 * header         := magic version flags reserved
 * magic          := 'L' 'U' 'W' 'F'
 * version        := <U32: LUWF_VERSION; a reader takes every version from
 *                    1 up to its own (differences noted "v1:" below)>
 * flags          := <U32: 0; a reader refuses unknown bits>
 * reserved       := <U32: 0>
 *
 * section        := type size payload pad
 * type           := <U32: LUWF_SEC_*; a reader skips unknown types>
 * size           := <U32: bytes of payload, pad not included>
 * pad            := <U8: 0>{0..7}, up to a multiple of 8
 *
 * string         := len <U8>{len}       bytes, no terminating NUL
 * len            := <U32>
 *
 * process        := pid flags vm_start vm_end start_ns freq comm exe
 *                   ljkind
 *   (LUWF_SEC_PROCESS, one per recorded process; a later one for the
 *   same pid replaces it, e.g. to add LUWF_PF_EXITED)
 * pid            := <U32: as the samples carry it>
 * flags          := <U32: LUWF_PF_* bits>
 * vm_start       := <U64: first byte of the VM's code, 0 when unknown>
 * vm_end         := <U64: end of the VM's code (exclusive)>
 * start_ns       := <U64: CLOCK_REALTIME at the start of the recording>
 * freq           := <U32: sampling frequency in Hz, 0 when unknown>
 * comm, exe      := string              /proc/PID/comm, /proc/PID/exe
 * ljkind         := string              "luajit", "tarantool", ... or ""
 *
 * samples        := record*
 *   (LUWF_SEC_SAMPLES) whole records of the module's record stream, as
 *   read() returned them; a section holds one or more read() buffers.
 *   v4 and before: record version 4, whose lua-frames have no func
 *   (userspace/lib/record/dev.h, luw_dev_upgrade_v4)
 *
 * mapping        := pid prot start end offset build_id path
 *   (LUWF_SEC_MAPPING) one executable mapping a sampled pc fell in
 * prot           := <U32: LUWF_MAP_* bits>
 * start, end     := <U64: the mapping's range>
 * offset         := <U64: file offset mapped at start>
 * build_id       := string              raw bytes, empty when none
 * path           := string              as /proc/PID/maps names it
 *
 * host           := pid mapno flags reserved pc symoff name
 *   (LUWF_SEC_HOST) the name of one sampled host pc
 * mapno          := <U32: index among this pid's mapping sections, in
 *                    file order; LUWF_NO_MAP when the pc is in none>
 * flags          := <U32: LUWF_HF_* bits>
 * pc             := <U64>
 * symoff         := <U64: pc - start of the symbol; with LUWF_HF_FDE and
 *                    no name: pc - start of the .eh_frame FDE that holds
 *                    it (the function's start); 0 otherwise>
 * name           := string              the symbol (C++ demangled), empty
 *                                       when none: then the report shows
 *                                       module+0xFILEOFFSET of the FDE's
 *                                       start (LUWF_HF_FDE), else of pc
 *
 * proto          := pid firstline numline reserved addr chunk
 *   (LUWF_SEC_PROTO) a Lua function prototype (GCproto)
 * firstline      := <I32: line of `function`; -1 unknown>
 * numline        := <I32: lines it spans>
 * addr           := <U64: the GCproto in the target>
 * chunk          := string              "file.lua" for "@file.lua", the
 *                                       source as LuaJIT shows it otherwise
 *
 * pcline         := pid pc addr line reserved
 *   (LUWF_SEC_PCLINE) the source line of a sampled bytecode position
 * pc             := <U32: bytecode index as the lua-frame carries it,
 *                    | LUWF_PC_AT when the frame had LUW_LFF_PC_AT>
 * addr           := <U64: the GCproto>
 * line           := <I32: -1 when the proto's lineinfo is unreadable>
 *
 * fname          := pid reserved addr name
 *   (LUWF_SEC_FNAME) the name of a prototype by its definition: the
 *   local, global, field (M.f), method (obj:m) or upvalue its parent's
 *   FNEW stores the closure into (userspace/lib/target/funcname.h).
 *   v1: the name of the first call site seen (the report shows it as
 *   before)
 * reserved       := <U32: 0>   (here and in every section that has one)
 *
 * callsite       := pid pc addr name callee
 *   (LUWF_SEC_CALLSITE, v2) the name a call instruction calls its callee
 *   by (debug.getinfo's "n": the global, field or upvalue read into the
 *   called slot, or the metamethod event), written once the recorder saw
 *   that variable hold the closure of a frame the call made (a tail call
 *   leaves the call site under a frame that runs another function; a
 *   local's value cannot be read after the sample); the report uses it
 *   for a frame of proto callee whose proto has no fname, taken from the
 *   frame below it in that sample.  Before v5: the first call site seen,
 *   unchecked, for any frame above it
 * pc             := <U32: the caller frame's pc, as the lua-frame carries
 *                    it: the instruction after the call>
 * addr           := <U64: the caller's GCproto>
 * callee         := <U64: v5: the GCproto of the closure the name was
 *                    proven on>
 *
 * cfunc          := pid reserved addr fn
 *   (LUWF_SEC_CFUNC) a C function frame of the Lua stack: its GCfunc and
 *   the lua_CFunction it runs, named through the host sections' pc
 * addr           := <U64: the GCfunc>
 * fn             := <U64: the lua_CFunction, 0 when unreadable>
 *
 * trace          := pid traceno addr line reserved startpt universe
 *   (LUWF_SEC_TRACE) where a JIT trace starts.  Keyed by (traceno, addr):
 *   trace numbers are per universe (global_State); the module reads the
 *   start from the trace of the universe it walked, and a proto belongs
 *   to one universe, so a number never resolves in another one
 * traceno        := <U32>
 * addr           := <U64: the trace lua-frame's addr as the samples carry
 *                    it (the GCproto it starts in), 0 unknown.  v1: the
 *                    GCproto (the key was traceno alone), and the section
 *                    ends after reserved>
 * line           := <I32: its line; -1 unknown>
 * startpt        := <U64: GCproto of its first instruction, 0 unknown>
 * universe       := <U64: its global_State, 0 when it could not be told>
 *
 * ffnames        := pid count string{count}
 *   (LUWF_SEC_FFNAMES) names of the fast functions of this VM by ffid;
 *   entry i names ffid i, "" where none
 * count          := <U32>
 *
 * stats          := pid reserved duration_ns records samples lost drops
 *                   faults truncated vmstate{16} [probe]
 *   (LUWF_SEC_STATS, last before end) pid 0: the whole recording
 * duration_ns    := <U64: wall-clock length of the recording>
 * records        := <U64: sample records written to the file>
 * samples, drops, faults, truncated
 *                := <U64: the module's counters for the recording
 *                    (struct luw_stats), differences end - start>
 * lost           := <U64: samples reported lost by LOST records>
 * vmstate        := <U64: samples per LUW_VMST_*, module counters>
 * probe          := alloc_calls alloc_bytes alloc_samples
 *   (v3, when the size holds it) the allocator probes' counters for the
 *   recording (luw_stats's, end - start): the exact totals the sampled
 *   estimate of a report --alloc can be held against
 * alloc_calls    := <U64: calls of the allocators, frees included>
 * alloc_bytes    := <U64: bytes those calls requested>
 * alloc_samples  := <U64: ALLOC records the module wrote>
 *
 * alloc          := pid reserved interval
 *   (LUWF_SEC_ALLOC, v3) the process's allocations were sampled: its
 *   ALLOC records were drawn with this mean interval (luw_stats's); pid
 *   0: every process's (the recorder writes that one: the session's
 *   targets share one interval, or luw_stats gives none)
 * interval       := <U64: bytes (luaunwind.h, LUW_IOC_ALLOC)>
 *
 * threadend      := pid tid time runtime
 *   (LUWF_SEC_THREADEND, v4) a thread of a process recorded off the CPU
 *   (LUW_ATTACH_OFFCPU), alive when the recording stopped: the CPU time
 *   it had run then (/proc/PID/task/TID/schedstat), which closes the
 *   interval its last switch record opened (luaunwind.h, "switch").
 *   Switch records after time are past the recording's end.
 * tid            := <U32: as the records carry it>
 * time           := <U64: CLOCK_MONOTONIC ns of the reading>
 * runtime        := <U64: ns>
 *
 * end            := LUWF_SEC_END 0      the last section, empty
 */
#ifndef _LUAUNWIND_FILE_H
#define _LUAUNWIND_FILE_H

#define LUWF_MAGIC		"LUWF"
/*
 * 3: ALLOC records, LUWF_SEC_ALLOC; 4: SWITCH records, LUWF_SEC_THREADEND;
 * 5: record version 5 (lua-frame's func), callsite's callee
 */
#define LUWF_VERSION		5
#define LUWF_VERSION_MIN	1
#define LUWF_HEADER_SIZE	16
#define LUWF_SECTION_MAX	(1U << 30)	/* largest payload accepted */

#define LUWF_SEC_PROCESS	1
#define LUWF_SEC_SAMPLES	2
#define LUWF_SEC_MAPPING	3
#define LUWF_SEC_HOST		4
#define LUWF_SEC_PROTO		5
#define LUWF_SEC_PCLINE		6
#define LUWF_SEC_FNAME		7
#define LUWF_SEC_CFUNC		8
#define LUWF_SEC_TRACE		9
#define LUWF_SEC_FFNAMES	10
#define LUWF_SEC_STATS		11
#define LUWF_SEC_CALLSITE	12
#define LUWF_SEC_ALLOC		13
#define LUWF_SEC_THREADEND	14
#define LUWF_SEC_END		0xffffffffU

/* process flags */
#define LUWF_PF_GC64		(1U << 0)	/* the VM uses 64-bit GC refs */
#define LUWF_PF_EXITED		(1U << 1)	/* exited during the recording */

/* mapping prot */
#define LUWF_MAP_R		(1U << 0)
#define LUWF_MAP_W		(1U << 1)
#define LUWF_MAP_X		(1U << 2)

/* host flags */
#define LUWF_HF_VM		(1U << 0)	/* in the VM's own code */
#define LUWF_HF_FDE		(1U << 1)	/* symoff is from the FDE start */

#define LUWF_NO_MAP		0xffffffffU
#define LUWF_PC_AT		0x80000000U	/* pcline: pc is the instruction */

#endif /* _LUAUNWIND_FILE_H */
