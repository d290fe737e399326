/*
 * record/attach.c on live processes, without the module: what luaunwind-ctl
 * attach would hand over for Debian's luajit (VM range, layout, G hint),
 * host-only mode, the refusal of a process without LuaJIT, and the
 * table pass over the executable mappings (with a file descriptor that
 * is not the device every upload fails, so every mapping counts as
 * skipped -- once: a second pass has nothing new).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include "record/attach.h"
#include "kmod/ljwalk.h"
#include "testlib.h"

int main(void)
{
	char *lj[] = { "luajit", "-e",
		       "io.stdout:write('ready\\n') io.stdout:flush() "
		       "local x = 0 while true do x = x + 1 end", NULL };
	char *sh[] = { "sh", "-c", "echo ready; exec sleep 60", NULL };
	struct luw_attach req;
	struct luw_attacher *a;
	char err[1024], desc[1024];
	unsigned int skipped = 0;
	pid_t pid, other;
	int fd, r;

	pid = luw_test_spawn(lj, NULL, NULL, 0, NULL);
	CHECK(pid > 0, "cannot start luajit");
	if (pid < 0)
		return luw_test_status("test_attach");
	usleep(200000);

	/* With Lua: everything the module needs. */
	r = luw_attach_open(pid, 1, &a, err, sizeof(err));
	CHECK(r == 0, "luw_attach_open luajit: %s", err);
	if (r == 0) {
		memset(&req, 0, sizeof(req));
		luw_attach_fill(a, &req);
		CHECK(req.pid == pid, "pid");
		CHECK(req.vm_start && req.vm_start < req.interp_end &&
		      req.interp_end <= req.vm_end, "VM range %llx %llx %llx",
		      (unsigned long long)req.vm_start,
		      (unsigned long long)req.interp_end,
		      (unsigned long long)req.vm_end);
		CHECK(req.layout_size == sizeof(struct luw_lj_layout) &&
		      req.layout_ptr, "layout %u", req.layout_size);
		CHECK(req.layout_ptr &&
		      luw_lj_layout_check((const void *)(uintptr_t)req.layout_ptr) == 0,
		      "layout fails its structural check");
		CHECK(req.g_hint && !(req.g_hint & 7), "G hint %llx",
		      (unsigned long long)req.g_hint);
		luw_attach_describe(a, desc, sizeof(desc));
		CHECK(strstr(desc, "luajit") && strstr(desc, "build-id") &&
		      strstr(desc, "GC64"), "describe: %s", desc);

		/* Not the device: every upload fails, every mapping skipped. */
		fd = open("/dev/null", O_RDONLY);
		r = luw_attach_upload(a, fd, &skipped, err, sizeof(err));
		CHECK(r == 0 && skipped >= 2, "first pass: %d uploaded, %u skipped",
		      r, skipped);
		r = luw_attach_upload(a, fd, &skipped, err, sizeof(err));
		CHECK(r == 0 && skipped == 0, "second pass: %d uploaded, %u skipped",
		      r, skipped);
		close(fd);
		luw_attach_free(a);
	}

	/* Host stacks only: no layout, no VM range. */
	r = luw_attach_open(pid, 0, &a, err, sizeof(err));
	CHECK(r == 0, "luw_attach_open --no-lua: %s", err);
	if (r == 0) {
		memset(&req, 0, sizeof(req));
		luw_attach_fill(a, &req);
		CHECK(!req.layout_ptr && !req.layout_size && !req.vm_start &&
		      !req.g_hint, "host-only attach carries Lua data");
		CHECK(luw_attach_layout(a) == NULL, "host-only layout");
		luw_attach_free(a);
	}
	luw_test_stop(pid);

	/* No LuaJIT: refused, saying so. */
	other = luw_test_spawn(sh, NULL, NULL, 0, NULL);
	CHECK(other > 0, "cannot start sleep");
	if (other > 0) {
		r = luw_attach_open(other, 1, &a, err, sizeof(err));
		CHECK(r == -1 && strstr(err, "not a LuaJIT process"),
		      "sleep: r=%d err=%s", r, err);
		luw_test_stop(other);
	}
	if (luw_test_status("test_attach"))
		return 1;
	printf("ok\n");
	return 0;
}
