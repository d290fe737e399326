/*
 * recover: layout fields of a stripped LuaJIT read from its machine
 * code with capstone, by following register data flow from a function's
 * arguments (not by matching bytes).  Functions every LuaJIT 2.1 exports
 * in .dynsym say what their C source says:
 *
 *   lua_gettop(L)   return L->top - L->base
 *                   -> l_top, l_base (the two loads from the argument,
 *                      the second subtracted from the first)
 *   lua_close(L)    g = G(L); L = mainthread(g); ...; g->cur_L = NULL;
 *                   ... L->status = 0; ... L->cframe = NULL
 *                   -> l_glref (first load from L; its width is the
 *                      reference size), g_mainthref (first load from g),
 *                      g_cur_l (first reference-sized NULL store to g),
 *                      l_stack (first load from the main thread),
 *                      l_status (its first byte store of 0),
 *                      l_cframe (its first 8-byte store of 0)
 *
 * Functions whose fields sit behind branches are read along every path
 * from their entry (both ways of a conditional branch), with symbolic
 * values: a load remembers the place it read (base value, offset, width),
 * and a tag check teaches its branch which TValue holds a function:
 *
 *   lua_checkstack(L, n)  ... mref(L->maxstack) - L->top ...
 *                   -> l_maxstack (a reference-sized load from L that
 *                      has the load of L->top subtracted from it, and is
 *                      neither top nor base)
 *   lua_iscfunction(L, i) tvisfunc(o) && !isluafunc(funcV(o))
 *                   -> fn_ffid (the byte of the GCfunc read on the branch
 *                      where o's tag is LJ_TFUNC: GC64's tag is the value
 *                      shifted right by 47, the GCobj the value masked to
 *                      47 bits; with 32-bit refs the tag is the word at
 *                      o + 4 and the GCobj the word at o)
 *   lua_tocfunction(L, i) bc_op(*mref(fn->c.pc)) == BC_FUNCC ... fn->c.f
 *                   -> fn_pc (the reference loaded from the GCfunc whose
 *                      target's first byte is read), fn_f (the 8-byte
 *                      load from the GCfunc that is returned)
 *
 *   lua_getinfo(L, what, ar)  -> lj_debug_getinfo (a tail call), whose
 *                   switch on `what` is followed through its jump table
 *                   and whose direct calls are followed one level down:
 *                   a call taking mref(fn->pc) - k (funcproto(fn)) into a
 *                   function that reads like lj_debug_line(pt, pc) gives
 *                   pt_size = k and, there, pt_sizebc (compared with pc),
 *                   pt_numline (compared with 255/65535), pt_lineinfo
 *                   (indexed), pt_firstline (in every result read from
 *                   pt); the 'S' case's ar->source (lua_Debug offset 32,
 *                   the Lua 5.1 ABI) = chunkname + sizeof(GCstr) gives
 *                   pt_chunkname.  When no call hands funcproto(fn)
 *                   over (-DLUA_USE_ASSERT builds inline lj_debug_line
 *                   into debug_frameline), each callee of
 *                   lj_debug_getinfo is read the same way with pt's
 *                   fields relative to mref(fn->pc), and pt_size where it
 *                   subtracts it to load through the result.
 *
 *   luaopen_jit     lj_lib_prereg(L, "jit.util", luaopen_jit_util, env)
 *                   -> luaopen_jit_util (a function address put into a
 *                      register: lea rip-relative, or mov imm when not
 *                      PIC), whose lj_lib_register(L, NULL, init, cf) gets
 *                      the lua_CFunction array cf in rcx; its entries (a
 *                      relative relocation's addend when PIC) are read
 *                      until one is no function's start.  In each:
 *                   jit_checktrace: tr > 0 && tr < J->sizetrace, then
 *                      traceref(J, tr) -- a value compared with a dword of
 *                      G(L) and then used as the index of a load from the
 *                      pointer at G(L) + x: jsizetrace_g (the dword's
 *                      offset) and jtrace_g (x), both G-relative
 *                   tracemc: lj_str_new(L, T->mcode, T->szmcode) on the
 *                      trace so loaded -> tr_mcode (8-byte load from T in
 *                      the second argument), tr_szmcode (dword load in
 *                      the third)
 *                   (no jit.util without the JIT: none of them then)
 *   luaJIT_setmode(L, tr, LUAJIT_MODE_TRACE|LUAJIT_MODE_FLUSH) ->
 *                   lj_trace_flush (called; T by jit_checktrace's
 *                   pattern, J = G(L) + GG_G2J) -> trace_flushroot
 *                   (jumped to, or inlined): `pt->trace == T->traceno`,
 *                   a uint16 of the object a reference of T points to
 *                   compared with a uint16 of T -> tr_startpt,
 *                   tr_traceno; trace_unpatch's `*pc = T->startins`, a
 *                   dword of T stored through a reference of T ->
 *                   tr_startpc
 *
 *   lua_pushlstring, lua_newthread, lua_pushcclosure: set*V(L, L->top,
 *                   o) after o = a call's result -- GC64 stores o | itype
 *                   << 47, 32-bit refs the word itype at top + 4: gct_str,
 *                   gct_thread, gct_func = ~itype (low byte)
 *   lua_pushcclosure's getcurrenv: curr_func(L)->c.gct == ~LJ_TFUNC, the
 *                   byte of the function below L->base compared with the
 *                   type it pushes -> gc_gct
 *   lua_close (or close_state, which it calls or jumps to, read with its
 *                   argument as L): lj_mem_freevec(g, tvref(L->stack),
 *                   L->stacksize, TValue) -- the allocator called with
 *                   L->stack and a dword of the same thread times 8 ->
 *                   l_stacksize
 *
 * A field two paths disagree on is not recovered.
 *
 * lua_pcall calls lj_vm_pcall, inside the interpreter's FDE: its entry
 * stores the L argument twice into the C frame (SAVE_L, and SAVE_PC "any
 * value outside of bytecode"), what L->cframe held (SAVE_CFRAME:
 * cframe_ofs_prev), before L->cframe = rsp.  Of the two, the one the
 * interpreter also stores its PC register (rbx) into is cframe_ofs_pc;
 * the other is cframe_ofs_l, its store width cframe_l_size.
 *
 * The interpreter stores its state as `mov dword [DISPATCH + x], ~LJ_VMST_*`
 * (set_vmstate): the offset stored with the most distinct small negative
 * constants is global_State.vmstate relative to DISPATCH (vmstate_disp).
 * What each state means, from where it is stored: BC_FUNCC sets the C
 * state right before its indirect call of the C function and the
 * interpreter's right after it returns (vmst_c, vmst_interp); the exit
 * handler reads the exiting trace's number from the slot and then sets
 * EXIT (vmst_exit; none without the JIT).  Each only when every such site
 * stores the same state.
 *
 * BC_JLOOP loads J->trace and indexes it by the trace number:
 * `mov R, [DISPATCH + x]; mov T, [R + idx*refsize]` (jtrace_disp:
 * jit_State.trace relative to DISPATCH).
 *
 * The interpreter's fixed registers, from its own code (vm_regs): every
 * bytecode handler ends in the dispatch, `mov R32, [PC]; movzx OP, R8
 * (low byte); add PC, 4; jmp [DISPATCH + OP*8]` -- the register the
 * instruction is loaded from and advanced by 4 is PC, the jump table's
 * base DISPATCH; BASE is what `mov X, [L + l_base]` loads after L was
 * loaded from the C frame's saved L (cframe_ofs_l); KBASE what BC_FUNCF's
 * `mov KBASE, [PC - 4 + PC2PROTO(k)]` loads (a reference from PC minus at
 * most sizeof(GCproto) + 4).  Each only when every site agrees (and
 * enough sites: 16 dispatches, 4 base loads, 2 KBASE loads); DISPATCH and
 * BASE then replace the caller's for the scans below.  The rbp rule of
 * the interpreter's FDE (rbp saved at CFA - cframe_rbp_cfa) is read with
 * libdw at the FDE's start.
 *
 * and the interpreter loads the address of GG_State's parts as the first
 * argument of its calls into C: `lea arg1, [DISPATCH + GG_DISP2J]` before
 * lj_trace_hot, GG_DISP2G before others (disp_args).  Each field is
 * "recovered" only when its instruction was found; the caller checks the
 * result against the live process like any other layout.
 */
