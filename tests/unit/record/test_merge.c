/*
 * record/merge.c on hand-built sample records: every rule of the "Merging"
 * paragraph of include/luaunwind.h.  Host pcs in [0x9000, 0xa000) are "VM
 * code"; a stack prints as "h<pc>" / "l<index>" / "M" root first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/merge.h"
#include "testlib.h"

static int is_vm(void *ctx, uint64_t pc)
{
	(void)ctx;
	return pc >= 0x9000 && pc < 0xa000;
}

struct rec {
	struct luw_sample s;
	uint64_t host[16];
	struct luw_lua_frame lua[16];
	struct luw_splice sp[8];
};

static void set_host(struct rec *r, const uint64_t *pcs, unsigned int n)
{
	memcpy(r->host, pcs, n * sizeof(*pcs));
	r->s.nhost = (uint16_t)n;
}

static void set_lua(struct rec *r, const unsigned char *kinds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		r->lua[i].kind = kinds[i];
		r->lua[i].addr = 0x100 + i;
	}
	r->s.nlua = (uint16_t)n;
}

static void add_splice(struct rec *r, unsigned int hf, unsigned int hc,
		       unsigned int lf, unsigned int lc)
{
	struct luw_splice *x = &r->sp[r->s.nsplice++];

	x->host_first = (uint16_t)hf;
	x->host_count = (uint16_t)hc;
	x->lua_first = (uint16_t)lf;
	x->lua_count = (uint16_t)lc;
}

static void check(const char *what, const struct rec *r, int keep_vm,
		  const char *want)
{
	struct luw_mframe mf[LUW_MERGE_MAX];
	char got[1024] = "";
	size_t o = 0;
	int n = luw_merge(&r->s, r->host, r->lua, r->sp, keep_vm, is_vm, NULL,
			  mf, LUW_MERGE_MAX);

	if (n < 0) {
		snprintf(got, sizeof(got), "error");
	} else {
		for (int i = 0; i < n; i++) {
			if (mf[i].src == LUW_MF_HOST)
				o += (size_t)snprintf(got + o, sizeof(got) - o, "%sh%llx",
					      i ? ";" : "",
					      (unsigned long long)r->host[mf[i].idx]);
			else if (mf[i].src == LUW_MF_LUA)
				o += (size_t)snprintf(got + o, sizeof(got) - o, "%sl%u",
					      i ? ";" : "", mf[i].idx);
			else
				o += (size_t)snprintf(got + o, sizeof(got) - o, "%sM",
					      i ? ";" : "");
		}
	}
	CHECK(!strcmp(got, want), "%s:\n  got  %s\n  want %s", what, got, want);
}

int main(void)
{
	static const unsigned char L = LUW_LF_LUA, C = LUW_LF_C,
		F = LUW_LF_FFUNC, T = LUW_LF_TRACE;
	struct rec r;

	/* FFI leaf above a VM activation entered by lua_pcall from main. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x1, 0x1, 0x9100, 0x20, 0x30 }, 5);
	set_lua(&r, (const unsigned char[]){ L, L }, 2);
	add_splice(&r, 2, 1, 0, 2);
	check("splice in the middle", &r, 0, "h30;h20;l1;l0;h1;h1");
	check("--vm-frames", &r, 1, "h30;h20;h9100;l1;l0;h1;h1");

	/* Sandwich: Lua -> C module function -> lua_call -> Lua -> FFI leaf.
	 * host: c_leaf c_leaf VM lua_call sw_call_back VM lua_pcall main;
	 * lua:  inner | sw_call_back(C) outer chunk.  The C function shows
	 * once, as its host frame. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x1, 0x1, 0x9100, 0x40, 0x50, 0x9200,
					 0x20, 0x30 }, 8);
	set_lua(&r, (const unsigned char[]){ L, C, L, L }, 4);
	add_splice(&r, 2, 1, 0, 1);
	add_splice(&r, 5, 1, 1, 3);
	check("sandwich", &r, 0, "h30;h20;l3;l2;h50;h40;l0;h1;h1");

	/* The host walk stopped in the VM: the segment goes below every host
	 * frame (host-first == nhost, host-count 0). */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x1, 0x9100 }, 2);
	set_lua(&r, (const unsigned char[]){ L, L, L }, 3);
	add_splice(&r, 2, 0, 0, 3);
	check("host-first == nhost", &r, 0, "l2;l1;l0;h1");
	check("host-first == nhost, --vm-frames", &r, 1, "l2;l1;l0;h9100;h1");

	/* host-count 0 in the middle: no VM frame was found for it. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x1, 0x20, 0x30 }, 3);
	set_lua(&r, (const unsigned char[]){ F, L }, 2);
	add_splice(&r, 1, 0, 0, 2);
	check("host-count 0", &r, 0, "h30;h20;l1;l0;h1");

	/* Coroutine resumed from Lua: its segment, then the resumer's, each
	 * replacing its own VM frame. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x9100, 0x9200, 0x20, 0x30 }, 4);
	set_lua(&r, (const unsigned char[]){ L, L, F, L }, 4);
	r.lua[1].flags = LUW_LFF_COROUTINE;
	add_splice(&r, 0, 1, 0, 2);
	add_splice(&r, 1, 1, 2, 2);
	check("coroutine", &r, 0, "h30;h20;l3;l2;l1;l0");

	/* A trace sample: the trace above the protos it runs. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x7000, 0x20 }, 2);
	set_lua(&r, (const unsigned char[]){ T, L, L }, 3);
	add_splice(&r, 0, 1, 0, 3);
	check("trace", &r, 0, "h20;l2;l1;l0");

	/* A lua_CFunction with no host frame above it stays a Lua frame. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x9100, 0x20 }, 2);
	set_lua(&r, (const unsigned char[]){ C, L }, 2);
	add_splice(&r, 0, 1, 0, 2);
	check("C frame without host frame", &r, 0, "h20;l1;l0");

	/* Uncovered VM frames fold away; no Lua at all. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x9100, 0x9300, 0x20 }, 3);
	check("host only", &r, 0, "h20");

	/* Lua frames that no splice places: above the host frames, marked. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x1, 0x20 }, 2);
	set_lua(&r, (const unsigned char[]){ L, L }, 2);
	check("unplaced", &r, 0, "h20;h1;M;l1;l0");

	/* Broken records are refused. */
	memset(&r, 0, sizeof(r));
	set_host(&r, (const uint64_t[]){ 0x1, 0x20 }, 2);
	set_lua(&r, (const unsigned char[]){ L, L }, 2);
	add_splice(&r, 1, 2, 0, 1);
	check("host range past nhost", &r, 0, "error");
	r.s.nsplice = 0;
	add_splice(&r, 1, 1, 1, 1);
	add_splice(&r, 0, 0, 0, 1);
	check("unsorted", &r, 0, "error");
	r.s.nsplice = 0;
	add_splice(&r, 0, 0, 0, 3);
	check("lua range past nlua", &r, 0, "error");

	if (luw_test_status("test_merge"))
		return 1;
	printf("test_merge: ok\n");
	return 0;
}
