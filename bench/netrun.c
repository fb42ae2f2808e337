/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Topology + workload runs in virtual time (netrun.h): the topology and the workload
 * read, the hosts and switches built on the engine, the flows run, the figures taken.
 * Reports and files are netrun_out.c. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/units.h"
#include "netrun.h"
#include "netrun_cm.h"
#include "netrun_mem.h"
#include "series.h"

#define NR_MAX_HOPS 16

struct nr_pair {
	qp_time_ns base_rtt_ns;
	qp_rate_bps bottleneck_bps;
};

struct nr {
	const struct netrun_conf *c;
	struct netrun_result *r;
	struct sw_conf *sw;
	struct sim_host_conf *hc;
	struct sim *sim;
	struct sim_flows *fl;
	/* closed-loop rounds: flows left per (group, round), from batch_off[group] */
	uint32_t *left;
	size_t *batch_off, *batch_first;   /* [groups], [batches]: first flow of a batch */
	size_t nbatches;
	size_t finite_left;            /* flows that can finish and have not (end_with_finite) */
	struct nr_cm *cm;              /* the workload is an htsim connection matrix: its
					* triggers */
	/* samples */
	FILE *queue_csv, *switch_csv;
	struct series rates;
	uint64_t *last_rx;
	qp_rate_bps *row;
	char tmp_topo[64];
	/* the senders' algorithm and parameters: the hosts and flows point here */
	char cc[INCAST_ALGO_MAX], params[256];
};

static volatile sig_atomic_t nr_interrupted;

static void nr_on_signal(int sig)
{
	(void)sig;
	nr_interrupted = 1;
}

void netrun_conf_defaults(struct netrun_conf *c)
{
	*c = (struct netrun_conf){ .algo = "hpcc", .seed = 1, .until_ns = NETRUN_DEFAULT_UNTIL_NS,
				   .sample_ns = NETRUN_DEFAULT_SAMPLE_NS, .mtu_bytes = 1024,
				   .window_pkts = 128, .progress = true };
}

/* ---- the topology ---- */

