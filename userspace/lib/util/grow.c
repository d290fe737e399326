/*
 * grow: doubling arrays.  See grow.h.
 */
#include "util/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int luw_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2) {
			errno = ENOMEM;
			return -1;
		}
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem) {
		errno = ENOMEM;
		return -1;
	}
	p = realloc(*arr, ncap * elem);
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	*arr = p;
	*cap = ncap;
	return 0;
}
