/*
 * funcname: callee names from the caller's bytecode.  See target/funcname.h.
 *
 * The search follows lj_debug_slotname(): the slot the call instruction
 * calls is named by the local variable live in it at that point, else by
 * the instruction that last wrote the slot (MOV follows the copy, GGET is
 * a global, TGETS a field or method, UGET an upvalue); anything else that
 * writes it, or a base-mode instruction that clobbers slots from A up,
 * leaves it unnamed.
 */
#include "target/funcname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/obj.h"

enum {
	BC_ISGE = 1, BC_ISGT = 3, BC_ISNEP = 11,
	BC_UNM = 20, BC_LEN = 21, BC_ADDVN = 22, BC_MODVV = 36, BC_POW = 37,
	BC_CAT = 38, BC_GSET = 55, BC_TSETV = 60, BC_TSETR = 64,
	BC_ISTC = 12, BC_ISFC = 13, BC_MOV = 18, BC_KPRI = 43, BC_KNIL = 44,
	BC_UGET = 45, BC_FNEW = 51, BC_TNEW = 52, BC_TDUP = 53, BC_GGET = 54,
	BC_TGETV = 56, BC_TGETS = 57, BC_TGETR = 59, BC_TSETM = 63,
	BC_CALLM = 65, BC_CALL = 66, BC_CALLMT = 67, BC_CALLT = 68,
	BC_ISNEXT = 72, BC_FORI = 77, BC_JITERL = 84,
	BC_USETV = 46, BC_TSETS = 61,
};

#define VARNAME__MAX 7		/* internal names of for-loop slots */
#define MAX_SCAN 4096		/* instructions searched backwards */

/* A prototype being read: its header and the reader of its process. */
struct pt {
	struct luw_obj o;
	struct luw_obj_proto h;
};

static int rd(const struct pt *p, uint64_t a, void *d, uint32_t n)
{
	return luw_obj_read(&p->o, a, d, n);
}

static int rd_ref(const struct pt *p, uint64_t a, uint64_t *v)
{
	return luw_obj_ref(&p->o, a, v);
}

static int is_dst(unsigned int op)
{
	return op == BC_ISTC || op == BC_ISFC ||
	       (op >= BC_MOV && op <= BC_KPRI) || op == BC_UGET ||
	       (op >= BC_FNEW && op <= BC_GGET) ||
	       (op >= BC_TGETV && op <= BC_TGETR);
}

static int is_base(unsigned int op)
{
	return op == BC_KNIL || op == BC_TSETM ||
	       (op >= BC_CALLM && op <= BC_ISNEXT) ||
	       (op >= BC_FORI && op <= BC_JITERL);
}

/* A GCstr's characters into out (cut to fit). */
static int str_at(const struct pt *p, uint64_t s, char *out, size_t n)
{
	uint32_t len;

	return luw_obj_str(&p->o, s, out, n, &len) ? -1 : 1;
}

static int kgc_str(const struct pt *p, uint32_t idx, char *out, size_t n)
{
	uint64_t s;

	/* proto_kgc(pt, ~idx): GC constants are stored below k. */
	if (rd_ref(p, p->h.k - (uint64_t)(idx + 1) * p->o.ref, &s))
		return -1;
	return str_at(p, s, out, n);
}

/* The idx-th NUL-terminated name of a list (uvinfo). */
static int nth_name(const struct pt *p, uint64_t list, uint32_t idx, char *out,
		    size_t n)
{
	char c;
	size_t o = 0;

	if (!list)
		return 0;
	for (uint32_t guard = 0; guard < 65536; guard++, list++) {
		if (rd(p, list, &c, 1))
			return -1;
		if (idx == 0) {
			if (o + 1 < n)
				out[o++] = c;
			if (!c) {
				out[o < n ? o : n - 1] = 0;
				return o > 1;
			}
		} else if (!c) {
			idx--;
		}
	}
	return 0;
}

