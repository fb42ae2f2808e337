/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce idcc: IDCC's motivation experiment (seed 003, ns-3; its Figs. 1-2). Two small
 * DCs joined by a 500 Mb/s WAN link of 5 ms; DC links 1 Gb/s, 2 us. In DC1 one host runs
 * web-search flows inside the DC while a host of DC2 sends a long-lived flow across the
 * WAN into the same DC1 host's port (the two-site generator: hosts 0, 1 in DC1, 2, 3 in
 * DC2; web search between hosts 0 and 1 at load 0.3, the long flow from host 2 to host 1).
 * 5 s of arrivals (--quick 300 ms). The source's combined schemes (DCTCP+BBR, L2DCT+BBR)
 * have no RDMA analogue: `dcqcn` (ECN-driven in the DC, nothing for the WAN) and `none`
 * stand for them; `idcc` is the hybrid. Published: the combined schemes' intra-DC short
 * flows have a mean FCT more than 3x the hybrid schemes'. Then the large-scale evaluation
 * (repro_idcc_ls.c). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "qpace/units.h"
#include "repro_mix.h"

static const struct repro_mix_series series[] = {
	{ .label = "IDCC~idcc", .algo = "idcc" },
	{ .label = "DCTCP+BBR~dcqcn", .algo = "dcqcn" },
	{ .label = "none", .algo = "none" },
};
#define NSERIES (sizeof(series) / sizeof(series[0]))

static int run(struct repro_ctx *ctx)
{
	struct topogen_params g;
	struct repro_mix_run m[NSERIES];
	char wl[256];

	topogen_defaults(&g, TOPOGEN_TWO_SITE);
	g.hosts = 2;
	g.host_bps = QP_GBPS;
	g.delay_ns = 2 * QP_NS_PER_US;
	g.wan_bps = 500 * QP_MBPS;
	g.wan_delay_ns = 5 * QP_NS_PER_MS;
	snprintf(wl, sizeof(wl), "# IDCC's motivation: intra-DC web search beside a WAN flow\n"
		 "intersite cdf=websearch load=0.3 duration=%s hosts=0-1 cross=0\n"
		 "long senders=2 receiver=1\n", ctx->quick ? "300ms" : "5s");
	const struct repro_mix_spec sp = {
		.tag = "two-site", .gen = &g, .workload = wl, .pfc = NULL,
		.until_ns = (ctx->quick ? 400 : 5500) * QP_NS_PER_MS, .sample_ns = QP_NS_PER_MS,
		.group = 0,
	};
	if (repro_mix(ctx, &sp, series, NSERIES, m))
		return -1;
	if (!m[0].ok || !m[1].ok || !m[2].ok)
		return repro_idcc_large(ctx);
	double h = repro_mix_bin_p(&m[0], REPRO_MIX_SHORT, 50), d = repro_mix_bin_p(&m[1], REPRO_MIX_SHORT, 50);
	double n = repro_mix_bin_p(&m[2], REPRO_MIX_SHORT, 50);
	double ratio = fmin(d, n) / h;
	repro_check(ctx, "motivation: intra-DC short flows", "combined schemes' mean FCT of "
		    "intra-DC short flows more than 3x the hybrid's", ratio > 3 ? REPRO_YES :
		    ratio > 1 ? REPRO_PARTLY : REPRO_NO,
		    "yes: dcqcn's and none's above 3x idcc's; partly: above idcc's. Median "
		    "slowdown of flows up to 100 KB (the bins' p50, weighted) for the mean FCT: "
		    "dcqcn and none for DCTCP+BBR and L2DCT+BBR",
		    "p50 slowdown of intra-DC flows <= 100 KB: idcc %.2f, dcqcn %.2f, none %.2f "
		    "(%.1fx); intra-DC flows %zu, mean FCT %.0f / %.0f / %.0f us; drops %" PRIu64
		    " / %" PRIu64 " / %" PRIu64, h, d, n, ratio, m[0].group_flows,
		    m[0].group_fct_mean_us, m[1].group_fct_mean_us, m[2].group_fct_mean_us,
		    m[0].drops, m[1].drops, m[2].drops);
	return repro_idcc_large(ctx);
}

const struct repro_exp repro_idcc = {
	.name = "idcc",
	.summary = "IDCC (seed 003) motivation (two DCs, 500 Mb/s 5 ms WAN, intra-DC web search "
		   "beside a WAN flow) and large scale (two spine-leaf DCs, 50 ms WAN); idcc "
		   "against dcqcn and none",
	.run = run,
};
