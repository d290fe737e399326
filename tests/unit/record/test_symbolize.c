/*
 * record/symbolize.c against a live Debian luajit (stripped: .dynsym only): a
 * raw capture whose pcs are real addresses in the process is turned into
 * a .luw (luw_symbolize_raw) and reported: exported functions by name, unnamed
 * code as luajit+0xFILEOFFSET, interpreter pcs folded away as VM code,
 * fast functions named by the process's own VM table; the process section
 * says the process was found to be LuaJIT; a process that is gone is
 * refused with a message.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/symbols.h"
#include "target/layout.h"
#include "target/proto.h"
#include "luaunwind.h"
#include "record/file.h"
#include "record/report.h"
#include "proc/maps.h"
#include "output/stacks.h"
#include "record/symbolize.h"
#include "testlib.h"

static pid_t start_luajit(void)
{
	char *argv[] = { "luajit", "-e",
			 "io.stdout:write('ready\\n') io.stdout:flush() "
			 "local s = '' while true do s = string.rep('x', 100) end",
			 NULL };

	return luw_test_spawn(argv, NULL, NULL, 0, NULL);
}

/* Absolute address of file offset off of the mapped object path. */
static uint64_t abs_of(const struct luw_maps *m, const char *path, uint64_t off)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct luw_map *mp = &m->v[i];

		if (!strcmp(mp->path, path) && off >= mp->offset &&
		    off < mp->offset + (mp->end - mp->start))
			return mp->start + off - mp->offset;
	}
	return 0;
}

static char *report(uint8_t *mem, size_t len, int *rc)
{
	struct luw_file f;
	struct luw_report_opts o = { 0 };
	struct luw_report_result res;
	struct luw_stacks *s = luw_stacks_new();
	char err[256], *p = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&p, &n);

	luw_file_from_mem(&f, mem, len);
	*rc = luw_report_run(&f, &o, s, &res, err, sizeof(err));
	luw_stacks_write_folded(s, out);
	fclose(out);
	luw_stacks_free(s);
	luw_file_close(&f);
	return p;
}

