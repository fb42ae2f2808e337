/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce hpcc, with background: HPCC's incast with 30% WebSearch load (references.md
 * 1.3). A fat-tree at 100 Gb/s, 1 us links (k = 8: 128 hosts, the generator's largest; the
 * paper's has 320 servers; --quick k = 4), PFC as the incast's, 32 MiB buffers; WebSearch
 * Poisson flows at load 0.3 on every host and, 1 ms in, 60 senders x 500 KB to host 0
 * (--quick: 15); hpcc (max_stage 0, as HPCC's experiments ran it) against dcqcn. Figures:
 * FCT slowdown by size (HPCC's bins and definition) and the incast's completion. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "qpace/units.h"
#include "plot.h"
#include "repro_hpcc.h"
#include "repro_mix.h"

static const struct repro_mix_series series[] = {
	{ .label = "HPCC~hpcc", .algo = "hpcc", .params = "max_stage=0" },
	{ .label = "DCQCN~dcqcn", .algo = "dcqcn" },
};
#define NSERIES (sizeof(series) / sizeof(series[0]))

static void plot(struct repro_ctx *ctx)
{
	char err[256];

	if (plot_script(ctx->dir, "background_slowdown", err, sizeof(err),
			"set output 'background_slowdown.png'\nset title 'HPCC with 30%% WebSearch "
			"background: FCT slowdown by flow size'\nset xlabel 'flow size [bytes]'\n"
			"set ylabel 'slowdown'\nset logscale xy\nset key top left\n"
			"plot 'background/hpcc/fct_bins.csv' skip 1 using 4:9 with linespoints lw 2 "
			"title 'hpcc p99', 'background/hpcc/fct_bins.csv' skip 1 using 4:7 with "
			"linespoints lw 2 title 'hpcc p50', 'background/dcqcn/fct_bins.csv' skip 1 "
			"using 4:9 with linespoints lw 2 title 'dcqcn p99', "
			"'background/dcqcn/fct_bins.csv' skip 1 using 4:7 with linespoints lw 2 "
			"title 'dcqcn p50'\n"))
		fprintf(stderr, "qpace-bench reproduce hpcc: plots skipped: %s\n", err);
}

int repro_hpcc_background(struct repro_ctx *ctx)
{
	struct topogen_params g;
	struct repro_mix_run m[NSERIES];
	char wl[256];
	unsigned senders = ctx->quick ? 15 : 60;

	topogen_defaults(&g, TOPOGEN_FAT_TREE);
	g.k = ctx->quick ? 4 : 8;
	g.host_bps = 100 * QP_GBPS;
	g.delay_ns = QP_NS_PER_US;
	g.buffer_bytes = 32 * 1024 * 1024;
	snprintf(wl, sizeof(wl), "# HPCC's incast with 30%% WebSearch background\n"
		 "poisson cdf=websearch load=0.3 duration=%s\n"
		 "incast bytes=500000 senders=1-%u receiver=0 start=1ms\n",
		 ctx->quick ? "500us" : "5ms", senders);
	const struct repro_mix_spec sp = {
		.tag = "background", .gen = &g, .workload = wl,
		.pfc = "xoff=32K,headroom=auto,class=0,lossless", .until_ns = 200 * QP_NS_PER_MS,
		.sample_ns = 10 * QP_NS_PER_US, .group = 1,
	};
	if (repro_mix(ctx, &sp, series, NSERIES, m))
		return -1;
	if (!m[0].ok || !m[1].ok)
		return 0;
	double h95 = repro_mix_bin_p(&m[0], REPRO_MIX_SHORT, 95), d95 = repro_mix_bin_p(&m[1], REPRO_MIX_SHORT, 95);
	repro_check(ctx, "background: short flows", "FCT up to 95% shorter than DCQCN's (30% "
		    "WebSearch with the incast)", h95 < d95 ? REPRO_YES : REPRO_NO,
		    "agrees when hpcc's p95 slowdown of flows up to 100 KB is the lower; a fat-tree "
		    "of 128 hosts (k = 8) for the paper's 320",
		    "p95 slowdown, flows <= 100 KB: hpcc %.2f, dcqcn %.2f (%.0f%% lower); p99 over "
		    "all: %.2f and %.2f; %zu and %zu flows, %zu and %zu unfinished; hpcc %s on the "
		    "%s, dcqcn on its %s", h95, d95, (1 - h95 / d95) * 100, m[0].bins.p99,
		    m[1].bins.p99, m[0].flows, m[1].flows, m[0].unfinished, m[1].unfinished,
		    m[0].cc_params, repro_mix_rtt(&m[0]), repro_mix_rtt(&m[1]));
	repro_check(ctx, "background: the incast", "the incast resolved with background load",
		    m[0].group_fct_max_us <= m[1].group_fct_max_us ? REPRO_YES : REPRO_NO,
		    "agrees when hpcc's incast completes no later than dcqcn's",
		    "incast of %u x 500 KB: last flow at %.0f us (hpcc), %.0f us (dcqcn); mean "
		    "queue over every port %.1f and %.1f KiB", senders, m[0].group_fct_max_us,
		    m[1].group_fct_max_us, m[0].mean_queue_bytes / 1024,
		    m[1].mean_queue_bytes / 1024);
	if (ctx->plots)
		plot(ctx);
	return 0;
}