#ifndef LUW_TARGET_RECOVER_H
#define LUW_TARGET_RECOVER_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#define LUW_LJR_NONE (-1)
#define LUW_LJR_MAX_DISP 16

/*
 * The fields recovered as the descriptor's field of the same name
 * (include/luaunwind_layout.h) or, O rows, read for one, each
 * LUW_LJR_NONE when its code was not found:
 *   R  required: lua_close's G(L) and mainthread(g)
 *   D  taken as they are (target/fromcode.c): lua_settop, lua_gettop,
 *      lua_checkstack, lua_iscfunction/tocfunction, lua_getinfo ->
 *      lj_debug_line, lua_pcall -> lj_vm_pcall's C frame, the
 *      interpreter's registers and its FDE's rbp rule, lua_newthread,
 *      lua_pushlstring and lua_pushcclosure
 *   O  read for other fields (NAME, the label the probe prints): jit.util's
 *      J->sizetrace and J->trace relative to G and GCtrace's machine code,
 *      the type tags, trace_flushroot's GCtrace fields, and the raw
 *      LJ_VMST_* index (~value) of C code, the interpreter and EXIT
 */
#define LUW_RECOVER_FIELDS(R, D, O)					\
	R(l_glref) R(g_mainthref) D(g_cur_l) D(l_stack) D(l_status)	\
	D(l_cframe) D(l_top) D(l_base) D(l_maxstack) D(fn_ffid) D(fn_pc) \
	D(fn_f) D(pt_size) D(pt_sizebc) D(pt_chunkname) D(pt_firstline)	\
	D(pt_numline) D(pt_lineinfo) D(cframe_ofs_l) D(cframe_ofs_prev)	\
	D(cframe_ofs_pc) D(cframe_l_size) D(cframe_rbp_cfa) D(reg_base)	\
	D(reg_pc) D(reg_dispatch) D(reg_kbase)				\
	O(jsizetrace_g, "g.j_sizetrace") O(jtrace_g, "g.j_trace")	\
	O(tr_mcode, "tr_mcode") O(tr_szmcode, "tr_szmcode")		\
	D(l_stacksize) D(gc_gct) O(gct_str, "gct_str")			\
	O(gct_thread, "gct_thread") O(gct_func, "gct_func")		\
	O(tr_startpt, "tr_startpt") O(tr_startpc, "tr_startpc")		\
	O(tr_traceno, "tr_traceno") O(vmst_interp, "vmst.interp")	\
	O(vmst_c, "vmst.c") O(vmst_exit, "vmst.exit")

