/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce ia-tcp, experiments B and C (repro_iatcp.h): on the topology + workload runner.
 *
 * B: experiment A's incast (responses of 64, 128, 256 KB from N workers, closed-loop rounds
 *    2 ms apart, as the incast runner's) with one long-lived background flow from another
 *    host into the aggregator, started 10 ms before the first query so it holds its
 *    steady state when the incast begins; the background ends with the last round
 *    (netrun's end_with_finite). N as A's up to 48, then 62 (not 64, 96: a star's 64
 *    ports hold 62 workers beside the aggregator and the background sender). 20 rounds a
 *    point (A: 100) to fit make reproduce's budget; --quick: 64 KB, N = 4 and 32, 3
 *    rounds. A point stops at b_until's limit. Goodput is A's: the responses' bytes over
 *    the rounds' time (query to last byte), against the payload rate; a round
 *    with a timeout is a round in which a response flow had an RC timeout.
 * C: 30 short responses (10 KB) and one long flow (10 MB) to the aggregator, all started
 *    at once (the source gives no offsets): the short flows' mean and largest completion
 *    time, the long one's. Sizes are the workload grammar's (binary K, M). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpace/units.h"
#include "plot.h"
#include "repro_iatcp.h"
#include "stats.h"

#define B_GAP "2ms"                /* the incast runner's INCAST_GAP_NS */
#define B_LEAD "10ms"              /* the background's head start */

const struct repro_mix_series repro_iatcp_mix_series[IATCP_NSERIES] = {
	{ IATCP_SACK, "tcp", 0, "tcp", NULL },
	{ IATCP_ONEWIN, "tcp", 0, "tcp-w1", IATCP_ONEWIN_PARAMS },
	{ IATCP_IA, "tcp+ia", 0, "tcp+ia", NULL },
};
#define S repro_iatcp_mix_series

void repro_iatcp_star(struct topogen_params *g, uint32_t hosts)
{
	topogen_defaults(g, TOPOGEN_STAR);
	g->hosts = hosts;
	g->host_bps = QP_GBPS;
	g->delay_ns = 25 * QP_NS_PER_US;
	g->buffer_bytes = 56 * 1500;
}

static double payload_bps(void)
{
	return stats_payload_bps(QP_GBPS, 1024, STATS_ROCE_PKT_OVERHEAD);
}

/* ---- B ---- */

static const uint64_t b_sizes[] = { 64 * 1024, 128 * 1024, 256 * 1024 };
/* A's N to 48, then 62: a star has at most 64 ports (the switch loader's limit, TOPOGEN_
 * MAX_PORTS) and B needs the workers, the aggregator and the background sender. */
static const uint64_t b_senders[] = { 1, 4, 8, 16, 24, 32, 48, 62 };
static const uint64_t b_senders_quick[] = { 4, 32 };
#define B_MAX (IATCP_NSERIES * 3 * 9)

struct b_point {
	size_t series;
	uint64_t senders, bytes;
	bool ok;
	double goodput_bps, fair_ratio;    /* fair_ratio: of the share N/(N+1) of the payload rate */
	unsigned rounds, rounds_done, rounds_to;   /* rounds: started before the limit */
	uint64_t timeouts, drops;
};

struct b_state {
	struct b_point p[B_MAX];
	size_t n;
};

/* The incast is group 0 (the workload's first line), the background group 1. */
static void b_inspect(void *arg, size_t i, const struct netrun_result *r)
{
	struct b_point *p = (struct b_point *)arg + i;
	qp_time_ns first[1024], last[1024];
	bool done[1024], to[1024];
	unsigned rounds = 0;
	uint64_t bytes = 0;
	double ns = 0;

	for (size_t k = 0; k < r->nflows; k++) {
		const struct sim_flow *f = &r->flow[k];
		uint32_t q = r->wl[k].round;
		if (r->wl[k].group != 0 || q >= 1024)
			continue;
		for (; rounds <= q; rounds++) {
			first[rounds] = UINT64_MAX, last[rounds] = 0;
			done[rounds] = true, to[rounds] = false;
		}
		bool started = f->start_ns > 0 || !f->held;
		if (started && f->start_ns < first[q])
			first[q] = f->start_ns;
		if (f->done && f->start_ns + f->fct_ns > last[q])
			last[q] = f->start_ns + f->fct_ns;
		done[q] = done[q] && f->done;
		to[q] = to[q] || f->timeouts > 0;
		p->timeouts += f->timeouts;
	}
	for (unsigned q = 0; q < rounds; q++) {
		if (first[q] == UINT64_MAX)
			continue;           /* not reached before the limit: not counted */
		p->rounds++;
		p->rounds_to += to[q];
		if (!done[q] || last[q] <= first[q])
			continue;
		p->rounds_done++;
		ns += (double)(last[q] - first[q]);
		bytes += p->senders * p->bytes;
	}
	p->drops = r->drops;
	p->goodput_bps = ns > 0 ? (double)bytes * 8e9 / ns : 0;
	p->fair_ratio = p->goodput_bps / (payload_bps() * (double)p->senders /
					  (double)(p->senders + 1));
	p->ok = true;
}

static void b_csv(const struct repro_ctx *ctx, const struct b_state *b)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/b.csv", ctx->dir);
	if (!(f = fopen(path, "w")))
		return;
	fputs("series,senders,bytes,goodput_mbps,goodput_pct,fair_share_pct,rounds,rounds_done,"
	      "rounds_with_timeout,timeout_ratio_pct,timeouts,drops\n", f);
	/* a series' rows together, so each plots as one line */
	for (size_t a = 0; a < IATCP_NSERIES; a++)
	for (size_t i = 0; i < b->n; i++) {
		const struct b_point *p = &b->p[i];
		if (!p->ok || p->series != a)
			continue;
		fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.3f,%u,%u,%u,%.2f,%" PRIu64 ",%"
			PRIu64 "\n", S[p->series].label, p->senders, p->bytes, p->goodput_bps / 1e6,
			p->goodput_bps / payload_bps() * 100, p->fair_ratio * 100, p->rounds,
			p->rounds_done, p->rounds_to, p->rounds ? 100.0 * p->rounds_to / p->rounds : 0,
			p->timeouts, p->drops);
	}
	fclose(f);
}

