#include "output/flamegraph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"

/* Geometry shared with the script below (it reads them from <svg>). */
#define FONT_SIZE 12
#define FONT_WIDTH 0.59		/* average glyph width / font size */
#define XPAD 10
#define YPAD_TOP 50		/* two text rows: title, subtitle/legend */
#define YPAD_BOTTOM 34		/* one row: hover details, match share */

#define NONE UINT32_MAX

/*
 * The tree of frames: node 0 is the root ("all"); a child is found by
 * (parent, name) in an open-addressing table, so a wide node costs no
 * more than a narrow one.
 */
struct node {
	int32_t name;
	uint32_t parent;
	uint32_t depth;
	uint64_t samples;
	uint64_t start;
};

struct tree {
	const struct luw_stacks *s;
	struct node *nodes;
	size_t n, cap;
	uint32_t *tab;
	size_t tab_size;	/* power of two */
	uint32_t max_depth;
};

static uint32_t key_hash(uint32_t parent, int32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | (uint32_t)name) *
		     0x9e3779b97f4a7c15ULL;

	return (uint32_t)(h >> 32);
}

static int tab_resize(struct tree *t, size_t size)
{
	uint32_t *tab = malloc(size * sizeof(*tab));
	size_t i, mask = size - 1;

	if (!tab)
		return -1;
	memset(tab, 0xff, size * sizeof(*tab));
	for (i = 1; i < t->n; i++) {
		size_t j = key_hash(t->nodes[i].parent, t->nodes[i].name) & mask;

		while (tab[j] != NONE)
			j = (j + 1) & mask;
		tab[j] = (uint32_t)i;
	}
	free(t->tab);
	t->tab = tab;
	t->tab_size = size;
	return 0;
}

static uint32_t child(struct tree *t, uint32_t parent, int32_t name)
{
	size_t mask = t->tab_size - 1;
	size_t j = key_hash(parent, name) & mask;
	struct node *nd;

	for (; t->tab[j] != NONE; j = (j + 1) & mask) {
		nd = &t->nodes[t->tab[j]];
		if (nd->parent == parent && nd->name == name)
			return t->tab[j];
	}
	if (t->n >= NONE - 1) {
		errno = ENOMEM;
		return NONE;
	}
	if (luw_grow((void **)&t->nodes, &t->cap, t->n + 1, sizeof(*t->nodes)))
		return NONE;
	nd = &t->nodes[t->n];
	nd->name = name;
	nd->parent = parent;
	nd->depth = t->nodes[parent].depth + 1;
	nd->samples = 0;
	nd->start = 0;
	if (nd->depth > t->max_depth)
		t->max_depth = nd->depth;
	t->tab[j] = (uint32_t)t->n++;
	if (t->n * 2 > t->tab_size && tab_resize(t, t->tab_size * 2))
		return NONE;
	return (uint32_t)(t->n - 1);
}

static int add_stack(void *ctx, const int32_t *frames, size_t n,
		     uint64_t count)
{
	struct tree *t = ctx;
	uint32_t at = 0;
	size_t i;

	t->nodes[0].samples += count;
	for (i = 0; i < n; i++) {
		at = child(t, at, frames[i]);
		if (at == NONE)
			return -1;
		t->nodes[at].samples += count;
	}
	return 0;
}

/* Sorting contexts: qsort_r passes the tree and the name ranks. */
struct sort_ctx {
	const struct tree *t;
	const uint32_t *rank;
	const struct luw_stacks *s;
};

static int cmp_names(const void *a, const void *b, void *c)
{
	const struct luw_stacks *s = c;
	int32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t lx = luw_stacks_name_len(s, x), ly = luw_stacks_name_len(s, y);
	int r = memcmp(luw_stacks_name(s, x), luw_stacks_name(s, y),
		       lx < ly ? lx : ly);

	return r ? r : (lx > ly) - (lx < ly);
}

static int cmp_siblings(const void *a, const void *b, void *c)
{
	const struct sort_ctx *sc = c;
	const struct node *x = &sc->t->nodes[*(const uint32_t *)a];
	const struct node *y = &sc->t->nodes[*(const uint32_t *)b];
	uint32_t rx = sc->rank[x->name], ry = sc->rank[y->name];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return (rx > ry) - (rx < ry);
}

