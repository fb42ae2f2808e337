/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Closed loops on the real switch, hosts and agents in virtual time: see vt_net.h. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/cc.h"
#include "qpace/errmsg.h"
#include "qpace/sim.h"
#include "incast.h"
#include "stats.h"
#include "vt_net.h"

#define VT_ACK_BYTES 64u              /* an ACK's frame, at least the minimum */

struct vt_run {
	const struct vt_net_conf *c;
	struct vt_net_result *r;
	struct sim *sim;
	struct sim_flows *fl;
	unsigned cap, finished;
	qp_time_ns warm_ns;           /* the test's time 0, after the warm-up */
	char params[256];
	bool full;                    /* out of sample slots */
};

struct vt_net_conf vt_net_defaults(const char *algo, unsigned n, uint64_t bytes,
				   uint64_t buffer_bytes)
{
	struct vt_net_conf c = { .algo = algo, .nflows = n, .buffer_bytes = buffer_bytes };

	for (unsigned i = 0; i < n && i < VT_MAX_FLOWS; i++)
		c.bytes[i] = bytes;
	return c;
}

static void vt_sample(void *arg, qp_time_ns now)
{
	struct vt_run *v = arg;
	struct vt_net_result *r = v->r;
	struct sim_port_info p;
	struct sim_flow_now fn;
	struct vt_sample *s;

	if (r->nsamples == v->cap) {
		v->full = true;
		sim_stop(v->sim);
		return;
	}
	s = &r->s[r->nsamples++];
	s->t_ns = now - SIM_START_NS - v->warm_ns;
	sim_port_info(v->sim, 0, &p);
	s->queue_bytes = p.queue_bytes;
	s->ecn_marks = p.ecn_marks;
	s->tx_frames = p.tx_frames;
	for (unsigned k = 0; k < v->c->nflows; k++) {
		sim_flows_now(v->fl, v->c->nflows + k, &fn);
		s->delivered[k] = fn.delivered_bytes;
		s->rate_bps[k] = fn.rate_bps;
		if (v->c->probe && fn.running && fn.cc)
			v->c->probe(v->c->probe_arg, k, fn.cc, s->t_ns);
	}
	if (v->finished == v->c->nflows)
		sim_stop(v->sim);       /* every flow's final count is in */
	else if (sim_at(v->sim, now + v->c->sample_ns, vt_sample, v))
		v->full = true;         /* out of memory: said as the run's end */
}

static void vt_done(void *arg, const struct sim_flow *f, qp_time_ns now)
{
	struct vt_run *v = arg;

	if (f->dst == 0 && ++v->finished == v->c->nflows && sim_at(v->sim, now, vt_sample, v))
		sim_stop(v->sim);       /* the last sample: every flow's final count */
}

/* qpace-switch's words: the star, the algorithm's feedback, the test's extras. */
static struct sw_conf *vt_switch(const struct vt_net_conf *c, const struct incast_feedback *fb,
				 char *err, size_t errlen)
{
	char ports[16], rate[32], buf[32], delay[32], seed[32];
	const char *argv[16 + INCAST_SW_ARGS + VT_MAX_EXTRA] = {
		"qpace-switch", "--star", ports, "--rate", rate, "--buffer", buf, "--delay", delay,
		"--seed", seed, "--quiet" };
	int n = 12;

	snprintf(ports, sizeof(ports), "%u", c->nflows + 1);
	snprintf(rate, sizeof(rate), "%" PRIu64, c->link_bps);
	snprintf(buf, sizeof(buf), "%" PRIu64, c->buffer_bytes);
	snprintf(delay, sizeof(delay), "%" PRIu64 "ns", c->delay_ns);
	snprintf(seed, sizeof(seed), "%" PRIu64, c->seed);
	for (const char *const *a = fb->sw_args; *a; a++)
		argv[n++] = *a;
	for (const char *const *a = c->extra; *a; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	return sim_sw_conf_args(n, (char **)argv, err, errlen);
}

static int vt_check(const struct vt_net_conf *c, char *err, size_t errlen)
{
	if (!c->nflows || c->nflows > VT_MAX_FLOWS)
		return qp_errmsg(-EINVAL, err, errlen, "vt_net: %u flows: 1..%u", c->nflows,
				 VT_MAX_FLOWS);
	if (!c->buffer_bytes)
		return qp_errmsg(-EINVAL, err, errlen, "vt_net: the buffer must be finite");
	if (!c->algo || !cc_find(c->algo))
		return qp_errmsg(-ENOENT, err, errlen, "vt_net: unknown algorithm '%s'",
				 c->algo ? c->algo : "(null)");
	for (unsigned k = 0; k < c->nflows; k++)
		if (c->src[k] > c->nflows)
			return qp_errmsg(-EINVAL, err, errlen, "vt_net: flow %u from host %u: "
					 "hosts 1..%u", k, c->src[k], c->nflows);
	return 0;
}

static int vt_build(struct vt_run *v, struct vt_net_conf *c, struct sim_flow *flows,
		    char *err, size_t errlen)
{
	struct vt_net_result *r = v->r;
	struct sim_host_conf hc[VT_MAX_FLOWS + 1];
	struct incast_feedback fb;
	struct sw_conf *sw;
	int rc;

	r->rtt_ns = 4 * c->delay_ns +
		    2 * qp_tx_time_ns(c->mtu_bytes + STATS_ROCE_PKT_OVERHEAD, c->link_bps) +
		    2 * qp_tx_time_ns(VT_ACK_BYTES, c->link_bps);
	r->bdp_bytes = (double)qp_bytes_in(c->link_bps, r->rtt_ns);
	r->payload_bps = stats_payload_bps(c->link_bps, c->mtu_bytes, STATS_ROCE_PKT_OVERHEAD);
	if (!c->sample_ns)
		c->sample_ns = r->rtt_ns;
	incast_feedback(cc_find(c->algo), c->link_bps, (uint64_t)r->bdp_bytes, &fb);
	/* the algorithm's own settings for this feedback (acc: fair=1), then the test's */
	snprintf(v->params, sizeof(v->params), "%s%s%s", fb.params ? fb.params : "",
		 fb.params && c->params ? "," : "", c->params ? c->params : "");
	c->params = fb.params || c->params ? v->params : NULL;
	if (!(sw = vt_switch(c, &fb, err, errlen)))
		return -EINVAL;
	for (unsigned i = 0; i <= c->nflows; i++)
		hc[i] = (struct sim_host_conf){ .ip = 0x0a000001u + i, .sw = 0, .port = (int)i,
						.link_delay_ns = c->host_delay_ns[i] ?
								 c->host_delay_ns[i] :
								 SIM_PORT_DELAY,
						.mtu_bytes = c->mtu_bytes,
						.window_pkts = c->window_pkts, .cc = c->algo,
						.credits = c->credits,
						.cnp_from_notice = fb.cnp_from_notice,
						.ecn_echo = fb.ecn_echo && !c->no_ecn_echo };
	struct sim_conf sc = { .sw = sw, .hosts = hc, .nhosts = c->nflows + 1, .seed = c->seed };
	rc = sim_create(&sc, &v->sim, err, errlen);
	sim_sw_conf_free(sw);
	if (rc)
		return rc;
	/* The warm-up: host 0 sends each sender one small WRITE, so every sender has learned
	 * the receiver's address (from its ARP request) before the test's flows start, and no
	 * first window waits for ARP (a window handed on during the wait leaves in one burst
	 * when it resolves, whatever the controller did meanwhile). */
	v->warm_ns = 20 * r->rtt_ns > QP_NS_PER_MS ? 20 * r->rtt_ns : QP_NS_PER_MS;
	for (unsigned i = 0; i <= c->nflows; i++)
		if (4 * c->host_delay_ns[i] > v->warm_ns)
			v->warm_ns = 4 * c->host_delay_ns[i];
	for (unsigned i = 0; i < c->nflows; i++)
		flows[i] = (struct sim_flow){ .src = 0, .dst = i + 1, .bytes = 64 };
	for (unsigned k = 0; k < c->nflows; k++) {
		unsigned src = c->src[k] ? c->src[k] : k + 1;
		qp_time_ns hd = c->host_delay_ns[src] ? c->host_delay_ns[src] : c->delay_ns;
		r->flow[k].rtt_ns = r->rtt_ns + hd - c->delay_ns;
		flows[c->nflows + k] = (struct sim_flow){
			.src = src, .dst = 0, .bytes = c->bytes[k],
			.start_ns = v->warm_ns + c->start_ns[k], .base_rtt_ns = r->flow[k].rtt_ns };
	}
	struct sim_flow_conf fc = { .algo = c->algo, .params = c->params,
				    .line_bps = (qp_rate_bps)r->payload_bps,
				    .base_rtt_ns = r->rtt_ns, .mtu_bytes = c->mtu_bytes,
				    .seed = c->seed, .done = vt_done, .arg = v, .tos = fb.tos };
	if ((rc = sim_flows_start(v->sim, flows, 2 * c->nflows, &fc, &v->fl, err, errlen)))
		return rc;
	v->cap = (unsigned)(c->duration_ns / c->sample_ns) + 2;
	if (!(r->s = calloc(v->cap, sizeof(*r->s))))
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	if (sim_at(v->sim, SIM_START_NS + v->warm_ns, vt_sample, v))
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	return 0;
}

static void vt_figures(struct vt_run *v, const struct sim_flow *flows)
{
	struct vt_net_result *r = v->r;
	struct sim_port_info p;
	struct sim_stats st;

	for (size_t i = 0; i < sim_nports(v->sim); i++) {
		sim_port_info(v->sim, i, &p);
		r->all_drops += p.drops;
		r->pauses += p.pauses_sent;
		if (i == 0) {
			r->drops = p.drops;
			r->ecn_marks = p.ecn_marks;
			r->max_queue_bytes = p.max_queue_bytes;
		}
	}
	for (unsigned k = 0; k < v->c->nflows; k++) {
		const struct sim_flow *f = &flows[v->c->nflows + k];
		r->flow[k] = (struct vt_net_flow){ .rtt_ns = r->flow[k].rtt_ns,
						   .done = f->done, .fct_ns = f->fct_ns,
						   .retransmits = f->retransmits,
						   .timeouts = f->timeouts };
		r->flows_done += f->done;
	}
	r->nflows = v->c->nflows;
	sim_stats(v->sim, &st);
	r->packet_hops = st.packet_hops;
	r->end_ns = sim_now(v->sim) - SIM_START_NS - v->warm_ns;
}

int vt_net_run(const struct vt_net_conf *conf, struct vt_net_result *r, char *err,
	       size_t errlen)
{
	struct vt_net_conf c = *conf;
	struct sim_flow flows[2 * VT_MAX_FLOWS];
	struct vt_run v = { .c = &c, .r = r };
	enum sim_end end;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = vt_check(&c, err, errlen)))
		return rc;
	c.link_bps = c.link_bps ? c.link_bps : 10 * QP_GBPS;
	c.delay_ns = c.delay_ns ? c.delay_ns : 10 * QP_NS_PER_US;
	c.mtu_bytes = c.mtu_bytes ? c.mtu_bytes : 1024;
	c.duration_ns = c.duration_ns ? c.duration_ns : 100 * QP_NS_PER_MS;
	c.seed = c.seed ? c.seed : 1;
	if ((rc = vt_build(&v, &c, flows, err, errlen)))
		goto out;
	end = sim_run(v.sim, SIM_START_NS + v.warm_ns + c.duration_ns, QP_TIME_NEVER);
	if (v.full || (end != SIM_END_TIME && end != SIM_END_STOPPED)) {
		rc = qp_errmsg(-EIO, err, errlen, "vt_net: the run ended early: %s",
			       v.full ? "out of sample slots or memory" : sim_end_str(end));
		goto out;
	}
	vt_figures(&v, flows);
	rc = 0;
out:
	sim_flows_free(v.fl);
	sim_destroy(v.sim);
	if (rc)
		vt_net_free(r);
	return rc;
}

void vt_net_free(struct vt_net_result *r)
{
	free(r->s);
	r->s = NULL;
	r->nsamples = 0;
}

void vt_net_assert_run(const struct vt_net_conf *c, struct vt_net_result *r)
{
	char err[400];

	if (vt_net_run(c, r, err, sizeof(err)))
		fail_msg("%s", err);
}

/* ---- measures ---- */

/* The first sample at or after @t and the last at or before @t1 (both within the run). */
static void vt_window(const struct vt_net_result *r, qp_time_ns t0, qp_time_ns t1,
		      unsigned *a, unsigned *b)
{
	*a = 0;
	while (*a + 1 < r->nsamples && r->s[*a].t_ns < t0)
		(*a)++;
	*b = *a;
	while (*b + 1 < r->nsamples && r->s[*b + 1].t_ns <= t1)
		(*b)++;
}

double vt_goodput_bps(const struct vt_net_result *r, unsigned flow, qp_time_ns t0,
		      qp_time_ns t1)
{
	unsigned a, b;

	vt_window(r, t0, t1, &a, &b);
	if (b == a)
		return 0;
	return (double)(r->s[b].delivered[flow] - r->s[a].delivered[flow]) * 8e9 /
	       (double)(r->s[b].t_ns - r->s[a].t_ns);
}

double vt_jain(const struct vt_net_result *r, unsigned first, unsigned n, qp_time_ns t0,
	       qp_time_ns t1)
{
	double sum = 0, sq = 0;

	for (unsigned i = first; i < first + n; i++) {
		double x = vt_goodput_bps(r, i, t0, t1);
		sum += x;
		sq += x * x;
	}
	return sq > 0 ? sum * sum / ((double)n * sq) : 0;
}

double vt_mean_queue(const struct vt_net_result *r, qp_time_ns t0, qp_time_ns t1)
{
	unsigned a, b;
	double sum = 0;

	vt_window(r, t0, t1, &a, &b);
	for (unsigned i = a; i <= b; i++)
		sum += (double)r->s[i].queue_bytes;
	return sum / (double)(b - a + 1);
}

uint64_t vt_max_queue(const struct vt_net_result *r, qp_time_ns t0, qp_time_ns t1)
{
	unsigned a, b;
	uint64_t m = 0;

	vt_window(r, t0, t1, &a, &b);
	for (unsigned i = a; i <= b; i++)
		m = r->s[i].queue_bytes > m ? r->s[i].queue_bytes : m;
	return m;
}

qp_time_ns vt_jain_reached(const struct vt_net_result *r, unsigned first, unsigned n,
			   qp_time_ns t0, qp_time_ns win, double j)
{
	for (unsigned i = 0; i < r->nsamples; i++) {
		qp_time_ns t = r->s[i].t_ns;
		if (t < t0 + win)
			continue;
		if (vt_jain(r, first, n, t - win, t) >= j)
			return t;
	}
	return QP_TIME_NEVER;
}

qp_time_ns vt_rate_reached(const struct vt_net_result *r, unsigned flow, qp_time_ns t0,
			   double bps)
{
	for (unsigned i = 0; i < r->nsamples; i++)
		if (r->s[i].t_ns >= t0 && (double)r->s[i].rate_bps[flow] >= bps)
			return r->s[i].t_ns;
	return QP_TIME_NEVER;
}

