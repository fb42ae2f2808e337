/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce hpcc: HPCC's incast (SIGCOMM 2019; references.md 1.3, notes/reproductions.md).
 *
 * The source: 60 senders x 500 KB to one receiver, 100 Gb/s links, 1 us each, 1000-byte
 * payload, PFC on, eta = 0.95, maxStage = 0; against DCQCN. Published: "resolves
 * congestion in one RTT and converges to near-zero queue"; FCT up to 95% shorter than
 * DCQCN's (with 30% WebSearch background: the topology + workload runner, not run here).
 * Here: one round (one incast), RoCE MTU 1024 (1000-byte payloads are no RoCE MTU), PFC as
 * `make bench-vt` runs it (xoff 32 KiB, headroom from the link, lossless class 0), 32 MiB
 * buffer, HPCC's parameters as the bench gives them (incast_hpcc_params: eta 0.95,
 * max_stage 0), the queue and rates sampled every 1 us; hpcc, dcqcn and none. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/units.h"
#include "plot.h"
#include "repro.h"
#include "repro_hpcc.h"

#define SIZE (500 * 1000)
#define SAMPLE_NS (1 * QP_NS_PER_US)

static const struct repro_series series[] = {
	{ .label = "HPCC~hpcc", .algo = "hpcc" },
	{ .label = "DCQCN~dcqcn", .algo = "dcqcn" },
	{ .label = "none", .algo = "none" },
};
#define NSERIES (sizeof(series) / sizeof(series[0]))

/* From a run's queue.csv: the receiver's port (the file's first port) over time. */
struct qtrace {
	double peak, peak_t, drain_t, tail_mean;   /* bytes, seconds from the round's start */
};

static int read_queue(const char *dir, const char *algo, double bdp, double end_s,
		      struct qtrace *q)
{
	char path[4200], port[32], first[32] = "";
	double t, v, tail = 0;
	unsigned long ntail = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/runs/%s/queue.csv", dir, algo);
	f = fopen(path, "r");
	if (!f)
		return -1;
	*q = (struct qtrace){ .drain_t = NAN };
	if (fscanf(f, "%*[^\n]\n") != 0) {
		fclose(f);
		return -1;
	}
	while (fscanf(f, "%lf,%31[^,],%lf\n", &t, port, &v) == 3) {
		if (!first[0])
			snprintf(first, sizeof(first), "%s", port);
		if (strcmp(port, first))
			continue;
		if (v > q->peak) {
			q->peak = v;
			q->peak_t = t;
			q->drain_t = NAN;
		} else if (isnan(q->drain_t) && v <= bdp) {
			q->drain_t = t;
		}
		if (t >= end_s / 2 && t <= end_s) {
			tail += v;
			ntail++;
		}
	}
	fclose(f);
	q->tail_mean = ntail ? tail / (double)ntail : NAN;
	return 0;
}

/* From rates.csv: the first sample at which the senders' rates sum to at most the link. */
static double rates_fit(const char *dir, const char *algo, double link_mbps)
{
	char path[4200];
	static char line[1 << 16];
	FILE *f;
	double at = NAN;

	snprintf(path, sizeof(path), "%s/runs/%s/rates.csv", dir, algo);
	f = fopen(path, "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		return NAN;
	}
	while (isnan(at) && fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		double t = strtod(p, &end), sum = 0;
		for (p = end; *p == ','; p = end)
			sum += strtod(p + 1, &end);
		if (sum > 0 && sum <= link_mbps)
			at = t;
	}
	fclose(f);
	return at;
}

