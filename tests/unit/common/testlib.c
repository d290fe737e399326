/*
 * testlib: the tests' shared helpers.  See testlib.h.
 */
#include "testlib.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "luaunwind.h"
#include "target/layout.h"
#include "target/obj.h"

#define CHILD_SECONDS 120	/* a target never outlives its test */

int luw_test_failures;

void luw_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	luw_test_failures++;
}

int luw_test_status(const char *name)
{
	if (!luw_test_failures)
		return 0;
	fprintf(stderr, "%s: %d failure(s)\n", name, luw_test_failures);
	return 1;
}

uint8_t *luw_test_load(const char *path, size_t *len)
{
	uint8_t *buf;
	long n;
	FILE *f = fopen(path, "rb");

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

int luw_test_sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (n < 0) {
		CHECK(0, "out of memory for a command");
		return -1;
	}
	rc = system(cmd);
	CHECK(rc == 0, "command failed (status %d): %s", rc, cmd);
	free(cmd);
	return rc;
}

int luw_test_tmpdir(const char *name, char *dir, size_t len)
{
	if ((size_t)snprintf(dir, len, "/tmp/luw-%s-XXXXXX", name) >= len ||
	    !mkdtemp(dir)) {
		CHECK(0, "no scratch directory for %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

size_t luw_test_sample(void *out, uint32_t pid, uint8_t vmstate,
		       const uint64_t *host, unsigned int nh,
		       const struct luw_lua_frame *lua, unsigned int nl,
		       const struct luw_splice *sp, unsigned int ns)
{
	struct luw_sample s = { 0 };
	char *p = out;

	s.size = (uint16_t)(sizeof(s) + nh * 8 + nl * sizeof(*lua) +
			    ns * sizeof(*sp));
	s.type = LUW_REC_SAMPLE;
	s.vmstate = vmstate;
	s.nhost = (uint16_t)nh;
	s.nlua = (uint16_t)nl;
	s.nsplice = (uint16_t)ns;
	s.pid = pid;
	s.tid = pid;
	memcpy(p, &s, sizeof(s));
	p += sizeof(s);
	if (nh)
		memcpy(p, host, nh * 8);
	p += nh * 8;
	if (nl)
		memcpy(p, lua, nl * sizeof(*lua));
	p += nl * sizeof(*lua);
	if (ns)
		memcpy(p, sp, ns * sizeof(*sp));
	return s.size;
}

void luw_test_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

pid_t luw_test_spawn(char *const argv[], const char *libpath,
		     const char *const *keys, int nkeys, uint64_t *addrs)
{
	int p[2], got = 0, ready = 0;
	char line[256];
	pid_t pid;
	FILE *f;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		if (libpath)
			setenv("LD_LIBRARY_PATH", libpath, 1);
		alarm(CHILD_SECONDS);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char k[64];
		unsigned long long a;

		if (!strncmp(line, "ready", 5)) {
			ready = 1;
			break;
		}
		if (sscanf(line, "%63s 0x%llx", k, &a) != 2)
			continue;
		for (int i = 0; i < nkeys; i++)
			if (!strcmp(k, keys[i])) {
				addrs[i] = a;
				got++;
			}
	}
	if (f)
		fclose(f);
	else
		close(p[0]);
	if (!ready || got != nkeys) {
		luw_test_stop(pid);
		return -1;
	}
	return pid;
}

uint64_t luw_test_proto_of(pid_t pid, const struct luw_lj_layout *ly,
			   uint64_t fn)
{
	struct luw_obj o;

	luw_obj_init(&o, pid, ly);
	return luw_obj_lua_proto(&o, fn);
}

pid_t luw_test_lua(const char *prog, const char *script,
		   const char *const *keys, int nkeys, struct luw_layout_target *t,
		   uint64_t *pt)
{
	char *argv[] = { (char *)prog, (char *)script, NULL };
	uint64_t fn[64] = { 0 };
	char err[1024];
	int bad = 0;
	pid_t pid;

	if (nkeys > 64) {
		CHECK(0, "%s: %d keys, at most 64", prog, nkeys);
		return -1;
	}
	pid = luw_test_spawn(argv, NULL, keys, nkeys, fn);
	if (pid < 0) {
		CHECK(0, "%s: did not start or print its functions", prog);
		return -1;
	}
	if (luw_layout_attach(pid, t, err, sizeof(err))) {
		CHECK(0, "%s: luw_layout_attach: %s", prog, err);
		luw_test_stop(pid);
		return -1;
	}
	for (int i = 0; i < nkeys; i++) {
		pt[i] = luw_test_proto_of(pid, &t->layout, fn[i]);
		CHECK(pt[i], "%s: proto of %s", prog, keys[i]);
		bad |= !pt[i];
	}
	if (bad) {
		luw_test_stop(pid);
		return -1;
	}
	return pid;
}