/* Name of upvalue idx (the proto's uvinfo). */
static int uv_name(const struct pt *p, uint32_t idx, char *out, size_t n)
{
	uint64_t uvinfo;

	if (rd_ref(p, p->h.lineinfo_at + p->o.ref, &uvinfo))
		return -1;
	return nth_name(p, uvinfo, idx, out, n);
}

/* ULEB128 from the target, advancing *a. */
static int uleb(const struct pt *p, uint64_t *a, uint32_t *v)
{
	uint32_t r = 0;
	unsigned int sh = 0;
	uint8_t b;

	do {
		if (sh > 28 || rd(p, (*a)++, &b, 1))
			return -1;
		r |= (uint32_t)(b & 0x7f) << sh;
		sh += 7;
	} while (b & 0x80);
	*v = r;
	return 0;
}

/* debug_varname(): the local in `slot` at bytecode position pc. */
static int varname(const struct pt *p, uint32_t pc, uint32_t slot, char *out,
		   size_t n)
{
	uint64_t v;
	uint32_t lastpc = 0;

	if (rd_ref(p, p->h.lineinfo_at + 2 * p->o.ref, &v) || !v)
		return 0;
	for (int guard = 0; guard < 4096; guard++) {
		uint8_t c;
		size_t o = 0;
		uint32_t d1, d2, startpc, endpc;

		if (rd(p, v, &c, 1))
			return -1;
		if (c == 0)
			return 0;
		if (c < VARNAME__MAX) {
			v++;
			out[0] = 0;
		} else {
			for (;; v++) {
				if (rd(p, v, &c, 1))
					return -1;
				if (o + 1 < n)
					out[o++] = (char)c;
				if (!c)
					break;
			}
			v++;
			out[o < n ? o : n - 1] = 0;
		}
		if (uleb(p, &v, &d1))
			return -1;
		startpc = lastpc = lastpc + d1;
		if (startpc > pc)
			return 0;
		if (uleb(p, &v, &d2))
			return -1;
		endpc = startpc + d2;
		if (pc < endpc && slot-- == 0)
			return out[0] ? 1 : 0;
	}
	return 0;
}

/*
 * A Lua function entered from an instruction other than a call runs as
 * a metamethod (a continuation frame's pc leads back to the instruction
 * that invoked it): named by the event, as lj_debug_funcname() does from
 * the opcode's metamethod mode in lj_bc.h.
 */
static int mm_name(unsigned int op, char *out, size_t outlen)
{
	static const char *const arith[] = {
		"__add", "__sub", "__mul", "__div", "__mod"
	};
	const char *mm = NULL;

	if (op <= BC_ISGE)
		mm = "__lt";
	else if (op <= BC_ISGT)
		mm = "__le";
	else if (op <= BC_ISNEP)
		mm = "__eq";
	else if (op == BC_UNM)
		mm = "__unm";
	else if (op == BC_LEN)
		mm = "__len";
	else if (op >= BC_ADDVN && op <= BC_MODVV)
		mm = arith[(op - BC_ADDVN) % 5];
	else if (op == BC_POW)
		mm = "__pow";
	else if (op == BC_CAT)
		mm = "__concat";
	else if (op == BC_GGET || (op >= BC_TGETV && op <= BC_TGETR))
		mm = "__index";
	else if (op == BC_GSET || (op >= BC_TSETV && op <= BC_TSETR &&
				   op != BC_TSETM))
		mm = "__newindex";
	if (!mm || strlen(mm) >= outlen)
		return 0;
	memcpy(out, mm, strlen(mm) + 1);
	return 1;
}

/* The GCproto at pt, checked to be one: bytecode, constants, debug info. */
static int pt_open(struct pt *p, pid_t pid, const struct luw_lj_layout *ly,
		   uint64_t pt)
{
	luw_obj_init(&p->o, pid, ly);
	if (luw_obj_proto(&p->o, pt, &p->h))
		return -1;
	/* k lies after the bytecode (and the GC constants below it). */
	if (p->h.k < p->h.bc + 4ULL * p->h.sizebc)
		return -1;
	return 0;
}

