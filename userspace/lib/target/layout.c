/*
 * layout: find LuaJIT in a live process, pick and validate its layout.
 * See target/layout.h for the approach.
 */
#include "target/ffscan.h"
#include "target/layout.h"
#include "target/objoffs.h"
#include "elf/debugfile.h"
#include "elf/dwstruct.h"
#include "elf/ehframe.h"
#include "elf/symbols.h"
#include "util/fail.h"
#include "kmod/ljwalk.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "target/obj.h"
#include "luajit/known.h"
#include "target/dwlayout.h"
#include "target/fromcode.h"
#include "target/states.h"
#include "target/validate.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/user.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

void luw_layout_regs_from(const struct user_regs_struct *u, struct luw_lj_regs *r)
{
	memset(r, 0, sizeof(*r));
	r->ip = u->rip;
	r->r[LUW_X86_RAX] = u->rax;
	r->r[LUW_X86_RDX] = u->rdx;
	r->r[LUW_X86_RCX] = u->rcx;
	r->r[LUW_X86_RBX] = u->rbx;
	r->r[LUW_X86_RSI] = u->rsi;
	r->r[LUW_X86_RDI] = u->rdi;
	r->r[LUW_X86_RBP] = u->rbp;
	r->r[LUW_X86_RSP] = u->rsp;
	r->r[LUW_X86_R8] = u->r8;
	r->r[LUW_X86_R9] = u->r9;
	r->r[LUW_X86_R10] = u->r10;
	r->r[LUW_X86_R11] = u->r11;
	r->r[LUW_X86_R12] = u->r12;
	r->r[LUW_X86_R13] = u->r13;
	r->r[LUW_X86_R14] = u->r14;
	r->r[LUW_X86_R15] = u->r15;
}

void luw_layout_walk(const struct luw_layout_target *t, const struct luw_lj_layout *ly,
		     const struct user_regs_struct *u, uint64_t g_hint,
		     struct luw_lj_walk_out *o)
{
	struct luw_lj_walk_in in;
	pid_t pid = t->pid;

	memset(&in, 0, sizeof(in));
	in.ly = ly;
	in.read = luw_mem_read_cb;
	in.ctx = &pid;
	if (u)
		luw_layout_regs_from(u, &in.regs);
	in.vm_start = t->vm_start;
	in.interp_end = t->interp_end;
	in.vm_end = t->vm_end;
	in.g_hint = g_hint;
	luw_lj_walk(&in, o);
}

/* Is ip inside the machine code of the trace the walk reported? */
static int ip_in_trace(const struct luw_layout_target *t,
		       const struct luw_lj_frame *f, uint64_t ip)
{
	const struct luw_lj_layout *ly = &t->layout;
	uint64_t mcode = 0;
	uint32_t sz = 0;

	if (f->kind != LUW_LJF_TRACE || !f->func)
		return 0;
	if (luw_mem_read(t->pid, f->func + ly->tr_mcode, &mcode, 8) ||
	    luw_mem_read(t->pid, f->func + ly->tr_szmcode, &sz, 4))
		return 0;
	return ip >= mcode && ip < mcode + sz;
}

int luw_layout_caught(const struct luw_layout_target *t, uint64_t ip,
		      const struct luw_lj_walk_out *o, int any)
{
	if (ip >= t->vm_start && ip < t->interp_end)
		return o->vmstate != LUW_VMST_TRACE;
	if (o->vmstate == LUW_VMST_TRACE && o->nframes)
		return ip_in_trace(t, &o->frames[0], ip);
	return any && o->status == LUW_LJW_OK && o->nframes > 0;
}

/* ---- which objects may hold the VM ----------------------------------- */

static const char *classify(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	if (!strncmp(b, "libluajit", 9))
		return "libluajit";
	if (!strncmp(b, "luajit", 6))
		return "luajit";
	if (!strncmp(b, "tarantool", 9))
		return "tarantool";
	if (!strncmp(b, "nginx", 5))
		return "nginx";
	if (!strncmp(b, "openresty", 9))
		return "openresty";
	return NULL;
}

