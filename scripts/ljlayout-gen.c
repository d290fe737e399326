/*
 * Print the luaunwind layout descriptor of one LuaJIT source tree as a C
 * initializer for the known-layouts table in userspace/lib/target/layout.c.  Compiled by
 * scripts/ljlayout-gen.sh with the tree's own headers and the defines its
 * package build uses, so every offset is the compiler's, not ours.
 */
#include <stddef.h>
#include <stdio.h>

#include "lj_obj.h"
#include "lj_frame.h"
#include "lj_jit.h"
#include "lj_dispatch.h"

#define OFS(t, f)	((unsigned)offsetof(t, f))

int main(void)
{
	unsigned gg_g = OFS(GG_State, g);

	printf("\t.flags = %s%s,\n", LJ_GC64 ? "LUW_LJ_F_GC64" : "0",
	       LJ_HASJIT ? " | LUW_LJ_F_JIT" : "");
	printf("\t.reg_base = LUW_X86_RDX, .reg_pc = LUW_X86_RBX,\n"
	       "\t.reg_dispatch = LUW_X86_R14, .reg_kbase = LUW_X86_R15,\n");
	printf("\t.cframe_size = %d, .cframe_size_jit = %d,\n",
	       CFRAME_SIZE, CFRAME_SIZE_JIT);
	printf("\t.cframe_ofs_l = %d, .cframe_ofs_prev = %d, .cframe_ofs_pc = %d,\n",
	       CFRAME_OFS_L, CFRAME_OFS_PREV, CFRAME_OFS_PC);
	printf("\t.cframe_l_size = %d, .cframe_rbp_cfa = 16,\n", LJ_GC64 ? 8 : 4);
	printf("\t.gg_g2disp = %d, .gg_g2j = %d, .gg_g2l = %d, .gg_ndisp = %d,\n",
	       (int)(OFS(GG_State, dispatch) - gg_g),
	       (int)(OFS(GG_State, J) - gg_g), (int)(OFS(GG_State, L) - gg_g),
	       (int)GG_LEN_DISP);
	printf("\t.g_vmstate = %u, .g_cur_l = %u, .g_jit_base = %u,\n",
	       OFS(global_State, vmstate), OFS(global_State, cur_L),
	       OFS(global_State, jit_base));
	printf("\t.g_mainthref = %u, .g_tmpbuf_l = %u, .g_strempty = %u,\n",
	       OFS(global_State, mainthref), OFS(global_State, tmpbuf.L),
	       OFS(global_State, strempty));
	printf("\t.j_trace = %u, .j_sizetrace = %u,\n",
	       OFS(jit_State, trace), OFS(jit_State, sizetrace));
	printf("\t.l_glref = %u, .l_status = %u, .l_base = %u, .l_top = %u,\n",
	       OFS(lua_State, glref), OFS(lua_State, status),
	       OFS(lua_State, base), OFS(lua_State, top));
	printf("\t.l_maxstack = %u, .l_stack = %u, .l_cframe = %u, .l_stacksize = %u,\n",
	       OFS(lua_State, maxstack), OFS(lua_State, stack),
	       OFS(lua_State, cframe), OFS(lua_State, stacksize));
	printf("\t.gc_gct = %u, .fn_ffid = %u, .fn_pc = %u, .fn_f = %u,\n",
	       OFS(GCfuncC, gct), OFS(GCfuncC, ffid), OFS(GCfuncL, pc),
	       OFS(GCfuncC, f));
	printf("\t.pt_size = %u, .pt_sizebc = %u, .pt_chunkname = %u,\n",
	       (unsigned)sizeof(GCproto), OFS(GCproto, sizebc),
	       OFS(GCproto, chunkname));
	printf("\t.pt_firstline = %u, .pt_numline = %u, .pt_lineinfo = %u,\n",
	       OFS(GCproto, firstline), OFS(GCproto, numline),
	       OFS(GCproto, lineinfo));
	printf("\t.str_len = %u, .str_size = %u,\n", OFS(GCstr, len),
	       (unsigned)sizeof(GCstr));
	printf("\t.tr_startpt = %u, .tr_startpc = %u, .tr_spadjust = %u,\n",
	       OFS(GCtrace, startpt), OFS(GCtrace, startpc),
	       OFS(GCtrace, spadjust));
	printf("\t.tr_mcode = %u, .tr_szmcode = %u, .tr_traceno = %u,\n",
	       OFS(GCtrace, mcode), OFS(GCtrace, szmcode),
	       OFS(GCtrace, traceno));
	printf("\t.stack_extra = %d,\n", LJ_STACK_EXTRA);
	printf("\t.gct_str = %u, .gct_thread = %u, .gct_proto = %u,\n"
	       "\t.gct_func = %u, .gct_trace = %u,\n",
	       (unsigned)~LJ_TSTR & 0xff, (unsigned)~LJ_TTHREAD & 0xff,
	       (unsigned)~LJ_TPROTO & 0xff, (unsigned)~LJ_TFUNC & 0xff,
	       (unsigned)~LJ_TTRACE & 0xff);
	printf("\t.n_vmst = %d,\n", LJ_VMST__MAX);
	return 0;
}
