/*
 * serve: `luaunwind-ctl serve`, profiles over HTTP the way Go's
 * net/http/pprof serves them, for the servers that scrape those (Parca,
 * Grafana Alloy's pyroscope.scrape) and for `go tool pprof URL`.  The
 * HTTP is libmicrohttpd's, a thread per connection; each profile is
 * taken whole (record/profile.h) while its request waits.
 *
 *   GET /debug/pprof/                 the endpoints, as text
 *   GET /debug/pprof/profile          CPU (samples, cpu/nanoseconds)
 *   GET /debug/pprof/offcpu           off_cpu/nanoseconds
 *   GET /debug/pprof/allocs           alloc_objects, alloc_space
 *     seconds=N   how long to record (default 30; at most max_seconds)
 *     pid=PID     that process; else exe=PATH and/or comm=NAME select,
 *                 and without either every LuaJIT process is recorded
 *
 * Answers: 200 with a gzipped profile.proto (stacks rooted at
 * "comm-PID"); 400 for a bad parameter; 401 without the token where one
 * is needed; 404 for an unknown path, a pid that does not exist or a
 * selection with no LuaJIT process; 405 for a method but GET; 422 for a
 * process that is not LuaJIT or whose layout is refused; 429 while
 * another profile is being taken (one at a time: the recordings share
 * the module's per-target state); 500 when the device fails.  A client
 * that goes away ends its recording within a second; nothing stays
 * attached.
 *
 * Listening anywhere but loopback needs a bearer token, read from a file:
 * every request must carry "Authorization: Bearer TOKEN" (compared in
 * constant time).
 */
#ifndef LUW_SERVE_SERVE_H
#define LUW_SERVE_SERVE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct luw_serve_opts {
	const char *listen;		/* "ADDR:PORT", IPv4 */
	const char *token_file;		/* NULL: no token */
	double max_seconds;
	uint32_t freq;			/* CPU samples a second */
	const char *dir;		/* for the recordings in progress */
	FILE *log;			/* a line per request; NULL: none */
};

/*
 * Serves until *stop.  0; -1 with a message in err (a bad address, a
 * non-loopback address without a token, an unreadable or empty token
 * file, the port taken).
 */
int luw_serve_run(const struct luw_serve_opts *o, volatile sig_atomic_t *stop,
		  char *err, size_t errlen);

#endif
