/*
 * recover: layout fields from machine code.  See target/recover.h.  Here:
 * the straight-line reader of lua_close and lua_gettop, the C frame
 * lj_vm_pcall builds, and the fields decided from what the path goals
 * found (target/recover_goal.h); the interpreter's sweeps are
 * target/recover_vm.c's, the x86 decoding and data flow x86/'s.
 */
#include "target/recover.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/ehframe.h"
#include "elf/elf.h"
#include "elf/symbols.h"
#include "target/recover_goal.h"
#include "target/recover_vm.h"
#include "x86/decode.h"

/* What a register holds, as far as the analysis knows. */
enum val { V_UNK, V_L, V_G, V_ML, V_ZERO, V_LOADL };

struct regs {
	enum val v[16];
	int32_t disp[16];	/* V_LOADL: the offset loaded from L */
};

static void set_once(int *f, int v)
{
	if (*f == LUW_LJR_NONE)
		*f = v;
}

/* One function, straight-line from its entry to the first ret. */
static void analyse(csh h, const uint8_t *code, size_t len, uint64_t addr,
		    struct luw_recover_result *r, int gettop)
{
	cs_insn *in = cs_malloc(h);
	struct regs s;
	int n = 0, k;

	memset(&s, 0, sizeof(s));
	s.v[5] = V_L;	/* rdi: the lua_State * argument */
	while (in && n++ < 200 && cs_disasm_iter(h, &code, &len, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
		int d = luw_decode_reg_op(x, 0), b;
		int32_t disp;

		if (in->id == X86_INS_RET || in->id == X86_INS_JMP)
			break;
		if (in->id == X86_INS_CALL) {
			/* After a call: the caller-saved registers hold unknowns. */
			for (k = 0; k < LUW_DECODE_NCLOBBERED; k++)
				s.v[luw_decode_clobbered[k]] = V_UNK;
			continue;
		}
		if (in->id == X86_INS_MOV && d >= 0 && x->op_count == 2 &&
		    (b = luw_decode_mem_base(o1, &disp)) >= 0) {
			enum val nv = V_UNK;

			if (s.v[b] == V_L && !gettop && r->l_glref == LUW_LJR_NONE &&
			    (o1->size == 8 || o1->size == 4)) {
				r->l_glref = disp;
				r->ref_size = o1->size;
				nv = V_G;
			} else if (s.v[b] == V_L && gettop) {
				nv = V_LOADL;
				s.disp[d] = disp;
			} else if (s.v[b] == V_G && r->g_mainthref == LUW_LJR_NONE &&
				   o1->size == r->ref_size) {
				r->g_mainthref = disp;
				nv = V_ML;
			} else if (s.v[b] == V_ML && r->l_stack == LUW_LJR_NONE &&
				   o1->size == r->ref_size) {
				r->l_stack = disp;
			}
			s.v[d] = nv;
			continue;
		}
		if (in->id == X86_INS_SUB && gettop && d >= 0 &&
		    s.v[d] == V_LOADL && (b = luw_decode_mem_base(o1, &disp)) >= 0 &&
		    s.v[b] == V_L) {
			/* top - base */
			r->l_top = s.disp[d];
			r->l_base = disp;
			break;
		}
		if (in->id == X86_INS_MOV && x->op_count == 2 &&
		    (b = luw_decode_mem_base(o0, &disp)) >= 0 &&
		    ((o1->type == X86_OP_IMM && o1->imm == 0) ||
		     (o1->type == X86_OP_REG && luw_decode_reg(o1->reg) >= 0 &&
		      s.v[luw_decode_reg(o1->reg)] == V_ZERO))) {
			if (s.v[b] == V_G && o0->size == r->ref_size)
				set_once(&r->g_cur_l, disp);
			else if (s.v[b] == V_ML && o0->size == 1)
				set_once(&r->l_status, disp);
			else if (s.v[b] == V_ML && o0->size == 8 &&
				 disp != r->g_cur_l)
				set_once(&r->l_cframe, disp);
			continue;
		}
		if (in->id == X86_INS_MOV && d >= 0 && o1->type == X86_OP_REG &&
		    luw_decode_reg(o1->reg) >= 0) {
			s.v[d] = s.v[luw_decode_reg(o1->reg)];
			s.disp[d] = s.disp[luw_decode_reg(o1->reg)];
			continue;
		}
		if (in->id == X86_INS_XOR && d >= 0 && o1->type == X86_OP_REG &&
		    luw_decode_reg(o1->reg) == d) {
			s.v[d] = V_ZERO;
			continue;
		}
		if (d >= 0 && luw_decode_writes_op0(in))
			s.v[d] = V_UNK;
	}
	if (in)
		cs_free(in, 1);
}

/*
 * The C frame a VM entry builds (see target/recover.h): lua_pcall calls
 * lj_vm_pcall, an address inside the interpreter's FDE, not at its start.
 */
static void cframe_recover(const struct luw_decode_file *file,
			   struct luw_recover_result *r)
{
	struct { int32_t ofs; int size; unsigned int pcst; } lst[4];
	uint64_t a, sz, entry = 0, lo = 0, hi = 0, addr;
	const struct luw_fdes *fdes = file->fdes;
	const uint8_t *code;
	size_t len, i;
	int nl = 0, n = 0, k, isl[16] = { 0 }, prev[16] = { 0 }, done = 0, got;
	int32_t ofs_prev = LUW_LJR_NONE;
	Elf *elf = file->elf;
	csh h = file->h;
	Elf_Scn *text;
	GElf_Shdr sh;
	cs_insn *in;

