/* Closed-loop scenarios on the network model: see cc_loop.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cc_loop.h"

struct cc_loop_cfg cc_loop_defaults(unsigned nflows)
{
	struct cc_loop_cfg c = {
		.nflows = nflows,
		.line_bps = 100 * QP_GBPS,
		.uplink_bps = 400 * QP_GBPS,
		.bottleneck_bps = 100 * QP_GBPS,
		.prop_ns = 2500,
		.mtu_bytes = 1000,
		.duration_rtts = 60,
		.measure_rtts = 20,
	};
	return c;
}

/* Extra propagation of uplink i: golden-ratio steps spread the paths evenly. */
static qp_time_ns uplink_extra_ns(const struct cc_loop_cfg *c, unsigned i)
{
	double frac = (double)i * 0.6180339887498949;
	return (qp_time_ns)((frac - (double)(uint64_t)frac) * (double)c->prop_spread_ns);
}

/* Each path: uplink then bottleneck, as the model computes it (checked in cc_loop_run). */
static qp_time_ns path_rtt(const struct cc_loop_cfg *c, unsigned i)
{
	return qp_tx_time_ns(c->mtu_bytes, c->uplink_bps) +
	       qp_tx_time_ns(c->mtu_bytes, c->bottleneck_bps) + 4 * c->prop_ns +
	       2 * uplink_extra_ns(c, i);
}

static struct nm *build(const struct cc_loop_cfg *c, qp_time_ns rtt)
{
	struct nm_link links[NM_MAX_FLOWS + 1];

	memset(links, 0, sizeof(links));
	for (unsigned i = 0; i <= c->nflows; i++) {
		bool last = i == c->nflows;
		links[i].rate_bps = last ? c->bottleneck_bps : c->uplink_bps;
		links[i].prop_ns = c->prop_ns + (last ? 0 : uplink_extra_ns(c, i));
		links[i].switch_id = last ? 1 : 100 + i;
		links[i].port = (uint16_t)(i + 1);
	}
	links[c->nflows].buffer_bytes = c->buffer_bytes;
	links[c->nflows].early_threshold_bytes = c->early_threshold_bytes;
	links[c->nflows].notice_interval_ns = rtt;
	return nm_create(links, c->nflows + 1, c->mtu_bytes, 1);
}

struct sampler {
	const struct cc_loop_cfg *c;
	struct cc_loop_result *r;
	struct cc **ccs;
	unsigned bottleneck;
	qp_time_ns measure_from;
	qp_time_ns window_end;  /* end of the current one-RTT queue window */
	double queue_sum;       /* instantaneous samples in it */
	unsigned queue_n;
};

/* The standing queue: the mean of the samples over each base RTT. */
static void queue_window(struct sampler *s, struct nm *nm, qp_time_ns t)
{
	struct cc_loop_result *r = s->r;
	double mean;

	s->queue_sum += (double)nm_queue_bytes(nm, s->bottleneck);
	s->queue_n++;
	if (t < s->window_end)
		return;
	mean = s->queue_sum / s->queue_n;
	if (mean >= r->bdp_bytes / 10)
		r->drained_ns = t;
	if (t > s->measure_from && mean > r->late_mean_queue_bytes)
		r->late_mean_queue_bytes = mean;
	s->queue_sum = 0;
	s->queue_n = 0;
	s->window_end = t + r->rtt_ns;
}

static void sample(struct sampler *s, struct nm *nm, qp_time_ns t)
{
	struct cc_loop_result *r = s->r;
	uint64_t q = nm_max_queue_bytes(nm, s->bottleneck);

	nm_reset_max_queue(nm, s->bottleneck);
	if (q > r->max_queue_bytes)
		r->max_queue_bytes = q;
	queue_window(s, nm, t);
	if (t > s->measure_from && q > r->late_max_queue_bytes)
		r->late_max_queue_bytes = q;
	for (unsigned i = 0; i < s->c->nflows; i++) {
		qp_time_ns fct = nm_flow_fct(nm, i);
		if (fct != QP_TIME_NEVER) {
			if (s->c->start_ns[i] + fct < r->first_finish_ns)
				r->first_finish_ns = s->c->start_ns[i] + fct;
			continue;
		}
		if (t >= s->c->start_ns[i] && s->ccs[i]->rate_bps < r->min_rate_bps[i])
			r->min_rate_bps[i] = s->ccs[i]->rate_bps;
	}
	if (s->c->reach_bps > 0 && r->reach_ns == QP_TIME_NEVER &&
	    r->first_finish_ns != QP_TIME_NEVER &&
	    (double)s->ccs[s->c->reach_flow]->rate_bps >= s->c->reach_bps)
		r->reach_ns = t - r->first_finish_ns;
}

