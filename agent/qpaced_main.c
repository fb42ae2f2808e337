/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced: the per-host agent daemon (qpaced.h). Options come from one table
 * (agent_config.h) with -c and -h in front: the -c config file first, wherever it
 * stands, then the command line over it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/cc_help.h"
#include "qpace/errmsg.h"
#include "qpace/opt.h"
#include "qpaced.h"

/* -c FILE: read @path into @conf line by line. Each bad line is printed (it names the file,
 * the line and the key); the last one is this option's message. */
static int read_config(const struct qp_opt *o, void *conf, const char *path, char *err,
		       size_t errlen)
{
	struct qp_opt_reader r;
	char line[QPACED_LINE_MAX + 2], msg[512];
	FILE *f = fopen(path, "r");
	int rc = 0;

	(void)o;
	if (!f)
		return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
	qpaced_config_reader_init(&r, conf, path);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
			int ch;

			while ((ch = fgetc(f)) != EOF && ch != '\n')
				; /* the reader reports the overlong line */
		}
		if (qp_opt_line(&r, line, msg, sizeof(msg))) {
			if (rc)
				fprintf(stderr, "qpaced: %s\n", err);
			rc = qp_errmsg(-EINVAL, err, errlen, "%s", msg);
		}
	}
	fclose(f);
	return rc;
}

static const struct qp_opt own[] = {
	{ "config", 'c', QP_OPT_FN, "FILE", .fn = read_config,
	  .flags = QP_OPT_F_FIRST | QP_OPT_F_OWN_MSG,
	  .help = "read key = value lines (keys: the long names below; # comments);\n"
		  "the command line overrides the file" },
	{ "help", 'h', QP_OPT_HELP, NULL, .help = "this text" },
};
#define NOWN (sizeof(own) / sizeof(own[0]))

int main(int argc, char **argv)
{
	static struct qp_opt all[QP_OPT_MAX];
	const struct qp_opt *file_opts = qpaced_options();
	struct qp_opt_prog prog = {
		.name = "qpaced",
		.head = "usage: qpaced [-c FILE] [OPTIONS]\n\n"
			"The qpace agent: turns switch telemetry into per-QP rates (and receiver\n"
			"credits) in a shared-memory rate table; serves qpacectl and Prometheus.\n\n",
		.tail = "      --help-params ALGO|all|list [--format text|md]\n"
			"                              an algorithm's parameters (for --cc-params), "
			"every one's, or the names\n",
		.more = cc_help_algorithms,
		.t = all,
		.max_args = 0,
	};
	struct qpaced_config c;
	struct qpaced *d;
	char err[512];
	int rc;

	rc = cc_help_params_main(prog.name, argc, argv, stdout, stderr);
	if (rc >= 0)
		return rc ? 2 : 0;
	memcpy(all, own, sizeof(own));
	prog.n = NOWN;
	for (size_t i = 0; file_opts[i].name && prog.n < QP_OPT_MAX; i++)
		all[prog.n++] = file_opts[i];
	qpaced_config_init(&c);
	rc = qp_opt_main(&prog, argc, argv, &c, NULL);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (qpaced_config_finish(&c, err, sizeof(err))) {
		qp_opt_fail(prog.name, err);
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
