/*
 * proto: names for the frames of kmod/ljwalk.h, read from the live
 * process with process_vm_readv: a GCproto's chunk name, first line and
 * the line of a bytecode position (from the proto's lineinfo), fast
 * function names by ffid from the target's own set (ffnames.h).  Results are cached per
 * proto address, so they must be taken while the process is alive and its
 * protos are not collected.
 */
#ifndef LUW_TARGET_PROTO_H
#define LUW_TARGET_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "luajit/ffnames.h"
#include "luaunwind_layout.h"
#include "kmod/ljwalk.h"

struct luw_proto_info {
	uint64_t addr;
	char chunk[256];	/* "@file.lua" shown as "file.lua" */
	int32_t firstline;
	int32_t numline;
	uint32_t sizebc;
	uint64_t lineinfo;
};

struct luw_proto_ctx;

/* ff: the target's fast-function names (copied), NULL for none. */
struct luw_proto_ctx *luw_proto_new(pid_t pid, const struct luw_lj_layout *ly,
			const struct luw_ffnames *ff);
void luw_proto_free(struct luw_proto_ctx *c);

/* 0 and *out filled, or -1 when the proto cannot be read or is not one. */
int luw_proto_get(struct luw_proto_ctx *c, uint64_t proto, const struct luw_proto_info **out);

/*
 * Source line of bytecode address pc in proto.  `after` = 1 for LuaJIT's
 * usual convention (pc points past the instruction being executed: frame
 * links, the interpreter's PC register), 0 when pc is the instruction
 * itself (a trace's start).  -1 when unknown.
 */
int32_t luw_proto_line(struct luw_proto_ctx *c, uint64_t proto, uint64_t pc, int after);

/* Name of fast function ffid, or NULL. */
const char *luw_proto_ffname(const struct luw_proto_ctx *c, unsigned int ffid);

/*
 * One frame as text: "lua:CHUNK:FIRSTLINE:LINE" (LINE "?" when unknown),
 * "ff:NAME", "c:0xADDR", "trace:N:CHUNK:LINE".  Returns buf.
 */
char *luw_proto_frame_str(struct luw_proto_ctx *c, const struct luw_lj_frame *f, char *buf,
		    size_t n);

#endif
