/*
 * Test helper: merged stacks of one live target, read from /dev/luaunwind
 * and named against the live process.
 *
 *   lwstacks read PID SECONDS
 *       one line per sample of PID, innermost frame first:
 *       vmstate=NAME flags=0xF nhost=H nlua=L nsplice=S trace=N rawvm=V
 *       at=entry|exit|- tid=T stack=F;F;...
 *       host frames as SYMBOL or FILE+0xOFF, Lua frames (merged in where
 *       the splices say) as lua:CHUNK:FIRSTLINE:LINE, ff:NAME, c:0xGCFUNC,
 *       trace:N:CHUNK:LINE (ljproto's names), the spliced-out VM frames not
 *       shown; rawvm counts the interpreter frames left as host frames (no
 *       Lua segment replaced them), but an innermost one that holds no
 *       Lua frames of its own (an entry or exit sequence, a VM
 *       subroutine whose interpreter frame is spliced); at=entry|exit when the sampled pc is
 *       in a VM entry's prologue or an exit's epilogue (the sequences
 *       the file's unwind table lists, cfi.h), else at=-; tid is the
 *       sampled thread.  A process without LuaJIT gets host
 *       frames only.  A record that breaks the grammar fails the run.
 *       The SECONDS are spent reading records whole into memory (less
 *       when the session's targets end: end of file); they are named and
 *       printed after, against the process still live.
 *       On stderr, the target's counters at the end of the SECONDS:
 *       "lwstacks: window samples=N drops=N handler_calls=N", the
 *       names of luaunwind-ctl status (it goes on being sampled while
 *       the records are named, and a full ring then drops what no one
 *       will read).
 *       A reader that named as it read fell behind the samples: on
 *       the debug kernel beside other guests it kept 474 of a run's
 *       5183, in bursts; the full ring dropped 2774, and the rest were
 *       still unread when its time was up.
 *   lwstacks badattach PID FIELD DELTA
 *       attach as luaunwind-ctl does, with FIELD of the layout descriptor
 *       (g_mainthref, l_glref, l_stack, cframe_ofs_l, gg_g2disp, fn_pc)
 *       moved by DELTA bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/attach.h"
#include "unwind/cfi.h"
#include "output/stacks.h"
#include "util/grow.h"
#include "util/kvmap.h"
#include "elf/symbols.h"
#include "target/layout.h"
#include "target/proto.h"
#include "record/dev.h"
#include "proc/maps.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct luw_maps maps;

static void host_name(pid_t pid, uint64_t pc, int caller, char *buf,
		      size_t len)
{
	const struct luw_map *mp = luw_maps_find(&maps, pc);
	const struct luw_symbols_sym *s;
	struct luw_symbols *e;
	uint64_t off, va;
	char err[256];
	const char *base;

	if (!mp) {
		luw_maps_free(&maps);
		luw_maps_read(pid, &maps);
		mp = luw_maps_find(&maps, pc);
	}
	if (!mp || !luw_maps_is_file(mp)) {
		snprintf(buf, len, "0x%" PRIx64, pc);
		return;
	}
	base = strrchr(mp->path, '/');
	base = base ? base + 1 : mp->path;
	off = luw_maps_fileoff(mp, pc);
	e = luw_symbols_get(mp->path, err, sizeof(err));
	/* A return address may be just past a noreturn call. */
	if (e && !luw_symbols_off2vaddr(e, off - (caller ? 1 : 0), &va) &&
	    (s = luw_symbols_at(e, va)) != NULL) {
		snprintf(buf, len, "%s", s->name);
		return;
	}
	snprintf(buf, len, "%s+0x%" PRIx64, base, off);
}

/*
 * Names already made, by (address, what): one sample's frames are mostly
 * the last one's, and naming goes to the process (its maps, its memory)
 * and to the files.  What is keyed by an address stays the function's
 * own while the code it names is loaded: the run's workloads keep theirs.
 */
enum { M_INNER, M_CALLER, M_SEQ, M_LUA };

static struct luw_kvmap memo;	/* (a, b) -> v: the name's id in names */
static struct luw_stacks *names;

static const char *recall(uint64_t a, uint64_t b, uint32_t w)
{
	const struct luw_kv *kv = luw_kvmap_get(&memo, a, b);

	return kv && kv->w == w ? luw_stacks_name(names, (int32_t)kv->v) : NULL;
}

static const char *remember(uint64_t a, uint64_t b, uint32_t w,
			    const char *name)
{
	int32_t id = luw_stacks_intern(names, name, strlen(name));
	struct luw_kv *kv;
	int isnew;

	if (id < 0 || !(kv = luw_kvmap_put(&memo, a, b, &isnew))) {
		perror("lwstacks: names");
		exit(1);
	}
	/* A w that differs (a trace number) replaces the name. */
	kv->v = (uint64_t)id;
	kv->w = w;
	return luw_stacks_name(names, id);
}

static const char *host_label(pid_t pid, uint64_t pc, int caller)
{
	uint64_t b = caller ? M_CALLER : M_INNER;
	const char *n = recall(pc, b, 0);
	char buf[512];

	if (n)
		return n;
	host_name(pid, pc, caller, buf, sizeof(buf));
	return remember(pc, b, 0, buf);
}