static int cmp_draw(const void *a, const void *b, void *c)
{
	const struct sort_ctx *sc = c;
	const struct node *x = &sc->t->nodes[*(const uint32_t *)a];
	const struct node *y = &sc->t->nodes[*(const uint32_t *)b];

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/*
 * Lays the tree out: children of a node sorted by name bytes, each
 * starting where its previous sibling ends.  Returns the nodes in drawing
 * order (by depth, then left to right), root first.
 */
static uint32_t *layout(struct tree *t)
{
	size_t nn = luw_stacks_nnames(t->s), i;
	uint32_t *ids = malloc((nn ? nn : 1) * sizeof(*ids));
	uint32_t *rank = malloc((nn ? nn : 1) * sizeof(*rank));
	uint32_t *order = malloc(t->n * sizeof(*order));
	struct sort_ctx sc = { t, rank, t->s };
	uint32_t parent = NONE;
	uint64_t off = 0;

	if (!ids || !rank || !order) {
		free(ids);
		free(rank);
		free(order);
		return NULL;
	}
	for (i = 0; i < nn; i++)
		ids[i] = (uint32_t)i;
	qsort_r(ids, nn, sizeof(*ids), cmp_names, (void *)t->s);
	for (i = 0; i < nn; i++)
		rank[ids[i]] = (uint32_t)i;
	free(ids);

	for (i = 0; i < t->n; i++)
		order[i] = (uint32_t)i;
	/* Parents are created before their children, so when siblings
	 * are grouped by ascending parent, a parent's start is known
	 * before its children are placed. */
	qsort_r(order + 1, t->n - 1, sizeof(*order), cmp_siblings, &sc);
	for (i = 1; i < t->n; i++) {
		struct node *nd = &t->nodes[order[i]];

		if (nd->parent != parent) {
			parent = nd->parent;
			off = t->nodes[parent].start;
		}
		nd->start = off;
		off += nd->samples;
	}
	qsort_r(order + 1, t->n - 1, sizeof(*order), cmp_draw, &sc);
	free(rank);
	return order;
}

enum luw_flamegraph_kind luw_flamegraph_kind(const char *name, size_t len)
{
	size_t at, i;

	if (len >= 6 && memcmp(name, "TRACE_", 6) == 0)
		return LUW_FRAME_TRACE;
	/* "@chunk:line" at the end, after a space or alone. */
	for (at = len; at > 0; at--)
		if (name[at - 1] == '@')
			break;
	if (at == 0 || (at > 1 && name[at - 2] != ' '))
		return LUW_FRAME_HOST;
	for (i = len; i > at && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
		;
	if (i == len || i <= at + 1 || name[i - 1] != ':')
		return LUW_FRAME_HOST;
	return LUW_FRAME_LUA;
}

void luw_flamegraph_defaults(struct luw_flamegraph_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->width = 1200;
	o->frame_height = 16;
	o->min_width = 0.1;
	o->colors = LUW_FG_COLORS_KIND;
}

/*
 * Frame text as the SVG shows it: valid UTF-8 without the characters XML
 * forbids; anything else becomes U+FFFD.  Returns the length in buf and
 * the number of characters in *chars.
 */
static size_t clean_utf8(const unsigned char *p, size_t len, char *buf,
			 size_t *chars)
{
	size_t i = 0, o = 0, nc = 0;

	while (i < len) {
		unsigned c = p[i];
		size_t k = 0;
		uint32_t cp = 0;

		if (c < 0x80) {
			cp = c;
			k = 1;
		} else if (c >= 0xc2 && c <= 0xdf) {
			cp = c & 0x1f;
			k = 2;
		} else if (c >= 0xe0 && c <= 0xef) {
			cp = c & 0x0f;
			k = 3;
		} else if (c >= 0xf0 && c <= 0xf4) {
			cp = c & 0x07;
			k = 4;
		}
		if (k > 1 && i + k <= len) {
			size_t j;

			for (j = 1; j < k && (p[i + j] & 0xc0) == 0x80; j++)
				cp = cp << 6 | (p[i + j] & 0x3f);
			if (j < k || (k == 3 && cp < 0x800) ||
			    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
			    (cp >= 0xd800 && cp <= 0xdfff))
				k = 0;
		} else if (k > 1) {
			k = 0;
		}
		if (k == 0 || (cp < 0x20 && cp != '\t') || cp == 0xfffe ||
		    cp == 0xffff) {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += k ? k : 1;
		} else {
			memcpy(buf + o, p + i, k);
			o += k;
			i += k;
		}
		nc++;
	}
	*chars = nc;
	return o;
}

/* Byte length of the first n characters of valid UTF-8. */
static size_t utf8_prefix(const char *p, size_t len, size_t n)
{
	size_t i = 0;

	while (i < len && n) {
		i++;
		while (i < len && ((unsigned char)p[i] & 0xc0) == 0x80)
			i++;
		n--;
	}
	return i;
}

static void put_xml(FILE *out, const char *p, size_t len)
{
	size_t i, from = 0;

	for (i = 0; i < len; i++) {
		const char *rep;

		switch (p[i]) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&apos;"; break;
		default: continue;
		}
		fwrite(p + from, 1, i - from, out);
		fputs(rep, out);
		from = i + 1;
	}
	fwrite(p + from, 1, len - from, out);
}

static void put_xml_str(FILE *out, const char *str)
{
	size_t len = strlen(str), chars;
	char *buf = malloc(len * 3 + 1);

	if (!buf) {
		put_xml(out, "?", 1);
		return;
	}
	len = clean_utf8((const unsigned char *)str, len, buf, &chars);
	put_xml(out, buf, len);
	free(buf);
}

/* Same name, same colour: hash the function part, before " @chunk". */
static uint32_t name_hash(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++)
		if (p[i] == ' ' && p[i + 1] == '@')
			break;
	if (i + 1 >= len)
		i = len;
	return luw_fnv1a32(p, i);
}

