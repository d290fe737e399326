/*
 * Aggregated call stacks: the common currency of every output.
 *
 * A decoder adds one stack per sample (frames root first, as strings);
 * identical stacks are merged and counted.  Frame strings are interned, so
 * memory grows with the number of distinct frames and stacks, never with
 * the number of samples.  Outputs (folded text, SVG flame graph, top-N,
 * pprof) read the aggregate back.
 */
#ifndef LUW_OUTPUT_STACKS_H
#define LUW_OUTPUT_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct luw_stacks;

struct luw_stacks *luw_stacks_new(void);
void luw_stacks_free(struct luw_stacks *s);

/* Intern a frame name; the id stays valid for the life of s. -1 on ENOMEM. */
int32_t luw_stacks_intern(struct luw_stacks *s, const char *name, size_t len);
const char *luw_stacks_name(const struct luw_stacks *s, int32_t id);
/* Length of name id (names may hold any byte but NUL). */
size_t luw_stacks_name_len(const struct luw_stacks *s, int32_t id);
/* Number of interned names: ids are 0 .. luw_stacks_nnames() - 1. */
size_t luw_stacks_nnames(const struct luw_stacks *s);

/*
 * Add count samples of the stack frames[0..n) (root first).  0 or -1:
 * errno EINVAL for n == 0 or an id that was never interned, EOVERFLOW when
 * a count would wrap, ENOMEM.  Adding 0 samples changes nothing.
 */
int luw_stacks_add(struct luw_stacks *s, const int32_t *frames, size_t n,
		   uint64_t count);

/*
 * luw_stacks_add with a second value summed beside the count (a heap's
 * objects beside its bytes), for the writers that show two values.  A
 * stack whose count is 0 is kept when aux is not.
 */
int luw_stacks_add2(struct luw_stacks *s, const int32_t *frames, size_t n,
		    uint64_t count, uint64_t aux);

/* Number of distinct stacks and the total of their counts. */
size_t luw_stacks_count(const struct luw_stacks *s);
uint64_t luw_stacks_total(const struct luw_stacks *s);

/*
 * Visit every distinct stack once, in bytewise order of its folded text
 * ("a;b;c"), which is the order flamegraph.pl and `LC_ALL=C sort` give.
 * Stops early and returns fn's value when fn returns non-zero.
 */
typedef int (*luw_stacks_fn)(void *ctx, const int32_t *frames, size_t n,
			     uint64_t count);
int luw_stacks_each(const struct luw_stacks *s, luw_stacks_fn fn, void *ctx);
/* The same with the second value (fn2 used when not NULL). */
typedef int (*luw_stacks_fn2)(void *ctx, const int32_t *frames, size_t n,
			      uint64_t count, uint64_t aux);
int luw_stacks_each2(const struct luw_stacks *s, luw_stacks_fn fn,
		     luw_stacks_fn2 fn2, void *ctx);

/* flamegraph.pl input: "root;...;leaf count\n" per stack, sorted. */
int luw_stacks_write_folded(const struct luw_stacks *s, FILE *out);

/*
 * A text summary for people: the n heaviest merged stacks, then the n
 * frames with the most self samples (the stack's leaf) with their total
 * samples (stacks passing through the frame, a recursive frame counted
 * once per stack).  Ties are broken by folded text / name bytes.  unit
 * names what the counts count ("bytes"); NULL: "samples".
 */
int luw_stacks_write_top(const struct luw_stacks *s, FILE *out, size_t n,
			 const char *unit);

/*
 * Parse folded text back ("frames count" per line, the count after the
 * last space or tab) into s: lets the SVG writer and tests take any folded
 * file.  Frames are split at ';' and kept byte for byte (spaces and empty
 * names included); empty lines are skipped.  Returns 0, or -1 with a
 * message naming the line in err; the lines before a bad one stay added.
 */
int luw_stacks_read_folded(struct luw_stacks *s, FILE *in, char *err,
			   size_t errsize);

#endif