/* ---- ELF: build-id, bias, VM FDE ---------------------------------------- */

struct elfobj {
	int fd;
	Elf *elf;
};

/*
 * The object behind a mapping.  Its path may name another file by now (a
 * package upgrade replaced it) or none (" (deleted)"): luw_maps_file finds
 * the file the process runs.  0, or -1 with the reason in err.
 */
static int elf_open_map(pid_t pid, const struct luw_map *m, struct elfobj *o,
			char *err, size_t n)
{
	char p[4200];

	if (luw_maps_file(pid, m, p, sizeof(p)))
		return luw_fail(err, n, "%s", strerror(ENOENT));
	o->elf = luw_elf_open(p, &o->fd, err, n);
	return o->elf ? 0 : -1;
}

static void elf_close(struct elfobj *o)
{
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	o->elf = NULL;
	o->fd = -1;
}

/* The build-id in hex, "" when none fits. */
static void build_id(Elf *elf, char *out, size_t n)
{
	uint8_t id[LUW_BUILD_ID_MAX];
	size_t len = luw_debugfile_build_id(elf, id, sizeof(id));

	out[0] = 0;
	if (2 * len < n)
		luw_debugfile_build_id_hex(id, len, out);
}

int luw_layout_bias(Elf *elf, const struct luw_map *m, uint64_t *bias)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if ((ph.p_offset & ~0xfffull) == m->offset && (ph.p_flags & PF_X)) {
			*bias = m->start - (ph.p_vaddr & ~0xfffull);
			return 0;
		}
	}
	return -1;
}

/*
 * CFA rule at `pc` if it is REG + N with REG = reg: N, else -1;
 * rstart, rend: the range of the row.
 */
static long cfa_reg_off(Dwarf_CFI *cfi, uint64_t pc, unsigned int reg,
			uint64_t *rstart, uint64_t *rend)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t nops;
	Dwarf_Addr s, e;
	long r = -1;

	if (dwarf_cfi_addrframe(cfi, pc, &fr))
		return -1;
	if (dwarf_frame_info(fr, &s, &e, NULL) >= 0 &&
	    dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1 &&
	    ops[0].atom == DW_OP_bregx && ops[0].number == reg) {
		r = (long)(int64_t)ops[0].number2;
		*rstart = s;
		*rend = e;
	}
	free(fr);
	return r;
}

/* Whether reg is saved at CFA + off in fr (the rule offset(off)). */
static int saved_at(Dwarf_Frame *fr, int reg, long off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	return !dwarf_frame_register(fr, reg, mem, &ops, &nops) &&
	       nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	       ops[1].atom == DW_OP_plus_uconst &&
	       (long)(int64_t)ops[1].number == off;
}

/*
 * Whether the row at pc saves what the interpreter's frame saves, in its
 * order: rbp, rbx, r15, r14 in the four words below the return address
 * (the CIE and FDE buildvm writes for lj_vm.S, every x86-64 LuaJIT from
 * 2.0 on).  A compiler's frames push r15 first: a cold fragment of a C++
 * library that also starts with CFA = rsp + N is told apart by this.
 */
static int vm_saves(Dwarf_CFI *cfi, uint64_t pc)
{
	Dwarf_Frame *fr = NULL;
	int ok;

	if (dwarf_cfi_addrframe(cfi, pc, &fr))
		return 0;
	ok = saved_at(fr, 6, -16) && saved_at(fr, 3, -24) &&
	     saved_at(fr, 15, -32) && saved_at(fr, 14, -40);
	free(fr);
	return ok;
}

/*
 * The interpreter's FDE: the largest whose first row puts the CFA at
 * rsp + a frame (the VM's fixed C frame) with the VM's registers saved
 * in it, from the FDEs of .eh_frame.
 */
