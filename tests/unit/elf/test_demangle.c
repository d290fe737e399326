/*
 * elf/demangle.c against binutils' c++filt on real C++ symbols: every
 * mangled name ("_Z...") in the .dynsym of Debian's libstdc++.so.6 and of
 * tarantool must demangle to exactly what `c++filt -i` prints for it
 * (-i: std::string for std::basic_string<char, ...>, as __cxa_demangle
 * writes it).  Names
 * that are not mangled C++ symbols stay as they are (NULL): C symbols,
 * including those that spell a C++ type ("i" is "int" to the demangler,
 * never to us), and "_Z" names that do not demangle.
 *
 * usage: test_demangle FIXTURES
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/demangle.h"
#include "elf/elf.h"
#include "testlib.h"

#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
#define TARANTOOL "/usr/bin/tarantool"

struct names {
	char **v;
	size_t n, cap;
};

/* The "_Z" names of path's .dynsym, appended to ns; how many. */
static size_t dynsym_mangled(const char *path, struct names *ns)
{
	char err[512];
	Elf_Scn *scn = NULL;
	size_t got = 0;
	int fd = -1;
	Elf *elf = luw_elf_open(path, &fd, err, sizeof(err));

	CHECK(elf, "%s", err);
	if (!elf)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    !(nm = elf_strptr(elf, sh.sh_link, sym.st_name)) ||
			    strncmp(nm, "_Z", 2))
				continue;
			if (ns->n == ns->cap) {
				ns->cap = ns->cap ? 2 * ns->cap : 1024;
				ns->v = realloc(ns->v, ns->cap * sizeof(*ns->v));
				if (!ns->v) {
					perror("realloc");
					exit(1);
				}
			}
			ns->v[ns->n++] = strdup(nm);
			got++;
		}
	}
	elf_end(elf);
	close(fd);
	return got;
}

/* Every name through c++filt (one a line) and through luw_demangle. */
static void against_cxxfilt(const struct names *ns)
{
	char in[] = "/tmp/luw-demangle-XXXXXX", cmd[128], *line = NULL;
	size_t cap = 0, i = 0, same = 0;
	int fd = mkstemp(in);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	FILE *out;

	CHECK(f, "cannot write %s", in);
	if (!f)
		return;
	for (size_t k = 0; k < ns->n; k++)
		fprintf(f, "%s\n", ns->v[k]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "c++filt -i <%s", in);
	out = popen(cmd, "r");
	CHECK(out, "cannot run %s", cmd);
	while (out && getline(&line, &cap, out) > 0 && i < ns->n) {
		char *got = luw_demangle(ns->v[i]);
		const char *ours = got ? got : ns->v[i];

		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(ours, line))
			same++;
		else
			CHECK(0, "%s: \"%s\", c++filt \"%s\"", ns->v[i], ours, line);
		free(got);
		if (luw_test_failures > 20)
			break;
		i++;
	}
	CHECK(out && !pclose(out), "c++filt failed");
	CHECK(same == ns->n, "%zu of %zu names as c++filt prints them", same,
	      ns->n);
	printf("%zu mangled names demangle as c++filt's\n", same);
	free(line);
	unlink(in);
}

static void check_one(const char *name, const char *want)
{
	char *got = luw_demangle(name);

	CHECK(want ? got && !strcmp(got, want) : !got, "%s: \"%s\", want \"%s\"",
	      name ? name : "NULL", got ? got : "NULL", want ? want : "NULL");
	free(got);
}

int main(void)
{
	struct names ns = { 0 };
	size_t n;

	elf_version(EV_CURRENT);
	n = dynsym_mangled(LIBSTDCXX, &ns);
	CHECK(n > 1000, "%s: %zu mangled names in .dynsym", LIBSTDCXX, n);
	n = dynsym_mangled(TARANTOOL, &ns);
	CHECK(n > 100, "%s: %zu mangled names in .dynsym", TARANTOOL, n);
	against_cxxfilt(&ns);

	check_one("_ZNSt8ios_base4InitC1Ev", "std::ios_base::Init::Init()");
	check_one("_ZSt4cout", "std::cout");
	/* Not C++ symbols: C names, what only a type spells, broken ones. */
	check_one(NULL, NULL);
	check_one("", NULL);
	check_one("main", NULL);
	check_one("lua_pcall", NULL);
	check_one("i", NULL);
	check_one("Pc", NULL);
	check_one("St6vector", NULL);
	check_one("_Z", NULL);
	check_one("_Zx", NULL);
	check_one("_ZN3foo", NULL);
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	if (luw_test_status("test_demangle"))
		return 1;
	printf("test_demangle: ok\n");
	return 0;
}
