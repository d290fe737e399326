/*
 * luaunwind-flamegraph: folded stacks in, interactive SVG flame graph out
 * (and, on request, a pprof profile).  Any folded file works: ours,
 * flamegraph.pl's stackcollapse scripts, the sysprof parser's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "util/cli.h"
#include "output/flamegraph.h"
#include "output/pprof.h"
#include "output/stacks.h"

static const char usage[] =
	"usage: luaunwind-flamegraph [OPTIONS] [FILE|-]\n"
	"Read folded stacks (\"frame;frame;... count\" per line) from FILE or\n"
	"standard input and write a self-contained interactive SVG flame graph.\n"
	"\n"
	"  -o, --output FILE      write the SVG to FILE (default: stdout)\n"
	"  -t, --title TEXT       title (default: \"Flame Graph\")\n"
	"      --subtitle TEXT    second line under the title\n"
	"      --count-name NAME  what a sample is (default: \"samples\")\n"
	"  -w, --width PX         image width (default: 1200)\n"
	"      --height PX        height of one frame (default: 16)\n"
	"      --min-width PX     leave out boxes narrower than this (0.1)\n"
	"      --colors kind|hot  hue by frame kind (default) or all warm\n"
	"      --pprof FILE       also write a gzipped pprof profile\n"
	"      --period-ns NS     time per sample, for --pprof\n"
	"      --duration-ns NS   length of the recording, for --pprof\n"
	"      --top N            print the N heaviest stacks and frames (text)\n"
	"      --no-svg           write no SVG (with --pprof)\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 done, 1 usage error, 2 bad input or output error.\n";

static int number(const char *arg, const char *what, double max, double *out)
{
	return luw_cli_double_arg("luaunwind-flamegraph", what, arg, 0, max, out);
}

enum { OPT_SUBTITLE = 256, OPT_COUNT, OPT_HEIGHT, OPT_MINW, OPT_COLORS,
       OPT_PPROF, OPT_PERIOD, OPT_DURATION, OPT_TOP,
       OPT_NOSVG };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
		{ "count-name", required_argument, NULL, OPT_COUNT },
		{ "width", required_argument, NULL, 'w' },
		{ "height", required_argument, NULL, OPT_HEIGHT },
		{ "min-width", required_argument, NULL, OPT_MINW },
		{ "colors", required_argument, NULL, OPT_COLORS },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "period-ns", required_argument, NULL, OPT_PERIOD },
		{ "duration-ns", required_argument, NULL, OPT_DURATION },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "no-svg", no_argument, NULL, OPT_NOSVG },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct luw_flamegraph_opts fo;
	struct luw_pprof_opts po = { 0 };
	const char *output = NULL, *input = "-", *pprof = NULL;
	struct luw_stacks *s;
	char err[256];
	FILE *in, *out;
	double v;
	size_t top = 0;
	int c, svg = 1, status = 0;

	luw_flamegraph_defaults(&fo);
	while ((c = luw_cli_getopt(argc, argv, "o:t:w:h", longopts, usage)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 't': fo.title = optarg; break;
		case OPT_SUBTITLE: fo.subtitle = optarg; break;
		case OPT_COUNT: fo.count_name = optarg; break;
		case 'w':
			if (number(optarg, "width", 100000, &v))
				return 1;
			fo.width = (unsigned)v;
			break;
		case OPT_HEIGHT:
			if (number(optarg, "height", 1000, &v))
				return 1;
			fo.frame_height = (unsigned)v;
			break;
		case OPT_MINW:
			if (number(optarg, "min-width", 100000, &fo.min_width))
				return 1;
			break;
		case OPT_COLORS:
			if (strcmp(optarg, "kind") == 0) {
				fo.colors = LUW_FG_COLORS_KIND;
			} else if (strcmp(optarg, "hot") == 0) {
				fo.colors = LUW_FG_COLORS_HOT;
			} else {
				fprintf(stderr, "luaunwind-flamegraph: "
					"--colors is kind or hot\n");
				return 1;
			}
			break;
		case OPT_PPROF: pprof = optarg; break;
		case OPT_PERIOD:
			if (number(optarg, "period", 1e15, &v))
				return 1;
			po.period_ns = (uint64_t)v;
			break;
		case OPT_DURATION:
			if (number(optarg, "duration", 1e18, &v))
				return 1;
			po.duration_ns = (uint64_t)v;
			break;
		case OPT_TOP:
			if (number(optarg, "top", 1e6, &v))
				return 1;
			top = (size_t)v;
			break;
		case OPT_NOSVG: svg = 0; break;
		}
	}
	if (optind + 1 < argc) {
		fputs(usage, stderr);
		return 1;
	}
	if (optind < argc)
		input = argv[optind];

	in = strcmp(input, "-") == 0 ? stdin : fopen(input, "r");
	if (!in) {
		fprintf(stderr, "luaunwind-flamegraph: %s: %s\n", input,
			strerror(errno));
		return 2;
	}
	s = luw_stacks_new();
	if (!s) {
		fprintf(stderr, "luaunwind-flamegraph: out of memory\n");
		return 2;
	}
	if (luw_stacks_read_folded(s, in, err, sizeof(err))) {
		/* Nothing is drawn from a file that is not all understood. */
		fprintf(stderr, "luaunwind-flamegraph: %s: %s\n", input, err);
		status = 2;
		goto done;
	}
	if (pprof) {
		FILE *pf = fopen(pprof, "wb");

		if (!pf || luw_pprof_write(pf, s, &po) || fclose(pf)) {
			fprintf(stderr, "luaunwind-flamegraph: %s: %s\n", pprof,
				strerror(errno));
			status = 2;
			goto done;
		}
	}
	if (top) {
		/* With an SVG on stdout too, the summary goes to stderr. */
		FILE *to = svg && !output ? stderr : stdout;

		if (luw_stacks_write_top(s, to, top, NULL) || fflush(to)) {
			fprintf(stderr, "luaunwind-flamegraph: %s\n",
				strerror(errno));
			status = 2;
			goto done;
		}
	}
	if (svg) {
		out = output ? fopen(output, "w") : stdout;
		if (!out || luw_flamegraph_write(out, s, &fo) ||
		    (out != stdout ? fclose(out) : fflush(out))) {
			fprintf(stderr, "luaunwind-flamegraph: %s: %s\n",
				output ? output : "stdout", strerror(errno));
			status = 2;
		}
	}
done:
	if (in != stdin)
		fclose(in);
	luw_stacks_free(s);
	return status;
}
