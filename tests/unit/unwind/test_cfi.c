/*
 * unwind/cfi.c, the table builder, against binutils: every CFI row that
 * `readelf --debug-dump=frames-interp` prints for an ELF file must come
 * out of the compact table with the same CFA rule, return address and
 * saved-rbp location, at the first and the last byte the row covers;
 * bytes between FDEs must be NONE.  Run on the test targets, on Debian's
 * luajit and on the libc this test itself runs with.  One deliberate
 * difference: an FDE that claims CFA = rbp+16 at its first byte, over
 * code that starts with push %rbp; mov %rsp,%rbp (LuaJIT's
 * lj_vm_ffi_call), gets the entry's real rules for those two
 * instructions (rsp+8, then rsp+16 with rbp saved at c-16).
 * r14 (LuaJIT's DISPATCH register; include/luaunwind_unwind.h's r14
 * rows) the same way, wherever the entry has a CFA rule: readelf's "cN"
 * must be saved at CFA + N, "u" (not mentioned: the psABI keeps a
 * callee-saved register) SAME or UNDEF, "s" SAME, anything else UNDEF;
 * the r14 rows' size beside the entries' is printed (the upload's cost),
 * and Debian's libluajit-5.1.so.2 and tarantool are checked when present
 * (their GC functions save r14: rows with CFA + N must be there).
 *
 * A stub whose FDE ends at a `syscall` with its last row CFA = rsp + 8
 * (glibc's clone and clone3) has a SYSCALL row of that rule at the pc
 * after the instruction, its only byte; the libc this test runs with has
 * two.
 *
 * usage: test_cfi FIXTURES ELF...   (libc and /usr/bin/luajit added)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "elf/symbols.h"
#include "proc/maps.h"
#include "testlib.h"

struct ref_row {
	uint64_t loc;
	char cfa[32], ra[32], rbp[32], r14[32];
};

struct ref_cie {
	unsigned long off;
	int signal;
	struct ref_row init;	/* first row: what an FDE without rows uses */
	int have_init;
};

struct ref_fde {
	uint64_t lo, hi;
	int signal;
	struct ref_row *rows;
	size_t nrows;
};

struct ref {
	struct ref_cie *cies;
	size_t ncies;
	struct ref_fde *fdes;
	size_t nfdes;
};

static void *grow(void *p, size_t n, size_t sz)
{
	/* Grow in powers of two: n is the count before the push. */
	if (n && (n & (n - 1)))
		return p;
	p = realloc(p, (n ? 2 * n : 1) * sz);
	if (!p) {
		perror("realloc");
		exit(2);
	}
	return p;
}

/* Split a row line into columns named by the preceding header. */
static void parse_row(const char *line, char cols[][32], int ncols,
		      struct ref_row *r)
{
	char buf[1024], *save = NULL, *tok;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	memset(r, 0, sizeof(*r));
	tok = strtok_r(buf, " \t\n", &save);
	r->loc = strtoull(tok, NULL, 16);
	while ((tok = strtok_r(NULL, " \t\n", &save)) && i < ncols) {
		/* "r3 (rbx)": a register rule carries its name in a 2nd word. */
		if (tok[0] == '(')
			continue;
		if (!strcmp(cols[i], "CFA"))
			snprintf(r->cfa, sizeof(r->cfa), "%s", tok);
		else if (!strcmp(cols[i], "ra"))
			snprintf(r->ra, sizeof(r->ra), "%s", tok);
		else if (!strcmp(cols[i], "rbp"))
			snprintf(r->rbp, sizeof(r->rbp), "%s", tok);
		else if (!strcmp(cols[i], "r14"))
			snprintf(r->r14, sizeof(r->r14), "%s", tok);
		i++;
	}
}

