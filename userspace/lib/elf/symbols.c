/* ELF symbolization with libelf; see symbols.h. */
#include "elf/symbols.h"
#include "elf/ehframe.h"
#include "util/fail.h"
#include "elf/filecache.h"
#include "util/grow.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DWARF_REG_RA 16		/* x86-64 return address column */

int luw_symbols_off2vaddr(const struct luw_symbols *e, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < e->nsegs; i++) {
		const struct luw_elf_seg *s = &e->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return 0;
		}
	}
	return -1;
}

int luw_symbols_vaddr2off(const struct luw_symbols *e, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < e->nsegs; i++) {
		const struct luw_elf_seg *s = &e->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -1;
}

/* ---- symbol collection ---- */

struct cand {
	uint64_t addr, size, secend;
	size_t name;		/* offset into the name pool */
	int score;
};

struct collect {
	struct cand *v;
	size_t n, cap;
	char *pool;
	size_t plen, pcap;
};

static int pool_add(struct collect *c, const char *s, size_t *off)
{
	/* "name@@VERSION" in a .symtab is the versioned alias of name. */
	size_t len = strcspn(s, "@") + 1;

	if (luw_grow((void **)&c->pool, &c->pcap, c->plen + len, 1))
		return -1;
	memcpy(c->pool + c->plen, s, len - 1);
	c->pool[c->plen + len - 1] = '\0';
	*off = c->plen;
	c->plen += len;
	return 0;
}

static int score_of(const GElf_Sym *s, const char *name)
{
	int bind = GELF_ST_BIND(s->st_info), type = GELF_ST_TYPE(s->st_info);
	int sc = 0;

	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		sc += 100;
	sc += bind == STB_GLOBAL ? 30 : bind == STB_WEAK ? 20 : 10;
	if (name[0] != '_')
		sc += 2;
	else if (name[1] != '_')
		sc += 1;
	return sc;
}

/* Add the code symbols of one symbol table section. */
static int collect_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			  struct collect *c)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n;

	if (!d || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Shdr tsh;
		Elf_Scn *tscn;
		const char *name;
		int type;

		if (!gelf_getsym(d, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    type != STT_NOTYPE)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
			continue;
		tscn = elf_getscn(elf, s.st_shndx);
		if (!tscn || !gelf_getshdr(tscn, &tsh) ||
		    !(tsh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name || s.st_value < tsh.sh_addr)
			continue;
		/* Local labels of assemblers (.L...) are not functions. */
		if (name[0] == '.' && name[1] == 'L')
			continue;
		if (c->n == c->cap) {
			if (luw_grow((void **)&c->v, &c->cap, c->n + 1,
				     sizeof(*c->v)))
				return -1;
		}
		c->v[c->n].addr = s.st_value;
		c->v[c->n].size = s.st_size;
		c->v[c->n].secend = tsh.sh_addr + tsh.sh_size;
		c->v[c->n].score = score_of(&s, name);
		if (pool_add(c, name, &c->v[c->n].name))
			return -1;
		c->n++;
	}
	return 0;
}

/* Collect from every section of type `type`; returns how many were seen. */
static int collect_type(Elf *elf, Elf64_Word type, struct collect *c,
			int *found)
{
	Elf_Scn *scn = NULL;

	*found = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		(*found)++;
		if (collect_symtab(elf, scn, &sh, c))
			return -1;
	}
	return 0;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return y->score - x->score;	/* best first */
}

/* ---- separate debug files ---- */

/*
 * Stripped executables lose _start.  The CFI of the entry point still
 * marks the return address undefined over exactly that code: name it.
 */
static void name_entry(Elf *elf, struct luw_symbols *e, struct collect *c)
{
	Dwarf_CFI *cfi;
	uint64_t addr = e->entry, end = e->entry;
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;

	if (!e->entry)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].addr <= e->entry &&
		    e->entry < c->v[i].addr + c->v[i].size)
			return;
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		return;
	for (;;) {
		Dwarf_Frame *fr;
		Dwarf_Op mem[3], *ops;
		size_t nops;
		Dwarf_Addr s, en;

		if (dwarf_cfi_addrframe(cfi, addr, &fr))
			break;
		if (dwarf_frame_info(fr, &s, &en, NULL) < 0 ||
		    dwarf_frame_register(fr, DWARF_REG_RA, mem, &ops, &nops) ||
		    nops != 0 || ops != mem || en <= addr) {
			free(fr);
			break;
		}
		free(fr);
		end = addr = en;
	}
	dwarf_cfi_end(cfi);
	if (end == e->entry)
		return;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_addr <= e->entry &&
		    e->entry < sh.sh_addr + sh.sh_size)
			break;
	if (luw_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		return;
	c->v[c->n].addr = e->entry;
	c->v[c->n].size = end - e->entry;
	c->v[c->n].secend = scn ? sh.sh_addr + sh.sh_size : end;
	c->v[c->n].score = 0;
	if (!pool_add(c, "_start", &c->v[c->n].name))
		c->n++;
}

/* Sort, keep the best name per address, fix every extent. */
static int finish_syms(struct luw_symbols *e, struct collect *c)
{
	size_t k = 0;

	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cand_cmp);
	for (size_t i = 0; i < c->n; i++) {
		if (k && c->v[k - 1].addr == c->v[i].addr) {
			if (c->v[i].size > c->v[k - 1].size)
				c->v[k - 1].size = c->v[i].size;
			continue;
		}
		c->v[k++] = c->v[i];
	}
	e->syms = calloc(k ? k : 1, sizeof(*e->syms));
	if (!e->syms)
		return -1;
	for (size_t i = 0; i < k; i++) {
		uint64_t end = c->v[i].addr + c->v[i].size;

		if (!c->v[i].size) {
			/* Assembler labels: up to the next symbol, in section. */
			end = c->v[i].secend;
			if (i + 1 < k && c->v[i + 1].addr < end)
				end = c->v[i + 1].addr;
		}
		e->syms[i].addr = c->v[i].addr;
		e->syms[i].end = end;
	}
	e->nsyms = k;
	e->names = c->pool;
	c->pool = NULL;
	for (size_t i = 0; i < k; i++)
		e->syms[i].name = e->names + c->v[i].name;
	return 0;
}