	if (r->l_cframe == LUW_LJR_NONE ||
	    luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_pcall", 1, &a, &sz) ||
	    !(code = luw_decode_code(elf, a, sz, &len)) || !(in = cs_malloc(h)))
		return;
	text = luw_elf_section_at(elf, a, 1, SHF_ALLOC, &sh);
	addr = a;
	while (cs_disasm_iter(h, &code, &len, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		uint64_t t;

		if (in->id != X86_INS_CALL || x->op_count != 1 ||
		    x->operands[0].type != X86_OP_IMM)
			continue;
		t = (uint64_t)x->operands[0].imm;
		/* Not a PLT stub (the PLT's FDE covers every stub). */
		if (luw_elf_section_at(elf, t, 1, SHF_ALLOC, &sh) != text)
			continue;
		for (i = 0; i < fdes->n; i++) {
			if (t <= fdes->v[i].start || t >= fdes->v[i].end)
				continue;
			if (entry && entry != t)
				goto out;	/* two VM entries: decide nothing */
			entry = t;
			lo = fdes->v[i].start;
			hi = fdes->v[i].end;
		}
	}
	if (!entry)
		goto out;
	/*
	 * The entry, up to L->cframe = rsp: the saved L (a store of the L
	 * argument), the previous cframe (a store of what L->cframe held),
	 * and the saved PC, which the entry also fills with L ("any value
	 * outside of bytecode").
	 */
	isl[5] = 1;
	addr = entry;
	while (!done && n++ < 64 && luw_decode_at(file, &addr, in)) {
		const cs_x86 *x = &in->detail->x86;
		const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
		int d = luw_decode_reg_op(x, 0), sr = luw_decode_reg_op(x, 1);

		if (in->id == X86_INS_JMP && x->op_count == 1 && o0->type == X86_OP_IMM) {
			addr = (uint64_t)o0->imm;
			continue;
		}
		if (in->id == X86_INS_RET || in->id == X86_INS_CALL ||
		    cs_insn_group(h, in, CS_GRP_JUMP))
			break;
		if (in->id != X86_INS_MOV || x->op_count != 2) {
			if (d >= 0 && luw_decode_writes_op0(in))
				isl[d] = prev[d] = 0;
			continue;
		}
		if (o0->type == X86_OP_MEM && o0->mem.index == X86_REG_INVALID) {
			int b = luw_decode_reg(o0->mem.base);

			if (b == 7 && sr >= 0 && prev[sr])
				ofs_prev = (int32_t)o0->mem.disp;
			else if (b == 7 && sr >= 0 && isl[sr] && nl < 4) {
				lst[nl].ofs = (int32_t)o0->mem.disp;
				lst[nl].size = o0->size;
				lst[nl++].pcst = 0;
			} else if (b >= 0 && isl[b] && o0->mem.disp == r->l_cframe &&
				   sr == 7)
				done = 1;
			continue;
		}
		if (d < 0)
			continue;
		if (sr >= 0) {
			isl[d] = isl[sr];
			prev[d] = prev[sr];
		} else if (o1->type == X86_OP_MEM && o1->mem.index == X86_REG_INVALID &&
			   luw_decode_reg(o1->mem.base) >= 0 && isl[luw_decode_reg(o1->mem.base)] &&
			   o1->mem.disp == r->l_cframe && o1->size == 8) {
			isl[d] = 0;
			prev[d] = 1;
		} else {
			isl[d] = prev[d] = 0;
		}
	}
	if (!done || ofs_prev == LUW_LJR_NONE || nl != 2)
		goto out;
	/*
	 * Of the two, the saved PC is the one the interpreter also stores its
	 * PC register (rbx, vm_x64.dasc and vm_x86.dasc's x64 mode) into.
	 */
	code = luw_decode_code(elf, lo, hi - lo, &len);
	if (!code)
		goto out;
	addr = lo;
	while ((got = luw_decode_sweep(h, &code, &len, &addr, in)) >= 0) {
		const cs_x86 *x = &in->detail->x86;

		if (!got)
			continue;
		if (in->id != X86_INS_MOV || x->op_count != 2 ||
		    x->operands[0].type != X86_OP_MEM ||
		    luw_decode_reg(x->operands[0].mem.base) != 7 ||
		    x->operands[0].mem.index != X86_REG_INVALID ||
		    x->operands[1].type != X86_OP_REG ||
		    luw_decode_reg(x->operands[1].reg) != 3)
			continue;
		for (k = 0; k < nl; k++)
			if (lst[k].ofs == (int32_t)x->operands[0].mem.disp)
				lst[k].pcst++;
	}
	if ((lst[0].pcst > 0) == (lst[1].pcst > 0))
		goto out;
	k = lst[0].pcst > 0;
	r->cframe_ofs_l = lst[k].ofs;
	r->cframe_l_size = lst[k].size;
	r->cframe_ofs_pc = lst[!k].ofs;
	r->cframe_ofs_prev = ofs_prev;
out:
	cs_free(in, 1);
}

/*
 * Reads the function at `to` as lj_debug_line (inl: with it inlined,
 * fields relative to mref(fn->pc)).  Fills r's pt_* when it is one; 1 when
 * two candidates disagreed (r's pt_* then cleared), else 0.
 */
static int debug_line(const struct luw_decode_file *file,
		      const struct luw_recover_goal_found *fd, uint64_t to, int inl, int k,
		      struct luw_recover_result *r)
{
	struct luw_recover_goal_found l = *fd;
	uint64_t end = luw_ehframe_end(file->fdes, to);
	int i, fl = LUW_LJR_NONE, nfl = 0, b = 0;

