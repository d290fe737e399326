/*
 * record/file.c (with record/report.c, which reports what it reads):
 * .luw files: a hand-built file with every section kind reports the
 * expected merged, named stacks; cut at every length, the reader reports
 * what came before the cut and an error naming the offset; the program
 * (argv[2]) prints that and exits 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "luaunwind.h"
#include "record/file.h"
#include "record/report.h"
#include "output/stacks.h"
#include "testlib.h"

static void host(struct luw_file_writer *w, uint64_t pc, uint32_t mapno,
		 uint32_t flags, const char *name)
{
	struct luw_file_buf b = { 0 };

	luw_file_put_u32(&b, 42);
	luw_file_put_u32(&b, mapno);
	luw_file_put_u32(&b, flags);
	luw_file_put_u32(&b, 0);
	luw_file_put_u64(&b, pc);
	luw_file_put_u64(&b, 0);
	luw_file_put_str(&b, name);
	luw_file_write_buf(w, LUWF_SEC_HOST, &b);
	luw_file_buf_free(&b);
}

static void proto_n(struct luw_file_writer *w, uint64_t addr, int32_t line,
		    int32_t numline, const char *chunk, const char *name)
{
	struct luw_file_buf b = { 0 };

	luw_file_put_u32(&b, 42);
	luw_file_put_u32(&b, (uint32_t)line);
	luw_file_put_u32(&b, (uint32_t)numline);
	luw_file_put_u32(&b, 0);
	luw_file_put_u64(&b, addr);
	luw_file_put_str(&b, chunk);
	luw_file_write_buf(w, LUWF_SEC_PROTO, &b);
	if (name) {
		luw_file_put_u32(&b, 42);
		luw_file_put_u32(&b, 0);
		luw_file_put_u64(&b, addr);
		luw_file_put_str(&b, name);
		luw_file_write_buf(w, LUWF_SEC_FNAME, &b);
	}
	luw_file_buf_free(&b);
}

static void proto(struct luw_file_writer *w, uint64_t addr, int32_t line,
		  const char *chunk, const char *name)
{
	proto_n(w, addr, line, 10, chunk, name);
}

/* The version of the file build() is making. */
static int file_version;

/*
 * A sample record of pid 42: host pcs, Lua frames (kind, addr), splices;
 * in a file before v5, as record version 4 had it (Lua frames of 24
 * bytes: no func).
 */
static void sample(struct luw_file_buf *b, uint8_t vmstate, const uint64_t *h,
		   unsigned int nh, const struct luw_lua_frame *l,
		   unsigned int nl, const struct luw_splice *sp, unsigned int ns)
{
	uint64_t rec[LUW_RECORD_MAX / 8], v4[LUW_RECORD_MAX / 8];
	size_t n = luw_test_sample(rec, 42, vmstate, h, nh, l, nl, sp, ns);
	size_t head = sizeof(struct luw_sample) + nh * 8, o = head;
	struct luw_sample *s = (struct luw_sample *)v4;

	if (file_version >= 5) {
		luw_file_put(b, rec, n);
		return;
	}
	memcpy(v4, rec, head);
	for (unsigned int i = 0; i < nl; i++, o += 24)
		memcpy((char *)v4 + o, (char *)rec + head + i * sizeof(*l), 24);
	memcpy((char *)v4 + o, (char *)rec + head + nl * sizeof(*l),
	       ns * sizeof(*sp));
	s->size = (uint16_t)(o + ns * sizeof(*sp));
	luw_file_put(b, v4, s->size);
}

/*
 * version 2 and up: traces keyed by (number, start proto), and call-site
 * names; version 1: the trace section of v1, keyed by number.  Before 5:
 * samples of record version 4 and call-site names without their callee.
 */
