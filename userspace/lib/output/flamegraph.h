/*
 * Interactive SVG flame graph of aggregated stacks.
 *
 * The file stands alone: inline CSS and JavaScript, no external resources,
 * so it opens from disk in any browser.  Root at the bottom; children
 * ordered by name bytes, each box as wide as its samples.  In a browser:
 * hover shows "name (N samples, P%)", click zooms into a frame ("Reset
 * Zoom" or Esc goes back), "Search" (or Ctrl-F) takes a regular expression,
 * highlights the matching frames and shows the share of samples under
 * them.  The URL query "?s=REGEX" searches and "?z=DEPTH,START" zooms when
 * the file is opened, and both follow the user's clicks.
 *
 * Every frame box is machine-readable, for tests and scripts:
 *
 *   <g class="f" data-name=NAME data-kind=KIND data-depth=D
 *      data-start=S data-samples=N>
 *     <title>NAME (N samples, P%)</title><rect .../><text ...>LABEL</text>
 *   </g>
 *
 *   NAME    the frame text, XML-escaped (bytes that are not valid UTF-8
 *           or not allowed in XML show as U+FFFD)
 *   KIND    "host" | "lua" | "trace" | "root" (see luw_flamegraph_kind)
 *   D       0 for the root box "all", 1 for the outermost frames, ...
 *   S       samples before this box at its depth: the box spans
 *           samples [S, S+N) of the whole profile
 *   N       samples whose stack passes through this frame (inclusive)
 *
 * The <svg> element carries data-total (all samples) and data-count-name.
 * The same input always gives the same bytes.
 */
#ifndef LUW_OUTPUT_FLAMEGRAPH_H
#define LUW_OUTPUT_FLAMEGRAPH_H

#include <stddef.h>
#include <stdio.h>

#include "output/stacks.h"

enum luw_flamegraph_kind {
	LUW_FRAME_HOST,		/* native code: C functions, libraries */
	LUW_FRAME_LUA,		/* "name @chunk:line" or "@chunk:line" */
	LUW_FRAME_TRACE,	/* "TRACE_n ..." : JIT-compiled code */
};

/* Colours of the boxes. */
enum luw_flamegraph_colors {
	LUW_FG_COLORS_KIND,	/* a hue per frame kind: host warm, Lua
				 * green, trace blue (default) */
	LUW_FG_COLORS_HOT,	/* every frame warm, like flamegraph.pl */
};

struct luw_flamegraph_opts {
	const char *title;	/* NULL: "Flame Graph" */
	const char *subtitle;	/* NULL: none */
	const char *count_name;	/* what a sample is; NULL: "samples" */
	unsigned width;		/* image width in px */
	unsigned frame_height;	/* px per stack level */
	double min_width;	/* boxes narrower than this (px) are left out */
	enum luw_flamegraph_colors colors;
};

/* The frame kind, decided by the frame text alone. */
enum luw_flamegraph_kind luw_flamegraph_kind(const char *name, size_t len);

/* Defaults: 1200 px wide, 16 px frames, 0.1 px minimum width. */
void luw_flamegraph_defaults(struct luw_flamegraph_opts *o);

/*
 * Write the SVG of s to out (o NULL: defaults).  An empty s gives a valid
 * SVG that says so.  0, or -1 with errno on a write or memory error.
 */
int luw_flamegraph_write(FILE *out, const struct luw_stacks *s,
			 const struct luw_flamegraph_opts *o);

#endif
