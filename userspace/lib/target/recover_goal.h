/*
 * recover_goal: what target/recover.c looks for along every path of a
 * LuaJIT function (x86/flow.h), one goal a row -- the function's
 * arguments, what the goal matches at an instruction, at a call and at a
 * return, and what it records into struct luw_recover_goal_found:
 *
 *   maxstack    lua_checkstack: maxstack - top, both loaded from L
 *   iscfunc     lua_iscfunction: the ffid byte of the GCfunc a tag check
 *               proved a function
 *   tocfunc     lua_tocfunction: c.pc (its target's opcode read), c.f
 *               (returned)
 *   getinfo     lua_getinfo: the calls taking funcproto(fn), its helpers,
 *               ar->source's chunkname
 *   debugline   lj_debug_line(pt, pc): sizebc, numline, lineinfo,
 *               firstline; debugline_inl the same inlined into a helper,
 *               pt found as mref(fn->pc) - k
 *   checktrace  jit.util's functions: J->sizetrace, J->trace (G-relative),
 *               tracemc's T->mcode, T->szmcode
 *   flush       luaJIT_setmode -> trace_flushroot: T->startpt,
 *               T->traceno, T->startpc
 *   push        lua_push*'s set*V: the tag stored with a call's result,
 *               getcurrenv's byte compares of curr_func(L)
 *   stackfree   lua_close -> close_state: the stacksize dword freed with
 *               L->stack
 *
 * The rows share what LuaJIT's values are on any path: a TValue a tag
 * check proved a function, GC64's tag and 47-bit address.  target/recover.c
 * decides the fields from what the goals found (see target/recover.h).
 */
#ifndef LUW_TARGET_RECOVER_GOAL_H
#define LUW_TARGET_RECOVER_GOAL_H

#include <stdint.h>

#include "x86/decode.h"
#include "x86/flow.h"

#define LUW_RECOVER_GOAL_CALLS 4

/* A goal: a row of target/recover_goal.c. */
struct luw_recover_goal;

/* What the goals know of the build, and what they found. */
struct luw_recover_goal_found {
	const struct luw_recover_goal *goal;	/* the one reading */
	int ref_size, l_top, l_base, fn_pc;	/* inputs */
	int val, conflict;		/* maxstack, iscfunc: fn_ffid */
	int pc, pc_conflict, f, f_conflict;	/* tocfunc */
	/* getinfo: calls taking mref(fn->pc) - k, and the chunkname */
	int ncalls;
	uint64_t call_to[LUW_RECOVER_GOAL_CALLS];
	int call_k[LUW_RECOVER_GOAL_CALLS];
	int chunk_k, chunk_conflict;
	/* debugline */
	int sizebc, sizebc_conflict, numline, numline_conflict;
	int lineinfo, lineinfo_conflict;
	int fl_paths, nfl, fl_off[4], fl_cnt[4];
	/*
	 * lj_debug_line inlined into a helper (-DLUA_USE_ASSERT): pt
	 * itself mref(fn->pc) - pt_k.
	 */
	int pt_k, pt_k_conflict;
	/*
	 * checktrace (jit.util's functions, jit_checktrace inlined):
	 * G-relative J->sizetrace (compared with the trace number) and
	 * J->trace (indexed by it); T->mcode, T->szmcode handed to
	 * lj_str_new by tracemc.
	 */
	int l_glref, st_g, st_conflict, tr_g, tr_conflict;
	int mc, mc_conflict, szmc, szmc_conflict;
	/*
	 * push (lua_pushlstring, lua_newthread, lua_pushcclosure): the
	 * tag stored with a call's result into L->top (set*V); the byte
	 * compares of curr_func(L) (getcurrenv).
	 * stackfree (lua_close -> close_state): the dword of the thread
	 * whose L->stack is freed, times sizeof(TValue), is its stacksize.
	 */
	int have_tag, tag_conflict;
	int64_t tag;
	int l_stack, ss_off, ss_conflict;
	int ncfn, cfn_off[4], cfn_imm[4];	/* byte compares of curr_func */
	/*
	 * flush (luaJIT_setmode -> lj_trace_flush -> trace_flushroot, T
	 * from jit_checktrace's pattern): pt->trace == T->traceno compares a
	 * uint16 of the proto T->startpt refers to with T's own (startpt,
	 * traceno); trace_unpatch stores T->startins, a dword of T, through
	 * T->startpc.
	 */
	int fl_pt, fl_pt_c, fl_no, fl_no_c, fl_pc, fl_pc_c;
	/* getinfo: the functions it called directly (its helpers) */
	int ndirect;
	uint64_t direct[LUW_FLOW_CALLEES];
};

extern const struct luw_recover_goal luw_recover_goal_maxstack,
	luw_recover_goal_iscfunc, luw_recover_goal_tocfunc,
	luw_recover_goal_getinfo, luw_recover_goal_debugline,
	luw_recover_goal_debugline_inl, luw_recover_goal_checktrace,
	luw_recover_goal_flush, luw_recover_goal_push,
	luw_recover_goal_stackfree;

/* Follows every path of the function [entry, entry + size) for g into fd. */
void luw_recover_goal_explore(const struct luw_decode_file *file,
			      uint64_t entry, uint64_t size,
			      const struct luw_recover_goal *g,
			      struct luw_recover_goal_found *fd);

#endif
