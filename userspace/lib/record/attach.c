/*
 * attach: find LuaJIT, attach, keep unwind tables uploaded.  See attach.h.
 */
#include "record/attach.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "util/grow.h"
#include "target/allocf.h"
#include "target/layout.h"
#include "record/dev.h"
#include "proc/maps.h"
#include "proc/vdso.h"

/* A mapping handled by luw_attach_upload (uploaded, or not uploadable). */
struct att_seen {
	uint64_t start, end, offset, inode;
};

struct luw_attacher {
	pid_t pid;
	struct luw_layout_target *lj;		/* NULL: host stacks only */
	struct att_seen *seen;
	size_t nseen, capseen;
	struct luw_cfi *vdso;		/* built from the target's image */
	int full;			/* the module's table limit was hit */
	uint64_t allocf[LUW_MAX_ALLOCF];	/* allocators probed */
	int nallocf;
};

int luw_attach_open(pid_t pid, int want_lua, struct luw_attacher **out, char *err,
		 size_t errlen)
{
	struct luw_attacher *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	a->pid = pid;
	if (want_lua) {
		a->lj = calloc(1, sizeof(*a->lj));
		if (!a->lj) {
			free(a);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (luw_layout_attach(pid, a->lj, err, errlen)) {
			free(a->lj);
			free(a);
			return -1;
		}
	}
	*out = a;
	return 0;
}

int luw_attach_mode(struct luw_attach_opts *o, const char *name)
{
	if (!strcmp(name, "callchain")) {
		o->flags &= ~LUW_ATTACH_VMSTATE_ONLY;
		o->max_host_frames = 0;
		o->max_lua_frames = 0;
	} else if (!strcmp(name, "leaf")) {
		o->flags &= ~LUW_ATTACH_VMSTATE_ONLY;
		o->max_host_frames = 1;
		o->max_lua_frames = 1;
	} else if (!strcmp(name, "default")) {
		o->flags |= LUW_ATTACH_VMSTATE_ONLY;
	} else {
		return -1;
	}
	return 0;
}

void luw_attach_fill(const struct luw_attacher *a, struct luw_attach *req)
{
	req->pid = a->pid;
	if (!a->lj)
		return;
	req->vm_start = a->lj->vm_start;
	req->vm_end = a->lj->vm_end;
	req->interp_end = a->lj->interp_end;
	req->layout_ptr = (uint64_t)(uintptr_t)&a->lj->layout;
	req->layout_size = sizeof(a->lj->layout);
	/* One VM in the process: its G serves traces of non-GC64 builds. */
	req->g_hint = a->lj->nstates == 1 ? a->lj->states[0] : 0;
}

struct luw_lj_layout *luw_attach_layout(struct luw_attacher *a)
{
	return a->lj ? &a->lj->layout : NULL;
}

const struct luw_layout_target *luw_attach_target(const struct luw_attacher *a)
{
	return a->lj;
}

pid_t luw_attach_pid(const struct luw_attacher *a)
{
	return a->pid;
}

void luw_attach_describe(const struct luw_attacher *a, char *buf, size_t len)
{
	const struct luw_layout_target *t = a->lj;

	if (!t) {
		snprintf(buf, len, "pid %d: host stacks only", (int)a->pid);
		return;
	}
	snprintf(buf, len,
		 "pid %d: %s (%s, build-id %s), layout %s (%s), "
		 "vm 0x%" PRIx64 "-0x%" PRIx64 " interp-end 0x%" PRIx64
		 ", %d global_State",
		 (int)a->pid, t->path, t->kind, t->build_id[0] ? t->build_id : "none",
		 t->layout_name, t->layout.flags & LUW_LJ_F_GC64 ? "GC64" : "32-bit refs",
		 t->vm_start, t->vm_end, t->interp_end, t->nstates);
	for (int i = 0; i < a->nallocf; i++) {
		size_t k = strlen(buf);

		snprintf(buf + k, len - k, "%s0x%" PRIx64,
			 i ? " " : ", allocators probed ", a->allocf[i]);
	}
}

static int seen_has(const struct luw_attacher *a, const struct luw_map *mp)
{
	for (size_t i = 0; i < a->nseen; i++) {
		const struct att_seen *s = &a->seen[i];

		if (s->start == mp->start && s->end == mp->end &&
		    s->offset == mp->offset && s->inode == mp->inode)
			return 1;
	}
	return 0;
}

static int seen_add(struct luw_attacher *a, const struct luw_map *mp)
{
	if (luw_grow((void **)&a->seen, &a->capseen, a->nseen + 1,
		     sizeof(*a->seen)))
		return -1;
	a->seen[a->nseen++] = (struct att_seen){ mp->start, mp->end,
						  mp->offset, mp->inode };
	return 0;
}

/* The [vdso]'s table, built once from its image. */
static struct luw_cfi *vdso_table(struct luw_attacher *a, const struct luw_map *mp)
{
	struct luw_vdso v;
	char err[256];

	if (a->vdso || luw_vdso_open(a->pid, mp, &v))
		return a->vdso;
	a->vdso = luw_cfi_build_elf(v.elf, "[vdso]", err, sizeof(err));
	luw_vdso_close(&v);
	return a->vdso;
}

int luw_attach_upload(struct luw_attacher *a, int fd, unsigned int *skipped, char *err,
		   size_t errlen)
{
	struct luw_maps maps;
	unsigned int nskip = 0;
	int nup = 0, rc = 0;

	if (skipped)
		*skipped = 0;
	if (luw_maps_read(a->pid, &maps)) {
		snprintf(err, errlen, "pid %d: /proc/%d/maps: %s", (int)a->pid,
			 (int)a->pid, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < maps.n && !a->full; i++) {
		const struct luw_map *mp = &maps.v[i];
		struct luw_cfi *tab = NULL;
		char pbuf[4200], cerr[512];
		int r;

		if (!(mp->prot & LUW_MAP_X) || seen_has(a, mp))
			continue;
		if (luw_vdso_is(mp)) {
			tab = vdso_table(a, mp);
		} else if (luw_maps_is_file(mp)) {
			if (!luw_maps_file(a->pid, mp, pbuf, sizeof(pbuf)))
				tab = luw_cfi_get(pbuf, cerr, sizeof(cerr));
		} else {
			/* Anonymous code (JIT traces): nothing to describe. */
			continue;
		}
		if (seen_add(a, mp)) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		if (!tab) {
			nskip++;
			continue;
		}
		r = luw_dev_upload_table(fd, a->pid, mp->start, mp->end,
					mp->offset, tab->hdr, tab->size);
		if (r == -ENOSPC) {
			/* LUW_MAX_MAPPINGS: the rest walk by frame pointers. */
			a->full = 1;
			nskip++;
			break;
		}
		if (r == -ESRCH) {
			snprintf(err, errlen, "pid %d is not attached (exited?)",
				 (int)a->pid);
			rc = -1;
			break;
		}
		if (r) {
			nskip++;
			continue;
		}
		nup++;
	}
	luw_maps_free(&maps);
	if (skipped)
		*skipped = nskip;
	return rc ? rc : nup;
}

/*
 * The admin's kernel.perf_event_max_sample_rate, as perf record holds a
 * frequency to it.  The module cannot read it (not exported to modules);
 * perf throttles any event above it, so a rate over it would give fewer
 * samples than asked for, silently.  A cpu-clock period is held to its
 * inverse.  0, or -1 with a message.
 */
static int att_rate_check(const struct luw_attach_opts *o, char *err,
			  size_t errlen)
{
	const char *path = "/proc/sys/kernel/perf_event_max_sample_rate";
	uint64_t rate = o->sample_rate ? o->sample_rate : 999;
	unsigned long max;
	FILE *f;
	int n;

	if ((o->flags & LUW_ATTACH_PERIOD) && o->event == LUW_EVENT_CYCLES)
		return 0;	/* cycles per sample: no time rate */
	f = fopen(path, "r");
	if (!f)
		return 0;	/* no /proc: the kernel's throttle alone */
	n = fscanf(f, "%lu", &max);
	fclose(f);
	if (n != 1 || !max)
		return 0;
	if (o->flags & LUW_ATTACH_PERIOD) {
		if (rate * max >= 1000000000ULL || rate >= 1000000000ULL)
			return 0;
		snprintf(err, errlen,
			 "a period of %" PRIu64 " ns is more than %lu samples a "
			 "second, the limit of %s", rate, max, path);
		return -1;
	}
	if (rate <= max)
		return 0;
	snprintf(err, errlen, "%" PRIu64 " Hz is above %s (%lu Hz)", rate,
		 path, max);
	return -1;
}

/* Probes every distinct allocator of a's universes: 0, or -1 with err. */
static int att_alloc(struct luw_attacher *a, int fd, uint64_t interval,
		     int *errnum, char *err, size_t errlen)
{
	uint64_t fns[LUW_MAX_ALLOCF];
	int n, r;

	if (!a->lj) {
		snprintf(err, errlen, "allocation sampling needs the Lua side");
		return -1;
	}
	n = luw_allocf_find(a->lj, fns, LUW_MAX_ALLOCF, err, errlen);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		r = luw_dev_alloc(fd, a->pid, fns[i], interval);
		if (r) {
			*errnum = -r;
			snprintf(err, errlen, "probe the allocator at 0x%llx of "
				 "pid %d: %s", (unsigned long long)fns[i],
				 (int)a->pid, strerror(-r));
			return -1;
		}
		a->allocf[a->nallocf++] = fns[i];
	}
	return 0;
}

int luw_attach_run(int fd, pid_t pid, const struct luw_attach_opts *o,
		   struct luw_attacher **out, int *errnum, char *err, size_t errlen)
{
	struct luw_attach req = { 0 };
	struct luw_attacher *a;
	int r;

	*errnum = 0;
	*out = NULL;
	if (att_rate_check(o, err, errlen))
		return -1;
	if (luw_attach_open(pid, !o->no_lua, &a, err, errlen))
		return -1;
	luw_attach_fill(a, &req);
	req.flags = o->flags | LUW_ATTACH_STOPPED;
	req.event = o->event;
	req.sample_rate = o->sample_rate ? o->sample_rate : 999;
	req.max_host_frames = o->max_host_frames;
	req.max_lua_frames = o->max_lua_frames;
	r = luw_dev_attach(fd, &req);
	if (r == -EBUSY) {
		/* The module's EBUSY: this session has it (luaunwind.h). */
		*errnum = EBUSY;
		snprintf(err, errlen, "pid %d is attached already, in this "
			 "session (luaunwind-ctl detach %d ends it)", (int)pid,
			 (int)pid);
		luw_attach_free(a);
		return -1;
	}
	if (r) {
		*errnum = -r;
		snprintf(err, errlen, "attach pid %d: %s", (int)pid, strerror(-r));
		luw_attach_free(a);
		return -1;
	}
	if (!o->no_tables && luw_attach_upload(a, fd, NULL, err, errlen) < 0) {
		luw_dev_detach(fd, pid);
		luw_attach_free(a);
		return -1;
	}
	if (o->alloc_interval && att_alloc(a, fd, o->alloc_interval, errnum,
					   err, errlen)) {
		luw_dev_detach(fd, pid);
		luw_attach_free(a);
		return -1;
	}
	if (!(o->flags & LUW_ATTACH_STOPPED)) {
		r = luw_dev_start(fd, pid);
		if (r) {
			*errnum = -r;
			snprintf(err, errlen, "start pid %d: %s", (int)pid,
				 strerror(-r));
			luw_dev_detach(fd, pid);
			luw_attach_free(a);
			return -1;
		}
	}
	*out = a;
	return 0;
}

void luw_attach_free(struct luw_attacher *a)
{
	if (!a)
		return;
	luw_cfi_free(a->vdso);
	free(a->seen);
	free(a->lj);
	free(a);
}
