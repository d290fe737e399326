/*
 * hash: FNV-1a, the byte hash used wherever a string keys a table
 * (chunk-name aliases in symtab.c, call chains in sysprof_report.c,
 * names in memprof_report.c) or picks a stable colour (flamegraph.c: the
 * 32-bit variant, so a frame keeps the colour it always had).  Not for
 * anything adversarial.
 */
#ifndef LUW_UTIL_HASH_H
#define LUW_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t luw_fnv1a64(const void *data, size_t n)
{
	const unsigned char *s = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ULL;
	return h;
}

static inline uint32_t luw_fnv1a32(const void *data, size_t n)
{
	const unsigned char *s = data;
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ *s++) * 16777619u;
	return h;
}

#endif
