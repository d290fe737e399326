/*
 * ffnames: fast-function names by ffid.  See ffnames.h.
 */
#include "luajit/ffnames.h"

#include <stdio.h>
#include <string.h>
#include <threads.h>

#define S LUW_FF_STOCK
#define O LUW_FF_OPENRESTY
#define T LUW_FF_TARANTOOL
#define L52 LUW_FF_LUA52
#define JO 0x100u	/* only with the JIT: gone with LUAJIT_DISABLE_JIT */

/*
 * The list (ffnames.h), generated from each family's builds by
 * scripts/ljtables-gen.sh.  Order matters: it is the ffid order of each
 * family.
 */
static const struct {
	const char *name;
	unsigned int fam;
} list[] = {
#include "luajit/ffnames_list.h"
};

#define NLIST (sizeof(list) / sizeof(list[0]))

void luw_ffnames_init(struct luw_ffnames *f, const char *src)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->src, sizeof(f->src), "%s", src ? src : "");
}

int luw_ffnames_set(struct luw_ffnames *f, unsigned int ffid,
		    const char *name)
{
	size_t l = strlen(name) + 1;

	if (ffid >= LUW_FF_MAX || f->used + l > sizeof(f->pool))
		return -1;
	memcpy(f->pool + f->used, name, l);
	if (!f->off[ffid])
		f->count++;
	f->off[ffid] = (uint16_t)(f->used + 1);
	f->used += (uint32_t)l;
	return 0;
}

const char *luw_ffnames_get(const struct luw_ffnames *f, unsigned int ffid)
{
	if (!f || ffid >= LUW_FF_MAX || !f->off[ffid])
		return NULL;
	return f->pool + f->off[ffid] - 1;
}

static int in_family(unsigned int fam, unsigned int want)
{
	if (!(fam & want & (S | O | T)))
		return 0;
	if ((fam & JO) && (want & LUW_FF_NOJIT))
		return 0;
	return !(fam & L52) || (want & L52);
}

void luw_ffnames_family(struct luw_ffnames *f, unsigned int family,
			const char *src)
{
	unsigned int id = 2;
	size_t i;

	luw_ffnames_init(f, src);
	for (i = 0; i < NLIST && id < LUW_FF_MAX; i++)
		if (in_family(list[i].fam, family))
			luw_ffnames_set(f, id++, list[i].name);
}

/* a == b with '.' in b matching '_' in a. */
static int same_underscored(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != (b[i] == '.' ? '_' : b[i]))
			return 0;
	return 1;
}

int luw_ffnames_from_enum(const char *en, char *out, size_t n)
{
	size_t i, best = 0, l;
	const char *bestlib = NULL;

	if (strncmp(en, "FF_", 3) || !en[3])
		return -1;
	en += 3;
	l = strlen(en);
	for (i = 0; i < NLIST; i++) {
		const char *nm = list[i].name, *dot = strrchr(nm, '.');
		size_t ll;

		if (strlen(nm) == l && same_underscored(en, nm, l)) {
			snprintf(out, n, "%s", nm);
			return 0;
		}
		/* Library prefix "lib" or "lib.sub" of this entry. */
		if (!dot)
			continue;
		ll = (size_t)(dot - nm);
		if (ll > best && ll + 1 < l && en[ll] == '_' &&
		    same_underscored(en, nm, ll)) {
			best = ll;
			bestlib = nm;
		}
	}
	if (bestlib)
		snprintf(out, n, "%.*s.%s", (int)best, bestlib, en + best + 1);
	else
		snprintf(out, n, "%s", en);
	return 0;
}

static int list_pos(const char *name)
{
	size_t i;

	for (i = 0; i < NLIST; i++)
		if (!strcmp(list[i].name, name))
			return (int)i;
	return -1;
}

int luw_ffnames_listed(const char *name)
{
	return list_pos(name) >= 0;
}

static int named_in(const struct luw_ffnames *f, const char *name)
{
	unsigned int id;

	for (id = 2; id < LUW_FF_MAX; id++)
		if (f->off[id] && !strcmp(f->pool + f->off[id] - 1, name))
			return 1;
	return 0;
}

unsigned int luw_ffnames_fill_gaps(struct luw_ffnames *f)
{
	static const unsigned int fams[] = {
		0, S, O, T, S | L52, O | L52, T | L52,
		S | LUW_FF_NOJIT, O | LUW_FF_NOJIT, T | LUW_FF_NOJIT,
		S | L52 | LUW_FF_NOJIT, O | L52 | LUW_FF_NOJIT,
		T | L52 | LUW_FF_NOJIT,
	};
	int a = 1, pa = -1, b, pb;	/* ffid 1 (C) sits before the list */
	unsigned int done = 0;

	for (b = 2; b < LUW_FF_MAX; b++) {
		const char *nm = luw_ffnames_get(f, (unsigned int)b);
		int pick[LUW_FF_MAX], cand[LUW_FF_MAX], npick = -1, ok = 1;
		size_t k;

		if (!nm || (pb = list_pos(nm)) < 0)
			continue;
		for (k = (size_t)a + 1; k < (size_t)b; k++)
			if (f->off[k])
				ok = 0;	/* a name the list lacks: no gap */
		if (ok && b - a > 1 && pb > pa) {
			for (k = 0; k < sizeof(fams) / sizeof(fams[0]) && ok; k++) {
				int i, nc = 0;

				for (i = pa + 1; i < pb && nc < LUW_FF_MAX; i++) {
					if (fams[k] && !in_family(list[i].fam, fams[k]))
						continue;
					if (named_in(f, list[i].name))
						continue;
					cand[nc++] = i;
				}
				if (nc != b - a - 1)
					continue;
				if (npick < 0) {
					memcpy(pick, cand, sizeof(int) * (size_t)nc);
					npick = nc;
				} else if (memcmp(pick, cand, sizeof(int) * (size_t)nc)) {
					ok = 0;	/* two families disagree */
				}
			}
			if (ok && npick > 0) {
				int i;

				for (i = 0; i < npick; i++)
					luw_ffnames_set(f, (unsigned int)(a + 1 + i),
							list[pick[i]].name);
				done += (unsigned int)npick;
			}
		}
		a = b;
		pa = pb;
	}
	return done;
}

static struct luw_ffnames tnt;
static once_flag tnt_once = ONCE_FLAG_INIT;

static void tnt_init(void)
{
	luw_ffnames_family(&tnt, LUW_FF_TARANTOOL, "Tarantool");
}

const char *luw_ffnames_tarantool(uint64_t ffid)
{
	if (ffid == 0)
		return "Lua";
	if (ffid == 1)
		return "C";
	call_once(&tnt_once, tnt_init);
	return ffid < LUW_FF_MAX ? luw_ffnames_get(&tnt, (unsigned int)ffid) :
				   NULL;
}