int luw_layout_vm_fde(Elf *elf, uint64_t *start, uint64_t *iend,
		   uint64_t *end, uint32_t *cfa, char *err, size_t n)
{
	struct luw_fdes f;
	Dwarf_CFI *cfi;
	uint64_t best = 0, best_s = 0, best_e = 0, best_cfa = 0;

	if (luw_ehframe_fdes(elf, &f))
		return luw_fail(err, n, "out of memory");
	if (!f.n) {
		luw_ehframe_free(&f);
		return luw_fail(err, n, "no .eh_frame");
	}
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi) {
		luw_ehframe_free(&f);
		return luw_fail(err, n, "no CFI: %s", dwarf_errmsg(-1));
	}
	for (size_t i = 0; i < f.n; i++) {
		uint64_t s = f.v[i].start, rs, re;
		long off;

		/* The interpreter is tens of KiB; skip small ones. */
		if (f.v[i].end - s < 8192)
			continue;
		off = cfa_reg_off(cfi, s, 7, &rs, &re);
		if (off <= 8 || rs != s || !vm_saves(cfi, s))
			continue;
		if (re - rs > best) {
			best = re - rs;
			best_s = rs;
			best_e = re;
			best_cfa = (uint64_t)off;
		}
	}
	luw_ehframe_free(&f);
	if (!best) {
		dwarf_cfi_end(cfi);
		return luw_fail(err, n, "no LuaJIT interpreter FDE in .eh_frame");
	}
	*start = best_s;
	*iend = best_e;
	*end = best_e;
	*cfa = (uint32_t)best_cfa;
	{
		/*
		 * lj_vm_ffi_call's FDE follows directly; all its rules are at
		 * its first address: CFA = rbp + 16.
		 */
		uint64_t rs, re;

		if (cfa_reg_off(cfi, best_e, 6, &rs, &re) == 16 && rs == best_e)
			*end = re;
	}
	dwarf_cfi_end(cfi);
	return 0;
}

/* ---- luw_layout_open ------------------------------------------------------------ */

static int try_object(struct luw_layout_target *t, const struct luw_map *m,
		      const char *kind, char *err, size_t n)
{
	struct elfobj o = { -1, NULL };
	struct luw_lj_layout dly;
	struct luw_ffnames *dff;
	char why[256], src[4400], mpath[4200];
	const struct luw_known *known;
	uint64_t sym;
	size_t i, nknown;

	/* Messages and t->path: the object as /proc/PID/maps names it. */
	snprintf(mpath, sizeof(mpath), "%s%s", m->path,
		 m->deleted ? " (deleted)" : "");
	if (elf_open_map(t->pid, m, &o, why, sizeof(why)))
		return luw_fail(err, n, "%s: cannot open: %s", mpath, why);
	if (luw_layout_bias(o.elf, m, &t->bias)) {
		elf_close(&o);
		return luw_fail(err, n, "%s: mapping matches no PT_LOAD", mpath);
	}
	if (luw_layout_vm_fde(o.elf, &t->vm_start, &t->interp_end, &t->vm_end,
			&t->fde_cfa, why, sizeof(why))) {
		elf_close(&o);
		return luw_fail(err, n, "%s: %s", mpath, why);
	}
	/* With a symbol table: check the FDE against lj_vm_asm_begin. */
	if (!luw_elf_symbol(o.elf, SHT_SYMTAB, "lj_vm_asm_begin", 0, &sym) &&
	    sym != t->vm_start) {
		elf_close(&o);
		return luw_fail(err, n, "%s: FDE at 0x%llx, lj_vm_asm_begin at 0x%llx",
			    mpath, (unsigned long long)t->vm_start,
			    (unsigned long long)sym);
	}
	/* For a stripped build: what its machine code says (target/recover.h). */
	t->why_rec[0] = 0;
	if (luw_recover(o.elf, t->vm_start, t->interp_end, LUW_X86_R14,
			LUW_X86_RDX, &t->rec, t->why_rec, sizeof(t->why_rec)) &&
	    !t->why_rec[0])
		snprintf(t->why_rec, sizeof(t->why_rec), "not analysed");
	t->vm_start += t->bias;
	t->interp_end += t->bias;
	t->vm_end += t->bias;
	snprintf(t->path, sizeof(t->path), "%.4095s", mpath);
	build_id(o.elf, t->build_id, sizeof(t->build_id));
	t->kind = kind ? kind : "embedded";
	t->src = LUW_LJL_SRC_NONE;
	luw_ffnames_init(&t->ff, NULL);
	known = luw_known_layouts(&nknown);
	for (i = 0; i < nknown; i++) {
		if (known[i].build_id && !strcmp(known[i].build_id, t->build_id)) {
			t->layout = *known[i].layout;
			t->src = LUW_LJL_SRC_KNOWN;
			luw_ffnames_family(&t->ff, known[i].ffam, known[i].name);
			snprintf(t->layout_name, sizeof(t->layout_name), "%s",
				 known[i].name);
			break;
		}
	}
	/* DWARF wins over the table: it describes this very build. */
	why[0] = 0;
	dff = malloc(sizeof(*dff));
	if (!dff) {
		elf_close(&o);
		return luw_fail(err, n, "out of memory");
	}
	luw_ffnames_init(dff, NULL);
	if (!luw_dwlayout_any(t, o.elf, m->path, &dly, dff, src, sizeof(src), why,
			      sizeof(why))) {
		/* What no DWARF holds: this binary's own, from its code. */
		if (!t->why_rec[0])
			luw_fromcode_vm_constants(&t->rec, &dly);
		t->layout = dly;
		t->src = LUW_LJL_SRC_DWARF;
		snprintf(t->layout_name, sizeof(t->layout_name), "DWARF of %.80s",
			 src);
		if (dff->count)
			t->ff = *dff;
		t->why_dwarf[0] = 0;
	} else {
		snprintf(t->why_dwarf, sizeof(t->why_dwarf), "%s", why);
		if (t->src == LUW_LJL_SRC_NONE)
			snprintf(t->layout_name, sizeof(t->layout_name),
				 "unknown build (%.60s)", why);
	}
	free(dff);
	elf_close(&o);
	return 0;
}

