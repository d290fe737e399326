/*
 * libFuzzer target: a heap snapshot file (include/luaunwind_heap.h)
 * through the reader and every report luaunwind-report makes of one
 * (--top, the stacks of --folded/--svg/--pprof, --diff against itself).
 *
 * Round-trip property: a file the reader takes whole, written again, reads
 * back to the same snapshot and writes the same bytes (the writer's output
 * is a fixed point); a file it refuses as cut or damaged still reports.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "heap/heapreport.h"
#include "heap/heapsnap.h"

/* s written to a malloc'd buffer. */
static char *written(const struct luw_heapsnap *s, size_t *n)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, n);

	FUZZ_ASSERT(f, "open_memstream");
	FUZZ_ASSERT(!luw_heapsnap_write(s, f), "the writer failed");
	fclose(f);
	return buf;
}

static void reports(const struct luw_heapsnap *s)
{
	struct luw_stacks *st = luw_stacks_new(), *growth = luw_stacks_new();

	FUZZ_ASSERT(st && growth, "out of memory");
	FUZZ_ASSERT(!luw_heapreport_top(s, fuzz_sink(), 5), "--top failed");
	/* Counts that add up past 2^64 are a damaged file's, refused so. */
	FUZZ_ASSERT(!luw_heapreport_stacks(s, st) || errno == EOVERFLOW,
		    "stacks failed");
	FUZZ_ASSERT(!luw_heapreport_diff(s, s, growth, fuzz_sink(), 5) ||
		    errno == EOVERFLOW, "--diff failed");
	FUZZ_ASSERT(luw_stacks_count(growth) == 0, "a snapshot grew from itself");
	luw_stacks_free(st);
	luw_stacks_free(growth);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct luw_heapsnap s, t;
	char err[256], *a, *b;
	size_t na, nb;
	int rc = luw_heapsnap_read(&s, data, size, err, sizeof(err));

	if (rc >= 0)
		reports(&s);
	if (rc == 0) {
		a = written(&s, &na);
		FUZZ_ASSERT(luw_heapsnap_read(&t, (const uint8_t *)a, na, err,
					      sizeof(err)) == 0,
			    "its own output does not read back: %s", err);
		FUZZ_ASSERT(t.nnodes == s.nnodes && t.nlabels == s.nlabels &&
			    t.ngroups == s.ngroups && t.nunis == s.nunis &&
			    t.nbig == s.nbig, "read back differently");
		b = written(&t, &nb);
		FUZZ_ASSERT(na == nb && !memcmp(a, b, na),
			    "the writer's output is no fixed point");
		free(a);
		free(b);
		luw_heapsnap_free(&t);
	}
	luw_heapsnap_free(&s);
	return 0;
}
