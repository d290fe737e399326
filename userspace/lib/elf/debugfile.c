/*
 * debugfile: build-ids and separate debug files.  See debugfile.h.
 */
#include "elf/debugfile.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DEBUG_ROOT "/usr/lib/debug"

size_t luw_debugfile_build_id(Elf *elf, uint8_t *out, size_t cap)
{
	const void *id;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &id);

	if (len <= 0 || (size_t)len > cap)
		return 0;
	memcpy(out, id, (size_t)len);
	return (size_t)len;
}

void luw_debugfile_build_id_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * len] = '\0';
}

/* .gnu_debuglink's CRC: zlib's crc32 of the whole file. */
static int file_crc(int fd, uint32_t *crc)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st) || st.st_size <= 0)
		return -1;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	*crc = (uint32_t)crc32(0, p, (uInt)st.st_size);
	munmap(p, (size_t)st.st_size);
	return 0;
}

/* path as this object's debug file: 0 with *fd and *delf open. */
static int try_one(const char *path, const uint8_t *id, size_t idlen,
		   const uint32_t *crc, int *fd, Elf **delf)
{
	uint8_t did[LUW_BUILD_ID_MAX];
	size_t dlen;
	uint32_t got;
	Elf *e;
	int f = open(path, O_RDONLY | O_CLOEXEC);

	if (f < 0)
		return -1;
	if (crc && (file_crc(f, &got) || got != *crc)) {
		close(f);
		return -1;
	}
	e = elf_begin(f, ELF_C_READ_MMAP, NULL);
	dlen = e && elf_kind(e) == ELF_K_ELF ? luw_debugfile_build_id(e, did, sizeof(did)) : 0;
	/* Without a build-id on one side, the CRC or the name decides. */
	if (!e || elf_kind(e) != ELF_K_ELF ||
	    (idlen && dlen && (dlen != idlen || memcmp(did, id, idlen)))) {
		if (e)
			elf_end(e);
		close(f);
		return -1;
	}
	*fd = f;
	*delf = e;
	return 0;
}

/* try_one under root first (when given), then as it is; path: cand. */
static int try_rooted(const char *root, const char *cand, char *path,
		      size_t plen, const uint8_t *id, size_t idlen,
		      const uint32_t *crc, int *fd, Elf **delf)
{
	char full[4500];

	for (int k = root ? 0 : 1; k < 2; k++) {
		if ((size_t)snprintf(full, sizeof(full), "%s%s", k ? "" : root,
				     cand) >= sizeof(full))
			continue;
		if (!try_one(full, id, idlen, crc, fd, delf)) {
			snprintf(path, plen, "%s", cand);
			return 0;
		}
	}
	return -1;
}

int luw_debugfile_open(Elf *elf, const char *objpath, const char *root,
		   char *path, size_t plen, int *fd, Elf **delf)
{
	char cand[4400], hex[2 * LUW_BUILD_ID_MAX + 1];
	uint8_t id[LUW_BUILD_ID_MAX];
	size_t idlen = luw_debugfile_build_id(elf, id, sizeof(id));
	const char *link, *slash;
	GElf_Word crc;
	int dlen;

	if (idlen >= 2) {
		luw_debugfile_build_id_hex(id, idlen, hex);
		snprintf(cand, sizeof(cand), DEBUG_ROOT "/.build-id/%.2s/%s.debug",
			 hex, hex + 2);
		if (!try_rooted(root, cand, path, plen, id, idlen, NULL, fd, delf))
			return 0;
	}
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (!link || !*link || strchr(link, '/'))
		return -1;
	slash = strrchr(objpath, '/');
	dlen = slash ? (int)(slash - objpath) : 0;
	for (int k = 0; k < 3; k++) {
		snprintf(cand, sizeof(cand),
			 k == 0 ? "%.*s/%s" : k == 1 ? "%.*s/.debug/%s" :
				  DEBUG_ROOT "%.*s/%s", dlen, objpath, link);
		/* The object naming itself is no separate file. */
		if (!strcmp(cand, objpath))
			continue;
		if (!try_rooted(root, cand, path, plen, id, idlen, &crc, fd, delf))
			return 0;
	}
	return -1;
}
