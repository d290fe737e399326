/*
 * debugfile: an object's build-id and its separate debug file, the one
 * lookup both the symbol tables (elf/symbols.c) and the DWARF layouts
 * (target/layout.c) use.  The build-id and the .gnu_debuglink come from
 * libdwelf; the search is GDB's:
 *
 *   /usr/lib/debug/.build-id/XX/REST.debug          (by build-id)
 *   DIR/LINK, DIR/.debug/LINK, /usr/lib/debug/DIR/LINK  (by debuglink)
 *
 * where DIR is the object's directory.  A candidate is taken only when
 * it is an ELF file with the object's build-id (when both have one) and,
 * found by debuglink, the CRC the link states; anything else is another
 * build's file.
 */
#ifndef LUW_ELF_DEBUGFILE_H
#define LUW_ELF_DEBUGFILE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#define LUW_BUILD_ID_MAX 64

/* The object's GNU build-id into out (at most cap bytes): its length, or
 * 0 when it has none (or it is longer than cap). */
size_t luw_debugfile_build_id(Elf *elf, uint8_t *out, size_t cap);

/* Hex string of a build-id into buf (at least 2*len+1 bytes). */
void luw_debugfile_build_id_hex(const uint8_t *id, size_t len, char *buf);

/*
 * The separate debug file of elf, whose file is objpath.  root, when not
 * NULL, is tried before each path ("/proc/PID/root": the files as a
 * process in another mount namespace sees them).  0 with *fd and *delf
 * open (the caller ends both) and the path taken in path (without
 * root); -1 when there is none.
 */
int luw_debugfile_open(Elf *elf, const char *objpath, const char *root,
		   char *path, size_t plen, int *fd, Elf **delf);

#endif