int main(void)
{
	pid_t pid = start_luajit();
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	struct luw_maps maps = { 0 };
	struct luw_symbols *e;
	const struct luw_symbols_sym *pcall;
	struct luw_proto_ctx *ljs;
	uint64_t pcall_off, abs_pcall, abs_unnamed = 0, rep_ffid = 0;
	char err[1024], *text;
	uint8_t *mem;
	size_t len;
	int rc;
	struct {
		struct luw_sample s;
		uint64_t host[3];
		struct luw_lua_frame lua[1];
		struct luw_splice sp[1];
	} rec;

	CHECK(pid > 0 && t, "cannot start luajit");
	if (pid < 0 || !t)
		return luw_test_status("test_symbolize");
	CHECK(luw_layout_attach(pid, t, err, sizeof(err)) == 0, "luw_layout_attach: %s", err);
	CHECK(luw_maps_read(pid, &maps) == 0, "maps");
	e = luw_symbols_get(t->path, err, sizeof(err));
	CHECK(e != NULL, "elf %s: %s", t->path, err);
	if (luw_test_failures)
		goto out;
	pcall = luw_symbols_named(e, "lua_pcall");
	CHECK(pcall && luw_symbols_vaddr2off(e, pcall->addr, &pcall_off) == 0,
	      "lua_pcall in %s", t->path);
	if (luw_test_failures)
		goto out;
	abs_pcall = abs_of(&maps, t->path, pcall_off);
	/* Code between the VM's end and the next symbol is unnamed. */
	for (uint64_t a = t->vm_end + 64; a < t->vm_end + 65536; a += 16) {
		uint64_t off, va;
		const struct luw_map *mp = luw_maps_find(&maps, a);

		if (!mp)
			break;
		off = luw_maps_fileoff(mp, a);
		if (luw_symbols_off2vaddr(e, off, &va) == 0 && !luw_symbols_at(e, va)) {
			abs_unnamed = a;
			break;
		}
	}
	CHECK(abs_pcall && abs_unnamed, "addresses: lua_pcall 0x%llx unnamed 0x%llx",
	      (unsigned long long)abs_pcall, (unsigned long long)abs_unnamed);
	ljs = luw_proto_new(pid, &t->layout, &t->ff);
	for (unsigned int i = 0; ljs && i < 256; i++) {
		const char *n = luw_proto_ffname(ljs, i);

		if (n && !strcmp(n, "string.rep"))
			rep_ffid = i;
	}
	luw_proto_free(ljs);
	CHECK(rep_ffid, "no string.rep in the fast-function table");
	if (luw_test_failures)
		goto out;

	/* string.rep running in the VM, called from the main chunk's
	 * activation entered by lua_pcall, below an unnamed frame. */
	memset(&rec, 0, sizeof(rec));
	rec.s.size = sizeof(rec);
	rec.s.type = LUW_REC_SAMPLE;
	rec.s.vmstate = LUW_VMST_FFUNC;
	rec.s.nhost = 3;
	rec.s.nlua = 1;
	rec.s.nsplice = 1;
	rec.s.pid = (uint32_t)pid;
	rec.s.tid = (uint32_t)pid;
	rec.host[0] = t->vm_start + 0x40;
	rec.host[1] = abs_pcall + 0x20;
	rec.host[2] = abs_unnamed + 1;
	rec.lua[0].kind = LUW_LF_FFUNC;
	rec.lua[0].ffid = (uint8_t)rep_ffid;
	rec.sp[0].host_first = 0;
	rec.sp[0].host_count = 1;
	rec.sp[0].lua_first = 0;
	rec.sp[0].lua_count = 1;
	rc = luw_symbolize_raw(pid, &rec, sizeof(rec), &mem, &len, err, sizeof(err));
	CHECK(rc == 0, "luw_symbolize_raw: %d %s", rc, err);
	if (rc == 0) {
		char want[256];
		uint64_t off = luw_maps_fileoff(luw_maps_find(&maps, abs_unnamed),
					       abs_unnamed) + 1;

		CHECK(luw_file_is_luw(mem, len), "no magic");
		text = report(mem, len, &rc);
		snprintf(want, sizeof(want), "%s+0x%llx;lua_pcall;string.rep 1\n",
			 strrchr(t->path, '/') + 1, (unsigned long long)off);
		CHECK(rc == 0 && text && !strcmp(text, want),
		      "report rc %d:\n%s\nwant:\n%s", rc, text, want);
		free(text);
	}

	/* Unnamed code inside an FDE (stripped luajit has many): named by
	 * the FDE's start, so each such function is one box. */
	if (rc == 0) {
		uint64_t abs_in = 0, fstart = 0;

		for (size_t i = 0; i < maps.n && !abs_in; i++) {
			const struct luw_map *mp = &maps.v[i];

			if (strcmp(mp->path, t->path) || !(mp->prot & LUW_MAP_X))
				continue;
			for (uint64_t a = mp->start; a < mp->end; a += 16) {
				uint64_t va, fs;

				if (a >= t->vm_start && a < t->vm_end)
					continue;
				if (luw_symbols_off2vaddr(e, luw_maps_fileoff(mp, a),
						      &va) == 0 &&
				    !luw_symbols_at(e, va) &&
				    luw_symbols_fde_start(e, va, &fs) == 0 &&
				    fs + 32 <= va) {
					abs_in = a;
					fstart = a - (va - fs);
					break;
				}
			}
		}
		CHECK(abs_in, "no unnamed pc inside an FDE in %s", t->path);
		mem = NULL;	/* report() took it over */
		rec.host[2] = abs_in + 1;
		rc = luw_symbolize_raw(pid, &rec, sizeof(rec), &mem, &len, err,
				  sizeof(err));
		if (abs_in && rc == 0) {
			char want[256];
			uint64_t off = luw_maps_fileoff(luw_maps_find(&maps, fstart),
						       fstart);

			text = report(mem, len, &rc);
			snprintf(want, sizeof(want),
				 "%s+0x%llx;lua_pcall;string.rep 1\n",
				 strrchr(t->path, '/') + 1, (unsigned long long)off);
			CHECK(rc == 0 && text && !strcmp(text, want),
			      "FDE-named: report rc %d:\n%s\nwant:\n%s", rc, text,
			      want);
			free(text);
		}
	}

	/* Gone: refused, with a message. */
	luw_test_stop(pid);
	rc = luw_symbolize_raw(pid, &rec, sizeof(rec), &mem, &len, err, sizeof(err));
	CHECK(rc < 0 && strstr(err, "maps"), "gone process: rc %d '%s'", rc, err);
	pid = 0;
out:
	if (pid > 0) {
		luw_test_stop(pid);
	}
	luw_maps_free(&maps);
	free(t);
	if (luw_test_status("test_symbolize"))
		return 1;
	printf("test_symbolize: ok\n");
	return 0;
}