int cc_loop_run(const struct cc_loop_cfg *c, struct cc_loop_result *r, char *err, size_t errlen)
{
	struct cc *ccs[NM_MAX_FLOWS] = { 0 };
	uint64_t at_from[NM_MAX_FLOWS] = { 0 };
	struct sampler s = { .c = c, .r = r, .ccs = ccs, .bottleneck = c->nflows };
	qp_time_ns rtt, step, end;
	struct nm *nm;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (c->nflows == 0 || c->nflows >= NM_MAX_FLOWS || c->measure_rtts >= c->duration_rtts) {
		snprintf(err, errlen, "cc_loop: bad flow count %u or measure window", c->nflows);
		return -1;
	}
	rtt = 0;
	for (unsigned i = 0; i < c->nflows; i++)
		if (path_rtt(c, i) > rtt)
			rtt = path_rtt(c, i);
	nm = build(c, rtt);
	if (!nm) {
		snprintf(err, errlen, "cc_loop: nm_create failed");
		return -1;
	}
	r->rtt_ns = rtt;
	r->bdp_bytes = (double)c->bottleneck_bps * (double)rtt / 8e9;
	r->first_finish_ns = QP_TIME_NEVER;
	r->reach_ns = QP_TIME_NEVER;
	for (unsigned i = 0; i < c->nflows; i++) {
		struct cc_path path = { .line_bps = c->line_bps, .base_rtt_ns = rtt,
					.mtu_bytes = c->mtu_bytes };
		unsigned hops[2] = { i, c->nflows };

		if (nm_path_rtt(nm, hops, 2) != path_rtt(c, i)) {
			snprintf(err, errlen, "cc_loop: model RTT %llu ns, expected %llu",
				 (unsigned long long)nm_path_rtt(nm, hops, 2),
				 (unsigned long long)path_rtt(c, i));
			goto out;
		}
		ccs[i] = cc_create_ops(c->ops, &path, c->params, c->start_ns[i], err, errlen);
		if (!ccs[i] || nm_add_flow(nm, ccs[i], hops, 2, c->flow_bytes[i], c->start_ns[i]) < 0)
			goto out;
		r->min_rate_bps[i] = ccs[i]->rate_bps;
	}
	step = c->sample_ns ? c->sample_ns : rtt / 50;
	s.window_end = rtt;
	end = (qp_time_ns)c->duration_rtts * rtt;
	s.measure_from = end - (qp_time_ns)c->measure_rtts * rtt;
	for (qp_time_ns t = step; t <= end; t += step) {
		if (t - step < s.measure_from && t >= s.measure_from) {
			nm_run_until(nm, s.measure_from);
			for (unsigned i = 0; i < c->nflows; i++)
				at_from[i] = nm_flow_delivered(nm, i);
		}
		nm_run_until(nm, t);
		sample(&s, nm, t);
	}
	nm_run_until(nm, end);
	for (unsigned i = 0; i < c->nflows; i++) {
		r->rate_bps[i] = (double)(nm_flow_delivered(nm, i) - at_from[i]) * 8e9 /
				 (double)(end - s.measure_from);
		r->end_rate_bps[i] = ccs[i]->rate_bps;
	}
	r->drops = nm_link_drops(nm, c->nflows);
	r->notices = nm_link_notices(nm, c->nflows);
	rc = 0;
out:
	for (unsigned i = 0; i < c->nflows; i++)
		cc_destroy(ccs[i]);
	nm_destroy(nm);
	return rc;
}