	if (!end)
		return 0;
	l.sizebc = l.numline = l.lineinfo = LUW_LJR_NONE;
	l.sizebc_conflict = l.numline_conflict = l.lineinfo_conflict = 0;
	l.fl_paths = l.nfl = 0;
	l.pt_k = LUW_LJR_NONE;
	l.pt_k_conflict = 0;
	luw_recover_goal_explore(file, to, end - to,
				 inl ? &luw_recover_goal_debugline_inl :
				       &luw_recover_goal_debugline, &l);
	/* firstline: in every result read from pt, and not numline. */
	for (i = 0; i < l.nfl; i++)
		if (l.fl_cnt[i] == l.fl_paths && l.fl_off[i] != l.numline) {
			fl = l.fl_off[i];
			nfl++;
		}
	if (l.sizebc == LUW_LJR_NONE || l.sizebc_conflict ||
	    l.numline == LUW_LJR_NONE || l.numline_conflict ||
	    l.lineinfo == LUW_LJR_NONE || l.lineinfo_conflict ||
	    nfl != 1 || l.fl_paths < 2)
		return 0;	/* not lj_debug_line */
	/* Inline: pt's fields were read relative to mref(fn->pc). */
	if (inl) {
		if (l.pt_k == LUW_LJR_NONE || l.pt_k_conflict)
			return 0;
		k = b = l.pt_k;
	}
	if (b + l.sizebc < 0 || b + l.numline < 0 || b + l.lineinfo < 0 ||
	    b + fl < 0 || l.sizebc == l.numline || l.numline == fl ||
	    l.sizebc == fl)
		return 0;
	if (r->pt_size != LUW_LJR_NONE &&
	    (r->pt_size != k || r->pt_sizebc != b + l.sizebc ||
	     r->pt_numline != b + l.numline || r->pt_lineinfo != b + l.lineinfo ||
	     r->pt_firstline != b + fl)) {
		r->pt_size = LUW_LJR_NONE;	/* two answers: none */
		r->pt_sizebc = r->pt_numline = LUW_LJR_NONE;
		r->pt_lineinfo = r->pt_firstline = LUW_LJR_NONE;
		return 1;
	}
	r->pt_size = k;
	r->pt_sizebc = b + l.sizebc;
	r->pt_numline = b + l.numline;
	r->pt_lineinfo = b + l.lineinfo;
	r->pt_firstline = b + fl;
	return 0;
}

/*
 * The pointer stored at link-time address addr: a relative relocation's
 * addend (PIC: .data.rel.ro is filled at load time), else the file's
 * bytes.  0, or -1.
 */
static int ptr_at(Elf *elf, uint64_t addr, uint64_t *v)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela ra;