static void frame_color(enum luw_flamegraph_kind kind, enum luw_flamegraph_colors c,
			const char *name, size_t len, int rgb[3])
{
	uint32_t h = name_hash(name, len);
	double v1 = (double)(h & 0xff) / 255.0;
	double v2 = (double)((h >> 8) & 0xff) / 255.0;
	double v3 = (double)((h >> 16) & 0xff) / 255.0;

	if (c == LUW_FG_COLORS_HOT)
		kind = LUW_FRAME_HOST;
	switch (kind) {
	case LUW_FRAME_LUA:
		rgb[0] = 60 + (int)(70 * v1);
		rgb[1] = 185 + (int)(65 * v2);
		rgb[2] = 60 + (int)(60 * v3);
		break;
	case LUW_FRAME_TRACE:
		rgb[0] = 70 + (int)(50 * v1);
		rgb[1] = 150 + (int)(60 * v2);
		rgb[2] = 215 + (int)(40 * v3);
		break;
	default:
		rgb[0] = 205 + (int)(50 * v3);
		rgb[1] = (int)(230 * v1);
		rgb[2] = (int)(55 * v2);
		break;
	}
}

static const char *const kind_names[] = { "host", "lua", "trace" };

static const char css[] =
	"text { font-family: Verdana, sans-serif; font-size: 12px; "
	"fill: rgb(0,0,0); }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	"#subtitle { text-anchor: middle; fill: rgb(110,110,110); }\n"
	".button { cursor: pointer; opacity: 0.9; }\n"
	".button:hover { opacity: 1; text-decoration: underline; }\n"
	".legend { font-size: 11px; }\n"
	".f { cursor: pointer; }\n"
	".f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	".f text { pointer-events: none; }\n"
	".hide { display: none; }\n"
	".parent rect { fill-opacity: 0.5; }\n"
	".parent text { fill-opacity: 0.6; }\n";