static int read_ref(const char *path, struct ref *ref)
{
	char cmd[4200], line[1024], cols[64][32];
	int ncols = 0, in_cie = 0;
	struct ref_fde *fde = NULL;
	struct ref_cie *cie = NULL;
	FILE *p;

	memset(ref, 0, sizeof(*ref));
	snprintf(cmd, sizeof(cmd),
		 "LC_ALL=C readelf -W --debug-dump=frames-interp '%s' 2>/dev/null",
		 path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long off, cieoff;
		unsigned long long lo, hi;
		char aug[32];

		/* tarantool also has a .debug_frame: the table is .eh_frame's. */
		if (!strncmp(line, "Contents of the ", 16) &&
		    !strstr(line, " .eh_frame section")) {
			fde = NULL;
			cie = NULL;
			ncols = 0;
			while (fgets(line, sizeof(line), p) &&
			       strncmp(line, "Contents of the ", 16))
				;
			if (feof(p))
				break;
			continue;
		}

		if (sscanf(line, "%lx %*x %*x CIE \"%31[^\"]", &off, aug) >= 1 &&
		    strstr(line, " CIE \"")) {
			if (strstr(line, "CIE \"\""))
				aug[0] = '\0';
			ref->cies = grow(ref->cies, ref->ncies, sizeof(*ref->cies));
			cie = &ref->cies[ref->ncies++];
			memset(cie, 0, sizeof(*cie));
			cie->off = off;
			cie->signal = strchr(aug, 'S') != NULL;
			in_cie = 1;
			fde = NULL;
			ncols = 0;
			continue;
		}
		if (sscanf(line, "%*x %*x %*x FDE cie=%lx pc=%llx..%llx", &cieoff,
			   &lo, &hi) == 3) {
			ref->fdes = grow(ref->fdes, ref->nfdes, sizeof(*ref->fdes));
			fde = &ref->fdes[ref->nfdes++];
			memset(fde, 0, sizeof(*fde));
			fde->lo = lo;
			fde->hi = hi;
			cie = NULL;
			for (size_t i = 0; i < ref->ncies; i++)
				if (ref->cies[i].off == cieoff)
					cie = &ref->cies[i];
			if (!cie) {
				fprintf(stderr, "%s: FDE before its CIE %lx\n", path, cieoff);
				pclose(p);
				return -1;
			}
			fde->signal = cie->signal;
			if (cie->have_init) {
				fde->rows = malloc(sizeof(*fde->rows));
				if (!fde->rows)
					exit(2);
				fde->rows[0] = cie->init;
				fde->rows[0].loc = lo;
				fde->nrows = 1;
			}
			in_cie = 0;
			ncols = 0;
			continue;
		}
		if (strncmp(line, "   LOC", 6) == 0) {
			char *save = NULL, *tok = strtok_r(line, " \t\n", &save);

			ncols = 0;
			while ((tok = strtok_r(NULL, " \t\n", &save)) && ncols < 64)
				snprintf(cols[ncols++], sizeof(cols[0]), "%s", tok);
			continue;
		}
		if (ncols && strlen(line) > 17 && line[16] == ' ') {
			struct ref_row r;

			parse_row(line, cols, ncols, &r);
			if (in_cie && cie && !cie->have_init) {
				cie->init = r;
				cie->have_init = 1;
			} else if (fde) {
				/* The rows printed replace the CIE's initial one. */
				if (fde->nrows == 1 && fde->rows[0].loc == r.loc) {
					fde->rows[0] = r;
					continue;
				}
				fde->rows = realloc(fde->rows,
						    (fde->nrows + 1) * sizeof(*fde->rows));
				if (!fde->rows)
					exit(2);
				fde->rows[fde->nrows++] = r;
			}
		}
	}
	/* readelf's status is 1 for files whose debuglink it cannot follow. */
	pclose(p);
	return ref->nfdes ? 0 : -1;
}

static void free_ref(struct ref *ref)
{
	for (size_t i = 0; i < ref->nfdes; i++)
		free(ref->fdes[i].rows);
	free(ref->fdes);
	free(ref->cies);
}