int luw_layout_open(pid_t pid, struct luw_layout_target *t, char *err, size_t n)
{
	char first_err[512] = "";
	struct luw_maps maps;
	int pass;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return luw_fail(err, n, "libelf too old");
	if (luw_maps_read(pid, &maps))
		return luw_fail(err, n, "pid %d: %s", (int)pid, strerror(errno));
	/* Pass 0: objects named like LuaJIT hosts; pass 1: any executable. */
	for (pass = 0; pass < 2; pass++) {
		char seen[64][256];
		int nseen = 0;

		for (size_t mi = 0; mi < maps.n; mi++) {
			const struct luw_map *m = &maps.v[mi];
			const char *kind;
			int k, dup = 0;

			if (!(m->prot & LUW_MAP_X) || m->path[0] != '/')
				continue;
			kind = classify(m->path);
			if ((pass == 0) != (kind != NULL))
				continue;
			for (k = 0; k < nseen; k++)
				dup |= !strncmp(seen[k], m->path, 255);
			if (dup)
				continue;
			if (nseen < 64)
				snprintf(seen[nseen++], 256, "%.255s", m->path);
			if (pass == 1 && (strstr(m->path, "/libc.so") ||
					  strstr(m->path, "/ld-linux") ||
					  strstr(m->path, "/libm.so")))
				continue;
			/* Only a named candidate's failure is worth reporting. */
			if (!try_object(t, m, kind,
					pass || first_err[0] ? NULL : first_err,
					sizeof(first_err))) {
				luw_maps_free(&maps);
				return 0;
			}
		}
	}
	luw_maps_free(&maps);
	if (first_err[0])
		return luw_fail(err, n, "pid %d: no LuaJIT VM found (%s)", (int)pid,
			    first_err);
	return luw_fail(err, n,
		    "pid %d is not a LuaJIT process: no luajit*, libluajit-5.1.so*, "
		    "tarantool, nginx or openresty mapping and no mapped object "
		    "with LuaJIT's interpreter FDE", (int)pid);
}

