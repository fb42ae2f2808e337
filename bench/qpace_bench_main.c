/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench: perftest-style benchmarks plus one-command incast. The subcommand table in
 * bench/cli.c generates the usage; each subcommand parses its options from one table. */
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
	[9] = bench_perf,     /* CMD_READ_BW */
	[10] = bench_perf,    /* CMD_ATOMIC_BW */
	[11] = bench_perf,    /* CMD_READ_LAT */
	[12] = bench_perf,    /* CMD_SEND_LAT */
	[13] = bench_perf,    /* CMD_ATOMIC_LAT */
};

int main(int argc, char **argv)
{
	const char *prog = "qpace-bench";
	struct bench_conf c;
	char err[512];
	unsigned cmd;
	int rc = cc_help_params_main(prog, argc, argv, stdout, stderr);

	if (rc >= 0)
		return rc;
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		bench_usage(argc < 2 ? stderr : stdout, prog);
		return argc < 2 ? 1 : 0;
	}
	cmd = bench_cmd_find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "%s: unknown command '%s'\n\n", prog, argv[1]);
		bench_usage(stderr, prog);
		return 1;
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
		return 1;
	}
	if (c.help) {
		bench_cmd_usage(stdout, prog, cmd);
		return 0;
	}
	return bench_run[__builtin_ctz(cmd)](&c) ? 1 : 0;
}
