/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * luaunwind: the heap snapshot file written by `luaunwind-ctl heap` and
 * read by `luaunwind-report`.
 *
 * A snapshot holds what held the memory of every Lua universe of one
 * process at one moment, aggregated: not the objects themselves but the
 * tree of reference paths that reached them (each object on the first
 * path found breadth first from the roots: a spanning tree, the "retained
 * by" view of heap profilers) and, per path and object type, how many
 * objects and bytes sit there; the largest single objects; and per
 * universe what the collector itself counts (gc.total), to compare.  It
 * names everything in itself, so it is reported after the process is
 * gone.
 *
 * Everything is little-endian; sections as in luaunwind_file.h: the
 * header is 16 bytes, every section starts on an 8-byte boundary and its
 * payload is padded with zero bytes to a multiple of 8.  Only the end
 * section makes a file complete: a reader of a file without one says
 * where it stopped, after reporting what it could decode.
 *
 * file           := header section* end
 * header         := magic version flags reserved
 * magic          := 'L' 'U' 'W' 'H'
 * version        := <U32: LUWH_VERSION>
 * flags          := <U32: 0; a reader refuses unknown bits>
 * reserved       := <U32: 0>
 *
 * section        := type size payload pad
 * type           := <U32: LUWH_SEC_*; a reader skips unknown types>
 * size           := <U32: bytes of payload, pad not included>
 * pad            := <U8: 0>{0..7}, up to a multiple of 8
 * string         := len <U8>{len}       bytes, no terminating NUL
 * len            := <U32>
 *
 * meta           := pid flags time_ns pause_ns walk_ns comm exe build_id
 *                   ljkind layout
 *   (LUWH_SEC_META, once, before the rest)
 * pid            := <U32>
 * flags          := <U32: LUWH_MF_* bits>
 * time_ns        := <U64: CLOCK_REALTIME when the walk began>
 * pause_ns       := <U64: how long the target's threads were stopped; 0
 *                    with LUWH_MF_LIVE>
 * walk_ns        := <U64: how long the walk took>
 * comm, exe      := string              /proc/PID/comm, /proc/PID/exe
 * build_id       := string              hex, of the object holding LuaJIT
 * ljkind, layout := string              "luajit", ...; where the layout
 *                                       came from, as attach says it
 *
 * labels         := count label{count}
 *   (LUWH_SEC_LABELS) names of path steps; ids count on from the last
 *   section's, from 0
 * label          := string   a step: "_G", "cache", "[*]", "(metatable)",
 *                   "upvalue 'pool' of handler @app.lua:12", ...; each
 *                   once in a file, none with a NUL byte
 *
 * nodes          := count node{count}
 *   (LUWH_SEC_NODES) the path tree; ids count on from 1 (0 is the tree's
 *   root, no step); a node's parent comes before it
 * node           := parent label
 * parent         := <U32: node id>
 * label          := <U32: label id>
 *
 * groups         := count group{count}
 *   (LUWH_SEC_GROUPS) the objects whose path is exactly node, by type
 * group          := node type objects bytes
 * type           := <U32: LUWH_T_*>
 * objects, bytes := <U64>
 *
 * largest        := count big{count}
 *   (LUWH_SEC_LARGEST) the largest objects, largest first
 * big            := addr node type bytes
 * addr           := <U64: where it was in the target>
 *
 * universe       := g gc_total objects bytes internal unreached_objects
 *                   unreached_bytes skipped unsized dangling root
 *                   reserved type_objects{LUWH_NTYPES} type_bytes{LUWH_NTYPES}
 *   (LUWH_SEC_UNIVERSE) one per global_State walked
 * g              := <U64: the global_State>
 * gc_total       := <U64: gc.total, the bytes LuaJIT's collector counts,
 *                    read when the walk began>
 * objects, bytes := <U64: every object found, and their sizes>
 * internal       := <U64: bytes of the VM's own allocations that gc.total
 *                    counts and the walk could size (the string table, the
 *                    global state, the FFI's type table, JIT buffers)>
 * unreached_*    := <U64: objects on the collector's lists that no path
 *                    reached: garbage the next cycle frees>
 * skipped        := <U64: objects a --live walk could not vouch for>
 * unsized        := <U64: objects found whose size could not be proven>
 * dangling       := <U64: references to no object on the lists>
 * root           := <U32: node of the universe's paths, 0 for the only one>
 * reserved       := <U32: 0>
 * type_*         := <U64> per LUWH_T_*, index 0 unused
 *
 * end            := (LUWH_SEC_END, empty)
 */
#ifndef LUAUNWIND_HEAP_H
#define LUAUNWIND_HEAP_H

#define LUWH_MAGIC		"LUWH"
#define LUWH_VERSION		1u

#define LUWH_SEC_META		1u
#define LUWH_SEC_LABELS		2u
#define LUWH_SEC_NODES		3u
#define LUWH_SEC_GROUPS		4u
#define LUWH_SEC_LARGEST	5u
#define LUWH_SEC_UNIVERSE	6u
#define LUWH_SEC_END		7u

#define LUWH_MF_LIVE		0x1u	/* walked without stopping the target */

/* Object types: LuaJIT's GC types (~itype, as gct holds them). */
#define LUWH_T_STR		4u
#define LUWH_T_UPVAL		5u
#define LUWH_T_THREAD		6u
#define LUWH_T_PROTO		7u
#define LUWH_T_FUNC		8u
#define LUWH_T_TRACE		9u
#define LUWH_T_CDATA		10u
#define LUWH_T_TAB		11u
#define LUWH_T_UDATA		12u
#define LUWH_NTYPES		13u

#endif
