/*
 * vdso: the [vdso] image, copied out and opened.  See proc/vdso.h.
 */
#include "proc/vdso.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/mem.h"

/*
 * The kernel's vDSO is a few pages (two on x86-64).  The mapping is
 * copied whole before libelf looks at it, so a size from the maps that is
 * no vDSO's must not become an allocation that large; 16 MiB is far
 * above any vDSO a kernel ships.
 */
#define VDSO_MAX (16u << 20)

int luw_vdso_is(const struct luw_map *mp)
{
	return !strcmp(mp->path, "[vdso]");
}

int luw_vdso_open(pid_t pid, const struct luw_map *mp, struct luw_vdso *v)
{
	memset(v, 0, sizeof(*v));
	v->len = mp->end - mp->start;
	if (v->len > VDSO_MAX) {
		errno = EFBIG;
		return -1;
	}
	v->img = luw_mem_dup(pid, mp->start, v->len);
	if (!v->img)
		return -1;
	elf_version(EV_CURRENT);
	v->elf = elf_memory(v->img, v->len);
	if (!v->elf) {
		luw_vdso_close(v);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

void luw_vdso_close(struct luw_vdso *v)
{
	if (v->elf)
		elf_end(v->elf);
	free(v->img);
	memset(v, 0, sizeof(*v));
}