/*
 * The viewer.  It keeps the frames' sample spans (data-start,
 * data-samples) and redraws from them, so zoom and the matched share
 * are exact sample arithmetic, not pixel guesses.  The label rule is
 * the writer's (fit_label in C).
 */
static const char script[] =
	"'use strict';\n"
	"var svg, frames = [], details, unzoomBtn, searchBtn, icBtn, matched;\n"
	"var W, XPAD, FONT, FONTW, TOTAL, COUNT, scale0;\n"
	"var zoomed = null, term = null, ignoreCase = false;\n"
	"function num(e, a) { return Number(e.getAttribute(a)); }\n"
	"function init() {\n"
	"  svg = document.documentElement;\n"
	"  W = num(svg, 'width'); XPAD = num(svg, 'data-xpad');\n"
	"  FONT = num(svg, 'data-font-size'); FONTW = num(svg, 'data-font-width');\n"
	"  TOTAL = num(svg, 'data-total'); COUNT = svg.getAttribute('data-count-name');\n"
	"  scale0 = (W - 2 * XPAD) / Math.max(TOTAL, 1);\n"
	"  details = document.getElementById('details');\n"
	"  unzoomBtn = document.getElementById('unzoom');\n"
	"  searchBtn = document.getElementById('search');\n"
	"  icBtn = document.getElementById('ignorecase');\n"
	"  matched = document.getElementById('matched');\n"
	"  var gs = document.querySelectorAll('g.f');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i];\n"
	"    g.fgName = g.getAttribute('data-name');\n"
	"    g.fgDepth = num(g, 'data-depth');\n"
	"    g.fgStart = num(g, 'data-start');\n"
	"    g.fgSamples = num(g, 'data-samples');\n"
	"    g.fgRect = g.querySelector('rect');\n"
	"    g.fgText = g.querySelector('text');\n"
	"    g.fgFill = g.fgRect.getAttribute('fill');\n"
	"    g.fgInfo = g.querySelector('title').textContent;\n"
	"    frames.push(g);\n"
	"  }\n"
	"  var box = document.getElementById('frames');\n"
	"  box.addEventListener('click', function (e) {\n"
	"    var g = e.target.closest('g.f');\n"
	"    if (g) { if (g.fgDepth === 0) unzoom(); else zoom(g); }\n"
	"  });\n"
	"  box.addEventListener('mouseover', function (e) {\n"
	"    var g = e.target.closest('g.f');\n"
	"    if (g) details.textContent = g.fgInfo;\n"
	"  });\n"
	"  box.addEventListener('mouseout', function () {\n"
	"    details.textContent = ' ';\n"
	"  });\n"
	"  unzoomBtn.addEventListener('click', function () { unzoom(); });\n"
	"  searchBtn.addEventListener('click', function () {\n"
	"    if (term !== null) resetSearch(); else askSearch();\n"
	"  });\n"
	"  icBtn.addEventListener('click', function () {\n"
	"    ignoreCase = !ignoreCase;\n"
	"    icBtn.style.fontWeight = ignoreCase ? 'bold' : '';\n"
	"    if (term !== null) search(term);\n"
	"  });\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey && e.key === 'f') || e.key === 'F3') {\n"
	"      e.preventDefault(); askSearch();\n"
	"    } else if (e.key === 'Escape') { unzoom(); resetSearch(); }\n"
	"  });\n"
	"  var q = new URLSearchParams(window.location.search);\n"
	"  if (q.has('z')) {\n"
	"    var z = q.get('z').split(','), d = Number(z[0]), s = Number(z[1]);\n"
	"    for (var k = 0; k < frames.length; k++)\n"
	"      if (frames[k].fgDepth === d && frames[k].fgStart === s) zoom(frames[k]);\n"
	"  }\n"
	"  if (q.has('s')) search(q.get('s'));\n"
	"}\n"
	"function fitLabel(name, w) {\n"
	"  var n = Math.floor((w - 6) / (FONT * FONTW));\n"
	"  if (n < 3) return '';\n"
	"  var cs = Array.from(name);\n"
	"  return cs.length <= n ? name : cs.slice(0, n - 2).join('') + '..';\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  g.fgRect.setAttribute('x', x.toFixed(2));\n"
	"  g.fgRect.setAttribute('width', w.toFixed(2));\n"
	"  g.fgText.setAttribute('x', (x + 3).toFixed(2));\n"
	"  g.fgText.textContent = fitLabel(g.fgName, w);\n"
	"}\n"
	"function zoom(g) {\n"
	"  var s = g.fgStart, e = s + g.fgSamples, d = g.fgDepth;\n"
	"  var sc = (W - 2 * XPAD) / g.fgSamples;\n"
	"  zoomed = g;\n"
	"  unzoomBtn.classList.remove('hide');\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], fs = f.fgStart, fe = fs + f.fgSamples;\n"
	"    if (f.fgDepth < d && fs <= s && fe >= e) {\n"
	"      f.classList.remove('hide'); f.classList.add('parent');\n"
	"      place(f, XPAD, W - 2 * XPAD);\n"
	"    } else if (f.fgDepth >= d && fs >= s && fe <= e) {\n"
	"      f.classList.remove('hide', 'parent');\n"
	"      place(f, XPAD + (fs - s) * sc, f.fgSamples * sc);\n"
	"    } else {\n"
	"      f.classList.add('hide'); f.classList.remove('parent');\n"
	"    }\n"
	"  }\n"
	"  if (term !== null) search(term);\n"
	"  remember();\n"
	"}\n"
	"function unzoom() {\n"
	"  zoomed = null;\n"
	"  unzoomBtn.classList.add('hide');\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i];\n"
	"    f.classList.remove('hide', 'parent');\n"
	"    place(f, XPAD + f.fgStart * scale0, f.fgSamples * scale0);\n"
	"  }\n"
	"  if (term !== null) search(term);\n"
	"  remember();\n"
	"}\n"
	"function askSearch() {\n"
	"  var t = window.prompt('Search for a frame (regular expression):', term || '');\n"
	"  if (t !== null && t !== '') search(t);\n"
	"}\n"
	"function search(t) {\n"
	"  var re;\n"
	"  try { re = new RegExp(t, ignoreCase ? 'i' : ''); }\n"
	"  catch (err) { matched.textContent = 'Bad expression: ' + err.message; return; }\n"
	"  term = t;\n"
	"  var lo = zoomed ? zoomed.fgStart : 0;\n"
	"  var hi = zoomed ? lo + zoomed.fgSamples : TOTAL;\n"
	"  var spans = [];\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i];\n"
	"    if (f.fgDepth > 0 && re.test(f.fgName)) {\n"
	"      f.fgRect.setAttribute('fill', 'rgb(230,0,230)');\n"
	"      f.classList.add('match');\n"
	"      spans.push([Math.max(f.fgStart, lo), Math.min(f.fgStart + f.fgSamples, hi)]);\n"
	"    } else {\n"
	"      f.fgRect.setAttribute('fill', f.fgFill);\n"
	"      f.classList.remove('match');\n"
	"    }\n"
	"  }\n"
	"  /* A frame under a matched frame adds no samples twice. */\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var sum = 0, end = lo;\n"
	"  for (var j = 0; j < spans.length; j++) {\n"
	"    var a = Math.max(spans[j][0], end), b = spans[j][1];\n"
	"    if (b > a) { sum += b - a; end = b; }\n"
	"  }\n"
	"  var pct = hi > lo ? 100 * sum / (hi - lo) : 0;\n"
	"  matched.setAttribute('data-samples', String(sum));\n"
	"  matched.textContent = 'Matched: ' + pct.toFixed(1) + '% (' + sum + ' ' + COUNT + ')';\n"
	"  searchBtn.textContent = 'Reset Search';\n"
	"  remember();\n"
	"}\n"
	"function resetSearch() {\n"
	"  term = null;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    frames[i].fgRect.setAttribute('fill', frames[i].fgFill);\n"
	"    frames[i].classList.remove('match');\n"
	"  }\n"
	"  matched.textContent = ' ';\n"
	"  matched.removeAttribute('data-samples');\n"
	"  searchBtn.textContent = 'Search';\n"
	"  remember();\n"
	"}\n"
	"/* Keep the view in the URL, so a link reopens it. */\n"
	"function remember() {\n"
	"  var q = new URLSearchParams();\n"
	"  if (zoomed) q.set('z', zoomed.fgDepth + ',' + zoomed.fgStart);\n"
	"  if (term !== null) q.set('s', term);\n"
	"  var qs = q.toString();\n"
	"  try {\n"
	"    window.history.replaceState(null, '', window.location.pathname + (qs ? '?' + qs : ''));\n"
	"  } catch (err) { /* some viewers refuse; the view still works */ }\n"
	"}\n";

