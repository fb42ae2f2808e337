/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce ia-tcp: IA-TCP's experiment A (seed 000, NS-2; notes/reproductions.md).
 *
 * The source: one aggregator and N workers on one ToR switch, 1 Gb/s links, round-trip
 * propagation 100 us, the aggregator's port buffering 56 packets of 1500 bytes, a query
 * and a fixed-size response from each worker (64, 128, 256 KB), N up to 96, 100 iterations
 * a point; aggregate goodput and the timeout ratio (iterations with a timeout).
 * Here: the incast runner's rounds are the iterations; each link 25 us (4 x 25 us = the
 * 100 us round trip), buffer 56 x 1500 = 84,000 bytes, RoCE MTU 1024 (the path MTU of a
 * 1500-byte Ethernet MTU). The sources' senders on the RC: TCP SACK -> `tcp` (NewReno's
 * window from 2 packets on the RC's go-back-N: no SACK, a loss resends up to the window),
 * 1-win TCP -> `tcp` with iw=1,max_cwnd=1, IA-TCP -> `tcp+ia` (the workers' standard TCP
 * under the aggregator's window: the receiver's IA credits). The RC local ACK timeout is
 * the bench's 67 ms (RTO_min 200 ms in NS-2).
 * Experiments B (a background flow), C (30 short + 1 long flow) and D (groups joining) need
 * flows of different sizes and start times, which the incast runner does not make: they
 * run on the topology + workload runner after A (repro_iatcp.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpace/units.h"
#include "plot.h"
#include "repro.h"
#include "repro_iatcp.h"

#define SACK IATCP_SACK
#define ONEWIN IATCP_ONEWIN
#define IATCP IATCP_IA

static const struct repro_series series[] = {
	{ SACK, "tcp", 0, 0, NULL },
	{ ONEWIN, "tcp", 0, 0, IATCP_ONEWIN_PARAMS },
	{ IATCP, "tcp+ia", 0, 0, NULL },
};
#define NSERIES (sizeof(series) / sizeof(series[0]))

static const uint64_t sizes_full[] = { 64 * 1024, 128 * 1024, 256 * 1024 };
static const uint64_t senders_full[] = { 1, 4, 8, 16, 24, 32, 48, 64, 96 };
static const uint64_t sizes_quick[] = { 64 * 1024 };
static const uint64_t senders_quick[] = { 4, 32 };

struct grid {
	const uint64_t *sizes, *senders;
	size_t nsizes, nsenders;
};

/* The smallest N of the grid from which every point of @label (every size) has a timeout
 * ratio >= @ratio; 0 when none. */
static uint64_t timeout_onset(const struct repro_ctx *ctx, const struct grid *g,
			      const char *label, double ratio)
{
	uint64_t onset = 0;

	for (size_t k = g->nsenders; k-- > 0;) {
		bool all = true;
		for (size_t s = 0; s < g->nsizes; s++) {
			const struct repro_point *p = repro_find(ctx, label, g->senders[k], g->sizes[s]);
			all = all && p && repro_timeout_ratio(p) >= ratio;
		}
		if (!all)
			break;
		onset = g->senders[k];
	}
	return onset;
}

/* Over every point of @label: the lowest goodput ratio (and where), total timeouts. */
static void series_totals(const struct repro_ctx *ctx, const char *label, double *min_ratio,
			  uint64_t *at_n, uint64_t *at_bytes, uint64_t *timeouts, unsigned *runs)
{
	*min_ratio = INFINITY;
	*timeouts = 0;
	*runs = 0;
	for (size_t i = 0; i < ctx->npoints; i++) {
		const struct repro_point *p = &ctx->points[i];
		if (!p->ok || strcmp(p->series->label, label))
			continue;
		(*runs)++;
		*timeouts += p->r.timeouts;
		if (p->r.goodput_ratio < *min_ratio) {
			*min_ratio = p->r.goodput_ratio;
			*at_n = p->senders;
			*at_bytes = p->bytes;
		}
	}
}

static void check_onset(struct repro_ctx *ctx, const struct grid *g, const char *figure,
			const char *published, const char *label, uint64_t published_n,
			const char *note)
{
	uint64_t all = timeout_onset(ctx, g, label, 1.0), half = timeout_onset(ctx, g, label, 0.5);
	enum repro_verdict v = all && all <= published_n * 2 && all > published_n / 2 ? REPRO_YES :
			       all || half ? REPRO_PARTLY : REPRO_NO;
	const struct repro_point *last = repro_find(ctx, label, g->senders[g->nsenders - 1],
						    g->sizes[g->nsizes - 1]);

	char a[32], h[32];

	repro_check(ctx, figure, published, v, note,
		    "%s: timeouts in every round from %s on (every size), in half of them from %s "
		    "on; N=%" PRIu64 " %" PRIu64 "K: %.0f%% of rounds", label,
		    repro_fmt_n(all, a, sizeof(a)), repro_fmt_n(half, h, sizeof(h)),
		    g->senders[g->nsenders - 1], g->sizes[g->nsizes - 1] / 1024,
		    last ? repro_timeout_ratio(last) * 100 : NAN);
}

static void check_onewin_goodput(struct repro_ctx *ctx, const struct grid *g)
{
	double peak = 0, tail = INFINITY;
	uint64_t big = g->sizes[g->nsizes - 1];

	for (size_t k = 0; k < g->nsenders; k++) {
		const struct repro_point *p = repro_find(ctx, ONEWIN, g->senders[k], big);
		if (!p)
			continue;
		if (g->senders[k] <= 32 && p->r.goodput_ratio > peak)
			peak = p->r.goodput_ratio;
		if (g->senders[k] > 32 && p->r.goodput_ratio < tail)
			tail = p->r.goodput_ratio;
	}
	repro_check(ctx, "A: 1-win TCP goodput", "1-win TCP's goodput degrades past 32 workers",
		    isfinite(tail) ? (tail < 0.8 * peak ? REPRO_YES : REPRO_NO) : REPRO_NOT_RUN,
		    "degrades: below 80% of its best at N <= 32",
		    "%s %" PRIu64 "K: best %.1f%% of the payload rate at N <= 32, lowest %.1f%% "
		    "past 32", ONEWIN, big / 1024, peak * 100, tail * 100);
}

static void check_ia(struct repro_ctx *ctx)
{
	double min_ratio;
	uint64_t at_n = 0, at_bytes = 0, timeouts;
	unsigned runs;

	series_totals(ctx, IATCP, &min_ratio, &at_n, &at_bytes, &timeouts, &runs);
	repro_check(ctx, "A: IA-TCP timeouts", "IA-TCP has zero timeouts in all runs",
		    timeouts == 0 ? REPRO_YES : REPRO_NO, "",
		    "%s: %" PRIu64 " timeouts over %u runs", IATCP, timeouts, runs);
	repro_check(ctx, "A: IA-TCP goodput", "IA-TCP's goodput stays high throughout",
		    min_ratio >= 0.8 ? REPRO_YES : REPRO_NO,
		    "high: at least 80% of the link's payload rate at every N and size",
		    "%s: lowest %.1f%% of the payload rate (N=%" PRIu64 ", %" PRIu64 "K)", IATCP,
		    min_ratio * 100, at_n, at_bytes / 1024);
}

/* Figs. 4-5 of the source's shape: goodput and timeout ratio against N, a panel a size. */
static void plots(struct repro_ctx *ctx, const struct grid *g)
{
	static const struct { const char *name, *ylabel, *ycol; } figs[] = {
		{ "goodput", "goodput [Mb/s]", "$7" },
		{ "timeout_ratio", "timeout ratio [% of rounds]", "$11" },
	};
	char body[8192], clauses[2048], err[256];

	for (size_t f = 0; f < sizeof(figs) / sizeof(figs[0]); f++) {
		size_t used = (size_t)snprintf(body, sizeof(body),
			"set output '%s.png'\nset multiplot layout 1,%zu title 'IA-TCP experiment A: "
			"%s against the number of workers'\nset xlabel 'workers N'\nset ylabel '%s'\n"
			"set yrange [0:*]\nset key bottom left\n", figs[f].name, g->nsizes,
			figs[f].ylabel, figs[f].ylabel);
		for (size_t s = 0; s < g->nsizes && used < sizeof(body); s++) {
			repro_plot_clauses(clauses, sizeof(clauses), series, NSERIES, g->sizes[s], 0,
					   figs[f].ycol);
			used += (size_t)snprintf(body + used, sizeof(body) - used,
						 "set title '%" PRIu64 "K responses'\nplot %s\n",
						 g->sizes[s] / 1024, clauses);
		}
		if (plot_script(ctx->dir, figs[f].name, err, sizeof(err), "%sunset multiplot\n",
				body)) {
			fprintf(stderr, "qpace-bench reproduce ia-tcp: plots skipped: %s\n", err);
			return;
		}
	}
}

static int run(struct repro_ctx *ctx)
{
	struct bench_conf c = ctx->base;
	struct grid g = ctx->quick ?
		(struct grid){ sizes_quick, senders_quick, 1, sizeof(senders_quick) / 8 } :
		(struct grid){ sizes_full, senders_full, 3, sizeof(senders_full) / 8 };
	static const char note[] = "TCP on the RC: tcp (NewReno from 2 packets, go-back-N: no "
				   "SACK) for TCP SACK, tcp iw=1,max_cwnd=1 for 1-win TCP; RC "
				   "timeout 67 ms (NS-2 RTO_min 200 ms)";

	c.link_bps = QP_GBPS;
	c.delay_ns = 25 * QP_NS_PER_US;
	c.buffer_bytes = 56 * 1500;
	c.mtu_bytes = 1024;
	c.rounds = ctx->quick ? 3 : 100;
	if (repro_sweep(ctx, &c, series, NSERIES, g.sizes, g.nsizes, g.senders, g.nsenders, NULL))
		return -1;
	check_onset(ctx, &g, "A: TCP SACK timeouts", "TCP SACK: 100% of iterations time out "
		    "above 8 workers", SACK, 8, note);
	check_onset(ctx, &g, "A: 1-win TCP timeouts", "1-win TCP: 100% timeouts above 24 workers",
		    ONEWIN, 24, note);
	check_onewin_goodput(ctx, &g);
	check_ia(ctx);
	if (repro_iatcp_b(ctx) || repro_iatcp_c(ctx) || repro_iatcp_d(ctx))
		return -1;
	if (ctx->plots)
		plots(ctx, &g);
	return 0;
}

const struct repro_exp repro_iatcp = {
	.name = "ia-tcp",
	.summary = "IA-TCP (seed 000) A-D: N workers -> 1 aggregator, 1 Gb/s, 100 us RTT, 56-packet "
		   "buffer; TCP SACK, 1-win TCP, IA-TCP as tcp, tcp iw=1,max_cwnd=1, tcp+ia",
	.run = run,
};