/* Does entry e say what readelf's row r says? */
static int rule_matches(const struct luw_uw_entry *e, const struct ref_row *r,
			int signal, char *why, size_t len)
{
	int k = LUW_UW_CFA_OF(e->rule), b = LUW_UW_RBP_OF(e->rule);
	char reg[8];
	long n;
	int used;

	if (!strcmp(r->ra, "u")) {
		snprintf(why, len, "ra undefined: want end");
		return k == LUW_UW_CFA_END;
	}
	if (signal) {
		snprintf(why, len, "signal frame: want unsup");
		return k == LUW_UW_CFA_UNSUP;
	}
	if (strcmp(r->ra, "c-8")) {
		snprintf(why, len, "ra %s: want unsup", r->ra);
		return k == LUW_UW_CFA_UNSUP || (sscanf(r->ra, "c%ld", &n) == 1 &&
						 e->ra_off == n);
	}
	if (!strcmp(r->cfa, "exp")) {
		snprintf(why, len, "cfa expression: want plt, deref or unsup");
		return k == LUW_UW_CFA_PLT || k == LUW_UW_CFA_UNSUP ||
		       k == LUW_UW_CFA_DEREF_RBP || k == LUW_UW_CFA_DEREF_RSP;
	}
	if (sscanf(r->cfa, "%7[a-z0-9]+%ld%n", reg, &n, &used) != 2 ||
	    (strcmp(reg, "rsp") && strcmp(reg, "rbp"))) {
		snprintf(why, len, "cfa %s: want unsup", r->cfa);
		return k == LUW_UW_CFA_UNSUP;
	}
	snprintf(why, len, "cfa %s ra %s rbp %s", r->cfa, r->ra,
		 r->rbp[0] ? r->rbp : "(none)");
	if (k != (strcmp(reg, "rsp") ? LUW_UW_CFA_RBP : LUW_UW_CFA_RSP) ||
	    e->cfa_off != n || e->ra_off != -8)
		return 0;
	if (!r->rbp[0] || !strcmp(r->rbp, "u"))
		return b == LUW_UW_RBP_SAME || b == LUW_UW_RBP_UNDEF;
	if (r->rbp[0] == 'c' && sscanf(r->rbp + 1, "%ld", &n) == 1)
		return b == LUW_UW_RBP_CFA && e->aux == n;
	/* readelf prints "exp" for the rbp + N of a realigned frame too. */
	if (!strcmp(r->rbp, "exp"))
		return b == LUW_UW_RBP_UNDEF || b == LUW_UW_RBP_RBP;
	return b == LUW_UW_RBP_UNDEF;
}

/* Does r14 row x say what readelf's r14 column says? */
static int r14_matches(const struct luw_uw_r14 *x, const char *col)
{
	long n;

	if (!x)
		return 0;
	if (!col[0] || !strcmp(col, "u"))
		return x->rule == LUW_UW_R14_SAME || x->rule == LUW_UW_R14_UNDEF;
	if (!strcmp(col, "s"))
		return x->rule == LUW_UW_R14_SAME;
	if (col[0] == 'c' && sscanf(col + 1, "%ld", &n) == 1 && n >= INT16_MIN &&
	    n <= INT16_MAX)
		return x->rule == LUW_UW_R14_CFA && x->off == n;
	return x->rule == LUW_UW_R14_UNDEF;
}

static size_t r14_checked, r14_saved_checked;

static void check_at(const char *path, const struct luw_cfi *t,
		     const struct luw_symbols *elf, uint64_t vaddr,
		     const struct ref_row *r, int signal, size_t *checked)
{
	const struct luw_uw_entry *e;
	const struct luw_uw_r14 *x;
	char why[160], got[96];
	uint64_t off;
	int k;

	if (luw_symbols_vaddr2off(elf, vaddr, &off))
		return;		/* not in a loaded segment */
	e = luw_cfi_find(t, off);
	CHECK(e != NULL, "%s: vaddr %#lx: no entry", path, (unsigned long)vaddr);
	if (!e)
		return;
	(*checked)++;
	if (!rule_matches(e, r, signal, why, sizeof(why))) {
		luw_cfi_format(e, got, sizeof(got));
		CHECK(0, "%s: vaddr %#lx (row at %#lx): readelf says %s; table says %s",
		      path, (unsigned long)vaddr, (unsigned long)r->loc, why, got);
		return;
	}
	/* r14 rows mean something only beside a CFA rule (not vmseq). */
	k = LUW_UW_CFA_OF(e->rule);
	if ((k != LUW_UW_CFA_RSP && k != LUW_UW_CFA_RBP && k != LUW_UW_CFA_PLT) ||
	    (e->rule & LUW_UW_VMSEQ))
		return;
	x = luw_cfi_find_r14(t, off);
	r14_checked++;
	if (x && x->rule == LUW_UW_R14_CFA)
		r14_saved_checked++;
	CHECK(r14_matches(x, r->r14),
	      "%s: vaddr %#lx (row at %#lx): readelf says r14 %s; table says %s %d",
	      path, (unsigned long)vaddr, (unsigned long)r->loc,
	      r->r14[0] ? r->r14 : "(none)",
	      !x ? "no row" : x->rule == LUW_UW_R14_CFA ? "c" :
	      x->rule == LUW_UW_R14_SAME ? "same" : "undef", x ? x->off : 0);
}

