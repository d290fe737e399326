/*
 * demangle: see demangle.h.
 */
#include "elf/demangle.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++ (cxxabi.h); declared here as the C header has no prototype. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *luw_demangle(const char *name)
{
	int status = -1;
	char *out;

	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
