/*
 * libFuzzer target: a memprof stream through the real decoders and both
 * reports luaunwind-report makes of it (default and --leak-only), plus the
 * encoder oracle of fuzz_common.h.
 *
 * Report property: the report aggregates exactly the alloc, realloc and
 * free events the decoder delivered.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "streams/memprof_report.h"

static int count_event(void *ctx, const struct luw_mp_event *ev)
{
	if (ev->aevent != LUW_AEVENT_SYMTAB)
		++*(uint64_t *)ctx;
	return 0;
}

static uint64_t decoded_events(const uint8_t *data, size_t size)
{
	const struct luw_memprof_ops ops = { .event = count_event };
	struct luw_reader r;
	uint64_t n = 0;

	luw_reader_open_mem(&r, data, size);
	luw_memprof_decode(&r, &ops, &n);
	return n;
}

static void report(const uint8_t *data, size_t size, int leak_only,
		   uint64_t decoded)
{
	struct luw_symtab *st = luw_symtab_new();
	struct luw_memprof_report *rep;
	struct luw_reader r;
	int rc;

	FUZZ_ASSERT(st, "out of memory");
	luw_reader_open_mem(&r, data, size);
	rc = luw_symtab_decode(&r, NULL, fuzz_add_sym, st);
	if (rc || !fuzz_body_is(&r, "ljm")) {
		luw_symtab_free(st);
		return;
	}
	rep = luw_memprof_report_new(st);
	FUZZ_ASSERT(rep, "out of memory");
	/* The report's own loop, checked against the generic decoder. */
	rc = luw_memprof_report_decode_body(&r, rep);
	FUZZ_ASSERT(!luw_memprof_report_oom(rep), "report out of memory");
	FUZZ_ASSERT(rc == 0 || rc == -1, "decoder returned %d", rc);
	FUZZ_ASSERT(luw_memprof_report_events(rep) == decoded,
		    "report saw %llu events, the decoder delivered %llu",
		    (unsigned long long)luw_memprof_report_events(rep),
		    (unsigned long long)decoded);
	FUZZ_ASSERT(!luw_memprof_report_write(rep, leak_only, fuzz_sink()),
		    "report output failed");
	luw_memprof_report_free(rep);
	luw_symtab_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t n = decoded_events(data, size);

	report(data, size, 0, n);
	report(data, size, 1, n);
	fuzz_check_encoding(data, size, "ljm");
	return 0;
}