#define LUW_RECOVER_DECL(name)		int name;
#define LUW_RECOVER_DECL_O(name, label)	int name;

struct luw_recover_result {
	/* where lua_close and lua_gettop were read; by_shape: found by what
	 * their code does, the binary exporting neither */
	uint64_t at_close, at_gettop;
	int by_shape;
	int ref_size;		/* 8 (GC64) or 4, LUW_LJR_NONE */
	LUW_RECOVER_FIELDS(LUW_RECOVER_DECL, LUW_RECOVER_DECL, LUW_RECOVER_DECL_O)
	unsigned int nvote_disp, nvote_base, nvote_kbase;	/* sites seen */
	int ncheck_fns;		/* jit.util functions read */
	int32_t vmstate_disp;	/* g_vmstate - gg_g2disp; valid if have_vmstate */
	int have_vmstate;
	int32_t jtrace_disp;	/* &J->trace - DISPATCH; valid if have_jtrace */
	int have_jtrace;
	int32_t jitbase_disp, tmpbufl_disp;
	int have_jitbase, have_tmpbufl;
	/* lea ARG1, [DISPATCH + disp]; call: the distinct disps seen */
	int ndisp;
	int32_t disp[LUW_LJR_MAX_DISP];
	unsigned int disp_count[LUW_LJR_MAX_DISP];
};

/*
 * Reads `elf` (vm_start, vm_end: the interpreter's FDE, link-time
 * addresses, 0/0: not scanned; dispatch_reg, base_reg: DWARF numbers of
 * DISPATCH and BASE to scan with when its code does not show them).  0 when lua_close and
 * lua_gettop were found (in .dynsym, else by their shape: find_by_shape()
 * in recover.c) and analysed (fields may still be LUW_LJR_NONE), -1 with
 * the reason otherwise.
 */
int luw_recover(Elf *elf, uint64_t vm_start, uint64_t vm_end,
		unsigned int dispatch_reg, unsigned int base_reg,
		struct luw_recover_result *r, char *why, size_t n);

#endif
