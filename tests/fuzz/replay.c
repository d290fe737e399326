/*
 * Replays inputs through a fuzz target without libFuzzer, so the corpus and
 * every kept crash run in the ordinary (and the sanitizer) test builds:
 *
 *   replay_X FILE|DIR...
 *
 * Directories are read one level deep; files named README* are skipped.
 * A failing input aborts inside the target, naming itself first.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		perror(path);
		return -1;
	}
	for (;;) {
		uint8_t *q;

		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			q = realloc(buf, cap);
			if (!q) {
				fprintf(stderr, "%s: out of memory\n", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = q;
		}
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
	}
	fclose(f);
	fprintf(stderr, "replay %s (%zu bytes)\n", path, n);
	/* Shrink to the input's size so ASan sees any read past it. */
	{
		uint8_t *exact = realloc(buf, n ? n : 1);

		if (!exact) {
			free(buf);
			return -1;
		}
		buf = exact;
	}
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, count = 0;

	for (i = 1; i < argc; i++) {
		struct stat sb;
		struct dirent **ents;
		int j, n;

		if (stat(argv[i], &sb)) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			if (replay_file(argv[i]))
				return 1;
			count++;
			continue;
		}
		n = scandir(argv[i], &ents, NULL, alphasort);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (j = 0; j < n; j++) {
			char path[4096];
			const char *name = ents[j]->d_name;

			snprintf(path, sizeof(path), "%s/%s", argv[i], name);
			if (name[0] != '.' && strncmp(name, "README", 6) &&
			    !stat(path, &sb) && S_ISREG(sb.st_mode)) {
				if (replay_file(path))
					return 1;
				count++;
			}
			free(ents[j]);
		}
		free(ents);
	}
	printf("%d inputs replayed\n", count);
	return count ? 0 : 1;
}