			if (!gelf_getrela(d, (int)i, &ra) || ra.r_offset != addr)
				continue;
			if (GELF_R_TYPE(ra.r_info) != R_X86_64_RELATIVE)
				return -1;
			*v = (uint64_t)ra.r_addend;
			return 0;
		}
	}
	return luw_elf_read_at(elf, addr, v, 8);
}

/*
 * J->sizetrace, J->trace, T->mcode and T->szmcode from jit.util (see
 * target/recover.h): luaopen_jit hands luaopen_jit_util to lj_lib_prereg (a
 * function address lea'd in luaopen_jit), which hands its lua_CFunction
 * array to lj_lib_register (lea'd into the fourth argument, rcx); each
 * function of the array is read for jit_checktrace and tracemc's call.
 */
static void checktrace_recover(const struct luw_decode_file *file,
			       struct luw_recover_result *r)
{
	const struct luw_recover_goal *g = &luw_recover_goal_checktrace;
	uint64_t a, sz, fns[16], arrs[8];
	int nf, na, i, j, e, nread = 0;
	struct luw_recover_goal_found fd;
	Elf *elf = file->elf;

	if (r->ref_size == LUW_LJR_NONE || r->l_glref == LUW_LJR_NONE ||
	    luw_elf_symbol_sized(elf, SHT_DYNSYM, "luaopen_jit", 1, &a, &sz))
		return;
	memset(&fd, 0, sizeof(fd));
	fd.ref_size = r->ref_size;
	fd.l_glref = r->l_glref;
	fd.st_g = fd.tr_g = fd.mc = fd.szmc = LUW_LJR_NONE;
	nf = luw_decode_addresses(file, a, sz, -1, fns, 16);
	for (i = 0; i < nf; i++) {
		uint64_t end = luw_ehframe_end(file->fdes, fns[i]);

		na = luw_decode_addresses(file, fns[i], end - fns[i], 2, arrs, 8);
		for (j = 0; j < na; j++) {
			for (e = 0; e < 64; e++) {
				uint64_t f, fe;

				if (ptr_at(elf, arrs[j] + 8u * (unsigned)e, &f) ||
				    !(fe = luw_ehframe_end(file->fdes, f)))
					break;
				luw_recover_goal_explore(file, f, fe - f, g, &fd);
				nread++;
			}
		}
	}
	r->ncheck_fns = nread;
	if (fd.st_g != LUW_LJR_NONE && !fd.st_conflict &&
	    fd.tr_g != LUW_LJR_NONE && !fd.tr_conflict) {
		r->jsizetrace_g = fd.st_g;
		r->jtrace_g = fd.tr_g;
	}
	/* luaJIT_setmode(L, tr, LUAJIT_MODE_TRACE|FLUSH) -> lj_trace_flush */
	if (!luw_elf_symbol_sized(elf, SHT_DYNSYM, "luaJIT_setmode", 1, &a, &sz)) {
		struct luw_recover_goal_found ff;

		memset(&ff, 0, sizeof(ff));
		ff.ref_size = r->ref_size;
		ff.l_glref = r->l_glref;
		ff.st_g = ff.tr_g = ff.mc = ff.szmc = LUW_LJR_NONE;
		ff.fl_pt = ff.fl_no = ff.fl_pc = LUW_LJR_NONE;
		luw_recover_goal_explore(file, a, sz, &luw_recover_goal_flush,
					 &ff);
		if (ff.fl_pt != LUW_LJR_NONE && !ff.fl_pt_c &&
		    ff.fl_no != LUW_LJR_NONE && !ff.fl_no_c && ff.fl_pt != ff.fl_no) {
			r->tr_startpt = ff.fl_pt;
			r->tr_traceno = ff.fl_no;
		}
		if (ff.fl_pc != LUW_LJR_NONE && !ff.fl_pc_c &&
		    ff.fl_pc != ff.fl_pt)
			r->tr_startpc = ff.fl_pc;
	}
	if (fd.mc != LUW_LJR_NONE && !fd.mc_conflict &&
	    fd.szmc != LUW_LJR_NONE && !fd.szmc_conflict && fd.mc != fd.szmc) {
		r->tr_mcode = fd.mc;
		r->tr_szmcode = fd.szmc;
	}
}

/*
 * The GC type a set*V store tagged: gct = ~itype (low byte), from GC64's
 * itype << 47 or the 32-bit tag word; -1 when it is not one.
 */
static int tag_gct(int64_t tag, int ref_size)
{
	uint64_t t = (uint64_t)tag;

	if (ref_size == 8) {
		if (t & ((1ull << 47) - 1) || (t >> 47) < 0x1fff0)
			return -1;
		return (int)(~(t >> 47) & 0xff);
	}
	if (t < 0xfffffff0u || t > 0xffffffffu)
		return -1;
	return (int)(~t & 0xff);
}

