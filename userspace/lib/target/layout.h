/*
 * layout: find LuaJIT in a live process and work out its layout.
 *
 * 1. luw_layout_open: the object that holds the VM -- a mapped ELF named luajit*,
 *    libluajit-5.1.so*, tarantool*, nginx* or openresty* (else any mapped
 *    executable object whose .eh_frame has the VM's FDE), read through
 *    /proc/PID/map_files (a replaced or deleted file is still the one
 *    mapped) -- its build-id, load bias, VM code range and a layout: from
 *    DWARF when the object or its debug file (by build-id or
 *    .gnu_debuglink) describes GG_State, else from the table of layouts
 *    computed from the exact Debian sources, keyed by build-id; and what
 *    the machine code says (target/recover.h) for a stripped unknown build.
 *    luw_layout_attach tries, for an unknown build, each family layout as is and
 *    then with the recovered fields and GG_State anchored in the process.
 * 2. luw_states_find (states.h): every global_State of the process, found by its
 *    dispatch table (GG_State.dispatch: a run of gg_ndisp code pointers all
 *    inside the VM) in the process's anonymous writable memory.
 * 3. luw_validate_state (validate.h): the layout checked against one live global_State.
 *
 * The VM code range in a stripped binary: buildvm emits one FDE for the
 * whole interpreter whose CFA is rsp + CFRAME_SIZE from its very first
 * instruction (no compiled function starts with anything but rsp + 8) and
 * one for lj_vm_ffi_call right after it.  We take the largest FDE of
 * .eh_frame (ehframe.h) whose CFA at its start is rsp + N with N > 8; with symbols
 * the result is checked against lj_vm_asm_begin.
 */
#ifndef LUW_TARGET_LAYOUT_H
#define LUW_TARGET_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include <sys/types.h>

#include "luajit/ffnames.h"
#include "target/obj.h"
#include "target/recover.h"
#include "luaunwind_layout.h"

#define LUW_LJL_MAX_STATES 64

enum luw_layout_source { LUW_LJL_SRC_NONE, LUW_LJL_SRC_DWARF, LUW_LJL_SRC_KNOWN, LUW_LJL_SRC_GUESS,
		  LUW_LJL_SRC_CODE };

struct luw_layout_target {
	pid_t pid;
	char path[4096];	/* the object as /proc/PID/maps names it */
	char build_id[65];	/* hex, "" when the object has none */
	const char *kind;	/* "luajit", "libluajit", "tarantool", ... */
	uint64_t bias;		/* load bias of the object */
	uint64_t vm_start;	/* interpreter FDE start (absolute) */
	uint64_t interp_end;	/* its end */
	uint64_t vm_end;	/* end of lj_vm_ffi_call when adjacent */
	uint32_t fde_cfa;	/* CFA offset of the interpreter FDE */
	enum luw_layout_source src;
	char layout_name[864];	/* known layout, "DWARF of ...", ... */
	char why_dwarf[256];	/* why the DWARF layout was not taken */
	struct luw_recover_result rec;	/* fields read from machine code */
	char why_rec[128];	/* "" when rec is valid */
	uint64_t states_anchor;	/* G found by anchoring GG_State (target/recover.c) */
	struct luw_ffnames ff;	/* fast-function names, see ffnames.h */
	struct luw_lj_layout layout;
	uint64_t states[LUW_LJL_MAX_STATES];	/* global_State addresses */
	int nstates;
	int rounds;		/* round of checks the layout passed in, 1.. */
	char why_round1[400];	/* its failed check in the round before */
	/* The object readers' offsets (target/obj.h), by luw_layout_obj: */
	struct luw_obj_offs offs;
	int offs_state;		/* 0 not yet, 1 worked out, -1 failed */
	char why_offs[128];	/* why, when -1 */
};

/* Finds LuaJIT in PID and picks a layout.  0, or -1 with a message. */
int luw_layout_open(pid_t pid, struct luw_layout_target *t, char *err, size_t errlen);

/*
 * luw_layout_open + luw_states_find + luw_validate_state on every state found; without
 * a known layout, tries each known layout of the table.  The target runs
 * while it is read: every candidate is checked again, derived afresh, in
 * up to 3 rounds, and a pass after a failed read must be confirmed by the
 * next (target/validate.c, "Reading a running target"); t->rounds says which
 * round passed.  On a mismatch the message says so and names the binary,
 * its build-id and each candidate's failed check.
 */
int luw_layout_attach(pid_t pid, struct luw_layout_target *t, char *err, size_t errlen);

/*
 * A reader of t's objects with its offsets, worked out on the first call
 * (from the object's DWARF, once) and kept in t: 0, or -1 with why.
 * o refers to t's layout: t must not move while o is used.
 */
int luw_layout_obj(struct luw_layout_target *t, struct luw_obj *o, char *why,
		   size_t n);

/* A ptrace-stopped thread's registers as the Lua walk takes them. */
struct user_regs_struct;
struct luw_lj_regs;
void luw_layout_regs_from(const struct user_regs_struct *u, struct luw_lj_regs *r);

/*
 * The Lua stack of t's process as kmod/ljwalk.c finds it with layout ly:
 * from a stopped thread's registers u, or with u NULL from G->cur_L and
 * L->base; g_hint the global_State when known, else 0.  o's frame and
 * segment arrays are the caller's.
 */
struct luw_lj_walk_out;
void luw_layout_walk(const struct luw_layout_target *t, const struct luw_lj_layout *ly,
		     const struct user_regs_struct *u, uint64_t g_hint,
		     struct luw_lj_walk_out *o);

/*
 * Whether a stop at ip, walked into o with t's layout, caught Lua code
 * running: ip in the interpreter (its state no trace's) or in the machine
 * code of the trace o reports; with any, also a whole Lua stack found from
 * C code the VM called.  Elsewhere the walk only guesses (cur_L, L->base).
 */
int luw_layout_caught(const struct luw_layout_target *t, uint64_t ip,
		      const struct luw_lj_walk_out *o, int any);

/*
 * The interpreter's FDE in elf (link-time addresses): the largest whose
 * first row puts the CFA at rsp + a frame.  start/iend: its range, end:
 * with lj_vm_ffi_call's FDE when adjacent, cfa: CFRAME_SIZE.  0, or -1
 * with the reason.
 */
int luw_layout_vm_fde(Elf *elf, uint64_t *start, uint64_t *iend, uint64_t *end,
		   uint32_t *cfa, char *err, size_t n);

/*
 * The load bias of elf mapped executable at m: the PT_LOAD with PF_X
 * that m maps.  0, or -1 when none is.
 */
struct luw_map;
int luw_layout_bias(Elf *elf, const struct luw_map *m, uint64_t *bias);

#endif
