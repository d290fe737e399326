/*
 * A memprof stream cut anywhere must decode up to the cut, then fail with
 * "stream ends" at an offset inside the prefix, and never count more
 * events than the whole stream has.
 */
#include <string.h>

#include "memprof_report.h"
#include "reader.h"
#include "symtab.h"
#include "trunc_common.h"

static int run(const uint8_t *data, size_t len, uint64_t *events,
	       struct luw_rd *r)
{
	struct luw_symtab *st = luw_symtab_new();
	struct luw_mpr *rep = luw_mpr_new(st);
	int rc;

	if (!st || !rep) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	luw_rd_open_mem(r, data, len);
	rc = luw_memprof_decode(r, &luw_mpr_ops, rep);
	*events = luw_mpr_events(rep);
	luw_mpr_free(rep);
	luw_symtab_free(st);
	return rc;
}

int main(int argc, char **argv)
{
	size_t len, i, cut, tried = 0;
	uint8_t *data;
	uint64_t all, got;
	struct luw_rd r;
	int rc, bad = 0;

	if (argc < 2)
		return 2;
	data = load(argv[1], "memprof_basic.bin", &len);
	rc = run(data, len, &all, &r);
	/* 5809 + 1 + 6638 + 1 + 320 events, read off the fixture. */
	if (rc || all != 12769) {
		fprintf(stderr, "whole stream: rc %d, %llu events\n", rc,
			(unsigned long long)all);
		return 1;
	}
	for (i = 0; (cut = cut_at(i, len)) != SIZE_MAX; i++) {
		rc = run(data, cut, &got, &r);
		tried++;
		if (rc != -1 || !luw_rd_failed(&r) || !r.err_eof ||
		    r.err_off > cut || got > all) {
			char msg[256];

			luw_rd_strerror(&r, msg, sizeof(msg));
			fprintf(stderr, "cut at %zu: rc %d, %llu events, %s\n",
				cut, rc, (unsigned long long)got, msg);
			if (++bad > 10)
				break;
		}
	}
	run(data, len - 1, &got, &r);
	if (got != all) {
		fprintf(stderr, "cut before the epilogue: %llu events of %llu\n",
			(unsigned long long)got, (unsigned long long)all);
		bad++;
	}
	printf("%zu prefixes of %zu bytes: %s\n", tried, len,
	       bad ? "FAILED" : "all end with the offset error");
	free(data);
	return bad != 0 || tried < 2 * EDGE + SPREAD;
}