int luw_layout_obj(struct luw_layout_target *t, struct luw_obj *o, char *why,
		   size_t n)
{
	luw_obj_init(o, t->pid, &t->layout);
	if (!t->offs_state)
		t->offs_state = luw_objoffs_find(&t->offs, &t->layout, t->path,
						t->why_offs,
						sizeof(t->why_offs)) ? -1 : 1;
	if (t->offs_state < 0)
		return luw_fail(why, n, "%s", t->why_offs);
	luw_obj_use(o, &t->offs);
	return 0;
}

/*
 * Without DWARF's FF_* or a build checked by its build-id, the names come
 * from the target's tables; failing that, fast functions stay unnamed
 * ("ff:#N"), which is incomplete but never wrong.
 */
static void names_from_tables(struct luw_layout_target *t)
{
	char why[128];

	if (t->ff.count)
		return;
	if (luw_ffscan_names(t, why, sizeof(why)))
		snprintf(t->ff.src, sizeof(t->ff.src), "none: %.50s", why);
}

/* Rounds of checks before a refusal (see "Reading a running target"). */
#define LJL_ROUNDS 3

/*
 * A candidate that validated in a round after the first: every state is
 * validated once more with the layout just installed.
 */
static int confirm(struct luw_layout_target *t, int round, char *why, size_t n)
{
	if (!round)
		return 0;
	if (!luw_validate_all(t, &t->layout, why, n))
		return 0;
	memset(&t->layout, 0, sizeof(t->layout));
	t->nstates = 0;
	return -1;
}

/* The check in a use_layout message, without the path and build-id. */
static void cand_why(char *dst, size_t dn, const char *why)
{
	const char *c = strstr(why, "the live process: ");
	size_t l;

	c = c ? c + 18 : why;
	l = strlen(c);
	if (l > 13 && !strcmp(c + l - 13, "; refusing it"))
		l -= 13;
	snprintf(dst, dn, "%.*s", (int)l, c);
}

/*
 * Round `round` of the candidates that need no DWARF and no build-id:
 * each family layout as is, then each with what the machine code and the
 * process give.  0 when one validated (installed in t); else -1, and for
 * each candidate k whys[k] holds its failed check, names[k] its name and
 * iscode[k] whether the machine code's fields were in it.
 */
#define LJL_MAX_CAND 16
static int try_families(struct luw_layout_target *t, int round,
			char whys[][400], const char *names[], int iscode[],
			int *ncand)
{
	char why[512], fields[720], name[864];
	size_t nknown, i;
	const struct luw_known *known = luw_known_layouts(&nknown);
	int k = 0, code;

	for (code = 0; code < 2; code++) {
		for (i = 0; i < nknown; i++) {
			struct luw_lj_layout ly;
			int bad;

			if (known[i].build_id || k >= LJL_MAX_CAND)
				continue;
			names[k] = known[i].name;
			iscode[k] = code;
			if (!code) {
				/* A family's constants may have moved on. */
				ly = *known[i].layout;
				ly.stack_extra = 0;
				ly.gg_ndisp = 0;
				luw_fromcode_unproven(&ly);
				snprintf(name, sizeof(name), "%s", known[i].name);
				bad = !t->why_rec[0] &&
				      luw_fromcode_vmst_agrees(&t->rec, &ly, why, sizeof(why));
				if (!bad)
					bad = luw_validate_use(t, &ly, name, why,
								 sizeof(why));
			} else {
				bad = luw_fromcode_layout(t, known[i].layout, &ly,
						       fields, sizeof(fields),
						       why, sizeof(why));
				if (!bad) {
					snprintf(name, sizeof(name),
						 "%.60s with %.710s from machine code%s",
						 known[i].name, fields,
						 t->rec.by_shape ? " (lua_close and "
						 "lua_gettop found by their code: "
						 "none exported)" : "");
					/*
					 * The short name in the refusal: the
					 * field list would fill why before
					 * the check that failed.
					 */
					bad = luw_validate_use(t, &ly,
								 known[i].name,
								 why, sizeof(why));
				}
			}
			if (!bad)
				bad = confirm(t, round, why, sizeof(why));
			if (!bad) {
				t->src = code ? LUW_LJL_SRC_CODE : LUW_LJL_SRC_GUESS;
				snprintf(t->layout_name, sizeof(t->layout_name),
					 code ? "%.790s" :
					 "%.200s (validated, build-id not in the table)",
					 name);
				t->rounds = round + 1;
				if (round)
					snprintf(t->why_round1,
						 sizeof(t->why_round1), "%s",
						 whys[k]);
				return 0;
			}
			cand_why(whys[k], sizeof(whys[k]), why);
			k++;
		}
	}
	*ncand = k;
	return -1;
}

