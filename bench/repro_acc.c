/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce acc: ACC (seed 001; only the abstract survives) against HPCC in a Clos with a
 * WebServer-like load of 0.6. No public table of the WebServer CDF (Roy et al., SIGCOMM
 * 2015) is shipped: FB-Hadoop from the same paper, HPCC's FbHdp_distribution.txt, named as
 * such. A fat-tree (k = 8: 128 hosts; --quick k = 4) at 100 Gb/s, 1 us links, 32 MiB
 * buffers, PFC as HPCC's incast; 3 ms of Poisson arrivals (--quick 1 ms). Published:
 * average queue length -9.6%, 95th-percentile FCT -29.7%, the same high throughput. Both at
 * max_stage 0, HPCC's experiments' setting. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "qpace/units.h"
#include "plot.h"
#include "repro_mix.h"

static const struct repro_mix_series series[] = {
	{ .label = "HPCC~hpcc", .algo = "hpcc", .params = "max_stage=0" },
	{ .label = "ACC~acc", .algo = "acc", .params = "max_stage=0" },
};
#define NSERIES (sizeof(series) / sizeof(series[0]))

static void plot(struct repro_ctx *ctx)
{
	char err[256];

	if (plot_script(ctx->dir, "slowdown", err, sizeof(err),
			"set output 'slowdown.png'\nset title 'ACC against HPCC: FB-Hadoop at load "
			"0.6, FCT slowdown by size'\nset xlabel 'flow size [bytes]'\n"
			"set ylabel 'slowdown'\nset logscale xy\nset key top left\n"
			"plot 'mix/hpcc/fct_bins.csv' skip 1 using 4:8 with linespoints lw 2 title "
			"'hpcc p95', 'mix/acc/fct_bins.csv' skip 1 using 4:8 with linespoints lw 2 "
			"title 'acc p95'\n"))
		fprintf(stderr, "qpace-bench reproduce acc: plots skipped: %s\n", err);
}

static int run(struct repro_ctx *ctx)
{
	struct topogen_params g;
	struct repro_mix_run m[NSERIES];
	char wl[200];

	topogen_defaults(&g, TOPOGEN_FAT_TREE);
	g.k = ctx->quick ? 4 : 8;
	g.host_bps = 100 * QP_GBPS;
	g.delay_ns = QP_NS_PER_US;
	g.buffer_bytes = 32 * 1024 * 1024;
	snprintf(wl, sizeof(wl), "# WebServer-like (FB-Hadoop) at load 0.6\n"
		 "poisson cdf=fb_hadoop load=0.6 duration=%s\n", ctx->quick ? "300us" : "3ms");
	const struct repro_mix_spec sp = {
		.tag = "mix", .gen = &g, .workload = wl,
		.pfc = "xoff=32K,headroom=auto,class=0,lossless", .until_ns = 200 * QP_NS_PER_MS,
		.sample_ns = 10 * QP_NS_PER_US, .group = -1,
	};
	if (repro_mix(ctx, &sp, series, NSERIES, m))
		return -1;
	if (!m[0].ok || !m[1].ok)
		return 0;
	double dq = m[1].mean_queue_bytes / m[0].mean_queue_bytes - 1;
	double dp = m[1].bins.p95 / m[0].bins.p95 - 1;
	repro_check(ctx, "Clos, load 0.6: queue", "average queue length 9.6% below HPCC's",
		    dq < 0 ? (fabs(dq * 100 + 9.6) <= 5 ? REPRO_YES : REPRO_PARTLY) : REPRO_NO,
		    "yes: lower, within 5 points of -9.6%; partly: lower. FB-Hadoop for the "
		    "WebServer CDF; a 128-host fat-tree for the 'large Clos'",
		    "mean queue over every port and 10 us sample: acc %.2f KiB, hpcc %.2f KiB "
		    "(%+.1f%%); acc %s on the %s, hpcc %s on the %s", m[1].mean_queue_bytes / 1024,
		    m[0].mean_queue_bytes / 1024, dq * 100, m[1].cc_params, repro_mix_rtt(&m[1]),
		    m[0].cc_params, repro_mix_rtt(&m[0]));
	repro_check(ctx, "Clos, load 0.6: FCT", "95th-percentile FCT 29.7% below HPCC's",
		    dp < 0 ? (fabs(dp * 100 + 29.7) <= 10 ? REPRO_YES : REPRO_PARTLY) : REPRO_NO,
		    "yes: lower, within 10 points of -29.7%; partly: lower. Slowdown (HPCC's "
		    "definition) for FCT: the abstract does not say which",
		    "p95 slowdown over all flows: acc %.2f, hpcc %.2f (%+.1f%%); p99 %.2f and %.2f; "
		    "%zu flows, %zu and %zu unfinished", m[1].bins.p95, m[0].bins.p95, dp * 100,
		    m[1].bins.p99, m[0].bins.p99, m[0].flows, m[0].unfinished, m[1].unfinished);
	if (ctx->plots)
		plot(ctx);
	return 0;
}

const struct repro_exp repro_acc = {
	.name = "acc",
	.summary = "ACC (seed 001) against HPCC: a 128-host fat-tree at 100 Gb/s, FB-Hadoop "
		   "(for WebServer) at load 0.6",
	.run = run,
};
