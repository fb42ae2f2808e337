/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Running a reproduction's incasts: see repro.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "qpace/time.h"
#include "qpace/units.h"
#include "repro.h"
#include "runs.h"

const char *repro_fmt_n(uint64_t n, char *buf, size_t len)
{
	if (n)
		snprintf(buf, len, "N=%" PRIu64, n);
	else
		snprintf(buf, len, "never");
	return buf;
}

double repro_timeout_ratio(const struct repro_point *p)
{
	return p->r.rounds ? (double)p->r.rounds_with_timeout / (double)p->r.rounds : NAN;
}

static void csv_row(FILE *f, const struct repro_point *p, const struct bench_conf *c)
{
	const struct incast_result *r = &p->r;

	fprintf(f, "%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%" PRIu64
		",%" PRIu64 ",%.2f,%" PRIu64 ",%" PRIu64 ",%.2f,%.2f,%.1f,%.1f,%.1f,%.5f,%" PRIu64
		",%" PRIu64 ",%.6f,%.3f\n", p->series->label, p->series->algo, p->senders,
		p->bytes, c->buffer_bytes, c->window_pkts, r->goodput_bps / 1e6,
		r->goodput_ratio * 100, r->rounds, r->rounds_with_timeout,
		repro_timeout_ratio(p) * 100, r->timeouts, r->drops,
		(double)r->max_queue_bytes / 1024, r->avg_queue_bytes / 1024, r->fct.p50_us,
		r->fct.p99_us, r->fct.max_us, r->jain, r->retransmits, r->ecn_marks, r->sim_s,
		r->wall_s);
	fflush(f);
}

static int run_point(struct repro_ctx *ctx, const struct bench_conf *c,
		     const struct repro_series *s, uint64_t senders, uint64_t bytes,
		     const char *dir_fmt)
{
	struct repro_point *p = &ctx->points[ctx->npoints];
	char err[512], dir[4096], rel[256];
	qp_time_ns t0 = qp_now_ns();

	if (ctx->npoints == REPRO_MAX_POINTS) {
		fprintf(stderr, "qpace-bench reproduce %s: more than %u runs\n", ctx->name,
			REPRO_MAX_POINTS);
		return -1;
	}
	*p = (struct repro_point){ .series = s, .senders = senders, .bytes = bytes };
	if (dir_fmt) {
		snprintf(rel, sizeof(rel), dir_fmt, s->algo);
		snprintf(dir, sizeof(dir), "%s/%s", ctx->dir, rel);
		if (runs_mkdirs(dir, err, sizeof(err))) {
			fprintf(stderr, "qpace-bench reproduce %s: %s\n", ctx->name, err);
			return -1;
		}
	}
	ctx->runs_done++;
	int rc = runs_incast_isolated(c, s->algo, senders, bytes, dir_fmt ? dir : NULL, &p->r,
				      err, sizeof(err));
	double wall = (double)(qp_now_ns() - t0) / 1e9;

	ctx->wall_s += wall;
	if (rc) {
		ctx->runs_failed++;
		printf("  [%s %u/%u] %s N=%" PRIu64 " %" PRIu64 "K: FAILED: %s\n", ctx->name,
		       ctx->runs_done, ctx->runs_total, s->label, senders, bytes / 1024, err);
		ctx->npoints++;
		return 0;
	}
	p->ok = true;
	ctx->npoints++;
	printf("  [%s %u/%u] %-22s N=%-3" PRIu64 " %5" PRIu64 "K buf %4" PRIu64 "K: goodput "
	       "%6.1f Mb/s (%5.1f%%), timeouts in %3" PRIu64 "/%" PRIu64 " rounds, drops %"
	       PRIu64 ", peak queue %.1f KiB (%.2f s simulated, %.1f s)\n", ctx->name,
	       ctx->runs_done, ctx->runs_total, s->label, senders, bytes / 1024,
	       c->buffer_bytes / 1024, p->r.goodput_bps / 1e6, p->r.goodput_ratio * 100,
	       p->r.rounds_with_timeout, p->r.rounds, p->r.drops,
	       (double)p->r.max_queue_bytes / 1024, p->r.sim_s, wall);
	fflush(stdout);
	csv_row(ctx->runs_csv, p, c);
	return 0;
}

int repro_sweep(struct repro_ctx *ctx, const struct bench_conf *c,
		const struct repro_series *series, size_t nseries, const uint64_t *sizes,
		size_t nsizes, const uint64_t *senders, size_t nsenders, const char *dir_fmt)
{
	ctx->runs_total += (unsigned)(nseries * nsizes * nsenders);
	for (size_t a = 0; a < nseries; a++) {
		struct bench_conf sc = *c;

		if (series[a].window_pkts)
			sc.window_pkts = series[a].window_pkts;
		if (series[a].buffer_bytes)
			sc.buffer_bytes = series[a].buffer_bytes;
		sc.cc_params = series[a].params;
		for (size_t s = 0; s < nsizes; s++)
			for (size_t k = 0; k < nsenders; k++)
				if (run_point(ctx, &sc, &series[a], senders[k], sizes[s], dir_fmt))
					return -1;
	}
	return 0;
}

const struct repro_point *repro_find(const struct repro_ctx *ctx, const char *series,
				     uint64_t senders, uint64_t bytes)
{
	for (size_t i = 0; i < ctx->npoints; i++) {
		const struct repro_point *p = &ctx->points[i];

		if (p->ok && p->senders == senders && p->bytes == bytes &&
		    !strcmp(p->series->label, series))
			return p;
	}
	return NULL;
}

void repro_check(struct repro_ctx *ctx, const char *figure, const char *published,
		 enum repro_verdict v, const char *note, const char *qpace_fmt, ...)
{
	struct repro_check *k;
	va_list ap;

	if (ctx->nchecks == REPRO_MAX_CHECKS)
		return;
	k = &ctx->checks[ctx->nchecks++];
	snprintf(k->figure, sizeof(k->figure), "%s", figure);
	snprintf(k->published, sizeof(k->published), "%s", published);
	snprintf(k->note, sizeof(k->note), "%s", note ? note : "");
	k->verdict = v;
	va_start(ap, qpace_fmt);
	vsnprintf(k->qpace, sizeof(k->qpace), qpace_fmt, ap);
	va_end(ap);
}

void repro_plot_clauses(char *buf, size_t len, const struct repro_series *series,
			size_t nseries, uint64_t bytes, uint64_t buffer, const char *ycol)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t a = 0; a < nseries && used < len; a++)
		used += (size_t)snprintf(buf + used, len - used,
			"%s'runs.csv' skip 1 using 3:((strcol(1) eq '%s' && (%" PRIu64 " == 0 || "
			"$4 == %" PRIu64 ") && (%" PRIu64 " == 0 || $5 == %" PRIu64 ")) ? %s : 1/0) "
			"with linespoints lw 2 title '%s'", used ? ", \\\n  " : "",
			series[a].label, bytes, bytes, buffer, buffer, ycol, series[a].label);
}