/*
 * lj_debug_slotname(): what slot `slot` holds just before instruction ip
 * runs -- the local live there, else the local, global, field or upvalue
 * the instruction that last wrote it read.  1 named, 0 not, -1 unreadable.
 */
static int slot_name(const struct pt *p, uint32_t ip, uint32_t slot,
		     char *out, size_t outlen, struct luw_callee_src *src,
		     int depth)
{
	uint32_t ins, guard;

restart:
	{
		int r = varname(p, ip, slot, out, outlen);

		if (r)
			return r;
	}
	for (guard = 0; ip > 1 && guard < MAX_SCAN; guard++) {
		unsigned int op, a;

		ip--;
		if (rd(p, p->h.bc + 4ULL * ip, &ins, 4))
			return -1;
		op = ins & 0xff;
		a = (ins >> 8) & 0xff;
		if (is_base(op)) {
			if (slot >= a && (op != BC_KNIL || slot <= (ins >> 16)))
				return 0;
		} else if (is_dst(op) && a == slot) {
			switch (op) {
			case BC_MOV:
				slot = ins >> 16;
				goto restart;
			case BC_GGET:
				if (src)
					src->kind = LUW_CS_GLOBAL;
				return kgc_str(p, ins >> 16, out, outlen);
			case BC_TGETS:
				/* The table: a global's or an upvalue's. */
				if (src)
					src->kind = LUW_CS_FIELD;
				if (src && !depth) {
					char t[sizeof(src->table)];
					struct luw_callee_src ts = { 0 };

					if (slot_name(p, ip, ins >> 24,
						      t, sizeof(t), &ts, 1) == 1 &&
					    (ts.kind == LUW_CS_GLOBAL ||
					     ts.kind == LUW_CS_UPVAL)) {
						src->table_kind = ts.kind;
						src->uv = ts.uv;
						memcpy(src->table, t, sizeof(t));
					}
				}
				return kgc_str(p, (ins >> 16) & 0xff, out, outlen);
			case BC_UGET:
				if (src) {
					src->kind = LUW_CS_UPVAL;
					src->uv = ins >> 16;
				}
				return uv_name(p, ins >> 16, out, outlen);
			default:
				return 0;
			}
		}
	}
	return 0;
}

int luw_funcname_callee_name(pid_t pid, const struct luw_lj_layout *ly, uint64_t pt,
		    uint32_t pc, char *out, size_t outlen,
		    struct luw_callee_src *src)
{
	struct pt p;
	uint32_t ins, ip;
	int r;

	if (src)
		memset(src, 0, sizeof(*src));
	if (outlen < 2 || pc < 2)
		return 0;
	if (pt_open(&p, pid, ly, pt) || pc > p.h.sizebc)
		return -1;
	ip = pc - 1;
	if (rd(&p, p.h.bc + 4ULL * ip, &ins, 4))
		return -1;
	if ((ins & 0xff) < BC_CALLM || (ins & 0xff) > BC_CALLT) {
		r = mm_name(ins & 0xff, out, outlen);
		if (r == 1 && src)
			src->kind = LUW_CS_MM;
		return r;
	}
	r = slot_name(&p, ip, (ins >> 8) & 0xff, out, outlen, src, 0);
	/* Named by a local the slot held (varname), or a copy of one. */
	if (r == 1 && src && !src->kind)
		src->kind = LUW_CS_LOCAL;
	return r;
}

#define MAX_KGC 65536		/* FNEW's D is 16 bits */
#define MAX_BC (1U << 22)	/* bytecode read in one piece */

