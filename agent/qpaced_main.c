/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced: the per-host agent daemon (qpaced.h). Options come from one table
 * (agent_config.h) with -c and -h in front: the -c config file first, wherever it
 * stands, then the command line over it. The same table writes the manual pages:
 * qpaced(1) (--help-man) and, its rows as keys, qpaced.conf(5) (--help-man-conf). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/cc_help.h"
#include "qpace/errmsg.h"
#include "qpace/ctl.h"
#include "qpace/opt.h"
#include "qpace/ratetable.h"
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

static bool check_only;

static int opt_check(const struct qp_opt *o, void *conf, const char *v, char *err,
		     size_t errlen)
{
	(void)o, (void)conf, (void)v, (void)err, (void)errlen;
	check_only = true;
	return 0;
}

static const struct qp_opt own[] = {
	{ "config", 'c', QP_OPT_FN, "FILE", .fn = read_config,
	  .flags = QP_OPT_F_FIRST | QP_OPT_F_OWN_MSG,
	  .help = "read key = value lines (keys: the long names below; # comments;\n"
		  "qpaced.conf(5)); the command line overrides the file" },
	{ "check", 0, QP_OPT_FN, NULL, .fn = opt_check,
	  .help = "check the options and the -c file (each value, and how they go\n"
		  "together), then exit: 0 when good, 2 at the first error; the files and\n"
		  "devices they name are not opened" },
	QP_OPT_STD_ROWS,
	/* read before the table (cc_help_params_main); a row for --help and the page */
	{ "help-params", 0, QP_OPT_HELP, "ALGO|all|list [--format text|md]",
	  .help = "an algorithm's parameters (for --cc-params), every one's, or the names" },
};
#define NOWN (sizeof(own) / sizeof(own[0]))

#define QPACED_FILES                                                                       \
	"/etc/qpace/qpaced.conf\tthe configuration file a service gives with -c\n"          \
	CTL_DEFAULT_SOCKET "\tthe control socket (--socket): qpacectl, applications\n"      \
	"/dev/shm" QP_RATETABLE_DEFAULT "\tthe rate table (--rate-table) QP programs read\n" \
	"/sys/fs/bpf/qpace\tthe tc programs' pinned maps (--bpf-pin)"

/* qpaced.conf(5): the file's keys are the table's long names. */
static void conf_page(void)
{
	const struct qp_opt *t = qpaced_options();
	size_t n = 0;

	while (t[n].name)
		n++;
	const struct qp_opt_prog page = {
		.name = "qpaced.conf",
		.purpose = "configuration file of the qpace agent",
		.section = 5,
		.head = "qpaced reads this file when started with -c FILE (a service: qpaced -c\n"
			"/etc/qpace/qpaced.conf). Each line is KEY = VALUE; a # starts a comment\n"
			"(to the end of the line); blank lines are skipped; each key at most once in\n"
			"a file. The keys are qpaced's long options without the leading --, and\n"
			"take the same values with the same checks: a bad line stops qpaced with\n"
			"FILE:LINE: KEY: \"VALUE\": why. An on/off key takes on or off. Options on\n"
			"the command line override the file. qpaced --check -c FILE checks a file\n"
			"without starting.\n\n"
			"Example:\n"
			"  # /etc/qpace/qpaced.conf\n"
			"  feedback = 0.0.0.0:4792\n"
			"  allow = 10.0.0.254, 10.0.0.0/24\n"
			"  cc = hpcc\n"
			"  credits = ia\n"
			"  key = /etc/qpace/feedback.key\n",
		.t = t,
		.n = n,
		.files = QPACED_FILES,
		.see_also = "qpaced(1), qpacectl(1), qpace-switch(1)",
	};

	qp_opt_man(stdout, &page);
}

int main(int argc, char **argv)
{
	static struct qp_opt all[QP_OPT_MAX];
	const struct qp_opt *file_opts = qpaced_options();
	struct qp_opt_prog prog = {
		.name = "qpaced",
		.head = "usage: qpaced [-c FILE] [OPTIONS]\n\n"
			"The qpace agent: turns switch telemetry into per-QP rates (and receiver\n"
			"credits) in a shared-memory rate table; serves qpacectl and Prometheus.\n\n",
		.more = cc_help_algorithms,
		.purpose = "the qpace agent: per-QP rates from switch telemetry",
		.files = QPACED_FILES,
		.see_also = "qpaced.conf(5), qpacectl(1), qpace-switch(1), qpace-bench(1)",
		.t = all,
		.max_args = 0,
	};
	struct qpaced_config c;
	struct qpaced *d;
	char err[512];
	int rc;

	rc = cc_help_params_main(prog.name, argc, argv, stdout, stderr);
	if (rc >= 0)
		return rc ? QP_EXIT_USAGE : QP_EXIT_OK;
	if (argc == 2 && !strcmp(argv[1], "--help-man-conf")) {   /* hidden, as --help-man */
		conf_page();
		return QP_EXIT_OK;
	}
	memcpy(all, own, sizeof(own));
	prog.n = NOWN;
	for (size_t i = 0; file_opts[i].name && prog.n < QP_OPT_MAX; i++)
		all[prog.n++] = file_opts[i];
	qpaced_config_init(&c);
	rc = qp_opt_main(&prog, argc, argv, &c, NULL);
	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	if (qpaced_config_finish(&c, err, sizeof(err))) {
		qp_opt_fail(prog.name, err);
		return QP_EXIT_USAGE;
	}
	if (check_only) {
		printf("qpaced: the options are good (cc %s, credits %s)\n", c.cc,
		       c.agent.credits ? "ia" : "off");
		return QP_EXIT_OK;
	}
	rc = qpaced_open(&c, &d, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "qpaced: %s\n", err);
		return QP_EXIT_FAIL;
	}
	rc = qpaced_run(d);
	qpaced_close(d);
	return rc ? QP_EXIT_FAIL : QP_EXIT_OK;
}
