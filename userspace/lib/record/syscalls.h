/*
 * syscalls: x86-64 system call names by number, for the off-CPU report's
 * "[blocked: NAME]" frames.  The table is made at build time from the
 * kernel's <asm/unistd_64.h> (record/CMakeLists.txt); a number it does not
 * have (a newer kernel's call) is shown as "syscall_N".
 */
#ifndef LUW_RECORD_SYSCALLS_H
#define LUW_RECORD_SYSCALLS_H

/* The name of nr; "syscall_N" in a static buffer when unknown. */
const char *luw_syscalls_name(int nr);

#endif