static size_t build(char **mem, size_t *samples_end, int version)
{
	size_t len = 0;
	FILE *f = open_memstream(mem, &len);
	struct luw_file_writer w;
	struct luw_file_buf b = { 0 };
	struct luw_lua_frame lf[4];
	struct luw_lost lost = { .size = sizeof(lost), .type = LUW_REC_LOST,
				 .count = 7 };

	file_version = version;
	luw_file_writer_init(&w, f);
	/* process: pid flags vm_start vm_end start_ns freq comm exe kind */
	luw_file_put_u32(&b, 42);
	luw_file_put_u32(&b, LUWF_PF_GC64);
	luw_file_put_u64(&b, 0x9000);
	luw_file_put_u64(&b, 0xa000);
	luw_file_put_u64(&b, 1);
	luw_file_put_u32(&b, 999);
	luw_file_put_str(&b, "sw");
	luw_file_put_str(&b, "/usr/bin/luajit");
	luw_file_put_str(&b, "luajit");
	luw_file_write_buf(&w, LUWF_SEC_PROCESS, &b);
	/* mapping 0 */
	luw_file_put_u32(&b, 42);
	luw_file_put_u32(&b, LUWF_MAP_R | LUWF_MAP_X);
	luw_file_put_u64(&b, 0x400000);
	luw_file_put_u64(&b, 0x500000);
	luw_file_put_u64(&b, 0x1000);
	luw_file_put_strn(&b, "\x01\x02", 2);
	luw_file_put_str(&b, "/usr/lib/x86_64-linux-gnu/libsw.so.1");
	luw_file_write_buf(&w, LUWF_SEC_MAPPING, &b);
	host(&w, 0x30, LUWF_NO_MAP, 0, "main");
	host(&w, 0x20, LUWF_NO_MAP, 0, "lua_pcall");
	host(&w, 0x40, LUWF_NO_MAP, 0, "lua_call");
	host(&w, 0x50, LUWF_NO_MAP, 0, "sw;call_back");
	host(&w, 0x400123, 0, 0, "");
	host(&w, 0x9100, LUWF_NO_MAP, LUWF_HF_VM, "");
	proto(&w, 0x100, 3, "sw.lua", "outer");
	proto(&w, 0x200, 9, "sw.lua", NULL);
	/* ffnames: 0..3, ffid 3 = "string.rep" */
	luw_file_put_u32(&b, 42);
	luw_file_put_u32(&b, 4);
	luw_file_put_str(&b, "");
	luw_file_put_str(&b, "");
	luw_file_put_str(&b, "assert");
	luw_file_put_str(&b, "string.rep");
	luw_file_write_buf(&w, LUWF_SEC_FFNAMES, &b);
	/* trace 5 starts at 0x200 line 11 */
	luw_file_put_u32(&b, 42);
	luw_file_put_u32(&b, 5);
	luw_file_put_u64(&b, 0x200);
	luw_file_put_u32(&b, 11);
	luw_file_put_u32(&b, 0);
	if (version >= 2) {
		luw_file_put_u64(&b, 0x200);
		luw_file_put_u64(&b, 0x7000);
	}
	luw_file_write_buf(&w, LUWF_SEC_TRACE, &b);
	if (version >= 2) {
		/* Trace 5 of another universe starts in 0x400, line 21. */
		proto(&w, 0x400, 20, "other.lua", NULL);
		luw_file_put_u32(&b, 42);
		luw_file_put_u32(&b, 5);
		luw_file_put_u64(&b, 0x400);
		luw_file_put_u32(&b, 21);
		luw_file_put_u32(&b, 0);
		luw_file_put_u64(&b, 0x400);
		luw_file_put_u64(&b, 0x8000);
		luw_file_write_buf(&w, LUWF_SEC_TRACE, &b);
		/* 0x100 calls its callee at pc 7 by the name "cb". */
		luw_file_put_u32(&b, 42);
		luw_file_put_u32(&b, 7);
		luw_file_put_u64(&b, 0x100);
		luw_file_put_str(&b, "cb");
		if (version >= 5)	/* proven on 0x200 */
			luw_file_put_u64(&b, 0x200);
		luw_file_write_buf(&w, LUWF_SEC_CALLSITE, &b);
		/* 0x700, called there too (after a tail call, say). */
		proto(&w, 0x700, 30, "sw.lua", NULL);
		/* A main chunk (line 0, 40 lines), called at 0x100's pc 7
		 * too; a proto of stripped bytecode (line 0, no lines). */
		proto_n(&w, 0x500, 0, 40, "sw.lua", NULL);
		proto_n(&w, 0x600, 0, 0, "strip.lua", NULL);
	}

	/* Sandwich, leaf in an unnamed pc of libsw. */
	memset(lf, 0, sizeof(lf));
	lf[0].kind = LUW_LF_LUA; lf[0].addr = 0x200;
	lf[1].kind = LUW_LF_LUA; lf[1].addr = 0x100;
	sample(&b, LUW_VMST_CFUNC,
	       (const uint64_t[]){ 0x400123, 0x9100, 0x40, 0x50, 0x9100, 0x20,
				   0x30 }, 7, lf, 2,
	       (const struct luw_splice[]){ { 1, 1, 0, 1 }, { 4, 1, 1, 1 } }, 2);
	/* A trace sample; a fast function sample, twice. */
	lf[0].kind = LUW_LF_TRACE; lf[0].addr = 0x200; lf[0].trace = 5;
	lf[1].kind = LUW_LF_LUA; lf[1].addr = 0x100;
	sample(&b, LUW_VMST_TRACE, (const uint64_t[]){ 0x9100, 0x20, 0x30 }, 3,
	       lf, 2, (const struct luw_splice[]){ { 0, 1, 0, 2 } }, 1);
	luw_file_put(&b, &lost, sizeof(lost));
	lf[0].kind = LUW_LF_FFUNC; lf[0].addr = 0x300; lf[0].ffid = 3;
	lf[0].trace = 0;
	lf[1].kind = LUW_LF_LUA; lf[1].addr = 0x999;	/* unknown proto */
	for (int i = 0; i < 2; i++)
		sample(&b, LUW_VMST_FFUNC, (const uint64_t[]){ 0x9100, 0x20 }, 2,
		       lf, 2, (const struct luw_splice[]){ { 0, 1, 0, 2 } }, 1);
	if (version >= 2) {
		/* Another universe's trace 5; 0x200 called by 0x100 (pc 7):
		 * no definition name, so the call site's, in this sample. */
		lf[0].kind = LUW_LF_TRACE; lf[0].addr = 0x400; lf[0].trace = 5;
		lf[0].ffid = 0;
		lf[1].kind = LUW_LF_LUA; lf[1].addr = 0x200; lf[1].pc = 0;
		lf[2].kind = LUW_LF_LUA; lf[2].addr = 0x100; lf[2].pc = 7;
		lf[2].trace = 0;
		sample(&b, LUW_VMST_TRACE, (const uint64_t[]){ 0x9100, 0x20 },
		       2, lf, 3, (const struct luw_splice[]){ { 0, 1, 0, 3 } },
		       1);
		/* The main chunk is named as one, not by the call site "cb"
		 * (it has no definition); firstline 0 alone is no main chunk. */
		lf[0].kind = LUW_LF_LUA; lf[0].addr = 0x600; lf[0].pc = 0;
		lf[0].trace = 0;
		lf[1].kind = LUW_LF_LUA; lf[1].addr = 0x500; lf[1].pc = 3;
		sample(&b, LUW_VMST_LFUNC, (const uint64_t[]){ 0x9100, 0x20 },
		       2, lf, 3, (const struct luw_splice[]){ { 0, 1, 0, 3 } },
		       1);
		/* 0x700 at 0x100's call site: not "cb" from v5 on. */
		lf[1].addr = 0x700;
		sample(&b, LUW_VMST_LFUNC, (const uint64_t[]){ 0x9100, 0x20 },
		       2, lf, 3, (const struct luw_splice[]){ { 0, 1, 0, 3 } },
		       1);
	}
	luw_file_write_buf(&w, LUWF_SEC_SAMPLES, &b);
	*samples_end = w.off;
	luw_file_write_end(&w);
	luw_file_buf_free(&b);
	fclose(f);
	if (version < LUWF_VERSION)
		(*mem)[4] = (char)version;
	return len;
}