/* The type tag a dynsym function stores with the object it pushes. */
static int push_gct(const struct luw_decode_file *file,
		    struct luw_recover_result *r, const char *fn)
{
	struct luw_recover_goal_found fd;
	uint64_t a, sz;

	if (luw_elf_symbol_sized(file->elf, SHT_DYNSYM, fn, 1, &a, &sz))
		return -1;
	memset(&fd, 0, sizeof(fd));
	fd.ref_size = r->ref_size;
	fd.l_top = r->l_top;
	fd.l_base = r->l_base;
	luw_recover_goal_explore(file, a, sz, &luw_recover_goal_push, &fd);
	if (!fd.have_tag || fd.tag_conflict)
		return -1;
	/*
	 * lua_pushcclosure's getcurrenv: curr_func(L)->c.gct == ~LJ_TFUNC,
	 * the byte compared with the type of the function it pushes (other
	 * compares of curr_func's bytes, the ffid's, want other values).
	 */
	if (!strcmp(fn, "lua_pushcclosure")) {
		int i, t = tag_gct(fd.tag, r->ref_size), k = LUW_LJR_NONE, bad = 0;

		for (i = 0; t >= 0 && i < fd.ncfn; i++) {
			if (fd.cfn_imm[i] != t)
				continue;
			if (k != LUW_LJR_NONE && k != fd.cfn_off[i])
				bad = 1;
			k = fd.cfn_off[i];
		}
		if (k != LUW_LJR_NONE && !bad)
			r->gc_gct = k;
	}
	return tag_gct(fd.tag, r->ref_size);
}

/*
 * gct_str, gct_thread, gct_func from what lua_pushlstring, lua_newthread
 * and lua_pushcclosure push; gc_gct and l_stacksize from the stores into
 * lua_pushcclosure's getcurrenv (curr_func(L)->c.gct == ~LJ_TFUNC: the
 * byte compared with the type the function pushes), l_stacksize from
 * lua_close freeing the main thread's stack.
 */
static void gct_recover(const struct luw_decode_file *file,
			struct luw_recover_result *r)
{
	const struct luw_recover_goal *g = &luw_recover_goal_stackfree;
	struct luw_recover_goal_found fd;
	uint64_t a, sz;

	if (r->ref_size == LUW_LJR_NONE || r->l_top == LUW_LJR_NONE)
		return;
	r->gct_str = push_gct(file, r, "lua_pushlstring");
	r->gct_func = push_gct(file, r, "lua_pushcclosure");
	r->gct_thread = push_gct(file, r, "lua_newthread");
	if (r->gct_str < 0)
		r->gct_str = LUW_LJR_NONE;
	if (r->gct_func < 0)
		r->gct_func = LUW_LJR_NONE;
	if (r->gct_thread < 0)
		r->gct_thread = LUW_LJR_NONE;
	/*
	 * lua_close frees the main thread's stack (close_state, tail-called
	 * or called): lj_mem_freevec(g, tvref(L->stack), L->stacksize,
	 * TValue), the dword of the same thread times 8.
	 */
	memset(&fd, 0, sizeof(fd));
	fd.ref_size = r->ref_size;
	fd.l_stack = r->l_stack;
	fd.ss_off = LUW_LJR_NONE;
	if (luw_elf_symbol_sized(file->elf, SHT_DYNSYM, "lua_close", 1, &a, &sz)) {
		a = r->at_close;	/* found by its shape */
		sz = a ? luw_ehframe_end(file->fdes, a) : 0;
		sz = sz > a ? sz - a : 0;
	}
	if (r->l_stack != LUW_LJR_NONE && sz) {
		uint64_t to[16];
		int n = luw_decode_callees(file, a, sz, to, 16), i;

		luw_recover_goal_explore(file, a, sz, g, &fd);
		/* close_state(L), called or tail-called with the main thread */
		for (i = 0; i < n; i++)
			luw_recover_goal_explore(file, to[i],
						 luw_ehframe_end(file->fdes, to[i]) -
						 to[i], g, &fd);
	}
	if (fd.ss_off != LUW_LJR_NONE && !fd.ss_conflict)
		r->l_stacksize = fd.ss_off;
}

/* The GCfunc fields, L->maxstack and GCproto's (see target/recover.h). */
static void fn_recover(const struct luw_decode_file *file,
		       struct luw_recover_result *r)
{
	struct luw_recover_goal_found fd;
	uint64_t a, sz;
	Elf *elf = file->elf;
	int c;

