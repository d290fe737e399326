#include "record/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/debugfile.h"
#include "elf/elf.h"
#include "heap/heapreport.h"
#include "heap/heaptake.h"
#include "output/pprof.h"
#include "output/stacks.h"
#include "record/attach.h"
#include "record/dev.h"
#include "record/file.h"
#include "record/follow.h"
#include "record/record.h"
#include "proc/procinfo.h"
#include "record/report.h"
#include "util/fail.h"

#define ALLOC_INTERVAL	(512 << 10)	/* as record --alloc */

/* What a process's samples are labelled with, noted as it is attached
 * (it may be gone by the report). */
struct proc {
	pid_t pid;
	char pidstr[16], comm[64], exe[4096], build_id[2 * 64 + 1];
};

struct labels {
	char host[256];
	struct proc *v;
	size_t n;
};

struct take {
	const struct luw_profile_req *q;
	struct labels lab;
	struct luw_follow fw;
	int follow;			/* a selection, not a pid */
	unsigned int natt;
	volatile sig_atomic_t stop;
	int cancelled;
};

static void note(struct labels *l, pid_t pid)
{
	struct proc *p = &l->v[l->n++];
	uint8_t id[64];
	size_t len;
	Elf *elf;
	int fd;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(p->pidstr, sizeof(p->pidstr), "%d", (int)pid);
	luw_procinfo_comm(pid, p->comm, sizeof(p->comm));
	luw_procinfo_exe(pid, p->exe, sizeof(p->exe));
	snprintf(p->build_id, sizeof(p->build_id), "/proc/%d/exe", (int)pid);
	elf = luw_elf_open(p->build_id, &fd, p->build_id, sizeof(p->build_id));
	p->build_id[0] = 0;
	if (elf) {
		len = luw_debugfile_build_id(elf, id, sizeof(id));
		if (len)
			luw_debugfile_build_id_hex(id, len, p->build_id);
		elf_end(elf);
		close(fd);
	}
}

/* pprof's labels of a sample rooted at "comm-PID". */
static size_t labels_of(void *ctx, const char *root, size_t len,
			struct luw_pprof_label *out, size_t max)
{
	const struct labels *l = ctx;
	const struct proc *p = NULL;
	size_t k = 0, d = len;
	long pid = 0;

	while (d && root[d - 1] >= '0' && root[d - 1] <= '9')
		d--;
	if (d && d < len && root[d - 1] == '-')
		pid = strtol(root + d, NULL, 10);
	for (size_t i = 0; i < l->n && pid; i++)
		if (l->v[i].pid == pid)
			p = &l->v[i];
	/* A profile of one process (a heap's paths have no comm-PID). */
	if (!pid && l->n == 1)
		p = &l->v[0];
	if (k < max && l->host[0])
		out[k++] = (struct luw_pprof_label){ "hostname", l->host, 0 };
	if (!p)
		return k;
	if (k < max)
		out[k++] = (struct luw_pprof_label){ "pid", p->pidstr, 0 };
	if (k < max && p->comm[0])
		out[k++] = (struct luw_pprof_label){ "comm", p->comm, 0 };
	if (k < max && p->exe[0])
		out[k++] = (struct luw_pprof_label){ "executable", p->exe, 0 };
	if (k < max && p->build_id[0])
		out[k++] = (struct luw_pprof_label){ "build_id", p->build_id, 0 };
	return k;
}

/* The record loop's tick: the client still there, the selection's new
 * processes attached. */
static unsigned int tick(void *ctx, int fd, struct luw_attacher **att,
			 unsigned int natt)
{
	struct take *t = ctx;

	if (t->q->cancelled && t->q->cancelled(t->q->ctx)) {
		t->cancelled = 1;
		t->stop = 1;
	}
	if (t->follow && !t->stop)
		natt = luw_follow_scan(&t->fw, fd, att, natt, LUW_MAX_TARGETS);
	while (t->lab.n < natt)
		note(&t->lab, luw_attach_pid(att[t->lab.n]));
	t->natt = natt;
	return natt;
}

