#include "serve/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/profile.h"
#include "util/fail.h"

#define DEFAULT_SECONDS	30
#define TOKEN_MAX	4096

struct server {
	const struct luw_serve_opts *o;
	char token[TOKEN_MAX];		/* "" : none needed */
	pthread_mutex_t busy;		/* held while a profile is taken */
};

static const char index_text[] =
	"luaunwind: LuaJIT profiles, as Go's net/http/pprof serves them\n"
	"\n"
	"/debug/pprof/profile?seconds=N  CPU (samples, cpu/nanoseconds)\n"
	"/debug/pprof/offcpu?seconds=N   off_cpu/nanoseconds\n"
	"/debug/pprof/allocs?seconds=N   alloc_objects, alloc_space\n"
	"/debug/pprof/heap?pid=PID       inuse_objects, inuse_space (a heap\n"
	"                                snapshot, walked live)\n"
	"  and pid=PID, or exe=PATH and/or comm=NAME: the processes "
	"(default: every LuaJIT process)\n";

/* Equal in time that depends on the lengths only, not on where they
 * differ. */
static int same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
	return !d;
}

static int authorized(const struct server *s, struct MHD_Connection *c)
{
	static const char bearer[] = "Bearer ";
	const char *h;

	if (!s->token[0])
		return 1;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					MHD_HTTP_HEADER_AUTHORIZATION);
	return h && !strncmp(h, bearer, sizeof(bearer) - 1) &&
	       same_secret(h + sizeof(bearer) - 1, s->token);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     void *body, size_t len, enum MHD_ResponseMemoryMode
			     mode, const char *type, const char *retry)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (retry)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry);
	if (code == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static void logline(const struct server *s, struct MHD_Connection *c,
		    const char *url, unsigned int code, const char *what)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char addr[INET6_ADDRSTRLEN] = "?";

	if (!s->o->log)
		return;
	if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET,
			  &((const struct sockaddr_in *)ci->client_addr)->sin_addr,
			  addr, sizeof(addr));
	fprintf(s->o->log, "luaunwind-ctl serve: %s %s: %u %s\n", addr, url,
		code, what);
	fflush(s->o->log);
}

/* A text answer, logged. */
static enum MHD_Result text(const struct server *s, struct MHD_Connection *c,
			    const char *url, unsigned int code, const char *msg,
			    const char *retry)
{
	size_t len = strlen(msg);
	char *body = malloc(len + 2);

	logline(s, c, url, code, msg);
	if (!body)
		return MHD_NO;
	memcpy(body, msg, len);
	body[len] = '\n';
	body[len + 1] = 0;
	return reply(c, code, body, len + 1, MHD_RESPMEM_MUST_FREE,
		     "text/plain; charset=utf-8", retry);
}

/* The client of c gone (its end of the socket closed). */
static int gone(void *ctx)
{
	struct MHD_Connection *c = ctx;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;

	if (!ci)
		return 0;
	p.fd = ci->connect_fd;
	p.events = POLLRDHUP;
	p.revents = 0;
	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* A decimal in [1, max] from v: 0, or -1. */
static int number(const char *v, long long max, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 10);
	return errno || end == v || *end || *out < 1 || *out > max ? -1 : 0;
}

