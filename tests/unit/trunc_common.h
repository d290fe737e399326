/*
 * Shared by the truncation tests: load a fixture, and the set of prefix
 * lengths to cut it at (every length within the first and last 4 KiB,
 * and at least 5,000 more spread evenly over the rest).
 */
#ifndef LUW_TEST_TRUNC_COMMON_H
#define LUW_TEST_TRUNC_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
