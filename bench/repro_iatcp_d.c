/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* reproduce ia-tcp, experiment D (repro_iatcp.h): fairness as groups join and leave.
 *
 * The source: 5 groups of 8 flows, 100 MB each, the groups starting 3 s apart, all to the
 * aggregator. Here 40 flows from hosts 1-40 into host 0, with sizes, offsets and the
 * sampling period scaled by 1/10 (10 MiB, 300 ms, rates every 10 ms: each host's sending
 * rate at its switch port, rates.csv); --quick by 1/100 (1 MiB, 30 ms, 1 ms). Why: at
 * full size the three series take about 10 minutes (the quick run x 100), a third of make
 * reproduce's budget; at the same link rate the scaled run has the same shape (group 1
 * alone carries 3/8 of its bytes before group 2 joins, as at full size). Per
 * interval: each group's rate, Jain's index over the flows of a group in which every flow
 * runs the whole interval, and over the rates of the groups that are so active (two or
 * more). Files: d.csv (series, interval, rates, indexes), d_rates.png (the source's
 * figure: each group's rate over time, a panel a series). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/units.h"
#include "plot.h"
#include "repro_iatcp.h"
#include "stats.h"

#define D_GROUPS 5
#define D_FLOWS 8                          /* a group */
#define D_HOSTS (1 + D_GROUPS * D_FLOWS)
#define D_MAX_ROWS 8192

struct d_series {
	const struct repro_ctx *ctx;
	bool ok;
	double *within, *across;            /* every (interval, active group); every interval */
	size_t nwithin, nacross;
	double last_end_s;                  /* the last flow's end; NAN: one did not finish */
	uint64_t drops, timeouts;
};

struct d_state {
	const struct repro_ctx *ctx;
	qp_time_ns sample_ns;
	FILE *csv;
	struct d_series s[IATCP_NSERIES];
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One interval [t0, t1) of rates.csv (@row: Mb/s per host) into d.csv and the indexes. */
static void d_interval(struct d_state *d, size_t i, const struct netrun_result *r,
		       double t1, const double *row)
{
	struct d_series *s = &d->s[i];
	double t0 = t1 - (double)d->sample_ns / 1e9, grp[D_GROUPS], jw[D_GROUPS];
	bool active[D_GROUPS];
	size_t nact = 0;

	for (size_t g = 0; g < D_GROUPS; g++) {
		double x[D_FLOWS];
		active[g] = true;
		grp[g] = 0;
		for (size_t k = 0; k < D_FLOWS; k++) {
			size_t f = g * D_FLOWS + k;     /* the workload's order: group by group */
			const struct sim_flow *fl = &r->flow[f];
			double start = (double)fl->start_ns / 1e9, end = (double)(fl->start_ns + fl->fct_ns) / 1e9;
			x[k] = row[fl->src];
			grp[g] += x[k];
			active[g] = active[g] && start <= t0 && (!fl->done || end >= t1);
		}
		jw[g] = active[g] ? stats_jain(x, D_FLOWS) : NAN;
		if (active[g]) {
			s->within[s->nwithin++] = jw[g];
			grp[nact] = grp[g];     /* packed for the index across */
			nact++;
		}
	}
	double ja = nact >= 2 ? stats_jain(grp, nact) : NAN;
	if (nact >= 2)
		s->across[s->nacross++] = ja;
	/* grp[] was packed: the CSV's rates are re-summed */
	fprintf(d->csv, "%s,%.3f", repro_iatcp_mix_series[i].label, t1);
	for (size_t g = 0; g < D_GROUPS; g++) {
		double sum = 0;
		for (size_t k = 0; k < D_FLOWS; k++)
			sum += row[r->flow[g * D_FLOWS + k].src];
		fprintf(d->csv, ",%.3f", sum);
	}
	for (size_t g = 0; g < D_GROUPS; g++)
		fprintf(d->csv, isnan(jw[g]) ? "," : ",%.4f", jw[g]);
	fprintf(d->csv, isnan(ja) ? ",\n" : ",%.4f\n", ja);
}

static void d_inspect(void *arg, size_t i, const struct netrun_result *r)
{
	struct d_state *d = arg;
	struct d_series *s = &d->s[i];
	char path[4400], line[4096];
	double row[D_HOSTS], t;
	FILE *f;

	snprintf(path, sizeof(path), "%s/d/%s/rates.csv", d->ctx->dir,
		 repro_iatcp_mix_series[i].dir);
	s->within = calloc(D_MAX_ROWS * D_GROUPS, sizeof(double));
	s->across = calloc(D_MAX_ROWS, sizeof(double));
	if (!s->within || !s->across || r->nflows != D_GROUPS * D_FLOWS || !(f = fopen(path, "r"))) {
		fprintf(stderr, "qpace-bench reproduce ia-tcp: D: %s: no rates\n", path);
		return;
	}
	for (size_t n = 0; fgets(line, sizeof(line), f) && s->nacross < D_MAX_ROWS &&
	     n < D_MAX_ROWS; n++) {
		char *p = line, *e;
		if (n == 0)
			continue;           /* the header */
		t = strtod(p, &e);
		size_t h = 0;
		for (p = e; *p == ',' && h < D_HOSTS; h++, p = e)
			row[h] = strtod(p + 1, &e);
		if (h == D_HOSTS)
			d_interval(d, i, r, t, row);
	}
	fclose(f);
	s->last_end_s = 0;
	for (size_t k = 0; k < r->nflows; k++) {
		const struct sim_flow *fl = &r->flow[k];
		s->timeouts += fl->timeouts;
		s->last_end_s = fl->done ? fmax(s->last_end_s, (double)(fl->start_ns + fl->fct_ns) / 1e9) :
					   NAN;
		if (!fl->done)
			break;
	}
	s->drops = r->drops;
	s->ok = true;
}

/* Each group's sending rate over time, a panel per series (the source's figure). */
static void d_plot(const struct repro_ctx *ctx, uint64_t mib, qp_time_ns step)
{
	char body[4096], err[256];
	size_t used = (size_t)snprintf(body, sizeof(body),
		"set output 'd_rates.png'\nset termoption noenhanced\nset datafile separator ','\n"
		"set multiplot layout %d,1 title 'IA-TCP experiment D: 5 groups of 8 flows of %"
		PRIu64 " MiB joining %" PRIu64 " ms apart (rates the hosts send, retransmissions "
		"included)'\nset xlabel 'time [s]'\nset ylabel 'group rate [Mb/s]'\n"
		"set yrange [0:*]\nset key outside\n", IATCP_NSERIES, mib,
		(uint64_t)(step / QP_NS_PER_MS));

	for (size_t a = 0; a < IATCP_NSERIES && used < sizeof(body); a++) {
		used += (size_t)snprintf(body + used, sizeof(body) - used, "set title '%s'\nplot ",
					 repro_iatcp_mix_series[a].label);
		for (int g = 0; g < D_GROUPS && used < sizeof(body); g++)
			used += (size_t)snprintf(body + used, sizeof(body) - used,
				"%s'd.csv' skip 1 using 2:(strcol(1) eq '%s' ? $%d : 1/0) with lines "
				"lw 2 title 'group %d'%s", g ? ", " : "", repro_iatcp_mix_series[a].label,
				3 + g, g + 1, g + 1 == D_GROUPS ? "\n" : "");
	}
	if (plot_script(ctx->dir, "d_rates", err, sizeof(err), "%sunset multiplot\n", body))
		fprintf(stderr, "qpace-bench reproduce ia-tcp: plots skipped: %s\n", err);
}

static void d_checks(struct repro_ctx *ctx, struct d_state *d, const char *scale)
{
	double w[IATCP_NSERIES], x[IATCP_NSERIES];

	for (size_t a = 0; a < IATCP_NSERIES; a++) {
		w[a] = median(d->s[a].within, d->s[a].nwithin);
		x[a] = median(d->s[a].across, d->s[a].nacross);
	}
	if (!d->s[2].ok) {
		repro_check(ctx, "D: fairness", "equal shares as groups join and leave",
			    REPRO_NOT_RUN, "the tcp+ia run failed", "-");
		return;
	}
	repro_check(ctx, "D: within a group", "all flows of a group get the same share",
		    w[2] >= 0.9 ? REPRO_YES : REPRO_NO,
		    "yes: tcp+ia's median Jain index over the flows of each fully active group, "
		    "every interval, at least 0.9",
		    "median Jain within a group: tcp+ia %.3f (%zu intervals x groups), tcp %.3f, "
		    "tcp-w1 %.3f; %s", w[2], d->s[2].nwithin, w[0], w[1], scale);
	repro_check(ctx, "D: across groups", "groups share fairly as they join and leave",
		    x[2] >= 0.9 ? REPRO_YES : REPRO_NO,
		    "yes: tcp+ia's median Jain index over the active groups' rates, every "
		    "interval with two or more, at least 0.9",
		    "median Jain across groups: tcp+ia %.3f (%zu intervals), tcp %.3f, tcp-w1 "
		    "%.3f; last flow ends at %.2f s, %.2f s, %.2f s; timeouts %" PRIu64 ", %" PRIu64
		    ", %" PRIu64, x[2], d->s[2].nacross, x[0], x[1], d->s[2].last_end_s,
		    d->s[0].last_end_s, d->s[1].last_end_s, d->s[2].timeouts, d->s[0].timeouts,
		    d->s[1].timeouts);
}

int repro_iatcp_d(struct repro_ctx *ctx)
{
	static struct d_state d;
	const unsigned scale = ctx->quick ? 100 : 10;
	const uint64_t bytes = 100 * 1024 * 1024 / scale;
	const qp_time_ns step = 3 * QP_NS_PER_S / scale;
	struct topogen_params g;
	struct repro_mix_run m[IATCP_NSERIES];
	char wl[1024], path[4200], note[96];
	size_t used;

	memset(&d, 0, sizeof(d));
	d.ctx = ctx;
	d.sample_ns = 100 * QP_NS_PER_MS / scale;
	snprintf(path, sizeof(path), "%s/d.csv", ctx->dir);
	if (!(d.csv = fopen(path, "w"))) {
		fprintf(stderr, "qpace-bench reproduce ia-tcp: %s: cannot write\n", path);
		return -1;
	}
	fputs("series,time_s,g1_mbps,g2_mbps,g3_mbps,g4_mbps,g5_mbps,jain_g1,jain_g2,jain_g3,"
	      "jain_g4,jain_g5,jain_across\n", d.csv);
	used = (size_t)snprintf(wl, sizeof(wl), "# IA-TCP D: %d groups of %d flows joining\n",
				D_GROUPS, D_FLOWS);
	for (int k = 0; k < D_GROUPS && used < sizeof(wl); k++)
		used += (size_t)snprintf(wl + used, sizeof(wl) - used, "long senders=%d-%d "
					 "receiver=0 bytes=%" PRIu64 " start=%" PRIu64 "ns\n",
					 1 + k * D_FLOWS, (k + 1) * D_FLOWS, bytes, step * (uint64_t)k);
	repro_iatcp_star(&g, D_HOSTS);
	const struct repro_mix_spec sp = {
		.tag = "d", .gen = &g, .workload = wl, .until_ns = 300 * QP_NS_PER_S / scale,
		.sample_ns = d.sample_ns, .group = -1, .inspect = d_inspect, .arg = &d,
	};
	int rc = repro_mix(ctx, &sp, repro_iatcp_mix_series, IATCP_NSERIES, m);
	fclose(d.csv);
	if (!rc) {
		snprintf(note, sizeof(note), "1/%u of the source's sizes and offsets (%" PRIu64
			 " MiB, %" PRIu64 " ms), samples of %" PRIu64 " ms", scale, bytes >> 20,
			 (uint64_t)(step / QP_NS_PER_MS), (uint64_t)(d.sample_ns / QP_NS_PER_MS));
		d_checks(ctx, &d, note);
		if (ctx->plots)
			d_plot(ctx, bytes >> 20, step);
	}
	for (size_t a = 0; a < IATCP_NSERIES; a++) {
		free(d.s[a].within);
		free(d.s[a].across);
	}
	return rc ? -1 : 0;
}
