/*
 * luw-synth: write a large synthetic sysprof or memprof stream made of a
 * fixture's workload (see gen.h).  Test and benchmark tool only.
 *
 *   luw-synth [--compact] FIXTURE SIZE OUT|- [SEED]
 *   luw-synth --heap LIVE[,NFUNC] MEMPROF_FIXTURE SIZE OUT|- [SEED]
 *
 * SIZE in bytes, with an optional K, M or G suffix (powers of 1024).
 * --compact keeps only the symbols the stream uses (LUW_GEN_COMPACT).
 * --heap writes a service-shaped memprof stream (luw_gen_write_heap():
 * a live heap growing towards LIVE chunks, NFUNC allocating Lua
 * functions, default 2000) and prints what it wrote on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "gen.h"

#define PROG "luw-synth"

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	if (*end || !v)
		return -1;
	*out = v;
	return 0;
}

static int parse_seed(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf = NULL;

	if (!f)
		return NULL;
	for (;;) {
		char *q = realloc(buf, cap);

		if (!q) {
			free(buf);
			fclose(f);
			errno = ENOMEM;
			return NULL;
		}
		buf = q;
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	uint64_t size, seed = 1, live = 0, nfunc = 2000;
	unsigned int flags = 0;
	struct luw_gen_heap_stats st;
	struct luw_gen *g;
	struct luw_enc e;
	char err[256];
	size_t len;
	void *data;
	FILE *out;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "--compact")) {
		flags |= LUW_GEN_COMPACT;
		argv++;
		argc--;
	} else if (argc > 2 && !strcmp(argv[1], "--heap")) {
		char *end;

		errno = 0;
		live = strtoull(argv[2], &end, 10);
		if (*end == ',')
			nfunc = strtoull(end + 1, &end, 10);
		if (errno || !live || !nfunc || nfunc > 1000000 || *end) {
			fprintf(stderr, PROG ": --heap LIVE[,NFUNC]: bad %s\n",
				argv[2]);
			return 1;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc < 4 || argc > 5 || parse_size(argv[2], &size) ||
	    (argc == 5 && parse_seed(argv[4], &seed))) {
		fprintf(stderr, "usage: " PROG
			" [--compact] FIXTURE SIZE[K|M|G] OUT|- [SEED]\n");
		return 1;
	}
	data = slurp(argv[1], &len);
	if (!data) {
		fprintf(stderr, PROG ": %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	g = luw_gen_load(data, len, err, sizeof(err));
	if (!g) {
		fprintf(stderr, PROG ": %s: %s\n", argv[1], err);
		free(data);
		return 1;
	}
	out = strcmp(argv[3], "-") ? fopen(argv[3], "wb") : stdout;
	if (!out) {
		fprintf(stderr, PROG ": %s: %s\n", argv[3], strerror(errno));
		luw_gen_free(g);
		free(data);
		return 1;
	}
	luw_enc_init_file(&e, out);
	if (live && luw_gen_kind(g) != LUW_GEN_MEMPROF) {
		fprintf(stderr, PROG ": --heap needs a memprof fixture\n");
		rc = -1;
		errno = EINVAL;
	} else if (live) {
		struct luw_gen_heap hc = { size, live, seed,
					   (unsigned int)nfunc };

		rc = luw_gen_write_heap(g, &e, &hc, &st);
		if (!rc)
			fprintf(stderr, PROG ": allocs %llu reallocs %llu frees "
				"%llu symtab %llu live_end %llu live_peak %llu\n",
				(unsigned long long)st.allocs,
				(unsigned long long)st.reallocs,
				(unsigned long long)st.frees,
				(unsigned long long)st.symtab_events,
				(unsigned long long)st.live_end,
				(unsigned long long)st.live_peak);
	} else {
		rc = luw_gen_write(g, &e, size, seed, flags, NULL, NULL, NULL);
	}
	if (rc || luw_enc_finish(&e) || (out != stdout && fclose(out))) {
		fprintf(stderr, PROG ": %s: %s\n", argv[3], strerror(errno));
		rc = 1;
	}
	luw_enc_free(&e);
	luw_gen_free(g);
	free(data);
	return rc ? 1 : 0;
}
