/*
 * libFuzzer target: a sysprof stream through the real decoders and every
 * report luaunwind-report makes of it (--folded, --svg, --compat,
 * --vmstates), plus the encoder oracle of fuzz_common.h.
 *
 * Report properties: the folded stacks count every sample exactly once;
 * the vmstate counts add up to the samples; no report counts more samples
 * than the decoder delivered.
 */
#include <stddef.h>
#include <stdint.h>

#include "output/flamegraph.h"
#include "fuzz_common.h"
#include "output/stacks.h"
#include "streams/sysprof_report.h"

static int count_sample(void *ctx, const struct luw_sp_sample *s)
{
	(void)s;
	++*(uint64_t *)ctx;
	return 0;
}

/* Samples the decoder delivers, whatever the report does with them. */
static uint64_t decoded_samples(const uint8_t *data, size_t size)
{
	const struct luw_sysprof_ops ops = { .sample = count_sample };
	struct luw_reader r;
	uint64_t n = 0;

	luw_reader_open_mem(&r, data, size);
	luw_sysprof_decode(&r, &ops, &n);
	return n;
}

static void report(const uint8_t *data, size_t size, enum luw_sysprof_report_mode mode,
		   uint64_t decoded)
{
	struct luw_stacks *stacks = NULL;
	struct luw_symtab *st = luw_symtab_new();
	struct luw_sysprof_report *rep;
	struct luw_reader r;
	unsigned int i;
	uint64_t sum;
	int rc;

	FUZZ_ASSERT(st, "out of memory");
	luw_reader_open_mem(&r, data, size);
	rc = luw_symtab_decode(&r, NULL, fuzz_add_sym, st);
	if (rc || !fuzz_body_is(&r, "ljp")) {
		luw_symtab_free(st);
		return;
	}
	if (mode == LUW_SPR_FOLDED) {
		stacks = luw_stacks_new();
		FUZZ_ASSERT(stacks, "out of memory");
	}
	rep = luw_sysprof_report_new(mode, st, stacks);
	FUZZ_ASSERT(rep, "out of memory");
	rc = luw_sysprof_decode_body(&r, &luw_sysprof_report_ops, rep);
	FUZZ_ASSERT(!luw_sysprof_report_oom(rep) && rc != -2, "report out of memory");
	FUZZ_ASSERT(rc == 0 || rc == -1, "decoder returned %d", rc);
	FUZZ_ASSERT(luw_sysprof_report_samples(rep) == decoded,
		    "report saw %llu samples, the decoder delivered %llu",
		    (unsigned long long)luw_sysprof_report_samples(rep),
		    (unsigned long long)decoded);
	for (i = 0, sum = 0; i < LUW_VMST__MAX; i++)
		sum += luw_sysprof_report_vmstate(rep, i);
	FUZZ_ASSERT(sum == decoded, "vmstate counts add up to %llu of %llu",
		    (unsigned long long)sum, (unsigned long long)decoded);
	if (mode == LUW_SPR_FOLDED) {
		FUZZ_ASSERT(luw_stacks_total(stacks) == decoded,
			    "folded stacks count %llu samples of %llu",
			    (unsigned long long)luw_stacks_total(stacks),
			    (unsigned long long)decoded);
		FUZZ_ASSERT(!luw_stacks_write_folded(stacks, fuzz_sink()),
			    "folded output failed");
		FUZZ_ASSERT(!luw_flamegraph_write(fuzz_sink(), stacks, NULL),
			    "SVG output failed");
	} else {
		FUZZ_ASSERT(!luw_sysprof_report_write(rep, fuzz_sink()),
			    "report output failed");
	}
	luw_sysprof_report_free(rep);
	luw_stacks_free(stacks);
	luw_symtab_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t n = decoded_samples(data, size);

	report(data, size, LUW_SPR_FOLDED, n);
	report(data, size, LUW_SPR_COMPAT, n);
	report(data, size, LUW_SPR_VMSTATES, n);
	fuzz_check_encoding(data, size, "ljp");
	return 0;
}