/*
 * Does the FDE f claim rbp+16 at its first byte over the frame-pointer
 * prologue?  Then its rows hold only from the third instruction on.
 */
static int fp_prologue_fde(const char *path, const struct luw_symbols *elf,
			   const struct ref_fde *f)
{
	static const unsigned char want[] = { 0x55, 0x48, 0x89, 0xe5 };
	unsigned char code[sizeof(want)];
	uint64_t off;
	FILE *fp;
	int ok;

	if (!f->nrows || f->rows[0].loc != f->lo || f->signal ||
	    strcmp(f->rows[0].cfa, "rbp+16") || f->hi - f->lo < sizeof(want) ||
	    luw_symbols_vaddr2off(elf, f->lo, &off))
		return 0;
	fp = fopen(path, "rb");
	if (!fp)
		return 0;
	ok = fseek(fp, (long)off, SEEK_SET) == 0 &&
	     fread(code, 1, sizeof(code), fp) == sizeof(code) &&
	     !memcmp(code, want, sizeof(want));
	fclose(fp);
	return ok;
}

/* n bytes of the file at path from offset off: 0, or -1. */
static int bytes_at(const char *path, uint64_t off, unsigned char *b, size_t n)
{
	FILE *f = fopen(path, "rb");
	int ok;

	if (!f)
		return -1;
	ok = !fseek(f, (long)off, SEEK_SET) && fread(b, 1, n, f) == n;
	fclose(f);
	return ok ? 0 : -1;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct ref_fde *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The module's lookup index (luw_uw_find_ix()) finds the entry the plain
 * binary search finds, for every entry's first and last byte, the bytes
 * around them and below and past the table.
 */
static void check_index(const char *path, const struct luw_cfi *t)
{
	uint32_t shift, nb = luw_uw_index_len(t->ent, t->n, &shift);
	uint32_t *first = calloc(nb, sizeof(*first));
	size_t bad = 0;

	if (!first)
		exit(2);
	luw_uw_index_build(t->ent, t->n, shift, first, nb);
	CHECK(nb <= t->n / LUW_UW_INDEX_PER + 2, "%s: %u buckets for %u entries",
	      path, nb, t->n);
	for (uint32_t i = 0; i < t->n; i++) {
		uint64_t at[] = { t->ent[i].start, t->ent[i].start + 1,
				  (uint64_t)t->ent[i].start - 1,
				  (uint64_t)t->ent[i].start + (1u << shift) };

		for (size_t j = 0; j < sizeof(at) / sizeof(at[0]); j++)
			if (luw_uw_find(t->ent, t->n, at[j]) !=
			    luw_uw_find_ix(t->ent, t->n, first, nb, shift, at[j]))
				bad++;
	}
	CHECK(bad == 0, "%s: the index disagrees with the search %zu times",
	      path, bad);
	CHECK(luw_uw_find_ix(t->ent, t->n, first, nb, shift,
			     0xffffffffffULL) == NULL &&
	      luw_uw_find_ix(t->ent, t->n, first, nb, shift, 0x7fffffff) ==
	      luw_uw_find(t->ent, t->n, 0x7fffffff),
	      "%s: the index past the table", path);
	free(first);
}

static void check_file(const char *path)
{
	char err[512];
	struct luw_cfi *t = luw_cfi_build(path, err, sizeof(err));
	struct luw_symbols *elf = luw_symbols_load(path, err, sizeof(err));
	size_t checked = 0, gaps = 0, fixed = 0, tails = 0;
	struct ref ref;

	r14_checked = r14_saved_checked = 0;
	CHECK(t && elf, "%s: %s", path, err);
	if (!t || !elf)
		goto out;
	CHECK(luw_uw_check(t->hdr, t->size) == 0, "%s: table fails its own check",
	      path);
	check_index(path, t);
	CHECK(read_ref(path, &ref) == 0, "%s: readelf failed", path);
	CHECK(ref.nfdes == t->st.fdes, "%s: readelf lists %zu FDEs, builder %zu",
	      path, ref.nfdes, t->st.fdes);
	CHECK(t->st.fdes_bad == 0, "%s: %zu FDEs not decoded", path,
	      t->st.fdes_bad);
	qsort(ref.fdes, ref.nfdes, sizeof(*ref.fdes), fde_cmp);
	for (size_t i = 0; i < ref.nfdes && luw_test_failures < 20; i++) {
		const struct ref_fde *f = &ref.fdes[i];
		uint64_t from = f->lo;

		if (fp_prologue_fde(path, elf, f)) {
			struct ref_row entry = { .loc = f->lo, .cfa = "rsp+8",
						 .ra = "c-8" };
			struct ref_row pushed = { .loc = f->lo + 1,
						  .cfa = "rsp+16", .ra = "c-8",
						  .rbp = "c-16" };

			check_at(path, t, elf, f->lo, &entry, 0, &checked);
			check_at(path, t, elf, f->lo + 1, &pushed, 0, &checked);
			check_at(path, t, elf, f->lo + 3, &pushed, 0, &checked);
			from = f->lo + 4;
			fixed++;
		}
		for (size_t j = 0; j < f->nrows; j++) {
			uint64_t end = j + 1 < f->nrows ? f->rows[j + 1].loc : f->hi;
			uint64_t at = f->rows[j].loc < from ? from : f->rows[j].loc;

			if (end <= at)
				continue;
			check_at(path, t, elf, at, &f->rows[j], f->signal,
				 &checked);
			check_at(path, t, elf, end - 1, &f->rows[j], f->signal,
				 &checked);
		}
		/* Bytes after this FDE that no FDE covers must be NONE. */
		if (i + 1 < ref.nfdes && f->hi < ref.fdes[i + 1].lo) {
			uint64_t off;

			if (!luw_symbols_vaddr2off(elf, f->hi, &off)) {
				const struct luw_uw_entry *e = luw_cfi_find(t, off);

				gaps++;
				CHECK(e && LUW_UW_CFA_OF(e->rule) == LUW_UW_CFA_NONE,
				      "%s: gap at %#lx not NONE", path,
				      (unsigned long)f->hi);
			}
		}
		/* A stub that ends its FDE at a syscall, nothing pushed. */
		if (f->nrows && !strcmp(f->rows[f->nrows - 1].cfa, "rsp+8") &&
		    !strcmp(f->rows[f->nrows - 1].ra, "c-8") &&
		    (i + 1 == ref.nfdes || f->hi + 2 < ref.fdes[i + 1].lo)) {
			unsigned char b[2];
			uint64_t off;

			if (!luw_symbols_vaddr2off(elf, f->hi, &off) &&
			    !bytes_at(path, off, b, 2) && b[0] == 0x0f &&
			    b[1] == 0x05) {
				const struct luw_uw_entry *e =
					luw_cfi_find(t, off + 2);
				const struct luw_uw_entry *n =
					luw_cfi_find(t, off + 3);

				tails++;
				CHECK(e && e->rule == (LUW_UW_RULE(LUW_UW_CFA_RSP,
								   LUW_UW_RBP_SAME) |
						       LUW_UW_SYSCALL) &&
				      e->cfa_off == 8 && e->ra_off == -8 && n &&
				      LUW_UW_CFA_OF(n->rule) == LUW_UW_CFA_NONE,
				      "%s: after the syscall at %#lx: no SYSCALL "
				      "row rsp+8 on its one byte", path,
				      (unsigned long)f->hi);
			}
		}
	}
	CHECK(checked > 2 * ref.nfdes / 2, "%s: only %zu rows checked", path,
	      checked);
	printf("%s: %zu FDEs, %zu row ends and %zu gaps agree with readelf "
	       "(%u entries, %zu unsup, %zu plt, %zu end rows; %zu "
	       "frame-pointer prologues given their entry rules); r14 at %zu "
	       "of them (%zu saved at CFA+N): %u r14 rows, %zu bytes beside "
	       "%zu of entries (+%.1f%%)\n",
	       path, ref.nfdes, checked, gaps, t->n, t->st.unsup, t->st.plt,
	       t->st.end, fixed, r14_checked, r14_saved_checked, t->nr14,
	       t->nr14 * sizeof(struct luw_uw_r14),
	       t->n * sizeof(struct luw_uw_entry),
	       100.0 * (double)(t->nr14 * sizeof(struct luw_uw_r14)) /
		       (double)(t->size - t->nr14 * sizeof(struct luw_uw_r14)));
	CHECK(r14_checked > checked / 2, "%s: r14 checked at only %zu of %zu",
	      path, r14_checked, checked);
	/* The r14 rows are the cheap part: most code leaves r14 alone. */
	CHECK(t->nr14 * sizeof(struct luw_uw_r14) * 4 <
		      t->n * sizeof(struct luw_uw_entry),
	      "%s: %u r14 rows cost a quarter of %u entries or more", path,
	      t->nr14, t->n);
	if (strstr(path, "libluajit") || strstr(path, "tarantool"))
		CHECK(r14_saved_checked >= 50,
		      "%s: r14 saved at CFA+N at only %zu checked points", path,
		      r14_saved_checked);
	CHECK(tails == t->st.syscall_tails, "%s: %zu syscall tails, the "
	      "builder made %zu rows", path, tails, t->st.syscall_tails);
	if (strstr(path, "libc.so"))
		CHECK(tails >= 2, "%s: %zu syscall tails (clone, clone3)", path,
		      tails);
	if (!strcmp(path, "/usr/bin/luajit"))
		CHECK(fixed == 1, "%s: %zu FDEs over a frame-pointer prologue "
		      "claim rbp+16 at entry, want 1 (lj_vm_ffi_call)", path,
		      fixed);
	free_ref(&ref);
out:
	luw_cfi_free(t);
	luw_symbols_free(elf);
}

/* luw_uw_check() must refuse damaged tables, the kernel's upload guard. */
static void check_validation(const char *path)
{
	char err[512];
	struct luw_cfi *t = luw_cfi_build(path, err, sizeof(err));
	struct luw_uw_hdr *h;
	struct luw_uw_entry *e;
	struct luw_uw_r14 *x;

	CHECK(t != NULL, "%s", err);
	if (!t)
		return;
	h = malloc(t->size);
	if (!h)
		exit(2);
	e = (struct luw_uw_entry *)(h + 1);
	x = (struct luw_uw_r14 *)(e + t->n);
	CHECK(t->nr14 >= 2, "%s: %u r14 rows", path, t->nr14);
	if (t->nr14 < 2) {
		free(h);
		luw_cfi_free(t);
		return;
	}
#define DAMAGED(what, mutate, len)                                          \
	do {                                                                \
		memcpy(h, t->hdr, t->size);                                 \
		mutate;                                                     \
		CHECK(luw_uw_check(h, len) == -22, "accepted: %s", what);   \
	} while (0)
	DAMAGED("bad magic", h->magic ^= 1, t->size);
	DAMAGED("future version", h->version++, t->size);
	DAMAGED("unknown flag", h->flags |= 0x8000, t->size);
	DAMAGED("short buffer", (void)0, t->size - 1);
	DAMAGED("header only", (void)0, sizeof(*h));
	DAMAGED("entry count too high", h->nentries++, t->size);
	DAMAGED("unsorted", e[1].start = e[0].start, t->size);
	DAMAGED("bad cfa rule", e[1].rule = 0x0e, t->size);
	DAMAGED("reserved rule bit 3", e[1].rule = 0x09, t->size);
	DAMAGED("plt with rbp at rbp+N",
		e[1].rule = LUW_UW_RULE(LUW_UW_CFA_PLT, LUW_UW_RBP_RBP), t->size);
	DAMAGED("no NONE terminator", e[t->n - 1].rule = 1, t->size);
	DAMAGED("build-id too long", h->build_id_len = 21, t->size);
	DAMAGED("version 2 (no r14 rows)", h->version = 2, t->size);
	DAMAGED("r14 row size", h->r14_size = 4, t->size);
	DAMAGED("r14 count too high", h->nr14++, t->size);
	DAMAGED("r14 rows cut", (void)0, t->size - sizeof(struct luw_uw_r14));
	DAMAGED("bad r14 rule", x[1].rule = LUW_UW_R14_MAX + 1, t->size);
	DAMAGED("r14 pad", x[1].pad = 1, t->size);
	DAMAGED("r14 offset on SAME", (x[1].rule = LUW_UW_R14_SAME, x[1].off = 8),
		t->size);
	DAMAGED("r14 rows unsorted", x[1].start = x[0].start, t->size);
	DAMAGED("first r14 row after text-lo", x[0].start++, t->size);
	DAMAGED("r14 row past text-hi", x[t->nr14 - 1].start = h->text_hi,
		t->size);
#undef DAMAGED
	CHECK(luw_uw_check(t->hdr, t->size) == 0, "intact table refused");
	/* Every rule value the format defines is accepted, alone and mixed. */
	for (int k = 0; k <= LUW_UW_CFA_MAX; k++) {
		for (int b = 0; b <= LUW_UW_RBP_MAX; b++) {
			if (k == LUW_UW_CFA_PLT && b == LUW_UW_RBP_RBP)
				continue;
			memcpy(h, t->hdr, t->size);
			e[1].rule = LUW_UW_RULE(k, b);
			e[1].aux = -40;
			CHECK(luw_uw_check(h, t->size) == 0,
			      "rule cfa %d rbp %d refused", k, b);
		}
	}
	CHECK(luw_uw_find(t->ent, t->n, 0xffffffffffULL) == NULL,
	      "pc beyond 4 GiB found an entry");
	CHECK(luw_uw_find(t->ent, 0, 0) == NULL, "empty table found an entry");
	free(h);
	luw_cfi_free(t);
}

/* Files that are not whole ELF files: a clear error or a table, no crash. */
static void check_bad_input(void)
{
	static const long cuts[] = { 0, 16, 64, 4096, 65536, 300000, 500000 };
	char path[] = "/tmp/luw-cfi-XXXXXX", err[512];
	struct luw_cfi *t;
	FILE *in, *out;
	char *buf;
	long len;
	int fd;

	err[0] = '\0';
	t = luw_cfi_build("/etc/passwd", err, sizeof(err));
	CHECK(!t && strstr(err, "/etc/passwd"), "text file: %s", err);
	luw_cfi_free(t);
	t = luw_cfi_build("/nonexistent/x", err, sizeof(err));
	CHECK(!t && strstr(err, "No such file"), "missing file: %s", err);
	luw_cfi_free(t);

	in = fopen("/usr/bin/luajit", "rb");
	buf = malloc(1 << 20);
	if (!in || !buf)
		exit(2);
	len = (long)fread(buf, 1, 1 << 20, in);
	fclose(in);
	fd = mkstemp(path);
	if (fd < 0)
		exit(2);
	close(fd);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		long n = cuts[i] < len ? cuts[i] : len;

		out = fopen(path, "wb");
		if (!out || fwrite(buf, 1, (size_t)n, out) != (size_t)n)
			exit(2);
		fclose(out);
		err[0] = '\0';
		t = luw_cfi_build(path, err, sizeof(err));
		/* Every cut loses code: refused, with a message. */
		CHECK(!t && strstr(err, path), "luajit cut at %ld: %s", n,
		      t ? "table built" : "no message");
		luw_cfi_free(t);
	}
	unlink(path);
	free(buf);
}

int main(int argc, char **argv)
{
	struct luw_maps maps;
	const char *libc = NULL;

	for (int i = 2; i < argc; i++)
		check_file(argv[i]);
	check_file("/usr/bin/luajit");
	if (access("/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2", R_OK) == 0)
		check_file("/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2");
	if (access("/usr/bin/tarantool", R_OK) == 0)
		check_file("/usr/bin/tarantool");
	if (luw_maps_read(0, &maps) == 0) {
		for (size_t i = 0; i < maps.n && !libc; i++)
			if (strstr(maps.v[i].path, "/libc.so"))
				libc = maps.v[i].path;
		CHECK(libc != NULL, "libc not found in /proc/self/maps");
		if (libc)
			check_file(libc);
		luw_maps_free(&maps);
	}
	check_validation("/usr/bin/luajit");
	check_bad_input();
	if (luw_test_status("test_cfi"))
		return 1;
	printf("ok\n");
	return 0;
}