static void b_plot(const struct repro_ctx *ctx, const uint64_t *sizes, size_t nsizes)
{
	static const struct { const char *name, *ylabel, *ycol; } figs[] = {
		{ "b_goodput", "incast goodput [Mb/s]", "$4" },
		{ "b_timeout_ratio", "timeout ratio [% of rounds]", "$10" },
	};
	char body[8192], err[256];

	for (size_t f = 0; f < sizeof(figs) / sizeof(figs[0]); f++) {
		size_t used = (size_t)snprintf(body, sizeof(body),
			"set output '%s.png'\nset termoption noenhanced\nset multiplot layout 1,%zu "
			"title 'IA-TCP experiment B "
			"(one background flow): %s'\nset xlabel 'workers N'\nset ylabel '%s'\n"
			"set yrange [0:*]\nset key bottom left\n", figs[f].name, nsizes,
			figs[f].ylabel, figs[f].ylabel);
		for (size_t z = 0; z < nsizes && used < sizeof(body); z++) {
			used += (size_t)snprintf(body + used, sizeof(body) - used,
						 "set title '%" PRIu64 "K responses'\nplot ",
						 sizes[z] / 1024);
			for (size_t a = 0; a < IATCP_NSERIES && used < sizeof(body); a++)
				used += (size_t)snprintf(body + used, sizeof(body) - used,
					"%s'b.csv' skip 1 using 2:((strcol(1) eq '%s' && $3 == %" PRIu64
					") ? %s : 1/0) with linespoints lw 2 title '%s'%s",
					a ? ", " : "", S[a].label, sizes[z], figs[f].ycol, S[a].label,
					a + 1 == IATCP_NSERIES ? "\n" : "");
		}
		if (plot_script(ctx->dir, figs[f].name, err, sizeof(err), "%sunset multiplot\n",
				body)) {
			fprintf(stderr, "qpace-bench reproduce ia-tcp: plots skipped: %s\n", err);
			return;
		}
	}
}

/* Over the series' points: the lowest fair-share ratio (and where), rounds with a timeout. */
static void b_totals(const struct b_state *b, size_t series, const struct b_point **low,
		     unsigned *rounds, unsigned *rounds_to, unsigned *rounds_done)
{
	*low = NULL;
	*rounds = *rounds_to = *rounds_done = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct b_point *p = &b->p[i];
		if (!p->ok || p->series != series)
			continue;
		*rounds += p->rounds;
		*rounds_to += p->rounds_to;
		*rounds_done += p->rounds_done;
		if (!*low || p->fair_ratio < (*low)->fair_ratio)
			*low = p;
	}
}