static int nr_gen_file(struct nr *x, char *path, size_t len, char *err, size_t errlen)
{
	struct topogen g;
	struct qp_strbuf text = { 0 };
	FILE *f = NULL;
	int rc, fd = -1;

	if ((rc = topogen_build(&g, x->c->gen, err, errlen)))
		return rc;
	if (!topogen_write(&g, &text)) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	if (x->c->out_dir) {
		snprintf(path, len, "%s/topology.topo", x->c->out_dir);
		f = fopen(path, "w");
	} else {
		snprintf(x->tmp_topo, sizeof(x->tmp_topo), "/tmp/qpace-run-XXXXXX");
		fd = mkstemp(x->tmp_topo);
		if (fd >= 0 && !(f = fdopen(fd, "w")))
			close(fd);
		snprintf(path, len, "%s", x->tmp_topo);
	}
	if (!f || fwrite(text.p, 1, text.len, f) != text.len) {
		rc = qp_errmsg(-errno ? -errno : -EIO, err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	snprintf(x->r->topology, sizeof(x->r->topology), "%s (generated)",
		 topogen_kind_name(g.p.kind));
out:
	if (f && fclose(f) && !rc)
		rc = qp_errmsg(-EIO, err, errlen, "%s: %s", path, strerror(errno));
	qp_strbuf_free(&text);
	topogen_free(&g);
	return rc;
}

/* The switch from qpace-switch's words: -c FILE, the algorithm's feedback, --pfc. */
static int nr_switch(struct nr *x, const struct incast_feedback *fb, char *err, size_t errlen)
{
	char path[4200], seed[24];
	const char *argv[32];
	int argc = 0, rc;

	if (x->c->topo_file) {
		snprintf(path, sizeof(path), "%s", x->c->topo_file);
		snprintf(x->r->topology, sizeof(x->r->topology), "%s", x->c->topo_file);
	} else if ((rc = nr_gen_file(x, path, sizeof(path), err, errlen))) {
		return rc;
	}
	snprintf(seed, sizeof(seed), "%" PRIu64, x->c->seed);
	argv[argc++] = "qpace-switch";
	argv[argc++] = "-c";
	argv[argc++] = path;
	for (size_t i = 0; fb->sw_args[i]; i++)
		argv[argc++] = fb->sw_args[i];
	if (x->c->pfc) {
		argv[argc++] = "--pfc";
		argv[argc++] = x->c->pfc;
	}
	argv[argc++] = "--seed";
	argv[argc++] = seed;
	argv[argc++] = "--quiet";
	argv[argc] = NULL;
	x->sw = sim_sw_conf_args(argc, (char **)argv, err, errlen);
	return x->sw ? 0 : -EINVAL;
}

static int nr_hosts(struct nr *x, const char *cc, bool credits,
		    const struct incast_feedback *fb, char *err, size_t errlen)
{
	size_t n = sim_sw_conf_hosts(x->sw, NULL, 0);

	if (n < 2)
		return qp_errmsg(-EINVAL, err, errlen, "%s: %zu host port%s: a run needs at least 2",
				 x->r->topology, n, n == 1 ? "" : "s");
	x->hc = calloc(n, sizeof(*x->hc));
	if (!x->hc)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	sim_sw_conf_hosts(x->sw, x->hc, n);
	for (size_t i = 0; i < n; i++) {
		x->hc[i].window_pkts = x->c->window_pkts;
		x->hc[i].mtu_bytes = x->c->mtu_bytes;
		x->hc[i].cc = cc;
		x->hc[i].credits = credits;
		x->hc[i].cnp_from_notice = fb->cnp_from_notice;
		x->hc[i].ecn_echo = fb->ecn_echo;
	}
	x->r->hosts = n;
	x->r->host_bps = x->hc[0].nic_bps;
	return 0;
}

/* Base RTT and bottleneck between two hosts, from the switches' forwarding (zero when
 * none joins them in NR_MAX_HOPS links). */
static struct nr_pair nr_pair(struct nr *x, uint32_t a, uint32_t b)
{
	struct nr_pair p = { 0 };
	struct fct_hop hops[NR_MAX_HOPS];
	size_t n = sim_sw_conf_path(x->sw, &x->hc[a], &x->hc[b], hops, NR_MAX_HOPS);

	if (n && n <= NR_MAX_HOPS) {
		p.base_rtt_ns = fct_base_rtt_ns(hops, n, x->c->mtu_bytes);
		p.bottleneck_bps = hops[0].rate_bps;
		for (size_t i = 1; i < n; i++)
			if (hops[i].rate_bps < p.bottleneck_bps)
				p.bottleneck_bps = hops[i].rate_bps;
	}
	return p;
}

/* ---- the workload ---- */

static int nr_workload(struct nr *x, struct wl_flows *wf, char *err, size_t errlen)
{
	struct wl_spec *spec = calloc(1, sizeof(*spec));
	struct cdf *store = calloc(NETRUN_MAX_CDFS, sizeof(*store));
	uint8_t *site = NULL;
	int rc;

	if (!spec || !store) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	snprintf(x->r->workload, sizeof(x->r->workload), "%s", x->c->workload_file);
	if (nr_cm_is_matrix(x->c->workload_file)) {   /* htsim's experiment file */
		rc = nr_cm_flows(x->c->workload_file, (uint32_t)x->r->hosts, &x->cm, wf, err,
				 errlen);
		goto out;
	}
	if ((rc = wl_load(spec, x->c->workload_file, err, errlen)) ||
	    (rc = wl_load_cdfs(spec, store, NETRUN_MAX_CDFS, x->c->cdf_dirs, x->c->ncdf_dirs, err,
			       errlen)))
		goto out;
	if (x->c->gen && x->c->gen->kind != TOPOGEN_STAR && x->c->gen->kind != TOPOGEN_LEAF_SPINE &&
	    x->c->gen->kind != TOPOGEN_FAT_TREE) {
		/* two sites: the first half of the hosts is site 0 (topogen numbers them so) */
		site = calloc(x->r->hosts, 1);
		if (!site) {
			rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
			goto out;
		}
		for (size_t i = x->r->hosts / 2; i < x->r->hosts; i++)
			site[i] = 1;
	}
	struct wl_env env = { .hosts = (uint32_t)x->r->hosts, .host_bps = x->r->host_bps,
			      .site = site, .seed = x->c->seed };
	rc = wl_generate(spec, &env, wf, err, errlen);
out:
	free(site);
	free(store);
	free(spec);
	return rc;
}

/* The run's memory, estimated before it starts: refused above the limit, naming both. */
static int nr_memory(struct nr *x, const struct wl_flows *wf, char *err, size_t errlen)
{
	struct sim_sw_conf_size sz;
	struct nr_mem m;
	uint64_t limit = x->c->mem_limit ? x->c->mem_limit : nr_mem_available();
	char what[400], lim[24];

	sim_sw_conf_size(x->sw, &sz);
	m = (struct nr_mem){ .hosts = x->r->hosts, .switches = sz.switches, .ports = sz.ports,
			     .flows = wf->n, .fwd_slots = sz.fwd_slots,
			     .routes_bytes = 2 * sz.route_bytes,
			     .running = nr_mem_running(wf->f, wf->n, x->r->host_bps,
						       x->r->base_rtt_ns) };
	nr_mem_estimate(&m);
	x->r->mem_estimate = m.bytes;
	if (!limit || m.bytes <= limit)
		return 0;
	nr_mem_describe(&m, what, sizeof(what));
	return qp_errmsg(-ENOMEM, err, errlen, "the run is estimated at %s; the limit is %s (%s); "
			 "accepted: a run within it (a smaller fabric or workload, or --mem-limit "
			 "SIZE)", what, nr_mem_fmt(limit, lim, sizeof(lim)),
			 x->c->mem_limit ? "--mem-limit" : "the machine's MemAvailable");
}

/* Rounds: a batch per (group, round); a chained batch starts its gap after the batch
 * before it in its group has finished. */
static int nr_batches(struct nr *x, char *err, size_t errlen)
{
	struct netrun_result *r = x->r;
	uint32_t groups = 0;
	uint32_t *rounds;

	for (size_t k = 0; k < r->nflows; k++)
		if (r->wl[k].group + 1 > groups)
			groups = r->wl[k].group + 1;
	rounds = calloc(groups + 1, sizeof(*rounds));
	x->batch_off = calloc(groups + 1, sizeof(*x->batch_off));
	if (!rounds || !x->batch_off) {
		free(rounds);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	}
	for (size_t k = 0; k < r->nflows; k++)
		if (r->wl[k].round + 1 > rounds[r->wl[k].group])
			rounds[r->wl[k].group] = r->wl[k].round + 1;
	for (uint32_t g = 0; g < groups; g++) {
		x->batch_off[g] = x->nbatches;
		x->nbatches += rounds[g];
	}
	free(rounds);
	x->left = calloc(x->nbatches + 1, sizeof(*x->left));
	x->batch_first = calloc(x->nbatches + 1, sizeof(*x->batch_first));
	if (!x->left || !x->batch_first)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	for (size_t b = 0; b < x->nbatches; b++)
		x->batch_first[b] = SIZE_MAX;
	for (size_t k = 0; k < r->nflows; k++) {
		size_t b = x->batch_off[r->wl[k].group] + r->wl[k].round;
		x->left[b]++;
		if (x->batch_first[b] == SIZE_MAX)
			x->batch_first[b] = k;
	}
	return 0;
}

static void nr_done(void *arg, const struct sim_flow *f, qp_time_ns now)
{
	struct nr *x = arg;
	struct netrun_result *r = x->r;
	size_t k = (size_t)(f - r->flow);
	const struct wl_flow *w = &r->wl[k];
	size_t b = x->batch_off[w->group] + w->round;

	if (--x->left[b] == 0 && b + 1 < x->nbatches) {
		size_t first = x->batch_first[b + 1];
		/* the group's next round, if it is the one chained to this */
		for (size_t j = first; j < r->nflows && r->wl[j].group == w->group &&
		     r->wl[j].round == w->round + 1 && r->wl[j].chained; j++)
			if (sim_flows_release(x->fl, j, now + r->wl[j].start_ns))
				sim_stop(x->sim);
	}
	if (x->cm && nr_cm_done(x->cm, w, f->done, x->fl, now))
		sim_stop(x->sim);
	if (sim_flows_finished(x->fl) == r->nflows) {
		r->all_finished = true;
		sim_stop(x->sim);
	}
	if (f->bytes != WL_BYTES_FOREVER && x->finite_left && !--x->finite_left &&
	    x->c->end_with_finite)
		sim_stop(x->sim);
}

/* ---- samples ---- */

static void nr_sample(void *arg, qp_time_ns now)
{
	struct nr *x = arg;
	struct sim_port_info p;
	double t = (double)(now - SIM_START_NS) / 1e9;

	for (size_t i = 0; x->queue_csv && i < sim_nports(x->sim); i++) {
		sim_port_info(x->sim, i, &p);
		fprintf(x->queue_csv, "%.6f,%s:%s,%" PRIu64 "\n", t, p.sw_name, p.name,
			p.queue_bytes);
	}
	for (size_t h = 0; x->row && h < x->r->hosts; h++) {
		sim_port_info(x->sim, sim_host_port(x->sim, h), &p);
		x->row[h] = (qp_rate_bps)((double)(p.rx_bytes - x->last_rx[h]) * 8e9 /
					  (double)x->c->sample_ns);
		x->last_rx[h] = p.rx_bytes;
	}
	if (x->row && now > SIM_START_NS)
		series_add(&x->rates, now, x->row);
	if (x->switch_csv)
		sim_switch_csv_row(x->sim, x->switch_csv, SIM_START_NS);
	if (nr_interrupted) {
		x->r->interrupted = true;
		sim_stop(x->sim);
		return;
	}
	if (sim_at_sync(x->sim, now + x->c->sample_ns, nr_sample, x))
		sim_stop(x->sim);
}

static int nr_open_samples(struct nr *x, char *err, size_t errlen)
{
	char path[4200];
	const char *dir = x->c->out_dir;
	size_t cap = (size_t)(x->c->until_ns / x->c->sample_ns) + 2;

	if (!dir)
		return 0;
	if (cap > 1000000)
		cap = 1000000;
	snprintf(path, sizeof(path), "%s/queue.csv", dir);
	x->queue_csv = fopen(path, "w");
	if (x->queue_csv) {
		snprintf(path, sizeof(path), "%s/switch.csv", dir);
		x->switch_csv = fopen(path, "w");
	}
	if (!x->queue_csv || !x->switch_csv)
		return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
	fputs("time_s,port,queue_bytes\n", x->queue_csv);
	sim_switch_csv_header(x->switch_csv);
	x->row = calloc(x->r->hosts, sizeof(*x->row));
	x->last_rx = calloc(x->r->hosts, sizeof(*x->last_rx));
	if (!x->row || !x->last_rx || series_create(&x->rates, (unsigned)x->r->hosts, cap))
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	x->rates.col_name = "h";
	return 0;
}

/* ---- the end ---- */

/* The "@key N kB" line of a /proc file, in bytes; 0 when there is none. */
static uint64_t nr_proc_kb(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t n = strlen(key);
	unsigned long long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && sscanf(line + n, " %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb * 1024;
}

static void nr_end_reason(struct nr *x, enum sim_end end)
{
	struct netrun_result *r = x->r;
	char t[32], b[32];
	size_t first = SIZE_MAX;

	for (size_t k = 0; k < r->nflows; k++) {
		const struct sim_flow *f = &r->flow[k];
		/* not started: its time not reached, or a round still held */
		bool started = (!f->held || f->start_ns > 0) && f->start_ns <= r->sim_ns;
		if (!f->done && !f->lost) {
			r->unfinished++;
			r->not_started += !started;
			if (first == SIZE_MAX)
				first = k;
		}
	}
	r->end = end;
	if (r->all_finished) {
		snprintf(r->end_reason, sizeof(r->end_reason), "all %zu flows finished", r->nflows);
		return;
	}
	if (r->interrupted)
		snprintf(r->end_reason, sizeof(r->end_reason), "interrupted");
	else if (x->c->end_with_finite && !x->finite_left)
		snprintf(r->end_reason, sizeof(r->end_reason), "every flow that can finish "
			 "finished; bytes=forever flows stopped there");
	else if (end == SIM_END_TIME)
		snprintf(r->end_reason, sizeof(r->end_reason), "stopped at --until %s of simulated "
			 "time", qp_fmt_time(x->c->until_ns, t, sizeof(t)));
	else
		snprintf(r->end_reason, sizeof(r->end_reason), "the engine stopped: %s",
			 end == SIM_END_NOMEM ? "out of memory for events" : sim_end_str(end));
	if (first == SIZE_MAX)
		return;
	const struct sim_flow *f = &r->flow[first];
	size_t used = strlen(r->end_reason);
	snprintf(r->end_reason + used, sizeof(r->end_reason) - used, ": %zu flow%s had not "
		 "finished, %zu of them not started (the first: flow %zu, host %u -> %u, %s, %s "
		 "at %s)", r->unfinished, r->unfinished == 1 ? "" : "s", r->not_started, first,
		 f->src, f->dst,
		 f->bytes == WL_BYTES_FOREVER ? "bytes=forever" :
		 qp_fmt_bytes(f->bytes, b, sizeof(b)),
		 f->held && !f->start_ns ? "held" : "started",
		 qp_fmt_time(f->start_ns, t, sizeof(t)));
}

static void nr_figures(struct nr *x)
{
	struct netrun_result *r = x->r;
	struct sim_port_info p;
	struct sim_stats st;
	qp_time_ns *fct = calloc(r->nflows + 1, sizeof(*fct));
	double *sd = calloc(r->nflows + 1, sizeof(*sd));
	size_t nd = 0;

	for (size_t k = 0; k < r->nflows; k++) {
		const struct sim_flow *f = &r->flow[k];
		const struct nr_pair pp = nr_pair(x, f->src, f->dst);
		r->fct[k] = (struct fct_flow){ .bytes = f->bytes, .fct_ns = f->fct_ns,
					       .done = f->done };
		if (pp.bottleneck_bps && f->bytes != WL_BYTES_FOREVER)
			r->fct[k].ideal_ns = fct_ideal_ns(f->bytes, pp.base_rtt_ns, pp.bottleneck_bps,
							  x->c->mtu_bytes, FCT_ROCE_HDR_BYTES);
		if (!f->done && !f->lost) {   /* still running: what its receiver has so far */
			struct sim_flow_now fn;
			sim_flows_now(x->fl, k, &fn);
			r->flow[k].delivered_bytes = fn.delivered_bytes;
		}
		r->done += f->done;
		r->lost += f->lost;
		r->retransmits += f->retransmits;
		r->timeouts += f->timeouts;
		if (f->done && fct && sd) {
			fct[nd] = f->fct_ns;
			sd[nd++] = fct_slowdown(f->fct_ns, r->fct[k].ideal_ns);
		}
	}
	if (fct && sd && nd) {
		stats_sort(sd, nd);
		stats_fct_summary(fct, nd, 0, &r->fct_us);
		r->fct_us.slowdown_p50 = stats_percentile(sd, nd, 50);
		r->fct_us.slowdown_p99 = stats_percentile(sd, nd, 99);
	}
	free(fct);
	free(sd);
	char e[200];
	if (fct_summarise(r->fct, r->nflows, x->c->bin_step_pct, &r->bins, e, sizeof(e)))
		r->bins = (struct fct_summary){ .flows = r->nflows };
	for (size_t i = 0; i < r->ports; i++) {
		sim_port_info(x->sim, i, &p);
		snprintf(r->port_name[i].name, NETRUN_NAME, "%s:%s", p.sw_name, p.name);
		r->links[i] = (struct fct_link){ r->port_name[i].name, p.link_bytes, p.rate_bps };
		r->pfc[i] = (struct fct_pfc_port){ r->port_name[i].name, p.pauses_sent,
						   p.pauses_received, p.paused_ns };
		r->drops += p.drops;
		r->ecn_marks += p.ecn_marks;
		if (p.max_queue_bytes > r->max_queue_bytes || !i) {
			r->max_queue_bytes = p.max_queue_bytes;
			snprintf(r->max_queue_port, sizeof(r->max_queue_port), "%s", r->port_name[i].name);
		}
	}
	for (size_t h = 0; h < r->hosts; h++)
		host_cc_counters(sim_host(x->sim, h), r->cc_ops, r->cc_counter);
	sim_stats(x->sim, &st);
	r->sim_ns = st.sim_ns;
	r->wall_s = st.wall_s;
	r->events = st.events;
	r->packet_hops = st.packet_hops;
	r->max_pending = st.max_pending;
	r->pool_bytes = st.pool_bytes;
	r->windows = st.windows;
	r->lane_busy_s[0] = st.lane_busy_s[0];
	r->lane_busy_s[1] = st.lane_busy_s[1];
}

/* ---- the run ---- */

static int nr_build(struct nr *x, char *err, size_t errlen)
{
	const struct netrun_conf *c = x->c;
	struct netrun_result *r = x->r;
	struct incast_feedback fb;
	struct wl_flows wf = { 0 };
	char *cc = x->cc, *params = x->params;
	int rc;

	if ((rc = incast_algo_parse(c->algo, cc, sizeof(x->cc), &r->credits, err, errlen)))
		return rc;
	snprintf(r->algorithm, sizeof(r->algorithm), "%s", c->algo);
	r->icrc_skip = c->icrc_skip;
	r->lanes = c->lanes ? c->lanes : 1;
	r->threads = c->threads ? c->threads : 1;
	snprintf(r->cc, sizeof(r->cc), "%s", cc);
	r->seed = c->seed;
	/* the switch's --early threshold: one BDP, of a host link over a 10 us RTT until
	 * the topology says more (the paths are read from the switch configuration) */
	qp_rate_bps host_bps = c->gen ? c->gen->host_bps : 10 * QP_GBPS;
	incast_feedback(cc_find(cc), host_bps, qp_bytes_in(host_bps, 10 * QP_NS_PER_US), &fb);
	if ((rc = nr_switch(x, &fb, err, errlen)) ||
	    (rc = nr_hosts(x, cc, r->credits, &fb, err, errlen)))
		return rc;
	/* the longest path's base RTT */
	r->base_rtt_ns = sim_sw_conf_max_rtt(x->sw, x->hc, r->hosts, c->mtu_bytes, NR_MAX_HOPS);
	if (r->base_rtt_ns == QP_TIME_NEVER)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	/* One T for every flow where the algorithm's reference has one (HPCC's GLOBAL_T);
	 * else each flow registers its own path's base RTT (below). */
	r->cc_ops = cc_find(cc);
	r->global_rtt = r->cc_ops->feedback.global_rtt;
	if ((rc = nr_workload(x, &wf, err, errlen)) ||
	    (rc = nr_memory(x, &wf, err, errlen))) {
		wl_flows_free(&wf);
		return rc;
	}
	r->nflows = wf.n;
	r->wl = wf.f;                  /* owned by the result from here */
	r->flow = calloc(wf.n + 1, sizeof(*r->flow));
	r->fct = calloc(wf.n + 1, sizeof(*r->fct));
	if (!r->flow || !r->fct)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	for (size_t k = 0; k < wf.n; k++)
		r->flow[k] = (struct sim_flow){ .src = wf.f[k].src, .dst = wf.f[k].dst,
						.bytes = wf.f[k].bytes, .held = wf.f[k].chained,
						.start_ns = wf.f[k].chained ? 0 : wf.f[k].start_ns,
						.base_rtt_ns = r->global_rtt ? 0 :
							nr_pair(x, wf.f[k].src, wf.f[k].dst).base_rtt_ns };
	if ((rc = nr_batches(x, err, errlen)))
		return rc;
	struct sim_conf sc = { .sw = x->sw, .hosts = x->hc, .nhosts = r->hosts, .seed = c->seed,
			       .verbose = c->verbose, .progress = c->progress,
			       .icrc_skip = c->icrc_skip, .interrupt = &nr_interrupted,
			       .split = c->lanes > 1, .threads = c->lanes > 1 ? c->threads : 1 };
	if ((rc = sim_create(&sc, &x->sim, err, errlen)))
		return rc;
	r->ports = sim_nports(x->sim);
	r->switches = 0;
	for (size_t i = 0; i < r->ports; i++) {
		struct sim_port_info p, q;
		sim_port_info(x->sim, i, &p);
		if (i)
			sim_port_info(x->sim, i - 1, &q);
		r->switches += !i || strcmp(p.sw_name, q.sw_name) != 0;
	}
	r->port_name = calloc(r->ports, sizeof(*r->port_name));
	r->links = calloc(r->ports, sizeof(*r->links));
	r->pfc = calloc(r->ports, sizeof(*r->pfc));
	if (!r->port_name || !r->links || !r->pfc)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	snprintf(params, sizeof(x->params), "%s%s%s", fb.params ? fb.params : "",
		 fb.params && c->cc_params ? "," : "", c->cc_params ? c->cc_params : "");
	snprintf(r->cc_params, sizeof(r->cc_params), "%s", params);
	struct sim_flow_conf fc = { .algo = cc, .params = params[0] ? params : NULL,
				    .base_rtt_ns = r->base_rtt_ns, .mtu_bytes = c->mtu_bytes,
				    .seed = c->seed, .done = nr_done, .arg = x, .tos = fb.tos };
	for (size_t k = 0; k < r->nflows; k++)
		x->finite_left += r->flow[k].bytes != WL_BYTES_FOREVER;
	if ((rc = sim_flows_start(x->sim, r->flow, r->nflows, &fc, &x->fl, err, errlen)))
		return rc;
	if ((rc = nr_open_samples(x, err, errlen)))
		return rc;
	if (sim_at_sync(x->sim, SIM_START_NS, nr_sample, x))
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	return 0;
}

static void nr_free(struct nr *x)
{
	if (x->queue_csv)
		fclose(x->queue_csv);
	if (x->switch_csv)
		fclose(x->switch_csv);
	sim_flows_free(x->fl);
	sim_destroy(x->sim);
	sim_sw_conf_free(x->sw);
	series_free(&x->rates);
	free(x->row);
	free(x->last_rx);
	free(x->hc);
	free(x->left);
	free(x->batch_off);
	free(x->batch_first);
	if (x->tmp_topo[0])
		unlink(x->tmp_topo);
	nr_cm_free(x->cm);
}

int netrun_run(const struct netrun_conf *c, struct netrun_result *r, char *err,
	       size_t errlen)
{
	struct nr x = { .c = c, .r = r };
	qp_time_ns last = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!c->workload_file || (!c->topo_file && !c->gen) || !c->sample_ns || !c->until_ns)
		return qp_errmsg(-EINVAL, err, errlen, "a run needs a topology, a workload, a "
				 "sample period and a time limit");
	if ((rc = nr_build(&x, err, errlen))) {
		nr_free(&x);
		netrun_result_free(r);
		return rc;
	}
	for (size_t k = 0; k < r->nflows; k++)
		if (!r->flow[k].held && r->flow[k].start_ns > last)
			last = r->flow[k].start_ns;
	nr_interrupted = 0;
	void (*old_int)(int) = signal(SIGINT, nr_on_signal);
	void (*old_term)(int) = signal(SIGTERM, nr_on_signal);
	enum sim_end end = r->nflows ? sim_run(x.sim, SIM_START_NS + c->until_ns,
					       SIM_START_NS + qp_time_min(last, c->until_ns))
				     : SIM_END_IDLE;
	signal(SIGINT, old_int);
	signal(SIGTERM, old_term);
	r->all_finished = r->all_finished || !r->nflows;
	r->interrupted = r->interrupted || (nr_interrupted && !r->all_finished);
	nr_figures(&x);
	nr_end_reason(&x, end);
	if (c->out_dir) {
		char path[4200];
		FILE *f;
		snprintf(path, sizeof(path), "%s/switch.json", c->out_dir);
		if ((f = fopen(path, "w"))) {
			sim_switch_json(x.sim, f);
			fclose(f);
		}
		snprintf(path, sizeof(path), "%s/rates.csv", c->out_dir);
		series_write_csv(&x.rates, path, SIM_START_NS);
	}
	r->peak_rss_bytes = nr_proc_kb("/proc/self/status", "VmHWM:");
	/* what of it is on huge pages now (bench_thp_reexec) */
	r->huge_page_bytes = nr_proc_kb("/proc/self/smaps_rollup", "AnonHugePages:");
	nr_free(&x);
	if (c->out_dir && (rc = netrun_write_files(r, c->out_dir, !c->no_plots, err, errlen)))
		return rc;
	return 0;
}

void netrun_result_free(struct netrun_result *r)
{
	free(r->flow);
	free(r->wl);
	free(r->fct);
	free(r->port_name);
	free(r->links);
	free(r->pfc);
	memset(r, 0, sizeof(*r));
}
