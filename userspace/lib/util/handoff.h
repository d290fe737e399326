/*
 * handoff: a program that hands its whole job to a sibling program by
 * exec, input and all.  luaunwind-report stays lean (no libelf, libdw,
 * capstone: their relocations cost more at start than a small report)
 * and execs luaunwind-report-luw for the input only that one reads.  The
 * input goes over as a descriptor at its first byte, named in an
 * environment variable, since a pipe's bytes read to recognise the input
 * cannot be read again: they go, with the rest, into a memfd.
 */
#ifndef LUW_UTIL_HANDOFF_H
#define LUW_UTIL_HANDOFF_H

#include <stddef.h>

/*
 * Where the sibling program name is, into path: libexec/luaunwind/NAME
 * beside this program's bin/ when installed, else this program's own
 * directory (a build tree).  0; or -1 with errno set and path the
 * installed place, for the message.
 */
int luw_handoff_path(const char *name, char *path, size_t size);

/*
 * Hand the input fd over in environment variable env, for the exec that
 * follows: fd itself when it can be read again from its start (a file),
 * else a memfd holding the n bytes at head already read and the rest of
 * fd.  0, or -1 with errno set.
 */
int luw_handoff_pass(const char *env, int fd, const void *head, size_t n);

/*
 * The sibling's side: the descriptor handed over in env, at its first
 * byte, into *fd (-1: none), the variable taken out of the environment.
 * 0, or -1 when env holds no descriptor number (left as it is).
 */
int luw_handoff_take(const char *env, int *fd);

#endif
