/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reproductions on a topology with a workload (repro_mix.h): one netrun_run per series, in
 * this process (the engine frees what it built), its files in DIR/TAG/ALGO/. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpace/time.h"
#include "repro_mix.h"
#include "runs.h"

/* The mean of every port's queue over every sample of DIR/queue.csv; NAN without one. */
static double mean_queue(const char *dir)
{
	char path[4400];
	double t, v, sum = 0;
	unsigned long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/queue.csv", dir);
	f = fopen(path, "r");
	if (!f)
		return NAN;
	if (fscanf(f, "%*[^\n]\n") == 0)
		while (fscanf(f, "%lf,%*[^,],%lf\n", &t, &v) == 2) {
			sum += v;
			n++;
		}
	fclose(f);
	return n ? sum / (double)n : NAN;
}

static void summarise(struct repro_mix_run *m, const struct netrun_result *r, int group)
{
	double max_us = 0, sum_us = 0;
	size_t n = 0;

	m->bins = r->bins;
	m->drops = r->drops;
	m->max_queue_bytes = r->max_queue_bytes;
	m->flows = r->nflows;
	m->done = r->done;
	m->unfinished = r->unfinished + r->lost;
	m->sim_s = (double)r->sim_ns / 1e9;
	m->wall_s = r->wall_s;
	for (size_t i = 0; group >= 0 && i < r->nflows; i++) {
		if ((int)r->wl[i].group != group || !r->fct[i].done)
			continue;
		double us = (double)r->fct[i].fct_ns / 1e3;
		max_us = fmax(max_us, us);
		sum_us += us;
		n++;
	}
	m->group_flows = n;
	m->group_fct_max_us = n ? max_us : NAN;
	m->group_fct_mean_us = n ? sum_us / (double)n : NAN;
}

/* A row of DIR/mix.csv (its header when the file is new). */
static void mix_csv(const struct repro_ctx *ctx, const char *tag, const struct repro_mix_run *m)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/mix.csv", ctx->dir);
	f = fopen(path, "a");
	if (!f)
		return;
	if (ftell(f) == 0)
		fputs("tag,series,algorithm,flows,unfinished,slowdown_p50,slowdown_p95,"
		      "slowdown_p99,short_p50,short_p95,mean_queue_kib,max_queue_kib,drops,"
		      "group_flows,group_fct_max_us,group_fct_mean_us,sim_s,wall_s\n", f);
	fprintf(f, "%s,%s,%s,%zu,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f,%" PRIu64 ",%zu,%.1f,%.1f,"
		"%.6f,%.3f\n", tag, m->series->label, m->series->algo, m->flows, m->unfinished,
		m->bins.p50, m->bins.p95, m->bins.p99, repro_mix_bin_p(m, REPRO_MIX_SHORT, 50),
		repro_mix_bin_p(m, REPRO_MIX_SHORT, 95), m->mean_queue_bytes / 1024,
		(double)m->max_queue_bytes / 1024, m->drops, m->group_flows, m->group_fct_max_us,
		m->group_fct_mean_us, m->sim_s, m->wall_s);
	fclose(f);
}

int repro_mix(struct repro_ctx *ctx, const struct repro_mix_spec *sp,
	      const struct repro_mix_series *s, size_t n, struct repro_mix_run *out)
{
	char path[4200], dir[4096], err[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ctx->dir, sp->tag);
	if (runs_mkdirs(path, err, sizeof(err))) {
		fprintf(stderr, "qpace-bench reproduce %s: %s\n", ctx->name, err);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.wl", ctx->dir, sp->tag);
	f = fopen(path, "w");
	if (!f || fputs(sp->workload, f) < 0 || fclose(f)) {
		fprintf(stderr, "qpace-bench reproduce %s: %s: %s\n", ctx->name, path, strerror(errno));
		return -1;
	}
	ctx->runs_total += (unsigned)n;
	for (size_t i = 0; i < n; i++) {
		struct netrun_conf c;
		struct netrun_result r;
		qp_time_ns t0 = qp_now_ns();

		snprintf(dir, sizeof(dir), "%s/%s/%s", ctx->dir, sp->tag,
			 s[i].dir ? s[i].dir : s[i].algo);
		if (runs_mkdirs(dir, err, sizeof(err))) {
			fprintf(stderr, "qpace-bench reproduce %s: %s\n", ctx->name, err);
			return -1;
		}
		netrun_conf_defaults(&c);
		c.gen = sp->gen;
		c.workload_file = path;
		c.cdf_dirs[c.ncdf_dirs++] = "sim/cdf";
		c.cdf_dirs[c.ncdf_dirs++] = QPACE_CDF_DIR;
		c.algo = s[i].algo;
		if (s[i].window_pkts)
			c.window_pkts = s[i].window_pkts;
		if (sp->mtu_bytes)
			c.mtu_bytes = sp->mtu_bytes;
		c.end_with_finite = sp->end_with_finite;
		c.pfc = sp->pfc;
		c.seed = ctx->base.seed;
		c.until_ns = sp->until_ns;
		c.sample_ns = sp->sample_ns;
		c.out_dir = dir;
		c.no_plots = !ctx->plots;
		c.progress = false;
		out[i] = (struct repro_mix_run){ .series = &s[i] };
		ctx->runs_done++;
		int rc = netrun_run(&c, &r, err, sizeof(err));
		double wall = (double)(qp_now_ns() - t0) / 1e9;
		ctx->wall_s += wall;
		if (rc) {
			ctx->runs_failed++;
			printf("  [%s %u/%u] %s %s: FAILED: %s\n", ctx->name, ctx->runs_done,
			       ctx->runs_total, sp->tag, s[i].label, err);
			continue;
		}
		if (netrun_write_files(&r, dir, ctx->plots, err, sizeof(err)))
			fprintf(stderr, "qpace-bench reproduce %s: %s\n", ctx->name, err);
		summarise(&out[i], &r, sp->group);
		if (sp->inspect)
			sp->inspect(sp->arg, i, &r);
		out[i].mean_queue_bytes = mean_queue(dir);
		out[i].ok = true;
		netrun_result_free(&r);
		mix_csv(ctx, sp->tag, &out[i]);
		printf("  [%s %u/%u] %s %-14s %zu flows (%zu unfinished): slowdown p50 %.2f p95 %.2f "
		       "p99 %.2f, mean queue %.1f KiB, drops %" PRIu64 " (%.4f s simulated, %.1f s)\n",
		       ctx->name, ctx->runs_done, ctx->runs_total, sp->tag, s[i].label,
		       out[i].flows, out[i].unfinished, out[i].bins.p50, out[i].bins.p95,
		       out[i].bins.p99, out[i].mean_queue_bytes / 1024, out[i].drops, out[i].sim_s,
		       wall);
		fflush(stdout);
	}
	return 0;
}

double repro_mix_bin_p(const struct repro_mix_run *m, uint64_t max_bytes, int which)
{
	double sum = 0;
	size_t flows = 0;

	/* flow-weighted over the bins whose largest flow is at most @max_bytes */
	for (size_t b = 0; b < m->bins.nbins; b++) {
		const struct fct_bin *x = &m->bins.bins[b];
		if (x->max_bytes > max_bytes)
			continue;
		sum += (which == 50 ? x->p50 : which == 95 ? x->p95 : x->p99) * (double)x->flows;
		flows += x->flows;
	}
	return flows ? sum / (double)flows : NAN;
}