	memset(&fd, 0, sizeof(fd));
	fd.ref_size = r->ref_size;
	fd.val = fd.pc = fd.f = LUW_LJR_NONE;
	if (r->l_top != LUW_LJR_NONE && r->l_base != LUW_LJR_NONE &&
	    !luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_checkstack", 1, &a, &sz)) {
		fd.l_top = r->l_top;
		fd.l_base = r->l_base;
		luw_recover_goal_explore(file, a, sz, &luw_recover_goal_maxstack,
					 &fd);
		if (!fd.conflict)
			r->l_maxstack = fd.val;
	}
	fd.val = LUW_LJR_NONE;
	fd.conflict = 0;
	if (!luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_iscfunction", 1, &a, &sz)) {
		luw_recover_goal_explore(file, a, sz, &luw_recover_goal_iscfunc,
					 &fd);
		if (!fd.conflict)
			r->fn_ffid = fd.val;
	}
	if (!luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_tocfunction", 1, &a, &sz)) {
		luw_recover_goal_explore(file, a, sz, &luw_recover_goal_tocfunc,
					 &fd);
		if (!fd.pc_conflict)
			r->fn_pc = fd.pc;
		if (!fd.f_conflict && fd.f != fd.pc)
			r->fn_f = fd.f;
	}
	/*
	 * GCproto: lua_getinfo (into lj_debug_getinfo, a tail call or a
	 * call) hands funcproto(fn) to lj_debug_line (sizeof(GCproto) from
	 * the subtraction), whose compares and loads name four fields; its
	 * 'S' case stores strdata(chunkname) to ar->source (lua_Debug's
	 * offset 32 is the Lua 5.1 ABI).
	 */
	fd.fn_pc = r->fn_pc;
	fd.chunk_k = LUW_LJR_NONE;
	if (r->fn_pc != LUW_LJR_NONE &&
	    !luw_elf_symbol_sized(elf, SHT_DYNSYM, "lua_getinfo", 1, &a, &sz))
		luw_recover_goal_explore(file, a, sz, &luw_recover_goal_getinfo,
					 &fd);
	for (c = 0; c < fd.ncalls; c++)
		if (debug_line(file, &fd, fd.call_to[c], 0, fd.call_k[c], r))
			break;
	/*
	 * No call hands funcproto(fn) over: lj_debug_line may be inlined into
	 * a helper lj_debug_getinfo calls (debug_frameline, with
	 * -DLUA_USE_ASSERT); each callee is read for it, pt being where the
	 * helper subtracts sizeof(GCproto) from mref(fn->pc).
	 */
	for (c = 0; r->pt_size == LUW_LJR_NONE && c < fd.ndirect; c++)
		if (debug_line(file, &fd, fd.direct[c], 1, 0, r))
			break;
	if (r->pt_size != LUW_LJR_NONE && fd.chunk_k != LUW_LJR_NONE &&
	    !fd.chunk_conflict && fd.chunk_k < r->pt_size)
		r->pt_chunkname = r->pt_size - fd.chunk_k;
}

/* 1 when the function [a, end) calls into [vm_start, vm_end) directly. */
static int calls_vm(csh h, Elf *elf, uint64_t a, uint64_t end, uint64_t vm_start,
		    uint64_t vm_end, cs_insn *in)
{
	const uint8_t *code;
	size_t len;
	uint64_t addr = a, t;
	int rc;

	if (!(code = luw_decode_code(elf, a, end - a, &len)))
		return 0;
	while ((rc = luw_decode_sweep(h, &code, &len, &addr, in)) >= 0)
		if (rc && in->id == X86_INS_CALL &&
		    (t = luw_decode_branch_target(in)) >= vm_start && t < vm_end)
			return 1;
	return 0;
}

/* 1 when [code, code + len) shifts a register right by 3 (bytes to slots). */
static int shifts_by_3(csh h, const uint8_t *code, size_t len, uint64_t addr,
		       cs_insn *in)
{
	int rc;

	while ((rc = luw_decode_sweep(h, &code, &len, &addr, in)) >= 0)
		if (rc && (in->id == X86_INS_SAR || in->id == X86_INS_SHR) &&
		    in->detail->x86.op_count == 2 &&
		    in->detail->x86.operands[1].type == X86_OP_IMM &&
		    in->detail->x86.operands[1].imm == 3)
			return 1;
	return 0;
}