/* Is pc in one of the VM entry/exit sequences of its file's table? */
static const char *seq_find(uint64_t pc)
{
	const struct luw_map *mp = luw_maps_find(&maps, pc);
	const struct luw_cfi *t;
	uint64_t off;
	char err[256];

	if (!mp || !luw_maps_is_file(mp) ||
	    !(t = luw_cfi_get(mp->path, err, sizeof(err))))
		return "-";
	off = luw_maps_fileoff(mp, pc);
	for (size_t i = 0; i < t->vm.n; i++) {
		const struct luw_vmseq *q = &t->vm.v[i];

		if (off >= q->at[0] && off < q->at[q->n])
			return q->kind == LUW_VMSEQ_ENTRY ? "entry" : "exit";
	}
	return "-";
}

static const char *seq_at(uint64_t pc)
{
	const char *n = recall(pc, M_SEQ, 0);

	return n ? n : remember(pc, M_SEQ, 0, seq_find(pc));
}

static void lua_name(struct luw_proto_ctx *sym, const struct luw_lj_layout *ly,
		     const struct luw_lua_frame *r, char *buf, size_t len)
{
	struct luw_lj_frame f = { 0 };

	switch (r->kind) {
	case LUW_LF_LUA:
	case LUW_LF_TRACE:
		f.kind = r->kind == LUW_LF_LUA ? LUW_LJF_LUA : LUW_LJF_TRACE;
		f.proto = r->addr;
		f.trace = r->trace;
		f.pc = r->pc ? r->addr + ly->pt_size + 4ULL * r->pc : 0;
		if (r->flags & LUW_LFF_PC_AT)
			f.flags |= LUW_LJF_PC_TRACE;
		break;
	case LUW_LF_FFUNC:
		f.kind = LUW_LJF_FF;
		f.ffid = r->ffid;
		break;
	default:
		snprintf(buf, len, "c:0x%" PRIx64, (uint64_t)r->addr);
		return;
	}
	luw_proto_frame_str(sym, &f, buf, len);
}

static const char *lua_label(struct luw_proto_ctx *sym,
			     const struct luw_lj_layout *ly,
			     const struct luw_lua_frame *r)
{
	uint64_t b = M_LUA | (uint64_t)r->pc << 8 | (uint64_t)r->kind << 40 |
		     (uint64_t)r->ffid << 48 |
		     (uint64_t)!!(r->flags & LUW_LFF_PC_AT) << 56;
	const char *n = recall(r->addr, b, r->trace);
	char buf[512];

	if (n)
		return n;
	lua_name(sym, ly, r, buf, sizeof(buf));
	return remember(r->addr, b, r->trace, buf);
}

static int spliced(const struct luw_dev_rec *r, unsigned int i)
{
	unsigned int k;

	for (k = 0; k < r->sample->nsplice; k++)
		if (i >= r->splice[k].host_first &&
		    i < r->splice[k].host_first + r->splice[k].host_count)
			return 1;
	return 0;
}

static void print_sample(pid_t pid, struct luw_proto_ctx *sym,
			 const struct luw_layout_target *t, const struct luw_dev_rec *r)
{
	const struct luw_lj_layout *ly = &t->layout;
	const struct luw_sample *s = r->sample;
	unsigned int h = 0, k = 0, i, rawvm = 0;

	/*
	 * The innermost frame may be the VM's own code with no Lua frames of
	 * its own: an entry or exit sequence, or a subroutine (lj_vm_mod,
	 * lj_vm_floor...) whose caller, the interpreter frame, is spliced.
	 */
	for (i = 0; i < s->nhost; i++)
		rawvm += !spliced(r, i) && r->host[i] >= t->vm_start &&
			 r->host[i] < t->interp_end &&
			 !(i == 0 && (strcmp(seq_at(r->host[0]), "-") ||
				      (s->nhost > 1 && spliced(r, 1))));
	printf("vmstate=%s flags=0x%x nhost=%u nlua=%u nsplice=%u trace=%u "
	       "rawvm=%u at=%s tid=%u stack=", luw_dev_vmstate_name(s->vmstate),
	       s->flags, s->nhost, s->nlua, s->nsplice, s->trace, rawvm,
	       s->nhost ? seq_at(r->host[0]) : "-", s->tid);
	for (;;) {
		const struct luw_splice *sp = k < s->nsplice ? &r->splice[k] : NULL;

		if (sp && sp->host_first == h) {
			for (i = 0; i < sp->lua_count; i++)
				printf("%s;", sym ? lua_label(sym, ly,
						&r->lua[sp->lua_first + i]) : "lua?");
			h += sp->host_count;
			k++;
			continue;
		}
		if (h >= s->nhost)
			break;
		printf("%s;", host_label(pid, r->host[h], h > 0));
		h++;
	}
	printf("\n");
}