/* stacks as pprof (po) into *out. */
static enum luw_profile_status put_pprof(struct luw_stacks *stacks,
					 struct luw_pprof_opts *po,
					 struct labels *lab, uint8_t **out,
					 size_t *outlen, char *err, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;

	po->labels = labels_of;
	po->labels_ctx = lab;
	mem = open_memstream(&buf, &len);
	if (!mem || luw_pprof_write(mem, stacks, po) || fclose(mem)) {
		luw_fail(err, n, "writing the profile: %s", strerror(errno));
		free(buf);
		return LUW_PROFILE_FAILED;
	}
	*out = (uint8_t *)buf;
	*outlen = len;
	return LUW_PROFILE_OK;
}

/* A heap snapshot of q->pid, walked live, as pprof. */
static enum luw_profile_status heap(const struct luw_profile_req *q,
				    struct labels *lab, uint8_t **out,
				    size_t *outlen, char *info, size_t infolen,
				    char *err, size_t n)
{
	struct luw_heapwalk_opts wo = { .live = 1 };
	struct luw_pprof_opts po = { .count_type = "inuse_space",
				     .count_unit = "bytes",
				     .aux_type = "inuse_objects",
				     .aux_unit = "count" };
	struct luw_stacks *stacks = luw_stacks_new();
	enum luw_profile_status st;
	struct luw_heapsnap s;

	if (!stacks) {
		luw_fail(err, n, "out of memory");
		return LUW_PROFILE_FAILED;
	}
	note(lab, q->pid);
	if (luw_heaptake_run(q->pid, &wo, &s, err, n)) {
		luw_heapsnap_free(&s);
		luw_stacks_free(stacks);
		return kill(q->pid, 0) && errno == ESRCH ?
		       LUW_PROFILE_NOTFOUND : LUW_PROFILE_REFUSED;
	}
	if (luw_heapreport_stacks(&s, stacks)) {
		luw_fail(err, n, "the snapshot's paths: %s", strerror(errno));
		st = LUW_PROFILE_FAILED;
	} else {
		st = put_pprof(stacks, &po, lab, out, outlen, err, n);
		snprintf(info, infolen, "a heap of %zu paths",
			 luw_stacks_count(stacks));
	}
	luw_heapsnap_free(&s);
	luw_stacks_free(stacks);
	return st;
}

/* The recording in path, as pprof in *out. */
static enum luw_profile_status to_pprof(const char *path,
					enum luw_profile_kind kind,
					struct labels *lab,
					uint8_t **out, size_t *outlen,
					char *info, size_t infolen,
					char *err, size_t n)
{
	struct luw_report_opts o = { .by_pid = 1,
				     .alloc = kind == LUW_PROFILE_ALLOCS,
				     .offcpu = kind == LUW_PROFILE_OFFCPU ?
					       LUW_REPORT_OFF_ALL : 0 };
	struct luw_report_result res;
	struct luw_pprof_opts po;
	struct luw_stacks *stacks = luw_stacks_new();
	struct luw_file f;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !stacks || luw_file_read_fd(fd, &f)) {
		luw_fail(err, n, "reading the recording: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		luw_stacks_free(stacks);
		return LUW_PROFILE_FAILED;
	}
	close(fd);
	rc = luw_file_check_header(&f, err, n) ? 2 :
	     luw_report_run(&f, &o, stacks, &res, err, n);
	luw_file_close(&f);
	/* A recording cut short is still reported (2): what it holds. */
	if (rc == 1) {
		luw_stacks_free(stacks);
		return LUW_PROFILE_FAILED;
	}
	luw_report_pprof_opts(&o, &res, &po);
	if (put_pprof(stacks, &po, lab, out, outlen, err, n)) {
		luw_stacks_free(stacks);
		return LUW_PROFILE_FAILED;
	}
	luw_stacks_free(stacks);
	snprintf(info, infolen, "%llu records, %llu lost, %.1f s",
		 (unsigned long long)res.records,
		 (unsigned long long)res.lost, res.duration_ns / 1e9);
	return LUW_PROFILE_OK;
}

