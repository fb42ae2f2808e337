/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* `qpace-bench incast`: one incast, reported as text (per flow and totals) or one JSON
 * object (-j). Embedded (soft backend, no --attach): every host in this process and its
 * own switch. Networked (ibv, or soft with --attach): receiver or one sender per process. */
#include <stdio.h>

#include "incast.h"
#include "runs.h"

int bench_incast(const struct bench_conf *c)
{
	struct incast_run run;
	char algo[INCAST_ALGO_MAX + 4], err[512];

	if (c->backend == BACKEND_IBV || c->attach)
		return incast_net(c);
	snprintf(algo, sizeof(algo), "%s%s", c->cc, c->credits == CREDITS_IA ? "+ia" : "");
	if (c->out_dir && runs_mkdirs(c->out_dir, err, sizeof(err))) {
		fprintf(stderr, "qpace-bench incast: %s\n", err);
		return -1;
	}
	if (incast_run(c, algo, c->senders, c->size_bytes, c->out_dir, &run, err, sizeof(err))) {
		fprintf(stderr, "qpace-bench incast: %s\n", err);
		incast_run_free(&run);
		return -1;
	}
	if (c->json)
		incast_print_json(stdout, &run.res, false);
	else
		incast_print_text(stdout, &run.res, run.flows, run.nflows);
	if (c->out_dir && !c->json)
		printf(" CSVs%s in %s/\n", c->no_plots ? "" : " and plots", c->out_dir);
	incast_run_free(&run);
	return 0;
}
