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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luwdev.h"

struct one_entry_table {
	struct luw_uw_hdr h;
	struct luw_uw_entry e[1];
};

int main(int argc, char **argv)
{
	struct luw_attach a = { .sample_rate = 99 };
	struct one_entry_table tab = { 0 };
	int fd, r;

	if (argc < 2)
		return 2;
	a.pid = atoi(argv[1]);
	fd = luwdev_open(0);
	if (fd < 0) {
		printf("open: %s\n", strerrorname_np(-fd));
		return 1;
	}
	r = luwdev_attach(fd, &a);
	if (r) {
		printf("%s\n", strerrorname_np(-r));
		return 1;
	}
	if (argc > 2 && !strcmp(argv[2], "replace")) {
		tab.h.magic = LUW_UW_MAGIC;
		tab.h.version = LUW_UW_VERSION;
		tab.h.hdr_size = sizeof(tab.h);
		tab.h.entry_size = sizeof(tab.e[0]);
		tab.h.nentries = 1;
		tab.h.text_lo = tab.h.text_hi = 0x1000;
		tab.e[0].start = 0x1000;
		tab.e[0].rule = LUW_UW_RULE(LUW_UW_CFA_NONE, LUW_UW_RBP_SAME);
		for (int i = 0; i < 2; i++) {
			r = luwdev_upload_table(fd, a.pid, 0x400000, 0x401000,
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