static const char want_v1[] =
	"lua_pcall;@?0x999;string.rep 2\n"
	"main;lua_pcall;outer @sw.lua:3;TRACE_5 @sw.lua:11 1\n"
	"main;lua_pcall;outer @sw.lua:3;sw:call_back;lua_call;@sw.lua:9;libsw.so.1+0x1123 1\n";
static const char want_v4[] =
	"lua_pcall;@?0x999;string.rep 2\n"
	"lua_pcall;outer @sw.lua:3;cb @sw.lua:30;@strip.lua:0 1\n"
	"lua_pcall;outer @sw.lua:3;cb @sw.lua:9;TRACE_5 @other.lua:21 1\n"
	"lua_pcall;outer @sw.lua:3;main chunk @sw.lua:0;@strip.lua:0 1\n"
	"main;lua_pcall;outer @sw.lua:3;TRACE_5 @sw.lua:11 1\n"
	"main;lua_pcall;outer @sw.lua:3;sw:call_back;lua_call;@sw.lua:9;libsw.so.1+0x1123 1\n";
static const char want[] =
	"lua_pcall;@?0x999;string.rep 2\n"
	"lua_pcall;outer @sw.lua:3;@sw.lua:30;@strip.lua:0 1\n"
	"lua_pcall;outer @sw.lua:3;cb @sw.lua:9;TRACE_5 @other.lua:21 1\n"
	"lua_pcall;outer @sw.lua:3;main chunk @sw.lua:0;@strip.lua:0 1\n"
	"main;lua_pcall;outer @sw.lua:3;TRACE_5 @sw.lua:11 1\n"
	"main;lua_pcall;outer @sw.lua:3;sw:call_back;lua_call;@sw.lua:9;libsw.so.1+0x1123 1\n";