enum luw_profile_status luw_profile_take(const struct luw_profile_req *q,
					 uint8_t **out, size_t *outlen,
					 char *info, size_t infolen,
					 char *err, size_t n)
{
	struct luw_attach_opts ao = { .sample_rate = q->freq ? q->freq : 99 };
	struct luw_attacher *att[LUW_MAX_TARGETS];
	struct luw_rec_opts o = { 0 };
	struct luw_rec_result res;
	struct take t = { .q = q };
	enum luw_profile_status st = LUW_PROFILE_OK;
	char path[4200], why[1024];
	int fd, tmp, errnum;

	*out = NULL;
	*outlen = 0;
	t.lab.v = calloc(LUW_MAX_TARGETS, sizeof(*t.lab.v));
	if (!t.lab.v) {
		luw_fail(err, n, "out of memory");
		return LUW_PROFILE_FAILED;
	}
	if (gethostname(t.lab.host, sizeof(t.lab.host) - 1))
		t.lab.host[0] = 0;
	if (q->kind == LUW_PROFILE_OFFCPU)
		ao.flags |= LUW_ATTACH_OFFCPU | LUW_ATTACH_NO_EVENTS;
	else if (q->kind == LUW_PROFILE_ALLOCS) {
		ao.flags |= LUW_ATTACH_NO_EVENTS;
		ao.alloc_interval = ALLOC_INTERVAL;
	}
	if (q->pid && kill(q->pid, 0) && errno == ESRCH) {
		luw_fail(err, n, "no process %d", (int)q->pid);
		free(t.lab.v);
		return LUW_PROFILE_NOTFOUND;
	}
	if (q->kind == LUW_PROFILE_HEAP) {
		if (!q->pid) {
			luw_fail(err, n, "a heap profile is of one process: "
				 "pid=PID");
			st = LUW_PROFILE_BADREQ;
		} else {
			st = heap(q, &t.lab, out, outlen, info, infolen, err,
				  n);
		}
		free(t.lab.v);
		return st;
	}
	snprintf(path, sizeof(path), "%s/profile.XXXXXX", q->dir);
	tmp = mkstemp(path);
	if (tmp < 0) {
		luw_fail(err, n, "%s: %s", path, strerror(errno));
		free(t.lab.v);
		return LUW_PROFILE_FAILED;
	}
	close(tmp);
	fd = luw_dev_open(0);
	if (fd < 0) {
		luw_fail(err, n, "%s: %s", LUW_DEVICE, fd == -EPROTO ?
			 "the loaded module writes another record version than"
			 " this build reads" : strerror(-fd));
		unlink(path);
		free(t.lab.v);
		return LUW_PROFILE_FAILED;
	}
	if (q->pid) {
		if (luw_attach_run(fd, q->pid, &ao, &att[0], &errnum, why,
				   sizeof(why))) {
			luw_fail(err, n, "%s", why);
			st = errnum == ESRCH ? LUW_PROFILE_NOTFOUND :
			     errnum ? LUW_PROFILE_FAILED : LUW_PROFILE_REFUSED;
			goto out;
		}
		t.natt = 1;
		/* Ends early when the process exits. */
		o.roots = &q->pid;
		o.nroots = 1;
	} else {
		t.follow = 1;
		t.fw.sel = q->sel;
		t.fw.ao = &ao;
		t.natt = luw_follow_scan(&t.fw, fd, att, 0, LUW_MAX_TARGETS);
		if (!t.natt) {
			luw_fail(err, n, "no LuaJIT process selected");
			st = LUW_PROFILE_NOTFOUND;
			goto out;
		}
	}
	o.path = path;
	o.duration = q->seconds;
	o.freq = (uint32_t)ao.sample_rate;
	o.att = att;
	o.natt = t.natt;
	o.fresh = 1;
	o.offcpu = q->kind == LUW_PROFILE_OFFCPU;
	o.follow = tick;
	o.follow_ctx = &t;
	o.stop = &t.stop;
	tick(&t, fd, att, t.natt);
	if (!t.cancelled && luw_record(fd, &o, &res, why, sizeof(why))) {
		luw_fail(err, n, "recording: %s", why);
		st = LUW_PROFILE_FAILED;
	} else if (t.cancelled) {
		luw_fail(err, n, "the client went away");
		st = LUW_PROFILE_CANCELLED;
	}
out:
	for (unsigned int i = 0; i < t.natt; i++) {
		luw_dev_detach(fd, luw_attach_pid(att[i]));
		luw_attach_free(att[i]);
	}
	luw_follow_free(&t.fw);
	close(fd);
	if (st == LUW_PROFILE_OK)
		st = to_pprof(path, q->kind, &t.lab, out, outlen, info,
			      infolen, err, n);
	unlink(path);
	free(t.lab.v);
	return st;
}
