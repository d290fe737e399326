/*
 * luaname: Lua names.  See luaname.h.
 */
#include "luajit/luaname.h"

#include <string.h>

static const char *const reserved[] = {
	"and", "break", "do", "else", "elseif", "end", "false", "for",
	"function", "goto", "if", "in", "local", "nil", "not", "or", "repeat",
	"return", "then", "true", "until", "while",
};

int luw_luaname_ident(const char *s, size_t n)
{
	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9')))
			return 0;
	}
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strlen(reserved[i]) == n && !memcmp(reserved[i], s, n))
			return 0;
	return 1;
}
