/*
 * Attach to a process straight through the ioctl, host stacks only, so
 * that a refusal is the module's own (luaunwind-ctl reads /proc/PID first
 * and would fail earlier for another user's process):
 *   try_attach PID            prints "ok" or the errno name; exit 0 / 1
 *   try_attach PID replace    also uploads a table for one range twice,
 *                             so the first is freed after an RCU grace
 *                             period, then exits: the session (and the
 *                             target) end with the file, and the caller
 *                             may rmmod at once.
 *   try_attach PID hold HZ S  attaches at HZ, samples for S seconds and
 *                             prints "ok samples=N" (t_chroot: built
 *                             static, so that it runs in a bare chroot).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/dev.h"
#include "onetab.h"

int main(int argc, char **argv)
{
	struct luw_attach a = { .sample_rate = 99 };
	struct one_entry_table tab;
	int fd, r;

	if (argc < 2)
		return 2;
	a.pid = atoi(argv[1]);
	fd = luw_dev_open(0);
	if (fd < 0) {
		printf("open: %s\n", strerrorname_np(-fd));
		return 1;
	}
	if (argc > 4 && !strcmp(argv[2], "hold"))
		a.sample_rate = strtoull(argv[3], NULL, 10);
	else if (argc > 2 && strcmp(argv[2], "replace"))
		return 2;
	r = luw_dev_attach(fd, &a);
	if (r) {
		printf("%s\n", strerrorname_np(-r));
		return 1;
	}
	if (argc > 4 && !strcmp(argv[2], "hold")) {
		struct luw_stats st;

		sleep(atoi(argv[4]));
		r = luw_dev_stats(fd, a.pid, &st);
		if (r) {
			printf("stats: %s\n", strerrorname_np(-r));
			return 1;
		}
		printf("ok samples=%llu\n", (unsigned long long)st.samples);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "replace")) {
		one_entry_table_init(&tab);
		for (int i = 0; i < 2; i++) {
			r = luw_dev_upload_table(fd, a.pid, 0x400000, 0x401000,
						0, &tab, sizeof(tab));
			if (r) {
				printf("upload: %s\n", strerrorname_np(-r));
				return 1;
			}
		}
	}
	printf("ok\n");
	return 0;
}