/* The FNEW of `parent` that creates closures of `child`; its index. */
static int find_fnew(const struct pt *p, uint64_t child, uint32_t *at)
{
	uint32_t sizekgc = p->h.sizekgc, sizebc = p->h.sizebc, ref = p->o.ref;
	uint32_t n = 0, *bc = NULL;
	uint8_t *kgc = NULL;
	int r = -1, found = 0;

	if (sizekgc > MAX_KGC || sizebc > MAX_BC)
		return -1;
	if (!sizekgc || !sizebc)
		return 0;
	kgc = malloc((size_t)sizekgc * ref);
	bc = malloc((size_t)sizebc * 4);
	if (!kgc || !bc ||
	    rd(p, p->h.k - (uint64_t)sizekgc * ref, kgc, sizekgc * ref) ||
	    rd(p, p->h.bc, bc, sizebc * 4))
		goto out;
	/* proto_kgc(pt, ~n) is the ref n + 1 below k. */
	for (n = 0; n < sizekgc; n++) {
		uint64_t v = 0;

		memcpy(&v, kgc + (size_t)(sizekgc - 1 - n) * ref, ref);
		if (v == child) {
			found = 1;
			break;
		}
	}
	r = 0;
	if (!found)
		goto out;
	for (uint32_t i = 0; i < sizebc; i++)
		if ((bc[i] & 0xff) == BC_FNEW && bc[i] >> 16 == n) {
			*at = i;
			r = 1;
			break;
		}
out:
	free(kgc);
	free(bc);
	return r;
}

/* Whether the child is a method: its first parameter is the implicit self. */
static int is_method(pid_t pid, const struct luw_lj_layout *ly, uint64_t child)
{
	struct pt c;
	char name[8];

	if (pt_open(&c, pid, ly, child) || c.h.numparams < 1)
		return 0;
	return varname(&c, 0, 0, name, sizeof(name)) == 1 &&
	       !strcmp(name, "self");
}

int luw_funcname_def_name(pid_t pid, const struct luw_lj_layout *ly, uint64_t parent,
		 uint64_t child, char *out, size_t outlen)
{
	struct pt p;
	uint32_t at, ins, a, op;
	int r;

	if (outlen < 4)
		return -1;
	if (pt_open(&p, pid, ly, parent))
		return -1;
	r = find_fnew(&p, child, &at);
	if (r <= 0)
		return r;
	a = (rd(&p, p.h.bc + 4ULL * at, &ins, 4) ? 0 : (ins >> 8) & 0xff);
	/* local function f / local f = function: the local starts there. */
	r = varname(&p, at + 1, a, out, outlen);
	if (r)
		return r < 0 ? -1 : 1;
	if (at + 1 >= p.h.sizebc || rd(&p, p.h.bc + 4ULL * (at + 1), &ins, 4))
		return 2;
	op = ins & 0xff;
	if (op == BC_GSET && ((ins >> 8) & 0xff) == a) {
		r = kgc_str(&p, ins >> 16, out, outlen);
	} else if (op == BC_TSETS && ((ins >> 8) & 0xff) == a) {
		char tab[128], key[128];
		int t = slot_name(&p, at + 1, ins >> 24, tab, sizeof(tab), NULL,
				  0);

		r = kgc_str(&p, (ins >> 16) & 0xff, key, sizeof(key));
		if (r == 1 && t == 1)
			snprintf(out, outlen, "%s%c%s", tab,
				 is_method(pid, ly, child) ? ':' : '.', key);
		else if (r == 1)
			snprintf(out, outlen, "%s", key);
	} else if (op == BC_USETV && (ins >> 16) == a) {
		r = uv_name(&p, (ins >> 8) & 0xff, out, outlen);
	} else if (op == BC_MOV && (ins >> 16) == a) {
		r = varname(&p, at + 2, (ins >> 8) & 0xff, out, outlen);
	} else {
		return 2;
	}
	if (r < 0)
		return -1;
	return r == 1 ? 1 : 2;
}
