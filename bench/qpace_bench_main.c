/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench: perftest-style benchmarks plus one-command incast. The subcommand table in
 * bench/cli.c generates the usage and the manual page; each subcommand parses its options
 * from one table. */
#include <stdio.h>
#include <string.h>

#include "qpace/opt.h"
#include "qpace/cc_help.h"
#include "bench.h"

static int (*const bench_run[])(const struct bench_conf *) = {
	[0] = bench_perf,     /* CMD_WRITE_BW */
	[1] = bench_perf,     /* CMD_SEND_BW */
	[2] = bench_perf,     /* CMD_WRITE_LAT */
	[3] = bench_incast,
	[4] = bench_compare,
	[5] = bench_sweep,
};

int main(int argc, char **argv)
{
	const char *prog = "qpace-bench";
	struct bench_conf c;
	char err[512];
	unsigned cmd;
	size_t nglobal;
	const struct qp_opt *global_opts = bench_global_opts(&nglobal);
	int rc = cc_help_params_main(prog, argc, argv, stdout, stderr);

	if (rc >= 0)
		return rc ? QP_EXIT_USAGE : QP_EXIT_OK;
	if (argc < 2 || !strcmp(argv[1], "help")) {
		bench_usage(argc < 2 ? stderr : stdout, prog);
		return argc < 2 ? QP_EXIT_USAGE : QP_EXIT_OK;
	}
	if (argv[1][0] == '-') {     /* --help, --version, --help-man: nothing after them */
		const struct qp_opt_spec spec = { global_opts, nglobal, 0, true };
		uint64_t seen;
		char *none = NULL;

		rc = qp_opt_parse(&spec, 2, argv, &none, &seen, err, sizeof(err));
		if (rc < 0 || argc > 2) {
			if (rc >= 0)
				snprintf(err, sizeof(err), "unexpected argument '%s'", argv[2]);
			qp_opt_fail(prog, err);
			return QP_EXIT_USAGE;
		}
		if (qp_opt_seen(global_opts, nglobal, seen, "version"))
			qp_opt_version(stdout, prog);
		else if (qp_opt_seen(global_opts, nglobal, seen, "help-man"))
			bench_man(stdout, prog);
		else
			bench_usage(stdout, prog);
		return QP_EXIT_OK;
	}
	cmd = bench_cmd_find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "%s: unknown command '%s'\n\n", prog, argv[1]);
		bench_usage(stderr, prog);
		return QP_EXIT_USAGE;
	}
	if (cmd == CMD_TOPO)
		return bench_topo(prog, argc - 1, argv + 1);
	if (cmd == CMD_NETRUN)
		return bench_netrun(prog, argc - 1, argv + 1);
	if (cmd == CMD_REPRO)
		return bench_reproduce(prog, argc - 1, argv + 1);
	bench_conf_defaults(&c, cmd);
	c.prog = argv[0];
	if (bench_conf_parse(&c, cmd, argc - 1, argv + 1, err, sizeof(err))) {
		char where[64];

		snprintf(where, sizeof(where), "%s %s", prog, argv[1]);
		qp_opt_fail(where, err);
		return QP_EXIT_USAGE;
	}
	if (c.help) {
		bench_cmd_usage(stdout, prog, cmd);
		return QP_EXIT_OK;
	}
	return bench_run[__builtin_ctz(cmd)](&c) ? QP_EXIT_FAIL : QP_EXIT_OK;
}