static int load_from(struct luw_symbols *e, Elf *elf, char *err, size_t errlen)
{
	struct collect c = { 0 };
	Elf *delf = NULL;
	int dfd = -1, nsymtab, ndyn;
	GElf_Ehdr eh;
	int rc = -1;

	if (!gelf_getehdr(elf, &eh)) {
		luw_fail(err, errlen, "%s: bad ELF header: %s", e->path,
		       elf_errmsg(-1));
		return -1;
	}
	e->e_type = eh.e_type;
	e->entry = eh.e_entry;
	e->build_id_len = luw_debugfile_build_id(elf, e->build_id, sizeof(e->build_id));
	if (luw_elf_read_segs(elf, &e->segs, &e->nsegs)) {
		luw_fail(err, errlen, "%s: truncated, or bad program headers",
		       e->path);
		return -1;
	}
	if (collect_type(elf, SHT_SYMTAB, &c, &nsymtab))
		goto nomem;
	if (!nsymtab) {
		char dpath[4400];

		if (!luw_debugfile_open(elf, e->path, NULL, dpath, sizeof(dpath),
				    &dfd, &delf))
			e->debug_path = strdup(dpath);
		if (delf && collect_type(delf, SHT_SYMTAB, &c, &nsymtab))
			goto nomem;
	}
	if (collect_type(elf, SHT_DYNSYM, &c, &ndyn))
		goto nomem;
	if (e->e_type == ET_EXEC || e->e_type == ET_DYN)
		name_entry(elf, e, &c);
	if (finish_syms(e, &c))
		goto nomem;
	rc = 0;
	goto out;
nomem:
	luw_fail(err, errlen, "%s: out of memory reading symbols", e->path);
out:
	if (delf)
		elf_end(delf);
	if (dfd >= 0)
		close(dfd);
	free(c.v);
	free(c.pool);
	return rc;
}

struct luw_symbols *luw_symbols_load(const char *path, char *err, size_t errlen)
{
	struct luw_symbols *e;
	const char *slash;
	Elf *elf;
	int fd;

	elf = luw_elf_open(path, &fd, err, errlen);
	if (!elf)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		free(e);
		elf_end(elf);
		close(fd);
		luw_fail(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	slash = strrchr(e->path, '/');
	e->name = slash ? slash + 1 : e->path;
	if (load_from(e, elf, err, errlen)) {
		luw_symbols_free(e);
		e = NULL;
	}
	elf_end(elf);
	close(fd);
	return e;
}

struct luw_symbols *luw_symbols_load_elf(Elf *elf, const char *name, char *err,
				 size_t errlen)
{
	struct luw_symbols *e;

	if (elf_kind(elf) != ELF_K_ELF) {
		luw_fail(err, errlen, "%s: not an ELF image", name);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(name))) {
		free(e);
		luw_fail(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	e->name = e->path;
	if (load_from(e, elf, err, errlen)) {
		luw_symbols_free(e);
		return NULL;
	}
	return e;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct luw_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* The file's FDE ranges, sorted by start, listed on first use. */
static void fde_open(struct luw_symbols *e)
{
	struct luw_fdes f;
	Elf *elf;
	int fd;

	e->fde_state = -1;
	elf = luw_elf_open(e->path, &fd, NULL, 0);
	if (!elf)
		return;
	if (luw_ehframe_fdes(elf, &f) == 0 && f.n) {
		qsort(f.v, f.n, sizeof(*f.v), fde_cmp);
		e->fdes = f.v;
		e->nfde = f.n;
		e->fde_state = 1;
	}
	elf_end(elf);
	close(fd);
}

int luw_symbols_fde_start(struct luw_symbols *e, uint64_t vaddr, uint64_t *start)
{
	size_t lo = 0, hi;

	if (e->fde_state == 0)
		fde_open(e);
	if (e->fde_state != 1)
		return -1;
	hi = e->nfde;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->fdes[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* FDEs do not overlap: only the last one starting at or below vaddr
	 * can cover it. */
	if (!lo || vaddr >= e->fdes[lo - 1].end)
		return -1;
	*start = e->fdes[lo - 1].start;
	return 0;
}

void luw_symbols_free(struct luw_symbols *e)
{
	if (!e)
		return;
	free(e->fdes);
	free(e->path);
	free(e->debug_path);
	free(e->segs);
	free(e->syms);
	free(e->names);
	free(e);
}

const struct luw_symbols_sym *luw_symbols_at(const struct luw_symbols *e, uint64_t vaddr)
{
	size_t lo = 0, hi = e->nsyms;

	/* Last symbol starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A nested symbol may end first: look back a little for its parent. */
	for (size_t i = lo, steps = 0; i > 0 && steps < 16; i--, steps++)
		if (vaddr < e->syms[i - 1].end)
			return &e->syms[i - 1];
	return NULL;
}

const struct luw_symbols_sym *luw_symbols_named(const struct luw_symbols *e,
					const char *name)
{
	for (size_t i = 0; i < e->nsyms; i++)
		if (!strcmp(e->syms[i].name, name))
			return &e->syms[i];
	return NULL;
}

/* ---- cache ---- */

LUW_FILECACHE_DEFINE(struct luw_symbols, luw_symbols_get, luw_symbols_cache_clear,
		  luw_symbols_load, luw_symbols_free)