/* What lua_close's reading gives: ref_size comes with L->glref. */
static const size_t close_fields[] = {
	offsetof(struct luw_recover_result, ref_size),
	offsetof(struct luw_recover_result, l_glref),
	offsetof(struct luw_recover_result, g_mainthref),
	offsetof(struct luw_recover_result, g_cur_l),
	offsetof(struct luw_recover_result, l_stack),
	offsetof(struct luw_recover_result, l_status),
	offsetof(struct luw_recover_result, l_cframe),
};
#define NCLOSE (sizeof(close_fields) / sizeof(close_fields[0]))

static int *field(struct luw_recover_result *r, size_t ofs)
{
	return (int *)((char *)r + ofs);
}

static void none(struct luw_recover_result *t)
{
	t->ref_size = t->l_glref = t->g_mainthref = t->g_cur_l = LUW_LJR_NONE;
	t->l_stack = t->l_status = t->l_cframe = t->l_top = t->l_base = LUW_LJR_NONE;
}

/*
 * Without .dynsym (a host that links LuaJIT statically and exports none
 * of it), lua_close and lua_gettop are found by what their code does,
 * among the functions .eh_frame lists:
 *   lua_close   a function outside the interpreter that calls into it
 *               (lj_vm_cpcall runs the finalizers) and whose straight-line
 *               reading gives all six of its fields
 *   lua_gettop  a function of at most 32 bytes whose reading is
 *               (L->top - L->base) >> 3
 * Every candidate must give the same fields: two that disagree are not
 * chosen between.  The live checks prove the layout as with any other.
 * Sets r's fields of both and r->at_close/at_gettop; the reason in why
 * on failure.
 */
static int find_by_shape(const struct luw_decode_file *file, uint64_t vm_start,
			 uint64_t vm_end, struct luw_recover_result *r,
			 char *why, size_t n)
{
	cs_insn *in = cs_malloc(file->h);
	const struct luw_fdes *fdes = file->fdes;
	struct luw_recover_result c, g;
	int nc = 0, ng = 0, clash = 0;
	size_t k;

	none(&c);
	none(&g);
	for (size_t i = 0; in && i < fdes->n; i++) {
		const struct luw_fde *f = &fdes->v[i];
		struct luw_recover_result t;
		const uint8_t *code;
		size_t len;

		if (f->start <= vm_start && f->end > vm_start)
			continue;	/* the interpreter itself */
		code = luw_decode_code(file->elf, f->start, f->end - f->start, &len);
		if (!code)
			continue;
		none(&t);
		if (f->end - f->start <= 32) {
			analyse(file->h, code, len, f->start, &t, 1);
			if (t.l_top != LUW_LJR_NONE && t.l_top != t.l_base &&
			    shifts_by_3(file->h, code, len, f->start, in)) {
				clash |= ng && (g.l_top != t.l_top || g.l_base != t.l_base);
				if (!ng++)
					r->at_gettop = f->start;
				g.l_top = t.l_top;
				g.l_base = t.l_base;
			}
			continue;
		}
		if (!calls_vm(file->h, file->elf, f->start, f->end, vm_start,
			      vm_end, in))
			continue;
		analyse(file->h, code, len, f->start, &t, 0);
		for (k = 0; k < NCLOSE; k++)
			if (*field(&t, close_fields[k]) == LUW_LJR_NONE)
				break;
		if (k < NCLOSE)
			continue;
		for (k = 0; nc && k < NCLOSE; k++)
			clash |= *field(&c, close_fields[k]) !=
				 *field(&t, close_fields[k]);
		if (!nc++)
			r->at_close = f->start;
		c = t;
	}
	if (in)
		cs_free(in, 1);
	if (!in)
		snprintf(why, n, "out of memory");
	else if (!nc || !ng)
		snprintf(why, n, "no lua_close or lua_gettop in .dynsym, and %s",
			 !nc ? "no function calling the interpreter reads like "
			 "lua_close" : "no function reads like lua_gettop");
	else if (clash)
		snprintf(why, n, "no lua_close or lua_gettop in .dynsym, and the "
			 "functions that read like them disagree (%d and %d)", nc, ng);
	if (!in || !nc || !ng || clash)
		return -1;
	for (k = 0; k < NCLOSE; k++)
		*field(r, close_fields[k]) = *field(&c, close_fields[k]);
	r->l_top = g.l_top;
	r->l_base = g.l_base;
	return 0;
}

/*
 * The rbp rule of the FDE starting at vm_start (the interpreter's, whose
 * one rule holds in its whole body): rbp saved at CFA - k gives k.
 */