/* Label that fits w px, by the script's rule; 0 chars when none fits. */
static size_t fit_label(const char *name, size_t len, size_t chars, double w,
			int *dots)
{
	double fit = (w - 6) / (FONT_SIZE * FONT_WIDTH);
	size_t n;

	*dots = 0;
	if (fit < 3)
		return 0;
	n = (size_t)fit;
	if (chars <= n)
		return len;
	*dots = 1;
	return utf8_prefix(name, len, n - 2);
}

static void put_frame(FILE *out, const struct luw_flamegraph_opts *o,
		      const char *name, size_t len, enum luw_flamegraph_kind kind,
		      int is_root, const struct node *nd, uint64_t total,
		      unsigned height, char *buf)
{
	double scale = (double)(o->width - 2 * XPAD) / (double)total;
	double x = XPAD + (double)nd->start * scale;
	double w = (double)nd->samples * scale;
	unsigned y = height - YPAD_BOTTOM - (nd->depth + 1) * o->frame_height;
	size_t chars, clen = clean_utf8((const unsigned char *)name, len, buf,
					&chars);
	size_t lab;
	int rgb[3], dots;

	if (is_root) {
		rgb[0] = rgb[1] = rgb[2] = 215;
	} else {
		frame_color(kind, o->colors, name, len, rgb);
	}
	fputs("<g class=\"f\" data-name=\"", out);
	put_xml(out, buf, clen);
	fprintf(out, "\" data-kind=\"%s\" data-depth=\"%" PRIu32
		"\" data-start=\"%" PRIu64 "\" data-samples=\"%" PRIu64 "\">\n"
		"<title>", is_root ? "root" : kind_names[kind], nd->depth,
		nd->start, nd->samples);
	put_xml(out, buf, clen);
	fprintf(out, " (%" PRIu64 " ", nd->samples);
	put_xml_str(out, o->count_name);
	fprintf(out, ", %.2f%%)</title>\n"
		"<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" "
		"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>\n"
		"<text x=\"%.2f\" y=\"%.1f\">",
		100.0 * (double)nd->samples / (double)total, x, y, w,
		o->frame_height - 1, rgb[0], rgb[1], rgb[2], x + 3,
		y + o->frame_height / 2.0 + FONT_SIZE / 2.0 - 1.5);
	lab = fit_label(buf, clen, chars, w, &dots);
	put_xml(out, buf, lab);
	if (dots)
		fputs("..", out);
	fputs("</text>\n</g>\n", out);
}

