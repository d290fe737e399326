/*
 * grow: the one way an array here grows.  Every growable thing (the
 * byte buffers of strbuf.h and record/file.h, the tables of the stream
 * decoders, the stack aggregator, the report queues) makes room with
 * luw_grow: capacity doubles, so n appends cost O(n) copies, and the
 * size computation is checked against overflow.
 */
#ifndef LUW_UTIL_GROW_H
#define LUW_UTIL_GROW_H

#include <stddef.h>

/*
 * Room for `need` elements of `elem` bytes in *arr, whose capacity is
 * *cap elements: 0 (*arr and *cap updated when it had to grow), or -1
 * with errno ENOMEM and *arr, *cap untouched.
 */
int luw_grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif
