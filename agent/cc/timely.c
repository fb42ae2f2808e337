/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* timely: TIMELY's rate control on the RTT gradient (Mittal et al., "TIMELY: RTT-based
 * Congestion Control for the Datacenter", SIGCOMM 2015), as HPCC's reference simulator
 * runs it (rdma-hw.cc, cc mode 7, UpdateRateTimely): one of the baselines HPCC compares.
 *
 * On an RTT sample (CC_EV_RTT: the send time of the acknowledged PSN to its ACK), once
 * per window of data (the first sample after an ACK past the highest PSN sent at the last
 * update, as the reference's m_lastUpdateSeq; a source without PSNs: once per the last
 * sample's RTT), with R the rate:
 *
 *   new_diff = rtt - prev_rtt,  prev_rtt = rtt
 *   diff     = (1 - alpha) * diff + alpha * new_diff          (EWMA of the difference)
 *   gradient = diff / min_rtt
 *   rtt < t_low        R = R + delta            (HAI: + n_hai * delta after n_hai
 *                                                increases in a row)
 *   rtt > t_high       R = R * (1 - beta * (1 - t_high / rtt))
 *   gradient <= 0      R = R + delta (HAI as above)
 *   otherwise          R = R * (1 - beta * gradient)       (at least 0, then min_rate)
 *
 * The first update only records the RTT (as the reference). R starts at the line rate
 * and stays in [min_rate, line rate]; there is no window (rate only, as the reference
 * runs it without HAS_WIN).
 *
 * Parameters and defaults (the reference's TypeId, which are the paper's): alpha 0.875,
 * beta 0.8, t_low 50 us, t_high 500 us, n_hai 5 (the paper's N); delta 0 = line/1000
 * (the paper's 10 Mb/s at 10 Gb/s; the reference's RateAI 5 Mb/s at 100 Gb/s), min_rate
 * 0 = line/1000, min_rtt 0 = the path's base RTT (the paper's minRTT; the reference uses
 * a constant 20 us).
 *
 * Deviations: the reference's hyper increase adds RateHAI (10 x RateAI) after 5 increases;
 * qpace adds n_hai x delta, the paper's N x delta. The RTT is the soft RC's (or the tc
 * path's) per ACK, not the NIC's completion timestamp of a 16-64 KB segment the paper
 * samples: one ACK acknowledges up to 16 packets, close to the paper's segments.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "cc_algs.h"
#include "cc_check.h"
#include "timely.h"

struct timely_params {
	double alpha, beta;
	qp_time_ns t_low_ns, t_high_ns, min_rtt_ns;
	qp_rate_bps delta_bps, min_rate_bps;
	uint32_t n_hai;
};

#define TP(f) offsetof(struct timely_params, f)
static const struct cc_param timely_params_table[] = {
	{ "alpha", CC_P_DOUBLE, TP(alpha), 0.875, 0, 1, CC_P_MIN_OPEN,
	  "EWMA weight of the newest RTT difference" },
	{ "beta", CC_P_DOUBLE, TP(beta), 0.8, 0, 1, CC_P_MIN_OPEN,
	  "multiplicative decrease factor" },
	{ "t_low", CC_P_TIME, TP(t_low_ns), 50e3, 0, 1e10, 0,
	  "below this RTT: additive increase, whatever the gradient" },
	{ "t_high", CC_P_TIME, TP(t_high_ns), 500e3, 1, 1e10, 0,
	  "above this RTT: decrease by beta * (1 - t_high / rtt)" },
	{ "min_rtt", CC_P_TIME, TP(min_rtt_ns), 0, 0, 1e10, 0,
	  "the gradient's normaliser; 0 = the path's base RTT" },
	{ "delta", CC_P_RATE, TP(delta_bps), 0, 0, 1e13, 0,
	  "additive increase step in bits/s; 0 = line rate / 1000" },
	{ "min_rate", CC_P_RATE, TP(min_rate_bps), 0, 0, 1e13, 0,
	  "lowest rate in bits/s; 0 = line rate / 1000" },
	{ "n_hai", CC_P_U32, TP(n_hai), 5, 1, 1000, 0,
	  "increases in a row before hyper increase (n_hai * delta)" },
	{ .name = NULL },
};

struct timely_stats {
	uint64_t samples;         /* RTT samples */
	uint64_t updates;         /* rate updates (once per window of data) */
	uint64_t increases, hai_increases, gradient_cuts, high_cuts;
};

struct timely_state {
	struct cc cc;
	struct timely_params p;
	double rate, diff;
	qp_time_ns prev_rtt_ns;
	bool started;             /* the first update recorded the RTT */
	uint32_t inc_run;
	uint64_t ack_psn, ack_snd;    /* the last ACK's PSNs (0: not known) */
	uint64_t window_end;
	qp_time_ns next_ns;           /* no PSNs: the next update at or after this */
	struct timely_stats stats;
};

static struct timely_state *to_timely(struct cc *cc)
{
	return (struct timely_state *)cc;
}

static const struct cc_rate_field timely_line_capped[] = {
	{ "delta", TP(delta_bps) },
	{ "min_rate", TP(min_rate_bps) },
};

static int timely_check(const void *params, const struct cc_path *path, char *err,
			size_t errlen)
{
	const struct timely_params *p = params;

	if (p->t_low_ns >= p->t_high_ns) {
		snprintf(err, errlen, "timely: t_low=%lluns must be below t_high=%lluns",
			 (unsigned long long)p->t_low_ns, (unsigned long long)p->t_high_ns);
		return -EINVAL;
	}
	return cc_check_rates_le_line("timely", params, timely_line_capped,
				      sizeof(timely_line_capped) / sizeof(timely_line_capped[0]),
				      path, err, errlen);
}

static void timely_init(struct cc *cc, const void *params, qp_time_ns now)
{
	struct timely_state *s = to_timely(cc);
	qp_rate_bps line = cc->path.line_bps;

	(void)now;
	s->p = *(const struct timely_params *)params;
	if (!s->p.delta_bps)
		s->p.delta_bps = line / 1000 ? line / 1000 : 1;
	if (!s->p.min_rate_bps)
		s->p.min_rate_bps = line / 1000 ? line / 1000 : 1;
	if (!s->p.min_rtt_ns)
		s->p.min_rtt_ns = cc->path.base_rtt_ns;
	s->rate = (double)line;
	cc->rate_bps = line;
}

static unsigned timely_on_ack(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct timely_state *s = to_timely(cc);

	(void)now;
	s->ack_psn = ev->u.ack.psn;
	s->ack_snd = ev->u.ack.snd_psn;
	return 0;
}

/* One update with @rtt (the reference's UpdateRateTimely, not a fast reaction). */
static void update(struct timely_state *s, double rtt)
{
	const struct timely_params *p = &s->p;
	double new_diff = rtt - (double)s->prev_rtt_ns, g;

	s->diff = (1 - p->alpha) * s->diff + p->alpha * new_diff;
	g = s->diff / (double)p->min_rtt_ns;
	s->stats.updates++;
	if (rtt < (double)p->t_low_ns || (rtt <= (double)p->t_high_ns && g <= 0)) {
		bool hai = s->inc_run >= p->n_hai;

		s->rate += (double)p->delta_bps * (hai ? p->n_hai : 1);
		s->inc_run++;
		s->stats.increases++;
		s->stats.hai_increases += hai;
		return;
	}
	if (rtt > (double)p->t_high_ns) {
		s->rate *= 1 - p->beta * (1 - (double)p->t_high_ns / rtt);
		s->stats.high_cuts++;
	} else {
		s->rate *= fmax(0, 1 - p->beta * g);
		s->stats.gradient_cuts++;
	}
	s->inc_run = 0;
}

static unsigned timely_on_rtt(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct timely_state *s = to_timely(cc);
	qp_time_ns rtt = ev->u.rtt.rtt_ns;
	bool due = s->ack_psn && s->window_end ? s->ack_psn > s->window_end : now >= s->next_ns;

	s->stats.samples++;
	if (!due)
		return 0;
	if (s->started)
		update(s, (double)rtt);
	s->started = true;
	s->prev_rtt_ns = rtt;
	s->window_end = s->ack_snd;
	s->next_ns = now + rtt;
	s->rate = fmin((double)cc->path.line_bps, fmax((double)s->p.min_rate_bps, s->rate));
	cc->rate_bps = cc_clamp_rate(s->rate, s->p.min_rate_bps, cc->path.line_bps);
	return CC_ACT_RATE;
}

int cc_timely_view(const struct cc *cc, struct cc_timely_view *out)
{
	const struct timely_state *s = (const struct timely_state *)cc;

	if (!cc || cc->ops != &cc_timely_ops || !out)
		return -EINVAL;
	*out = (struct cc_timely_view){ .rate_bps = s->rate,
					.gradient = s->diff / (double)s->p.min_rtt_ns,
					.rtt_ns = s->prev_rtt_ns, .updates = s->stats.updates };
	return 0;
}

#define TIMELY_C(f, doc) { #f, offsetof(struct timely_state, stats.f), doc }
static const struct cc_counter timely_counters[] = {
	TIMELY_C(samples, "RTT samples"),
	TIMELY_C(updates, "rate updates (once per window of data)"),
	TIMELY_C(increases, "additive increases (below t_low, or gradient <= 0)"),
	TIMELY_C(hai_increases, "of them hyper increases"),
	TIMELY_C(gradient_cuts, "decreases by beta * gradient"),
	TIMELY_C(high_cuts, "decreases above t_high"),
	{ .name = NULL },
};

const struct cc_ops cc_timely_ops = {
	.name = "timely",
	.summary = "TIMELY: the rate follows the RTT gradient (additive up, beta * gradient "
		   "down), once per window of data",
	.params = timely_params_table,
	.params_size = sizeof(struct timely_params),
	.state_size = sizeof(struct timely_state),
	.check = timely_check,
	.init = timely_init,
	.on = {
		[CC_EV_ACKED] = timely_on_ack,
		[CC_EV_RTT] = timely_on_rtt,
	},
	.counters = timely_counters,
};
