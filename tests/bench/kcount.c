// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for tests/bench/handlercost.sh: counts the guest
 * instructions executed at each kernel-space address, for the whole run,
 * and writes them at exit as lines "ADDRESS COUNT" (ADDRESS 16 hex
 * digits, so that a text sort orders them as kallsyms does; only
 * addresses executed at least once).
 *
 *   qemu-system-x86_64 -plugin libkcount.so,out=FILE ...
 *
 * Each instruction gets an inline counter, no callback: under
 * -icount shift=0 the guest's clock is its instruction count, and the
 * counters add no guest instruction, so they change no guest time.  The
 * counters are not atomic: the benchmark's guest has one vCPU.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* x86-64's kernel half: every address at or above this one. */
#define KERNEL_HALF	0xffff800000000000ULL
/* Open addressing; a 6.1 kernel with modules executes ~10^5 addresses. */
#define SLOTS		(1u << 22)

static uint64_t *addr, *count;
static const char *out_path;
static int full;

static uint64_t *counter(uint64_t va)
{
	uint32_t h = (uint32_t)((va * 0x9e3779b97f4a7c15ULL) >> 42), n;

	for (n = 0; n < SLOTS; n++, h++) {
		h &= SLOTS - 1;
		if (addr[h] == va)
			return &count[h];
		if (!addr[h]) {
			addr[h] = va;
			return &count[h];
		}
	}
	return NULL;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn), *c;

		if (va < KERNEL_HALF)
			continue;
		c = counter(va);
		if (!c) {
			full = 1;
			continue;
		}
		qemu_plugin_register_vcpu_insn_exec_inline(
			insn, QEMU_PLUGIN_INLINE_ADD_U64, c, 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	FILE *f = fopen(out_path, "w");
	uint32_t i;

	(void)id;
	(void)p;
	if (!f) {
		perror(out_path);
		return;
	}
	if (full)
		fprintf(f, "# table full: some addresses not counted\n");
	for (i = 0; i < SLOTS; i++)
		if (count[i])
			fprintf(f, "%016" PRIx64 " %" PRIu64 "\n", addr[i],
				count[i]);
	fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv)
{
	(void)info;
	if (argc != 1 || strncmp(argv[0], "out=", 4) || !argv[0][4]) {
		fprintf(stderr, "kcount: usage: -plugin libkcount.so,out=FILE\n");
		return -1;
	}
	out_path = strdup(argv[0] + 4);
	addr = calloc(SLOTS, sizeof(*addr));
	count = calloc(SLOTS, sizeof(*count));
	if (!out_path || !addr || !count)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
