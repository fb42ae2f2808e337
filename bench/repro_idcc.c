/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce idcc: IDCC's motivation experiment (seed 003, ns-3; its Figs. 1-2). Two small
 * DCs joined by a 500 Mb/s WAN link of 5 ms; DC links 1 Gb/s, 2 us. In DC1 one host runs
 * web-search flows inside the DC while a host of DC2 sends a long-lived flow across the
 * WAN into the same DC1 host's port (the two-site generator: hosts 0, 1 in DC1, 2, 3 in
 * DC2; web search between hosts 0 and 1 at load 0.3, the long flow from host 2 to host 1).
 * 5 s of arrivals (--quick 300 ms). The source's combined schemes (DCTCP+BBR, L2DCT+BBR)
 * have no RDMA analogue: `dctcp` (DCTCP's window on the soft RC's ECN echo, the same in
 * the DC and on the WAN: no BBR) and `none` stand for them; `idcc` is the hybrid, on RTT
 * samples and INT (the WAN link reports none), each flow on its own path's RTT. Published: the combined schemes' intra-DC short
 * flows have a mean FCT more than 3x the hybrid schemes'. Then the large-scale evaluation
 * (repro_idcc_ls.c). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "qpace/units.h"
#include "repro_mix.h"

static const struct repro_mix_series series[] = {
	{ .label = "IDCC~idcc", .algo = "idcc" },
	{ .label = "DCTCP+BBR~dctcp", .algo = "dctcp" },
	{ .label = "none", .algo = "none" },
};
#define NSERIES (sizeof(series) / sizeof(series[0]))

/* The intra-DC short flows (both ends in DC1: hosts 0 and 1, up to 100 KB) of each series:
 * their mean FCT, the source's measure. */
struct mot {
	double sum_us[NSERIES];
	size_t n[NSERIES], unfinished[NSERIES];
};

static void mot_inspect(void *arg, size_t i, const struct netrun_result *r)
{
	struct mot *st = arg;

	for (size_t f = 0; f < r->nflows; f++) {
		const struct sim_flow *fl = &r->flow[f];
		if (fl->src > 1 || fl->dst > 1 || fl->bytes > REPRO_MIX_SHORT)
			continue;
		if (!fl->done) {
			st->unfinished[i]++;
			continue;
		}
		st->sum_us[i] += (double)fl->fct_ns / 1e3;
		st->n[i]++;
	}
}

static int run(struct repro_ctx *ctx)
{
	struct topogen_params g;
	struct repro_mix_run m[NSERIES];
	struct mot st = { 0 };
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
		.group = 0, .inspect = mot_inspect, .arg = &st,
	};
	if (repro_mix(ctx, &sp, series, NSERIES, m))
		return -1;
	if (!m[0].ok || !m[1].ok || !m[2].ok || !st.n[0])
		return repro_idcc_large(ctx);
	double h = st.sum_us[0] / (double)st.n[0];
	double d = st.n[1] ? st.sum_us[1] / (double)st.n[1] : NAN;
	double n = st.n[2] ? st.sum_us[2] / (double)st.n[2] : NAN;
	double ratio = fmin(d, n) / h;
	repro_check(ctx, "motivation: intra-DC short flows", "combined schemes' mean FCT of "
		    "intra-DC short flows more than 3x the hybrid's", ratio > 3 ? REPRO_YES :
		    ratio > 1 ? REPRO_PARTLY : REPRO_NO,
		    "yes: dctcp's and none's mean FCT of intra-DC flows up to 100 KB above 3x "
		    "idcc's; partly: above idcc's. dctcp and none for DCTCP+BBR and L2DCT+BBR",
		    "mean FCT of intra-DC flows <= 100 KB: idcc %.0f us, dctcp %.0f us, none %.0f us "
		    "(%.1fx; %zu / %zu / %zu flows, %zu / %zu / %zu unfinished); drops %" PRIu64
		    " / %" PRIu64 " / %" PRIu64 "; idcc's loops: %" PRIu64 " INT and %" PRIu64
		    " RTT samples, %" PRIu64 " and %" PRIu64 " updates; T: idcc %s, dctcp %s, none %s",
		    h, d, n, ratio,
		    st.n[0], st.n[1], st.n[2], st.unfinished[0], st.unfinished[1],
		    st.unfinished[2], m[0].drops, m[1].drops, m[2].drops,
		    repro_mix_counter(&m[0], "int_samples"), repro_mix_counter(&m[0], "rtt_samples"),
		    repro_mix_counter(&m[0], "int_steps"), repro_mix_counter(&m[0], "rtt_steps"),
		    repro_mix_rtt(&m[0]), repro_mix_rtt(&m[1]), repro_mix_rtt(&m[2]));
	return repro_idcc_large(ctx);
}

const struct repro_exp repro_idcc = {
	.name = "idcc",
	.summary = "IDCC (seed 003) motivation (two DCs, 500 Mb/s 5 ms WAN, intra-DC web search "
		   "beside a WAN flow) and large scale (two spine-leaf DCs, 50 ms WAN); idcc "
		   "against dctcp and none",
	.run = run,
};
