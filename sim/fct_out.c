/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Run figures out: CSV files and the shared printer (qpace/fct.h). */
#include <inttypes.h>
#include <stdio.h>

#include "qpace/fct.h"

void fct_csv_bins(FILE *f, const struct fct_summary *s)
{
	fprintf(f, "pct_lo,pct_hi,min_bytes,max_bytes,flows,mean,p50,p95,p99\n");
	for (size_t i = 0; i < s->nbins; i++) {
		const struct fct_bin *b = &s->bins[i];
		fprintf(f, "%g,%g,%" PRIu64 ",%" PRIu64 ",%zu,%.4f,%.4f,%.4f,%.4f\n", b->pct_lo,
			b->pct_hi, b->min_bytes, b->max_bytes, b->flows, b->mean, b->p50, b->p95,
			b->p99);
	}
}

void fct_csv_links(FILE *f, const struct fct_link *l, size_t n, qp_time_ns interval_ns)
{
	fprintf(f, "link,tx_bytes,rate_bps,utilisation\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",%.4f\n", l[i].name, l[i].tx_bytes,
			l[i].rate_bps, fct_utilisation(l[i].tx_bytes, l[i].rate_bps, interval_ns));
}

void fct_csv_pfc(FILE *f, const struct fct_pfc_port *p, size_t n, qp_time_ns run_ns)
{
	fprintf(f, "port,pauses_sent,pauses_received,paused_ns,paused_fraction\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f\n", p[i].name,
			p[i].pauses_sent, p[i].pauses_received, p[i].paused_ns,
			run_ns ? (double)p[i].paused_ns / (double)run_ns : 0.0);
}

static void slowdowns(struct qp_out *o, double mean, double p50, double p95, double p99)
{
	qp_out_double(o, "mean", mean, "%.3f");
	qp_out_double(o, "p50", p50, "%.3f");
	qp_out_double(o, "p95", p95, "%.3f");
	qp_out_double(o, "p99", p99, "%.3f");
}

void fct_print(struct qp_out *o, const char *key, const struct fct_summary *s)
{
	qp_out_obj(o, key);
	qp_out_u64(o, "flows", s->flows);
	qp_out_u64(o, "done", s->done);
	qp_out_u64(o, "unfinished", s->unfinished);
	qp_out_u64(o, "step_pct", s->step_pct);
	slowdowns(o, s->mean, s->p50, s->p95, s->p99);
	if (qp_out_json(o)) {
		qp_out_arr(o, "bins");
		for (size_t i = 0; i < s->nbins; i++) {
			const struct fct_bin *b = &s->bins[i];
			qp_out_obj(o, NULL);
			qp_out_double(o, "pct_lo", b->pct_lo, "%g");
			qp_out_double(o, "pct_hi", b->pct_hi, "%g");
			qp_out_u64(o, "min_bytes", b->min_bytes);
			qp_out_u64(o, "max_bytes", b->max_bytes);
			qp_out_u64(o, "flows", b->flows);
			slowdowns(o, b->mean, b->p50, b->p95, b->p99);
			qp_out_end(o);
		}
		qp_out_end(o);
	} else {
		/* the text form's table, indented as the object's values (out.c's rule) */
		int indent = 2 * (o->depth - 1);
		fprintf(o->f, "%*s%12s %9s %8s %8s %8s %8s\n", indent, "", "size <=", "flows",
			"mean", "p50", "p95", "p99");
		for (size_t i = 0; i < s->nbins; i++) {
			const struct fct_bin *b = &s->bins[i];
			fprintf(o->f, "%*s%12" PRIu64 " %9zu %8.3f %8.3f %8.3f %8.3f\n", indent, "",
				b->max_bytes, b->flows, b->mean, b->p50, b->p95, b->p99);
		}
	}
	qp_out_end(o);
}

void fct_print_links(struct qp_out *o, const char *key, const struct fct_link *l, size_t n,
		     qp_time_ns interval_ns)
{
	struct fct_util_summary u;

	fct_util_summarise(l, n, interval_ns, &u);
	qp_out_obj(o, key);
	qp_out_u64(o, "links", u.links);
	qp_out_u64(o, "busy", u.busy);
	qp_out_double(o, "mean", u.mean, "%.4f");
	qp_out_double(o, "max", u.max, "%.4f");
	if (n)
		qp_out_str(o, "max_link", l[u.max_index].name);
	else
		qp_out_null(o, "max_link");
	qp_out_end(o);
}

void fct_print_pfc(struct qp_out *o, const char *key, const struct fct_pfc_port *p,
		   size_t n, qp_time_ns run_ns)
{
	struct fct_pfc_summary s;

	fct_pfc_summarise(p, n, run_ns, &s);
	qp_out_obj(o, key);
	qp_out_u64(o, "ports", s.ports);
	qp_out_u64(o, "ports_paused", s.ports_paused);
	qp_out_u64(o, "pauses_sent", s.pauses_sent);
	qp_out_u64(o, "pauses_received", s.pauses_received);
	qp_out_time(o, "paused", s.paused_ns);
	qp_out_time(o, "paused_max", s.paused_max_ns);
	qp_out_double(o, "paused_max_frac", s.paused_max_frac, "%.4f");
	if (s.ports_paused)
		qp_out_str(o, "paused_max_port", p[s.max_index].name);
	else
		qp_out_null(o, "paused_max_port");
	qp_out_end(o);
}
