#include "record/syscalls.h"

#include <stdio.h>

/* [nr] = "name", from <asm/unistd_64.h> (record/CMakeLists.txt). */
static const char *const names[] = {
#include "syscall_names.inc"
};

const char *luw_syscalls_name(int nr)
{
	static _Thread_local char buf[24];

	if (nr >= 0 && (unsigned int)nr < sizeof(names) / sizeof(names[0]) &&
	    names[nr])
		return names[nr];
	snprintf(buf, sizeof(buf), "syscall_%d", nr);
	return buf;
}
