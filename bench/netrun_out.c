/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Topology + workload runs: the report (text or JSON through the shared printer) and the
 * files of a run (netrun.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/out.h"
#include "netrun.h"
#include "plot.h"

static void out_fct(struct qp_out *o, const struct netrun_result *r)
{
	bool any = r->done > 0;

	qp_out_obj(o, "fct_us");
	for (int i = 0; i < 3; i++) {
		static const char *const k[] = { "p50", "p99", "max" };
		const double v[] = { r->fct_us.p50_us, r->fct_us.p99_us, r->fct_us.max_us };
		if (any)
			qp_out_double(o, k[i], v[i], "%.1f");
		else
			qp_out_null(o, k[i]);
	}
	qp_out_end(o);
	qp_out_obj(o, "slowdown");
	if (any) {
		qp_out_double(o, "p50", r->fct_us.slowdown_p50, "%.2f");
		qp_out_double(o, "p99", r->fct_us.slowdown_p99, "%.2f");
	} else {
		qp_out_null(o, "p50");
		qp_out_null(o, "p99");
	}
	qp_out_end(o);
}

/* Everything but the machine's figures (wall time, RSS): the same for the same inputs. */
static void out_body(struct qp_out *o, const struct netrun_result *r)
{
	qp_out_str(o, "algorithm", r->algorithm);
	qp_out_str(o, "cc", r->cc);
	qp_out_bool(o, "credits", r->credits);
	qp_out_str(o, "topology", r->topology);
	qp_out_str(o, "workload", r->workload);
	qp_out_u64(o, "seed", r->seed);
	qp_out_u64(o, "hosts", r->hosts);
	qp_out_u64(o, "switches", r->switches);
	qp_out_u64(o, "ports", r->ports);
	qp_out_u64(o, "link_bps", r->host_bps);
	qp_out_u64(o, "base_rtt_ns", r->base_rtt_ns);
	qp_out_u64(o, "flows", r->nflows);
	qp_out_u64(o, "flows_done", r->done);
	qp_out_u64(o, "flows_lost", r->lost);
	qp_out_u64(o, "flows_unfinished", r->unfinished);
	qp_out_u64(o, "flows_not_started", r->not_started);
	qp_out_u64(o, "retransmits", r->retransmits);
	qp_out_u64(o, "timeouts", r->timeouts);
	qp_out_u64(o, "drops", r->drops);
	qp_out_u64(o, "ecn_marks", r->ecn_marks);
	qp_out_u64(o, "max_queue_bytes", r->max_queue_bytes);
	qp_out_str(o, "max_queue_port", r->max_queue_port);
	out_fct(o, r);
	fct_print(o, "fct_bins", &r->bins);
	fct_print_links(o, "links", r->links, r->ports, r->sim_ns);
	fct_print_pfc(o, "pfc", r->pfc, r->ports, r->sim_ns);
	qp_out_str(o, "end", r->end_reason);
	qp_out_bool(o, "all_finished", r->all_finished);
	qp_out_str(o, "clock", "virtual");
	if (r->icrc_skip)   /* only then: the default run's report stays as it was */
		qp_out_str(o, "icrc", "skipped: no frame's ICRC computed or checked (--icrc off)");
	if (r->lanes > 1)     /* likewise */
		qp_out_u64(o, "lanes", r->lanes);
	qp_out_u64(o, "events", r->events);
	qp_out_u64(o, "packet_hops", r->packet_hops);
	qp_out_double(o, "sim_s", (double)r->sim_ns / 1e9, "%.6f");
	qp_out_obj(o, "memory");
	qp_out_u64(o, "max_pending_events", r->max_pending);
	qp_out_u64(o, "frame_pool_bytes", r->pool_bytes);
	if (r->lanes > 1)
		qp_out_u64(o, "windows", r->windows);
	qp_out_end(o);
}

/* The machine's figures, last: tests that compare runs drop these lines. */
static void out_machine(struct qp_out *o, const struct netrun_result *r)
{
	qp_out_double(o, "wall_s", r->wall_s, "%.3f");
	qp_out_u64(o, "peak_rss_bytes", r->peak_rss_bytes);
	qp_out_u64(o, "huge_page_bytes", r->huge_page_bytes);
	if (r->lanes > 1) {   /* how the lanes ran: the same bytes above either way */
		qp_out_u64(o, "threads", r->threads);
		qp_out_double(o, "hosts_lane_s", r->lane_busy_s[0], "%.3f");
		qp_out_double(o, "switches_lane_s", r->lane_busy_s[1], "%.3f");
	}
}

void netrun_print(FILE *out, const struct netrun_result *r, bool json)
{
	struct qp_out o;

	qp_out_init(&o, out, json ? QP_OUT_JSON : QP_OUT_TEXT);
	qp_out_obj(&o, NULL);
	out_body(&o, r);
	out_machine(&o, r);
	qp_out_end(&o);
	if (json)
		fputc('\n', out);
}

static int write_csv(const char *dir, const char *name, const struct netrun_result *r,
		     void (*fn)(FILE *, const struct netrun_result *), char *err, size_t errlen)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
	fn(f, r);
	if (ferror(f) | fclose(f))
		return qp_errmsg(-EIO, err, errlen, "%s: write failed", path);
	return 0;
}

