/*
 * Hand an open /dev/luaunwind to another process over SCM_RIGHTS, so that
 * t_perm can run opener and receiver under different credentials:
 *   passfd recv SOCK PID     listens on the unix socket SOCK, takes one
 *                            descriptor and attaches PID through it
 *   passfd recv SOCK join    the same, but joins the caller's kept
 *                            session (LUW_JOIN_CREATE) instead
 *   passfd send SOCK         opens the device and sends it to SOCK
 * recv prints "ok" or the errno name of the ioctl; exit 0 / 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "record/dev.h"

static int sock_at(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -1;
	strcpy(sa->sun_path, path);
	return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

/* One byte of payload and room for one descriptor. */
static void msg_init(struct msghdr *m, struct iovec *iov, char *byte,
		     char *cbuf, size_t clen)
{
	memset(m, 0, sizeof(*m));
	iov->iov_base = byte;
	iov->iov_len = 1;
	m->msg_iov = iov;
	m->msg_iovlen = 1;
	m->msg_control = cbuf;
	m->msg_controllen = clen;
}

static int do_send(const char *path)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct sockaddr_un sa;
	struct msghdr m;
	struct cmsghdr *c;
	struct iovec iov;
	char byte = 'f';
	int s, fd;

	fd = luw_dev_open(0);
	if (fd < 0) {
		printf("open: %s\n", strerrorname_np(-fd));
		return 1;
	}
	s = sock_at(path, &sa);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("connect: %s\n", strerrorname_np(errno));
		return 1;
	}
	msg_init(&m, &iov, &byte, cbuf, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	if (sendmsg(s, &m, 0) != 1) {
		printf("sendmsg: %s\n", strerrorname_np(errno));
		return 1;
	}
	return 0;
}

static int do_recv(const char *path, const char *what)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct luw_attach a = { .sample_rate = 99 };
	struct sockaddr_un sa;
	struct msghdr m;
	struct cmsghdr *c;
	struct iovec iov;
	int s, conn, fd, r;
	char byte;

	s = sock_at(path, &sa);
	unlink(path);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(path, 0777) || listen(s, 1)) {
		printf("listen: %s\n", strerrorname_np(errno));
		return 1;
	}
	conn = accept(s, NULL, NULL);
	if (conn < 0) {
		printf("accept: %s\n", strerrorname_np(errno));
		return 1;
	}
	msg_init(&m, &iov, &byte, cbuf, sizeof(cbuf));
	if (recvmsg(conn, &m, 0) != 1 || !(c = CMSG_FIRSTHDR(&m)) ||
	    c->cmsg_type != SCM_RIGHTS) {
		printf("recvmsg: no descriptor\n");
		return 1;
	}
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	if (!strcmp(what, "join")) {
		r = luw_dev_join(fd, -1, LUW_JOIN_CREATE);
	} else {
		a.pid = atoi(what);
		r = luw_dev_attach(fd, &a);
	}
	printf("%s\n", r ? strerrorname_np(-r) : "ok");
	return r ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "send"))
		return do_send(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return do_recv(argv[2], argv[3]);
	fprintf(stderr, "usage: passfd recv SOCK PID|join | send SOCK\n");
	return 2;
}