static int cmd_read(pid_t pid, double secs)
{
	struct luw_layout_target *t = calloc(1, sizeof(*t));
	struct luw_proto_ctx *sym = NULL;
	const size_t chunk = 256 << 10;
	uint64_t *buf = NULL;
	size_t cap = 0, len = 0, off = 0;
	struct luw_dev_rec r;
	struct luw_stats st;
	double end;
	char err[1024];
	int fd, got, rc = 0;

	if (!t)
		return 1;
	if (luw_layout_attach(pid, t, err, sizeof(err)))
		memset(t, 0, sizeof(*t));	/* not LuaJIT: host frames */
	else
		sym = luw_proto_new(pid, &t->layout, &t->ff);
	luw_maps_read(pid, &maps);
	luw_kvmap_init(&memo);
	names = luw_stacks_new();
	if (!names) {
		perror("lwstacks: names");
		return 1;
	}
	fd = luw_dev_open(O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "lwstacks: open: %s\n", strerror(-fd));
		return 1;
	}
	/* The target was attached by luaunwind-ctl attach: its session. */
	if (luw_dev_join(fd, -1, 0)) {
		fprintf(stderr, "lwstacks: no kept session (attach first)\n");
		return 1;
	}
	/* SECONDS of reading: the setup above (the layout, the symbols) can
	 * take longer than that in a loaded TCG guest.  read() returns whole
	 * records: they are appended as they come, 8-byte aligned. */
	end = now_s() + secs;
	while (now_s() < end) {
		ssize_t n;

		if (luw_grow((void **)&buf, &cap, (len + chunk) / 8,
			     sizeof(*buf))) {
			perror("lwstacks: records");
			rc = 1;
			break;
		}
		n = read(fd, (char *)buf + len, chunk);
		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			poll(&p, 1, 100);
			continue;
		}
		if (n < 0) {
			perror("lwstacks: read");
			rc = 1;
			break;
		}
		if (n == 0)	/* end of file: the session's targets ended */
			break;
		len += (size_t)n;
	}
	if (!luw_dev_stats(fd, pid, &st))
		fprintf(stderr, "lwstacks: window samples=%llu drops=%llu "
			"handler_calls=%llu\n", (unsigned long long)st.samples,
			(unsigned long long)st.drops,
			(unsigned long long)st.handler_calls);
	close(fd);
	while ((got = luw_dev_next(buf, len, &off, &r)) > 0) {
		if (r.type == LUW_REC_SAMPLE && (pid_t)r.sample->pid == pid)
			print_sample(pid, sym, t, &r);
	}
	if (got < 0) {
		fprintf(stderr, "lwstacks: malformed record at %zu\n", off);
		rc = 1;
	}
	fflush(stdout);
	free(buf);
	luw_stacks_free(names);
	luw_kvmap_free(&memo);
	luw_proto_free(sym);
	free(t);
	return rc;
}

static int cmd_badattach(pid_t pid, const char *field, int delta)
{
	struct luw_attach req = { .sample_rate = 999,
				  .flags = LUW_ATTACH_STOPPED };
	struct luw_lj_layout *ly;
	struct luw_attacher *a;
	char err[1024];
	int fd, r;

	if (luw_attach_open(pid, 1, &a, err, sizeof(err))) {
		fprintf(stderr, "lwstacks: %s\n", err);
		return 1;
	}
	ly = luw_attach_layout(a);
	if (!strcmp(field, "g_mainthref"))
		ly->g_mainthref += delta;
	else if (!strcmp(field, "l_glref"))
		ly->l_glref += delta;
	else if (!strcmp(field, "l_stack"))
		ly->l_stack += delta;
	else if (!strcmp(field, "cframe_ofs_l"))
		ly->cframe_ofs_l += delta;
	else if (!strcmp(field, "gg_g2disp"))
		ly->gg_g2disp += delta;
	else if (!strcmp(field, "fn_pc"))
		ly->fn_pc += delta;
	else {
		fprintf(stderr, "lwstacks: unknown field %s\n", field);
		return 2;
	}
	fd = luw_dev_open(0);
	if (fd < 0) {
		fprintf(stderr, "lwstacks: open: %s\n", strerror(-fd));
		return 1;
	}
	/* In the kept session, as luaunwind-ctl attach: it outlives us. */
	r = luw_dev_join(fd, -1, LUW_JOIN_CREATE);
	if (r) {
		fprintf(stderr, "lwstacks: join: %s\n", strerror(-r));
		return 1;
	}
	luw_attach_fill(a, &req);
	r = luw_dev_attach(fd, &req);
	if (r) {
		printf("refused: %s\n", strerror(-r));
		return 0;
	}
	if (luw_attach_upload(a, fd, NULL, err, sizeof(err)) < 0 ||
	    luw_dev_start(fd, pid)) {
		fprintf(stderr, "lwstacks: %s\n", err);
		return 1;
	}
	printf("attached\n");
	luw_attach_free(a);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "read"))
		return cmd_read(atoi(argv[2]), atof(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "badattach"))
		return cmd_badattach(atoi(argv[2]), argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: lwstacks read PID SECONDS | "
			"badattach PID FIELD DELTA\n");
	return 2;
}