static void put_legend(FILE *out, const struct luw_flamegraph_opts *o)
{
	static const char *const label[] = { "host (C)", "Lua", "JIT trace" };
	static const char *const sample[] = { "c_function", "f @x.lua:1",
					      "TRACE_1" };
	int k, x = XPAD;

	if (o->colors == LUW_FG_COLORS_HOT)
		return;
	for (k = 0; k < 3; k++) {
		int rgb[3];

		frame_color((enum luw_flamegraph_kind)k, o->colors, sample[k],
			    strlen(sample[k]), rgb);
		fprintf(out,
			"<rect x=\"%d\" y=\"33\" width=\"10\" height=\"10\" "
			"fill=\"rgb(%d,%d,%d)\"/>"
			"<text class=\"legend\" x=\"%d\" y=\"42\">%s</text>\n",
			x, rgb[0], rgb[1], rgb[2], x + 14, label[k]);
		x += 90;
	}
}

int luw_flamegraph_write(FILE *out, const struct luw_stacks *s,
			 const struct luw_flamegraph_opts *opts)
{
	struct luw_flamegraph_opts o;
	struct tree t = { 0 };
	uint32_t *order = NULL;
	char *buf = NULL;
	size_t i, maxlen = 0;
	unsigned height;
	uint64_t total = luw_stacks_total(s);
	int ret = -1;

	if (opts)
		o = *opts;
	else
		luw_flamegraph_defaults(&o);
	if (!o.title)
		o.title = "Flame Graph";
	if (!o.count_name)
		o.count_name = "samples";
	if (o.width < 2 * XPAD + 100)
		o.width = 2 * XPAD + 100;
	if (o.frame_height < 4)
		o.frame_height = 4;

	t.s = s;
	t.cap = 256;
	t.nodes = malloc(t.cap * sizeof(*t.nodes));
	if (!t.nodes || tab_resize(&t, 512))
		goto out;
	t.nodes[0] = (struct node){ -1, NONE, 0, 0, 0 };
	t.n = 1;
	if (luw_stacks_each(s, add_stack, &t))
		goto out;
	order = layout(&t);
	if (!order)
		goto out;
	for (i = 0; i < luw_stacks_nnames(s); i++)
		if (luw_stacks_name_len(s, (int32_t)i) > maxlen)
			maxlen = luw_stacks_name_len(s, (int32_t)i);
	buf = malloc(maxlen * 3 + 4);
	if (!buf)
		goto out;

	height = YPAD_TOP + YPAD_BOTTOM + (t.max_depth + 1) * o.frame_height;
	if (!total)
		height = YPAD_TOP + YPAD_BOTTOM + 40;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" onload=\"init(evt)\" "
		"xmlns=\"http://www.w3.org/2000/svg\" "
		"data-total=\"%" PRIu64 "\" data-count-name=\"",
		o.width, height, o.width, height, total);
	put_xml_str(out, o.count_name);
	fprintf(out, "\" data-xpad=\"%d\" data-font-size=\"%d\" "
		"data-font-width=\"%.2f\">\n", XPAD, FONT_SIZE, FONT_WIDTH);
	fprintf(out, "<style type=\"text/css\">\n%s</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
		css, script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
		"fill=\"rgb(248,248,242)\"/>\n", o.width, height);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"24\">", o.width / 2.0);
	put_xml_str(out, o.title);
	fputs("</text>\n", out);
	if (o.subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"42\">",
			o.width / 2.0);
		put_xml_str(out, o.subtitle);
		fputs("</text>\n", out);
	}
	put_legend(out, &o);
	fprintf(out,
		"<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"24\">"
		"Reset Zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%u\" y=\"24\">"
		"Search</text>\n"
		"<text id=\"ignorecase\" class=\"button\" x=\"%u\" y=\"24\">"
		"ic</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n",
		XPAD, o.width - XPAD - 110, o.width - XPAD - 16, XPAD,
		height - 12, o.width - XPAD - 260, height - 12);
	if (!total)
		fprintf(out, "<text x=\"%.1f\" y=\"%u\" "
			"style=\"text-anchor: middle\">No samples</text>\n",
			o.width / 2.0, YPAD_TOP + 24);
	fputs("<g id=\"frames\">\n", out);
	for (i = 0; total && i < t.n; i++) {
		const struct node *nd = &t.nodes[order[i]];
		double w = (double)nd->samples * (o.width - 2 * XPAD) /
			   (double)total;
		const char *name = "all";
		size_t len = 3;

		if (w < o.min_width)
			continue;
		if (nd->name >= 0) {
			name = luw_stacks_name(s, nd->name);
			len = luw_stacks_name_len(s, nd->name);
		}
		put_frame(out, &o, name, len, luw_flamegraph_kind(name, len),
			  nd->name < 0, nd, total, height, buf);
	}
	fputs("</g>\n</svg>\n", out);
	ret = ferror(out) ? -1 : 0;
out:
	free(buf);
	free(order);
	free(t.tab);
	free(t.nodes);
	return ret;
}
