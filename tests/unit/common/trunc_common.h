/*
 * Shared by the truncation tests: load a fixture, and the set of prefix
 * lengths to cut it at (every length within the first and last 4 KiB,
 * and at least 5,000 more spread evenly over the rest); trunc_main is the
 * whole test around a decoder run.
 */
#ifndef LUW_TEST_TRUNC_COMMON_H
#define LUW_TEST_TRUNC_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "streams/reader.h"

#include "testlib.h"

#define EDGE 4096
#define SPREAD 5000

static uint8_t *load(const char *dir, const char *name, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return luw_test_load(path, len);
}

/* The i-th prefix length (i from 0), or SIZE_MAX past the last. */
static size_t cut_at(size_t i, size_t len)
{
	size_t mid;

	if (len <= 2 * EDGE + SPREAD)
		return i < len ? i : SIZE_MAX;
	if (i < EDGE)
		return i;
	i -= EDGE;
	if (i < SPREAD) {
		mid = len - 2 * EDGE;
		return EDGE + (size_t)((double)mid * (i + 1) / (SPREAD + 1));
	}
	i -= SPREAD;
	return i < EDGE ? len - EDGE + i : SIZE_MAX;
}

/*
 * Decodes len bytes of data: the decoder's status (0, or -1 with r
 * failed), the count of items (samples, events) it reported in *count.
 */
typedef int (*trunc_run_fn)(const uint8_t *data, size_t len, uint64_t *count,
			    struct luw_reader *r);

/*
 * The fixture `name` in dir decodes whole with `want` items; every prefix
 * fails with the reader's end-of-stream error at an offset within the
 * prefix and no more items than the whole; the prefix one byte short
 * keeps them all (the cut is in the epilogue).  `what` names the items.
 * Failures are CHECKs (luw_test_status() gives the verdict).
 */
static void trunc_main(const char *dir, const char *name, uint64_t want,
		       const char *what, trunc_run_fn run)
{
	size_t len, i, cut, tried = 0;
	uint8_t *data = load(dir, name, &len);
	uint64_t all, got;
	struct luw_reader r;
	int rc, bad = 0;

	rc = run(data, len, &all, &r);
	CHECK(!rc && all == want, "%s whole: rc %d, %llu %s (want 0, %llu)",
	      name, rc, (unsigned long long)all, what, (unsigned long long)want);
	if (rc || all != want) {
		free(data);
		return;
	}
	for (i = 0; (cut = cut_at(i, len)) != SIZE_MAX; i++) {
		char msg[256];

		rc = run(data, cut, &got, &r);
		tried++;
		if (rc == -1 && luw_reader_failed(&r) && r.err_eof &&
		    r.err_off <= cut && got <= all)
			continue;
		luw_reader_strerror(&r, msg, sizeof(msg));
		CHECK(0, "%s cut at %zu: rc %d, %llu %s, %s", name, cut, rc,
		      (unsigned long long)got, what, msg);
		if (++bad > 10)
			break;
	}
	/* A cut in the epilogue loses nothing before it. */
	run(data, len - 1, &got, &r);
	CHECK(got == all, "%s cut before the epilogue: %llu %s of %llu", name,
	      (unsigned long long)got, what, (unsigned long long)all);
	CHECK(tried >= 2 * EDGE + SPREAD, "%s: %zu prefixes tried", name, tried);
	printf("%zu prefixes of %zu bytes: %s\n", tried, len,
	       bad ? "FAILED" : "all end with the offset error");
	free(data);
}

#endif