static int fde_rbp(Elf *elf, uint64_t vm_start)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int k = LUW_LJR_NONE;

	if (!cfi)
		return LUW_LJR_NONE;
	if (!dwarf_cfi_addrframe(cfi, vm_start, &fr) &&
	    !dwarf_frame_register(fr, 6, mem, &ops, &nops) && nops == 2 &&
	    ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst &&
	    (int64_t)ops[1].number < 0 && (int64_t)ops[1].number >= -4096)
		k = (int)-(int64_t)ops[1].number;
	free(fr);
	dwarf_cfi_end(cfi);
	return k;
}

int luw_recover(Elf *elf, uint64_t vm_start, uint64_t vm_end,
		unsigned int dispatch_reg, unsigned int base_reg,
		struct luw_recover_result *r, char *why, size_t n)
{
	struct luw_fdes fdes;
	struct luw_decode_file file = { .elf = elf, .fdes = &fdes };
	const uint8_t *code;
	size_t len;

	memset(r, 0, sizeof(*r));
	r->ref_size = r->l_glref = r->g_mainthref = r->g_cur_l = LUW_LJR_NONE;
	r->l_stack = r->l_status = r->l_cframe = r->l_top = r->l_base = LUW_LJR_NONE;
	r->l_maxstack = r->fn_ffid = r->fn_pc = r->fn_f = LUW_LJR_NONE;
	r->pt_size = r->pt_sizebc = r->pt_chunkname = LUW_LJR_NONE;
	r->pt_firstline = r->pt_numline = r->pt_lineinfo = LUW_LJR_NONE;
	r->cframe_ofs_l = r->cframe_ofs_prev = r->cframe_ofs_pc = LUW_LJR_NONE;
	r->cframe_l_size = LUW_LJR_NONE;
	r->reg_base = r->reg_pc = r->reg_dispatch = r->reg_kbase = LUW_LJR_NONE;
	r->cframe_rbp_cfa = LUW_LJR_NONE;
	r->jsizetrace_g = r->jtrace_g = r->tr_mcode = r->tr_szmcode = LUW_LJR_NONE;
	r->gc_gct = r->l_stacksize = LUW_LJR_NONE;
	r->tr_startpt = r->tr_startpc = r->tr_traceno = LUW_LJR_NONE;
	r->gct_str = r->gct_thread = r->gct_func = LUW_LJR_NONE;
	r->vmst_c = r->vmst_interp = r->vmst_exit = LUW_LJR_NONE;
	if (luw_decode_open(&file.h)) {
		snprintf(why, n, "capstone: cannot open x86-64");
		return -1;
	}
	if (luw_ehframe_fdes(elf, &fdes))
		memset(&fdes, 0, sizeof(fdes));
	if (!luw_elf_symbol(elf, SHT_DYNSYM, "lua_close", 1, &r->at_close) &&
	    !luw_elf_symbol(elf, SHT_DYNSYM, "lua_gettop", 1, &r->at_gettop)) {
		if (!(code = luw_decode_code(elf, r->at_close, UINT64_MAX, &len))) {
			snprintf(why, n, "lua_close of .dynsym in no code section");
			goto fail;
		}
		analyse(file.h, code, len, r->at_close, r, 0);
		if (!(code = luw_decode_code(elf, r->at_gettop, UINT64_MAX, &len))) {
			snprintf(why, n, "lua_gettop of .dynsym in no code section");
			goto fail;
		}
		analyse(file.h, code, len, r->at_gettop, r, 1);
	} else {
		r->at_close = r->at_gettop = 0;
		if (vm_end <= vm_start) {
			snprintf(why, n, "no lua_close or lua_gettop in .dynsym");
			goto fail;
		}
		if (find_by_shape(&file, vm_start, vm_end, r, why, n))
			goto fail;
		r->by_shape = 1;
	}
	if (r->ref_size != LUW_LJR_NONE) {
		fn_recover(&file, r);
		cframe_recover(&file, r);
		checktrace_recover(&file, r);
		gct_recover(&file, r);
	}
	luw_ehframe_free(&fdes);
	if (vm_end > vm_start &&
	    (code = luw_decode_code(elf, vm_start, vm_end - vm_start, &len))) {
		luw_recover_vm_regs(file.h, code, len, vm_start, r);
		/* The VM's own registers where its code showed them. */
		if (r->reg_dispatch != LUW_LJR_NONE)
			dispatch_reg = (unsigned int)r->reg_dispatch;
		if (r->reg_base != LUW_LJR_NONE)
			base_reg = (unsigned int)r->reg_base;
		luw_recover_vm_dispatch(file.h, code, len, vm_start, dispatch_reg,
					base_reg, r);
		r->cframe_rbp_cfa = fde_rbp(elf, vm_start);
	}
	cs_close(&file.h);
	return 0;
fail:
	luw_ehframe_free(&fdes);
	cs_close(&file.h);
	return -1;
}
