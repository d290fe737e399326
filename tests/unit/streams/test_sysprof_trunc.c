/*
 * streams/sysprof.c, the decoder (feeding sysprof_report.c), on every
 * prefix of tests/fixtures/sysprof_callchain.bin: a sysprof stream cut
 * anywhere must decode up to the cut, then fail with "stream ends" at an
 * offset inside the prefix, and never count more samples than the whole
 * stream has.
 */
#include <string.h>

#include "streams/reader.h"
#include "streams/symtab.h"
#include "streams/sysprof_report.h"
#include "trunc_common.h"

static int run(const uint8_t *data, size_t len, uint64_t *samples,
	       struct luw_reader *r)
{
	struct luw_symtab *st = luw_symtab_new();
	struct luw_sysprof_report *rep = luw_sysprof_report_new(LUW_SPR_VMSTATES, st, NULL);
	int rc;

	if (!st || !rep) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	luw_reader_open_mem(r, data, len);
	rc = luw_sysprof_decode(r, &luw_sysprof_report_ops, rep);
	*samples = luw_sysprof_report_samples(rep);
	luw_sysprof_report_free(rep);
	luw_symtab_free(st);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	trunc_main(argv[1], "sysprof_callchain.bin", 500, "samples", run);
	return luw_test_status("test_sysprof_trunc");
}