int luw_layout_attach(pid_t pid, struct luw_layout_target *t, char *err, size_t n)
{
	static const char how[] =
		"checked in %d rounds while the target ran, each state read "
		"up to 3 times";
	char all[4096], whys[LJL_MAX_CAND][400], first[LJL_MAX_CAND][400];
	const char *names[LJL_MAX_CAND];
	int iscode[LJL_MAX_CAND];
	size_t used;
	int round, k, ncand = 0;

	if (luw_layout_open(pid, t, err, n))
		return -1;
	t->rounds = 0;
	t->why_round1[0] = 0;
	if (t->src != LUW_LJL_SRC_NONE) {
		struct luw_lj_layout ly = t->layout;
		char why[512];

		for (round = 0; round < LJL_ROUNDS; round++) {
			if (round)
				usleep(10000u * (unsigned int)round);
			if (!luw_validate_use(t, &ly, t->layout_name, why,
						sizeof(why)) &&
			    !confirm(t, round, why, sizeof(why))) {
				t->rounds = round + 1;
				if (round)
					cand_why(t->why_round1,
						 sizeof(t->why_round1), err);
				names_from_tables(t);
				return 0;
			}
			if (!round)
				snprintf(err, n, "%s", why);
		}
		used = strlen(err);
		if (used < n) {
			snprintf(err + used, n - used, " (");
			used = strlen(err);
			snprintf(err + used, n - used, how, LJL_ROUNDS);
			used = strlen(err);
			snprintf(err + used, n - used, ")");
		}
		return -1;
	}
	/*
	 * Unknown build: a family layout must validate on every state.  On
	 * failure, say what failed for each candidate: DWARF, then each one,
	 * and what a later round saw when it was another check.
	 */
	for (round = 0; round < LJL_ROUNDS; round++) {
		if (round)
			usleep(10000u * (unsigned int)round);
		if (!try_families(t, round, whys, names, iscode, &ncand)) {
			names_from_tables(t);
			return 0;
		}
		if (!round)
			memcpy(first, whys, sizeof(first));
	}
	used = (size_t)snprintf(all, sizeof(all), "every candidate ");
	used += (size_t)snprintf(all + used, sizeof(all) - used, how, LJL_ROUNDS);
	used += (size_t)snprintf(all + used, sizeof(all) - used, ": DWARF: %s",
				 t->why_dwarf[0] ? t->why_dwarf : "none");
	for (k = 0; k < ncand && used < sizeof(all); k++) {
		int same = !strcmp(first[k], whys[k]);

		used += (size_t)snprintf(all + used, sizeof(all) - used,
					 "; %s\"%s\": %s%s%s%s",
					 iscode[k] ? "code + " : "",
					 names[k], first[k],
					 same ? "" : " (a later round: ",
					 same ? "" : whys[k], same ? "" : ")");
	}
	memset(&t->layout, 0, sizeof(t->layout));
	t->nstates = 0;
	return luw_fail(err, n,
		    "%s (build-id %s): LuaJIT layout not recognised, %s",
		    t->path, t->build_id[0] ? t->build_id : "none", all);
}