static void b_checks(struct repro_ctx *ctx, const struct b_state *b)
{
	const struct b_point *low[IATCP_NSERIES];
	unsigned rounds[IATCP_NSERIES], to[IATCP_NSERIES], done[IATCP_NSERIES];

	for (size_t a = 0; a < IATCP_NSERIES; a++)
		b_totals(b, a, &low[a], &rounds[a], &to[a], &done[a]);
	if (!low[2]) {
		repro_check(ctx, "B: with a background flow", "IA-TCP's goodput stays high as N "
			    "grows, no timeouts", REPRO_NOT_RUN, "every run failed", "-");
		return;
	}
	repro_check(ctx, "B: IA-TCP timeouts", "with a background flow IA-TCP has no timeouts",
		    to[2] == 0 && done[2] == rounds[2] ? REPRO_YES : REPRO_NO,
		    "yes: no round with a timeout, and every round started completed; 20 rounds "
		    "a point (A: 100)",
		    "rounds with a timeout / completed, of those started: tcp+ia %u / %u of %u; "
		    "tcp %u / %u of %u, tcp-w1 %u / %u of %u", to[2], done[2], rounds[2], to[0],
		    done[0], rounds[0], to[1], done[1], rounds[1]);
	char base[2][96];
	for (size_t a = 0; a < 2; a++)
		snprintf(base[a], sizeof(base[a]), low[a] ? "%.1f%% (N=%" PRIu64 ", %" PRIu64 "K, "
			 "%u of %u rounds done)" : "-", low[a] ? low[a]->fair_ratio * 100 : 0,
			 low[a] ? low[a]->senders : 0, low[a] ? low[a]->bytes / 1024 : 0,
			 low[a] ? low[a]->rounds_done : 0, low[a] ? low[a]->rounds : 0);
	repro_check(ctx, "B: IA-TCP goodput", "with a background flow IA-TCP's goodput stays "
		    "high as N grows", low[2]->fair_ratio >= 0.8 ? REPRO_YES : REPRO_NO,
		    "high: the incast's goodput at least 80% of its fair share N/(N+1) of the "
		    "payload rate at every N and size",
		    "lowest share of N/(N+1): tcp+ia %.1f%% (N=%" PRIu64 ", %" PRIu64 "K); tcp "
		    "%s, tcp-w1 %s", low[2]->fair_ratio * 100, low[2]->senders,
		    low[2]->bytes / 1024, base[0], base[1]);
}

/* A point's limit: each round 4 x its bytes at the line rate, the gap and three RC
 * timeouts (67 ms), after the background's lead. Rounds not done by then are counted. */
static qp_time_ns b_until(uint64_t senders, uint64_t bytes, unsigned rounds)
{
	qp_time_ns ideal = senders * bytes * 8 * QP_NS_PER_S / QP_GBPS;

	return 10 * QP_NS_PER_MS + rounds * (4 * ideal + 2 * QP_NS_PER_MS + 3 * 67 * QP_NS_PER_MS);
}

int repro_iatcp_b(struct repro_ctx *ctx)
{
	static struct b_state b;    /* 81 points: off the stack */
	const uint64_t *senders = ctx->quick ? b_senders_quick : b_senders;
	size_t nsenders = ctx->quick ? 2 : sizeof(b_senders) / sizeof(b_senders[0]);
	size_t nsizes = ctx->quick ? 1 : sizeof(b_sizes) / sizeof(b_sizes[0]);
	unsigned rounds = ctx->quick ? 3 : 20;
	struct repro_mix_run m[IATCP_NSERIES];

	b.n = 0;
	for (size_t z = 0; z < nsizes; z++)
		for (size_t k = 0; k < nsenders; k++) {
			struct topogen_params g;
			char wl[256], tag[64];
			uint64_t n = senders[k];
			struct b_point *p = &b.p[b.n];

			repro_iatcp_star(&g, (uint32_t)n + 2);
			snprintf(wl, sizeof(wl), "# IA-TCP B: the incast of A beside a background flow\n"
				 "incast bytes=%" PRIu64 " senders=1-%" PRIu64 " receiver=0 rounds=%u "
				 "gap=%s start=%s\nlong senders=%" PRIu64 " receiver=0\n", b_sizes[z], n,
				 rounds, B_GAP, B_LEAD, n + 1);
			snprintf(tag, sizeof(tag), "b/%" PRIu64 "K-N%" PRIu64, b_sizes[z] / 1024, n);
			for (size_t a = 0; a < IATCP_NSERIES; a++)
				p[a] = (struct b_point){ .series = a, .senders = n, .bytes = b_sizes[z] };
			const struct repro_mix_spec sp = {
				.tag = tag, .gen = &g, .workload = wl, .until_ns = b_until(n, b_sizes[z], rounds),
				.sample_ns = 10 * QP_NS_PER_MS, .group = 0, .end_with_finite = true,
				.inspect = b_inspect, .arg = p,
			};
			if (repro_mix(ctx, &sp, S, IATCP_NSERIES, m))
				return -1;
			b.n += IATCP_NSERIES;
		}
	b_csv(ctx, &b);
	b_checks(ctx, &b);
	if (ctx->plots)
		b_plot(ctx, b_sizes, nsizes);
	return 0;
}

/* ---- C ---- */

