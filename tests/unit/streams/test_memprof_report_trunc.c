/*
 * streams/memprof_report.c's own decode loop (luaunwind-report's path,
 * after symtab.c's leading symtab) on every prefix of
 * tests/fixtures/memprof_basic.bin, with pext and without: a memprof
 * stream cut anywhere must decode up to the cut, then fail with "stream
 * ends" at an offset inside the prefix, and never count more events than
 * the whole stream has.
 */
#include <stdlib.h>
#include <string.h>

#include "streams/memprof_report.h"
#include "streams/reader.h"
#include "streams/symtab.h"
#include "trunc_common.h"

static int run(const uint8_t *data, size_t len, uint64_t *events,
	       struct luw_reader *r)
{
	struct luw_symtab *st = luw_symtab_new();
	struct luw_memprof_report *rep = luw_memprof_report_new(st);
	int rc;

	if (!st || !rep) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	luw_reader_open_mem(r, data, len);
	/* The report's own loop (luaunwind-report's path) after the symtab. */
	rc = luw_symtab_decode(r, NULL, luw_memprof_report_ops.sym, rep);
	if (!rc)
		rc = luw_memprof_report_decode_body(r, rep);
	*events = luw_memprof_report_events(rep);
	luw_memprof_report_free(rep);
	luw_symtab_free(st);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	/* 5809 + 1 + 6638 + 1 + 320 events, read off the fixture. */
	trunc_main(argv[1], "memprof_basic.bin", 12769, "events", run);
	/* Again without pext, where the first round used it. */
	setenv("LUW_MEMPROF_NO_BMI2", "1", 1);
	trunc_main(argv[1], "memprof_basic.bin", 12769, "events", run);
	return luw_test_status("test_memprof_report_trunc");
}
