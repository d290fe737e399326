/*
 * flow: path-exploring data flow through an x86-64 function, for readers
 * that look for what a load, a compare or a call looks like when it sits
 * behind branches (a tag check, a size check).  Every path from the entry
 * is followed (both ways at a conditional branch, into direct jumps, each
 * case of a switch's jump table, a bounded number of visits per address),
 * with symbolic register values: each value has an id; a load makes a
 * new id and remembers where it was loaded from (base id, offset, width),
 * so two registers that address the same place are seen as the same
 * place.  Facts learnt from a branch belong to the path that took it.
 *
 * Knows nothing of what the function is: a client's ops say what the
 * argument registers hold, look at each instruction first (and may take
 * it over: a value the client knows better), learn from the way of an
 * equality test, and record what it finds at calls and returns.  The
 * LuaJIT goals are target/recover_paths.c's.
 */
#ifndef LUW_X86_FLOW_H
#define LUW_X86_FLOW_H

#include <stdint.h>

#include "x86/decode.h"

#define LUW_FLOW_VALS 192
#define LUW_FLOW_MARKS 8
#define LUW_FLOW_CALLEES 16

/* Where a value came from: the engine's; a client's from LUW_FLOW_CLIENT on. */
enum luw_flow_origin {
	LUW_FLOW_UNK,		/* id 0: the shared unknown */
	LUW_FLOW_LOAD,		/* src + off, size bytes of it */
	LUW_FLOW_CONST,		/* imm */
	LUW_FLOW_RET,		/* what a call returned */
	LUW_FLOW_SUM,		/* src + src2 */
	LUW_FLOW_JTENT,		/* an int32 read from the jump table at imm */
	LUW_FLOW_JTADDR,	/* imm + that int32: a case of the switch */
	LUW_FLOW_CLIENT
};

struct luw_flow_val {
	uint8_t origin;		/* enum luw_flow_origin, or the client's */
	uint8_t size;		/* LOAD: width loaded */
	uint8_t mark;		/* the client's: a fact a branch proved */
	uint16_t src;		/* LOAD: id of the base; the client's */
	uint16_t src2;		/* SUM: the other term */
	int32_t off;		/* LOAD: offset from src */
	int64_t imm;		/* CONST; JTENT, JTADDR: the table */
};

struct luw_flow_reg {
	uint16_t id;
	int32_t off;		/* value = vals[id] + off */
};

/* One path's state, copied where it forks. */
struct luw_flow_path {
	struct luw_flow_reg r[16];
	struct luw_flow_val v[LUW_FLOW_VALS];
	int nv;
	/* Places (id, off) the client marked on this path (luw_flow_mark). */
	uint16_t mid[LUW_FLOW_MARKS];
	int32_t moff[LUW_FLOW_MARKS];
	int nm;
	/* The last compare of a register with an immediate. */
	int cmp_valid;
	struct luw_flow_reg cmp_r;
	int64_t cmp_imm;
	/* A switch index bound: the entries of the next jump table. */
	int jt_bound;
	/* Calls followed into their callee on the way here. */
	int depth;
	/* The function this path is in (a tail jump moves it). */
	uint64_t lo, hi;
	/* What the client learnt on this path: a value, an offset, a flag. */
	uint16_t note_id;
	int32_t note_off;
	int note_flag;
};

struct luw_flow;

/* The client: every hook may be NULL. */
struct luw_flow_ops {
	/* The registers on entry: the function's arguments. */
	void (*entry)(struct luw_flow *f, struct luw_flow_path *p);
	/*
	 * An instruction before the engine reads it: 1 when the client took
	 * care of it, and the engine then does nothing more with it, the last
	 * compare included.
	 */
	int (*insn)(struct luw_flow *f, struct luw_flow_path *p,
		    const cs_insn *in);
	/* The path on which the last compare found its operands equal. */
	void (*equal)(struct luw_flow *f, struct luw_flow_path *p);
	/*
	 * A call, before it clobbers the registers: 1 to follow it, when it
	 * is direct and made by the entry function, into its callee.
	 */
	int (*call)(struct luw_flow *f, const struct luw_flow_path *p,
		    const cs_insn *in);
	/* A ret: the end of the path. */
	void (*ret)(struct luw_flow *f, const struct luw_flow_path *p);
};

struct luw_flow {
	const struct luw_decode_file *file;
	const struct luw_flow_ops *ops;
	void *client;			/* the ops' own */
	/* The direct calls the ops chose to follow, in order, distinct. */
	int ncallees;
	uint64_t callee[LUW_FLOW_CALLEES];
};

/* Follows every path of the function [entry, entry + size) (see above). */
void luw_flow_explore(struct luw_flow *f, uint64_t entry, uint64_t size);

/* A new value (id 0, the shared unknown, when the table is full). */
uint16_t luw_flow_new(struct luw_flow_path *p, uint8_t origin);
/* Register reg holds a new value. */
void luw_flow_set(struct luw_flow_path *p, int reg, uint8_t origin);
/* A new value: size bytes loaded from value id + off. */
uint16_t luw_flow_load(struct luw_flow_path *p, uint16_t id, int32_t off,
		       uint8_t size);
/* [base + disp], no index: the register's value plus disp; 0 if not. */
int luw_flow_addr(const struct luw_flow_path *p, const cs_x86_op *o,
		  uint16_t *id, int32_t *off);
/* A value of operand o (register, or memory read): its id, else 0. */
uint16_t luw_flow_opval(struct luw_flow_path *p, const cs_x86_op *o);
/* Marks the place (id, off) on this path; is it marked? */
void luw_flow_mark(struct luw_flow_path *p, uint16_t id, int32_t off);
int luw_flow_marked(const struct luw_flow_path *p, uint16_t id, int32_t off);

#endif
