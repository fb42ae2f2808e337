/* qpaced: the per-host agent daemon (qpace/qpaced.h). Options come from one table
 * (qpace/agent_config.h): a -c config file first, then the command line over it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/cc_help.h"
#include "qpaced.h"

#define MAX_OPTS 32

static void usage(FILE *f)
{
	char help[4096];

	qpaced_config_help(help, sizeof(help));
	fprintf(f, "usage: qpaced [-c FILE] [OPTIONS]\n\n"
		   "The qpace agent: turns switch telemetry into per-QP rates (and receiver\n"
		   "credits) in a shared-memory rate table; serves qpacectl and Prometheus.\n\n"
		   "  -c, --config FILE\n"
		   "        read key = value lines (keys: the long names below; # comments);\n"
		   "        the command line overrides the file\n"
		   "  -h, --help\n        this text\n"
		   "  --help-params ALGO|all|list [--format text|md]\n"
		   "        an algorithm's parameters (for --cc-params), every one's, or the names\n"
		   "%s", help);
	cc_help_algorithms(f, "qpaced");
}

/* Read @path into @c line by line; errors name the file, line and key. */
static int read_config(struct qpaced_config *c, const char *path)
{
	struct qpaced_config_reader r;
	char line[QPACED_LINE_MAX + 2], err[512];
	FILE *f = fopen(path, "r");
	int rc = 0;

	if (!f) {
		fprintf(stderr, "qpaced: %s: %s\n", path, strerror(errno));
		return -1;
	}
	qpaced_config_reader_init(&r, c, path);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
			int ch;

			while ((ch = fgetc(f)) != EOF && ch != '\n')
				; /* the reader reports the overlong line */
		}
		if (qpaced_config_line(&r, line, err, sizeof(err))) {
			fprintf(stderr, "qpaced: %s\n", err);
			rc = -1;
		}
	}
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	const struct qpaced_option *opts = qpaced_options();
	struct option longs[MAX_OPTS] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
	};
	char shorts[2 * MAX_OPTS] = "+c:h", err[512];
	struct qpaced_config c;
	struct qpaced *d;
	int n = 2, ch, idx, rc;

	rc = cc_help_params_main("qpaced", argc, argv, stdout, stderr);
	if (rc >= 0)
		return rc ? 2 : 0;
	for (int i = 0; opts[i].name && n < MAX_OPTS - 1; i++, n++) {
		longs[n] = (struct option){ opts[i].name, required_argument, NULL, 0x100 + i };
		if (opts[i].short_flag) {
			size_t l = strlen(shorts);

			shorts[l] = opts[i].short_flag;
			shorts[l + 1] = ':';
			shorts[l + 2] = 0;
		}
	}
	qpaced_config_init(&c);
	/* pass 1: the config file and --help */
	while ((ch = getopt_long(argc, argv, shorts, longs, &idx)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return 0;
		}
		if (ch == '?') {
			usage(stderr);
			return 2;
		}
		if (ch == 'c' && read_config(&c, optarg))
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "qpaced: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	/* pass 2: every other flag, over the file */
	optind = 1;
	while ((ch = getopt_long(argc, argv, shorts, longs, &idx)) != -1) {
		const char *name = NULL;

		if (ch >= 0x100)
			name = opts[ch - 0x100].name;
		for (int i = 0; !name && opts[i].name; i++)
			if (opts[i].short_flag == ch)
				name = opts[i].name;
		if (name && qpaced_config_set(&c, name, optarg, err, sizeof(err))) {
			fprintf(stderr, "qpaced: --%s\n", err);
			return 2;
		}
	}
	if (qpaced_config_finish(&c, err, sizeof(err))) {
		fprintf(stderr, "qpaced: %s\n", err);
		return 2;
	}
	rc = qpaced_open(&c, &d, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "qpaced: %s\n", err);
		return 1;
	}
	rc = qpaced_run(d);
	qpaced_close(d);
	return rc ? 1 : 0;
}