struct c_result {
	bool ok;
	size_t short_done;
	double short_mean_us, short_max_us, long_us;   /* NAN: not finished */
	uint64_t timeouts, drops;
};

static void c_inspect(void *arg, size_t i, const struct netrun_result *r)
{
	struct c_result *c = (struct c_result *)arg + i;
	double sum = 0, max = 0;

	c->long_us = NAN;
	for (size_t k = 0; k < r->nflows; k++) {
		const struct sim_flow *f = &r->flow[k];
		double us = (double)f->fct_ns / 1e3;
		c->timeouts += f->timeouts;
		if (!f->done)
			continue;
		if (r->wl[k].group == 1) {
			c->long_us = us;
			continue;
		}
		c->short_done++;
		sum += us;
		max = fmax(max, us);
	}
	c->short_mean_us = c->short_done ? sum / (double)c->short_done : NAN;
	c->short_max_us = c->short_done ? max : NAN;
	c->drops = r->drops;
	c->ok = true;
}

int repro_iatcp_c(struct repro_ctx *ctx)
{
	struct topogen_params g;
	struct c_result c[IATCP_NSERIES] = { { 0 } };
	struct repro_mix_run m[IATCP_NSERIES];
	char path[4200];
	FILE *f;

	repro_iatcp_star(&g, 32);
	const struct repro_mix_spec sp = {
		.tag = "c", .gen = &g, .until_ns = 10 * QP_NS_PER_S, .sample_ns = QP_NS_PER_MS,
		.group = 0, .inspect = c_inspect, .arg = c,
		.workload = "# IA-TCP C: 30 short responses and one long flow to the aggregator\n"
			    "incast bytes=10K senders=1-30 receiver=0\n"
			    "long senders=31 receiver=0 bytes=10M\n",
	};
	if (repro_mix(ctx, &sp, S, IATCP_NSERIES, m))
		return -1;
	snprintf(path, sizeof(path), "%s/c.csv", ctx->dir);
	if ((f = fopen(path, "w"))) {
		fputs("series,short_done,short_mean_us,short_max_us,long_us,timeouts,drops\n", f);
		for (size_t a = 0; a < IATCP_NSERIES; a++)
			if (c[a].ok)
				fprintf(f, "%s,%zu,%.1f,%.1f,%.1f,%" PRIu64 ",%" PRIu64 "\n", S[a].label,
					c[a].short_done, c[a].short_mean_us, c[a].short_max_us,
					c[a].long_us, c[a].timeouts, c[a].drops);
		fclose(f);
	}
	if (!c[0].ok || !c[1].ok || !c[2].ok) {
		repro_check(ctx, "C: query completion", "IA-TCP lowest mean and max short-flow time",
			    REPRO_NOT_RUN, "a run failed", "-");
		return 0;
	}
	/* NAN (a flow unfinished) compares false: never "lowest" */
	bool mean = c[2].short_mean_us < c[0].short_mean_us && c[2].short_mean_us < c[1].short_mean_us;
	bool max = c[2].short_max_us < c[0].short_max_us && c[2].short_max_us < c[1].short_max_us;
	repro_check(ctx, "C: short flows", "30 x 10 KB beside 1 x 10 MB: IA-TCP has the lowest "
		    "mean and maximum completion time of the short flows",
		    mean && max ? REPRO_YES : mean || max ? REPRO_PARTLY : REPRO_NO,
		    "yes: tcp+ia's mean and max both below tcp's and tcp-w1's; partly: one of "
		    "them. All 31 flows start at once (the source gives no offsets)",
		    "short flows' mean / max: tcp+ia %.0f / %.0f us, tcp %.0f / %.0f, tcp-w1 "
		    "%.0f / %.0f; timeouts %" PRIu64 ", %" PRIu64 ", %" PRIu64, c[2].short_mean_us,
		    c[2].short_max_us, c[0].short_mean_us, c[0].short_max_us, c[1].short_mean_us,
		    c[1].short_max_us, c[2].timeouts, c[0].timeouts, c[1].timeouts);
	bool lng = c[2].long_us < c[0].long_us && c[2].long_us < c[1].long_us;
	repro_check(ctx, "C: long flow", "IA-TCP finishes the 10 MB flow fastest",
		    lng ? REPRO_YES : REPRO_NO, "yes: tcp+ia's long flow ends before tcp's and "
		    "tcp-w1's", "10 MB flow: tcp+ia %.1f ms, tcp %.1f ms, tcp-w1 %.1f ms "
		    "(%.1f ms at the payload rate)", c[2].long_us / 1e3, c[0].long_us / 1e3,
		    c[1].long_us / 1e3, 10.0 * 1024 * 1024 * 8 / payload_bps() * 1e3);
	return 0;
}