static char *folded(const struct luw_stacks *s)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);

	luw_stacks_write_folded(s, f);
	fclose(f);
	return p;
}

/* Run cmd, a shell command line, with prog and file in for its %s. */
static int run_cmd(const char *fmt, const char *prog, const char *file,
		   char *out, size_t outlen)
{
	char cmd[4096];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), fmt, prog, file);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, outlen - 1, p);
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_report(const char *prog, const char *file, char *out,
		      size_t outlen)
{
	return run_cmd("%s %s 2>&1", prog, file, out, outlen);
}

int main(int argc, char **argv)
{
	char *mem = NULL, err[512];
	size_t samples_end, len;
	struct luw_file f;
	struct luw_report_opts o = { 0 };
	struct luw_report_result res;
	struct luw_stacks *s = luw_stacks_new();
	char *text;
	int rc;

	/* A version 1 file reads as before. */
	len = build(&mem, &samples_end, 1);
	luw_file_from_mem(&f, (uint8_t *)mem, len);
	rc = luw_report_run(&f, &o, s, &res, err, sizeof(err));
	text = folded(s);
	CHECK(rc == 0 && !strcmp(text, want_v1), "v1 file: rc %d (%s)\n%s", rc,
	      err, text);
	free(text);
	luw_stacks_free(s);
	free(mem);

	/* A version 4 file: its records brought up, call sites unchecked. */
	s = luw_stacks_new();
	mem = NULL;
	len = build(&mem, &samples_end, 4);
	luw_file_from_mem(&f, (uint8_t *)mem, len);
	rc = luw_report_run(&f, &o, s, &res, err, sizeof(err));
	text = folded(s);
	CHECK(rc == 0 && res.records == 7 && !strcmp(text, want_v4),
	      "v4 file: rc %d (%s), %llu records\n%s", rc, err,
	      (unsigned long long)res.records, text);
	free(text);
	luw_stacks_free(s);
	/* Cut: its samples whole or none, as a current file's. */
	for (size_t cut = 0; cut < len; cut++) {
		struct luw_file g;

		luw_file_from_mem(&g, (uint8_t *)mem, cut);
		s = luw_stacks_new();
		rc = luw_report_run(&g, &o, s, &res, err, sizeof(err));
		CHECK(rc == 2 && luw_stacks_total(s) == (cut >= samples_end ? 7 : 0),
		      "v4 file cut at %zu: rc %d, %llu samples", cut, rc,
		      (unsigned long long)luw_stacks_total(s));
		luw_stacks_free(s);
	}
	free(mem);

	s = luw_stacks_new();
	mem = NULL;
	len = build(&mem, &samples_end, LUWF_VERSION);

	/* The whole file. */
	luw_file_from_mem(&f, (uint8_t *)mem, len);
	rc = luw_report_run(&f, &o, s, &res, err, sizeof(err));
	text = folded(s);
	CHECK(rc == 0, "complete file: rc %d (%s)", rc, err);
	CHECK(res.complete && res.records == 7 && res.lost == 7,
	      "complete %d records %llu lost %llu", res.complete,
	      (unsigned long long)res.records, (unsigned long long)res.lost);
	CHECK(res.vmstate[LUW_VMST_FFUNC] == 2 && res.vmstate[LUW_VMST_TRACE] == 2 &&
	      res.vmstate[LUW_VMST_CFUNC] == 1, "vmstates");
	CHECK(res.freq == 999, "freq %u", res.freq);
	CHECK(!strcmp(text, want), "folded:\n%s\nwant:\n%s", text, want);
	free(text);
	luw_stacks_free(s);

	/* --vm-frames keeps the VM pcs (named by module+offset or address). */
	s = luw_stacks_new();
	o.keep_vm = 1;
	luw_report_run(&f, &o, s, &res, err, sizeof(err));
	text = folded(s);
	CHECK(strstr(text, "lua_pcall;0x9100;@?0x999;string.rep 2\n") != NULL,
	      "--vm-frames:\n%s", text);
	free(text);
	luw_stacks_free(s);
	o.keep_vm = 0;

	/* Cut at every length: never more than the whole, always an error
	 * naming an offset, all samples once the samples section is in. */
	for (size_t cut = 0; cut < len; cut++) {
		struct luw_file g;

		luw_file_from_mem(&g, (uint8_t *)mem, cut);
		s = luw_stacks_new();
		rc = luw_report_run(&g, &o, s, &res, err, sizeof(err));
		CHECK(rc == 2, "cut %zu: rc %d", cut, rc);
		CHECK(strstr(err, "offset ") != NULL, "cut %zu: error '%s'", cut, err);
		CHECK(!res.complete, "cut %zu: complete", cut);
		if (cut >= samples_end)
			CHECK(luw_stacks_total(s) == 7, "cut %zu: %llu samples", cut,
			      (unsigned long long)luw_stacks_total(s));
		else
			CHECK(luw_stacks_total(s) == 0, "cut %zu: %llu samples", cut,
			      (unsigned long long)luw_stacks_total(s));
		luw_stacks_free(s);
	}

	/* The program: prints what it decoded, names the offset, exits 2. */
	if (argc > 2) {
		char path[] = "/tmp/test_file.XXXXXX", out[8192];
		int fd = mkstemp(path);

		CHECK(fd >= 0 && write(fd, mem, samples_end + 3) ==
			  (ssize_t)(samples_end + 3), "temp file");
		close(fd);
		rc = run_report(argv[2], path, out, sizeof(out));
		CHECK(rc == 2, "report on a cut file: exit %d\n%s", rc, out);
		CHECK(strstr(out, "lua_call;@sw.lua:9;libsw.so.1+0x1123 1\n") &&
		      strstr(out, "(cut short?)") && strstr(out, "offset "),
		      "report on a cut file printed:\n%s", out);
		fd = open(path, O_WRONLY | O_TRUNC);
		CHECK(fd >= 0 && write(fd, mem, len) == (ssize_t)len, "rewrite");
		close(fd);
		rc = run_report(argv[2], path, out, sizeof(out));
		CHECK(rc == 0 && !strcmp(out, want), "report: exit %d\n%s", rc, out);
		/*
		 * luaunwind-report hands .luw input to luaunwind-report-luw:
		 * from a pipe (the bytes it read go on in a memfd), from a
		 * redirected stdin (read again from 0), and not at all when
		 * that program is missing.
		 */
		rc = run_cmd("cat %2$s | %1$s - 2>&1", argv[2], path, out,
			     sizeof(out));
		CHECK(rc == 0 && !strcmp(out, want), "report from a pipe: exit %d\n%s",
		      rc, out);
		rc = run_cmd("%s - <%s 2>&1", argv[2], path, out, sizeof(out));
		CHECK(rc == 0 && !strcmp(out, want), "report from stdin: exit %d\n%s",
		      rc, out);
		rc = run_cmd("d=$(mktemp -d) && cp %s \"$d/\" && "
			     "\"$d\"/luaunwind-report %s 2>&1; rc=$?; rm -rf \"$d\"; "
			     "exit $rc", argv[2], path, out, sizeof(out));
		CHECK(rc == 1 && strstr(out, "record files are read by") &&
		      strstr(out, "luaunwind-report-luw"),
		      "report without its .luw reader: exit %d\n%s", rc, out);
		unlink(path);
	}
	free(mem);
	if (luw_test_status("test_file"))
		return 1;
	printf("test_file: ok\n");
	return 0;
}