static void checks(struct repro_ctx *ctx, uint64_t n)
{
	const struct repro_point *h = repro_find(ctx, "HPCC~hpcc", n, SIZE);
	const struct repro_point *d = repro_find(ctx, "DCQCN~dcqcn", n, SIZE);
	struct qtrace q;

	if (!h)
		return;
	double rtt = (double)h->r.base_rtt_ns / 1e9, bdp = rtt * (double)h->r.link_bps / 8;
	if (read_queue(ctx->dir, "hpcc", bdp, h->r.elapsed_s, &q) == 0) {
		double fit = rates_fit(ctx->dir, "hpcc", (double)h->r.link_bps / 1e6);
		repro_check(ctx, "incast: one RTT", "HPCC resolves congestion in one RTT",
			    fit <= 2 * rtt ? REPRO_YES : REPRO_NO,
			    "the senders' rates (1 us samples) sum to at most the link within 2 base "
			    "RTTs of the start; the base RTT is the bench's measured one",
			    "rates fit the link %.1f us after the start (base RTT %.1f us measured, "
			    "%.1f RTTs); peak queue %.0f KiB at %.1f us", fit * 1e6, rtt * 1e6,
			    fit / rtt, q.peak / 1024, q.peak_t * 1e6);
		repro_check(ctx, "incast: near-zero queue", "HPCC converges to near-zero queue",
			    q.tail_mean <= bdp ? REPRO_YES : REPRO_NO,
			    "near-zero: the mean queue of the incast's second half at most one BDP "
			    "(base RTT x line rate)",
			    "second-half mean %.0f KiB against a BDP of %.0f KiB; below one BDP from "
			    "%.1f us (peak at %.1f us)", q.tail_mean / 1024, bdp / 1024,
			    q.drain_t * 1e6, q.peak_t * 1e6);
	}
	if (d) {
		double gain = 1 - h->r.fct.p99_us / d->r.fct.p99_us;

		repro_check(ctx, "incast: FCT against DCQCN", "FCT up to 95% shorter than DCQCN's",
			    gain > 0 ? REPRO_YES : REPRO_NO,
			    "agrees when hpcc's p99 is the shorter; the 95% is over the paper's "
			    "workloads: an incast of equal flows ends when the bottleneck has carried "
			    "N x size, whichever algorithm paces it",
			    "p99 FCT hpcc %.0f us, dcqcn %.0f us (%.0f%% %s); mean queue %.0f and "
			    "%.0f KiB, drops %" PRIu64 " and %" PRIu64, h->r.fct.p99_us,
			    d->r.fct.p99_us, fabs(gain) * 100, gain >= 0 ? "shorter" : "longer",
			    h->r.avg_queue_bytes / 1024, d->r.avg_queue_bytes / 1024, h->r.drops,
			    d->r.drops);
	}
}

/* The paper's incast figure's shape: the receiver's queue against time, one line each. */
static void plots(struct repro_ctx *ctx, size_t nseries)
{
	char clauses[2048], err[256];
	size_t used = 0;

	clauses[0] = '\0';
	for (size_t a = 0; a < nseries; a++)
		used += (size_t)snprintf(clauses + used, sizeof(clauses) - used,
			"%s'runs/%s/queue.csv' skip 1 using ($1*1e6):(strcol(2) eq 'p0' ? $3/1024 : "
			"1/0) with lines lw 2 title '%s'", a ? ", \\\n  " : "", series[a].algo,
			series[a].label);
	if (plot_script(ctx->dir, "queue", err, sizeof(err),
			"set output 'queue.png'\nset title 'HPCC incast: 60 x 500 KB, 100 Gb/s: the "
			"receiver port queue'\nset xlabel 'time [us]'\nset ylabel 'queue [KiB]'\n"
			"plot %s\n", clauses))
		fprintf(stderr, "qpace-bench reproduce hpcc: plots skipped: %s\n", err);
}

static int run(struct repro_ctx *ctx)
{
	struct bench_conf c = ctx->base;
	uint64_t n = ctx->quick ? 16 : 60, sizes[] = { SIZE };

	c.link_bps = 100 * QP_GBPS;
	c.delay_ns = QP_NS_PER_US;
	c.mtu_bytes = 1024;
	c.buffer_bytes = 32 * 1024 * 1024;
	c.pfc = "xoff=32K,headroom=auto,class=0,lossless";
	c.rounds = 1;
	c.sample_ns = SAMPLE_NS;
	c.no_plots = true;           /* the runs' own plots: the figure below replaces them */
	size_t ns = ctx->quick ? 2 : NSERIES;

	if (repro_sweep(ctx, &c, series, ns, sizes, 1, &n, 1, "runs/%s"))
		return -1;
	checks(ctx, n);
	if (ctx->plots)
		plots(ctx, ns);
	return repro_hpcc_background(ctx);
}

const struct repro_exp repro_hpcc = {
	.name = "hpcc",
	.summary = "HPCC: 60 senders x 500 KB -> 1, 100 Gb/s, 1 us links, PFC, alone and with "
		   "30% WebSearch on a 128-host fat-tree; hpcc against dcqcn (and none)",
	.run = run,
};