static enum MHD_Result profile(struct server *s, struct MHD_Connection *c,
			       const char *url, enum luw_profile_kind kind)
{
	const char *sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "seconds");
	const char *pid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						      "pid");
	struct luw_profile_req q = {
		.kind = kind, .seconds = DEFAULT_SECONDS, .freq = s->o->freq,
		.dir = s->o->dir, .cancelled = gone, .ctx = c,
	};
	static const unsigned int codes[] = {
		[LUW_PROFILE_OK] = MHD_HTTP_OK,
		[LUW_PROFILE_NOTFOUND] = MHD_HTTP_NOT_FOUND,
		[LUW_PROFILE_REFUSED] = MHD_HTTP_UNPROCESSABLE_CONTENT,
		[LUW_PROFILE_CANCELLED] = MHD_HTTP_REQUEST_TIMEOUT,
		[LUW_PROFILE_FAILED] = MHD_HTTP_INTERNAL_SERVER_ERROR,
		[LUW_PROFILE_BADREQ] = MHD_HTTP_BAD_REQUEST,
	};
	enum luw_profile_status st;
	char err[1024], info[256], retry[32];
	long long v;
	uint8_t *out;
	size_t len;

	q.sel.exe = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "exe");
	q.sel.comm = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						 "comm");
	if (sec) {
		if (number(sec, (long long)s->o->max_seconds, &v)) {
			snprintf(err, sizeof(err), "seconds=%s: a whole number "
				 "of seconds from 1 to %.0f", sec,
				 s->o->max_seconds);
			return text(s, c, url, MHD_HTTP_BAD_REQUEST, err, NULL);
		}
		q.seconds = (double)v;
	} else if (q.seconds > s->o->max_seconds) {
		q.seconds = s->o->max_seconds;
	}
	if (pid) {
		if (number(pid, INT_MAX, &v))
			return text(s, c, url, MHD_HTTP_BAD_REQUEST,
				    "pid: a process id", NULL);
		if (q.sel.exe || q.sel.comm)
			return text(s, c, url, MHD_HTTP_BAD_REQUEST,
				    "pid= names one process: not with exe= "
				    "or comm=", NULL);
		q.pid = (pid_t)v;
	}
	if ((q.sel.exe && !q.sel.exe[0]) || (q.sel.comm && !q.sel.comm[0]))
		return text(s, c, url, MHD_HTTP_BAD_REQUEST,
			    "exe= and comm= take a value", NULL);
	if (pthread_mutex_trylock(&s->busy)) {
		snprintf(retry, sizeof(retry), "%.0f", s->o->max_seconds);
		return text(s, c, url, MHD_HTTP_TOO_MANY_REQUESTS,
			    "a profile is being taken: one at a time", retry);
	}
	st = luw_profile_take(&q, &out, &len, info, sizeof(info), err,
			      sizeof(err));
	pthread_mutex_unlock(&s->busy);
	if (st != LUW_PROFILE_OK)
		return text(s, c, url, codes[st], err, NULL);
	logline(s, c, url, MHD_HTTP_OK, info);
	return reply(c, MHD_HTTP_OK, out, len, MHD_RESPMEM_MUST_FREE,
		     "application/octet-stream", NULL);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **req)
{
	static const struct {
		const char *path;
		enum luw_profile_kind kind;
	} kinds[] = {
		{ "/debug/pprof/profile", LUW_PROFILE_CPU },
		{ "/debug/pprof/offcpu", LUW_PROFILE_OFFCPU },
		{ "/debug/pprof/allocs", LUW_PROFILE_ALLOCS },
		{ "/debug/pprof/heap", LUW_PROFILE_HEAP },
	};
	struct server *s = cls;

	(void)version;
	(void)upload;
	(void)req;
	if (*upload_size)
		return text(s, c, url, MHD_HTTP_BAD_REQUEST, "no body", NULL);
	if (!authorized(s, c))
		return text(s, c, url, MHD_HTTP_UNAUTHORIZED,
			    "a bearer token is needed", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return text(s, c, url, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only",
			    NULL);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof")) {
		logline(s, c, url, MHD_HTTP_OK, "index");
		return reply(c, MHD_HTTP_OK, (void *)index_text,
			     sizeof(index_text) - 1, MHD_RESPMEM_PERSISTENT,
			     "text/plain; charset=utf-8", NULL);
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(url, kinds[i].path))
			return profile(s, c, url, kinds[i].kind);
	return text(s, c, url, MHD_HTTP_NOT_FOUND,
		    "no such endpoint: see /debug/pprof/", NULL);
}

/* "ADDR:PORT" into sa; whether ADDR is loopback in *lo. */
static int parse_listen(const char *spec, struct sockaddr_in *sa, int *lo,
			char *err, size_t n)
{
	const char *colon = strrchr(spec, ':');
	char host[64];
	long long port;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host) ||
	    number(colon + 1, 65535, &port))
		return luw_fail(err, n, "--listen %s: ADDR:PORT, an IPv4 "
				"address and a port", spec);
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return luw_fail(err, n, "--listen %s: %s is not an IPv4 "
				"address", spec, host);
	*lo = (ntohl(sa->sin_addr.s_addr) >> 24) == 127;
	return 0;
}

static int read_token(const char *path, char *tok, size_t size, char *err,
		      size_t n)
{
	FILE *f = fopen(path, "r");
	size_t len;

	if (!f)
		return luw_fail(err, n, "token file %s: %s", path,
				strerror(errno));
	len = fread(tok, 1, size - 1, f);
	fclose(f);
	tok[len] = 0;
	while (len && (tok[len - 1] == '\n' || tok[len - 1] == '\r' ||
		       tok[len - 1] == ' '))
		tok[--len] = 0;
	if (!len)
		return luw_fail(err, n, "token file %s is empty", path);
	if (strpbrk(tok, "\n\r"))
		return luw_fail(err, n, "token file %s: one line, the token",
				path);
	return 0;
}

int luw_serve_run(const struct luw_serve_opts *o, volatile sig_atomic_t *stop,
		  char *err, size_t errlen)
{
	struct server s = { .o = o };
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	int lo = 0;

	if (parse_listen(o->listen, &sa, &lo, err, errlen))
		return -1;
	if (o->token_file &&
	    read_token(o->token_file, s.token, sizeof(s.token), err, errlen))
		return -1;
	if (!lo && !s.token[0])
		return luw_fail(err, errlen, "--listen %s is not loopback: "
				"anyone who reaches it could profile this "
				"machine; give --token-file", o->listen);
	pthread_mutex_init(&s.busy, NULL);
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, &s,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
			     MHD_OPTION_CONNECTION_LIMIT, 32U,
			     MHD_OPTION_END);
	if (!d) {
		pthread_mutex_destroy(&s.busy);
		return luw_fail(err, errlen, "--listen %s: cannot listen "
				"there (in use, or not an address of this "
				"machine)", o->listen);
	}
	if (o->log) {
		fprintf(o->log, "luaunwind-ctl serve: listening on http://%s/"
			"debug/pprof/%s\n", o->listen,
			s.token[0] ? " (bearer token required)" : "");
		fflush(o->log);
	}
	while (!*stop)
		pause();
	MHD_stop_daemon(d);
	pthread_mutex_destroy(&s.busy);
	explicit_bzero(s.token, sizeof(s.token));
	return 0;
}