static void csv_flows(FILE *f, const struct netrun_result *r)
{
	fputs("id,group,round,src,dst,bytes,start_us,fct_us,ideal_us,slowdown,retransmits,"
	      "timeouts,done,lost\n", f);
	for (size_t k = 0; k < r->nflows; k++) {
		const struct sim_flow *x = &r->flow[k];
		const struct fct_flow *c = &r->fct[k];
		fprintf(f, "%zu,%u,%u,%u,%u,%" PRIu64 ",%.3f,", k, r->wl[k].group, r->wl[k].round,
			x->src, x->dst, x->bytes, (double)x->start_ns / 1e3);
		if (x->done)
			fprintf(f, "%.3f,%.3f,%.4f,", (double)x->fct_ns / 1e3,
				(double)c->ideal_ns / 1e3, fct_slowdown(x->fct_ns, c->ideal_ns));
		else
			fputs(",,,", f);
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%d,%d\n", x->retransmits, x->timeouts, x->done,
			x->lost);
	}
}

static void csv_bins(FILE *f, const struct netrun_result *r)
{
	fct_csv_bins(f, &r->bins);
}

static void csv_links(FILE *f, const struct netrun_result *r)
{
	fct_csv_links(f, r->links, r->ports, r->sim_ns);
}

static void csv_pfc(FILE *f, const struct netrun_result *r)
{
	fct_csv_pfc(f, r->pfc, r->ports, r->sim_ns);
}

static void json_report(FILE *f, const struct netrun_result *r)
{
	struct qp_out o;

	qp_out_init(&o, f, QP_OUT_JSON_PRETTY);
	qp_out_obj(&o, NULL);
	out_body(&o, r);
	out_machine(&o, r);
	qp_out_end(&o);
	fputc('\n', f);
}

int netrun_write_files(const struct netrun_result *r, const char *dir, bool plots,
		       char *err, size_t errlen)
{
	static const struct {
		const char *name;
		void (*fn)(FILE *, const struct netrun_result *);
	} files[] = {
		{ "flows.csv", csv_flows }, { "fct_bins.csv", csv_bins },
		{ "links.csv", csv_links }, { "pfc.csv", csv_pfc }, { "report.json", json_report },
	};
	char e[300];
	int rc;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if ((rc = write_csv(dir, files[i].name, r, files[i].fn, err, errlen)))
			return rc;
	if (plots && plot_available() && r->bins.nbins &&
	    plot_slowdown(dir, r->algorithm, e, sizeof(e)) == 0)
		plot_rates(dir, r->algorithm, (unsigned)r->hosts, e, sizeof(e));
	return 0;
}