void vt_net_print(const char *label, const struct vt_net_result *r)
{
	unsigned n = r->nflows;
	double total = 0;

	for (unsigned k = 0; k < n; k++)
		total += vt_goodput_bps(r, k, 0, r->end_ns);
	print_message("%-28s %u/%u flows done by %.3f ms (RTT %.1f us, BDP %.0f B): drops %" PRIu64
		      ", peak queue %" PRIu64 " B (%.2f BDP), mean queue %.0f B, ECN marks %" PRIu64
		      ", PAUSEs %" PRIu64 ", goodput %.2f Gb/s of %.2f\n", label, r->flows_done, n,
		      (double)r->end_ns / 1e6, (double)r->rtt_ns / 1e3, r->bdp_bytes, r->drops,
		      r->max_queue_bytes, (double)r->max_queue_bytes / r->bdp_bytes,
		      vt_mean_queue(r, 0, r->end_ns), r->ecn_marks, r->pauses, total / 1e9,
		      r->payload_bps / 1e9);
}

qp_rate_bps vt_min_rate(const struct vt_net_result *r, unsigned flow)
{
	qp_rate_bps m = 0;

	for (unsigned i = 0; i < r->nsamples; i++)
		if (r->s[i].rate_bps[flow] && (!m || r->s[i].rate_bps[flow] < m))
			m = r->s[i].rate_bps[flow];
	return m;
}

struct vt_net_conf vt_net_join(const char *algo)
{
	struct vt_net_conf c = vt_net_defaults(algo, 2, 6000000, 1000000);

	c.bytes[1] = 3000000;
	c.start_ns[1] = VT_JOIN_NS;
	c.sample_ns = 4 * QP_NS_PER_US;
	return c;
}

void vt_net_assert_control_overflows(const struct vt_net_conf *conf, uint64_t *drops)
{
	struct vt_net_conf c = *conf;
	struct vt_net_result r;
	char label[64];

	c.algo = "none";
	c.params = NULL;
	c.credits = false;
	if (c.duration_ns == 0 || c.duration_ns > 5 * QP_NS_PER_MS)
		c.duration_ns = 5 * QP_NS_PER_MS;    /* enough to overflow; its losses wait
						      * for 67 ms retransmission timers */
	vt_net_assert_run(&c, &r);
	snprintf(label, sizeof(label), "%u->1 none (the control)", c.nflows);
	vt_net_print(label, &r);
	if (!r.drops)
		fail_msg("the control dropped nothing: the %" PRIu64 " B buffer does not matter",
			 c.buffer_bytes);
	*drops = r.drops;
	vt_net_free(&r);
}

void vt_net_assert_join(const char *algo, const char *params, struct vt_join *j)
{
	struct vt_net_conf c = vt_net_join("none");
	struct vt_net_result none, r;
	const qp_time_ns a = VT_JOIN_NS;
	char label[64];

	vt_net_assert_run(&c, &none);
	c.algo = algo;
	c.params = params;
	vt_net_assert_run(&c, &r);
	snprintf(label, sizeof(label), "%s, a second flow joins", algo);
	vt_net_print(label, &r);
	qp_time_ns t = vt_jain_reached(&r, 0, 2, a, 2 * r.rtt_ns, 0.9);
	qp_time_ns w0 = a + 20 * r.rtt_ns, w1 = a + 100 * r.rtt_ns;
	*j = (struct vt_join){
		.fair_rtts = t == QP_TIME_NEVER ? -1 : (double)(t - a) / (double)r.rtt_ns,
		.jain = vt_jain(&r, 0, 2, w0, w1), .queue_bdp = vt_mean_queue(&r, w0, w1) / r.bdp_bytes,
		.none_queue_bdp = vt_mean_queue(&none, w0, w1) / r.bdp_bytes,
		.queue_bytes = vt_mean_queue(&r, w0, w1), .drops = r.drops };
	print_message("%s: Jain >= 0.9 %.1f RTT after the join (2-RTT windows), %.3f over 20..100 "
		      "RTT after it; mean queue then %.0f B (%.3f BDP), none's %.2f BDP\n", algo,
		      j->fair_rtts, j->jain, j->queue_bytes, j->queue_bdp, j->none_queue_bdp);
	vt_net_free(&none);
	vt_net_free(&r);
}

unsigned vt_sample_at(const struct vt_net_result *r, qp_time_ns t)
{
	unsigned i = 0;

	while (i + 1 < r->nsamples && r->s[i + 1].t_ns <= t)
		i++;
	return i;
}
