/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* idcc: INT-and-delay congestion control (IDCC, "INT and Delay based Congestion Control"
 * for cross-datacenter networks; the source is ../shared/seeds/003_*.txt, a summary whose
 * pseudocode, Fig. 3, was an image and is missing). What the source says, and where:
 *  - INT measures the queueing inside the DC, the RTT measures the queueing on the WAN
 *    ("分别利用 INT 和 RTT 来测量 DC 内部和广域网中的排队延迟"); the WAN may not support INT;
 *  - one PID controller per signal (Fig. 3 lines 6-7), the more congested location rules
 *    (lines 8-12), MIMD on the window/rate;
 *  - the INT loop serves "the strict queue requirements of the DC's shallow buffers": when
 *    a DC queue builds, the long (inter-DC) flows yield to the short (intra-DC) ones.
 * The equations below are qpace's (the pseudocode is missing). The PID pieces are textbook
 * (Astrom & Murray, "Feedback Systems", ch. 10: filtered derivative on the measurement,
 * integrator clamping and conditional integration; a max selector over two loops is
 * "override control"). The additive term for fairness is HPCC's W_AI / DCQCN's R_AI idea.
 *
 * Units: T = the path's base RTT (ns); D = dc_rtt, the DC's own round-trip scale (ns, a
 * parameter: 12 us, the source's largest intra-DC RTT); B_h = hop h's link rate (bits/s);
 * q bytes; rtt ns.
 *
 * 1. Errors, the queue's in DC round trips D, the RTT's in base RTTs T:
 *      e_q = max over the report's hops h of (qlen_h - qt_h) * 8 / (B_h * D)
 *            qt_h = q_target, or (default) q_frac * B_h * D / 8, at least one MTU:
 *            the same target queueing delay at every DC hop
 *      e_r = (rtt - a - rtt_target) / T
 *            a = sum over the hops h of the latest INT report of qlen_h * 8 / B_h: the
 *            queueing INT accounts for, so the RTT loop sees the WAN part of the RTT only
 *            (a is 0 when the last report is older than 4 control intervals)
 *    The queue loop's target and error do not depend on the flow's own T: a WAN flow
 *    (T = 100 ms) and a DC flow (T = 10 us) sharing a DC queue aim at the same queue, and
 *    a full DC queue is the same large error for both, so the WAN flow yields.
 *
 * 2. Each loop, on each of its samples (CC_EV_INT: q, CC_EV_RTT: r), with dt = time since
 *    its previous sample, at most one control interval Ti:
 *      D   = kd * T * (e - e_f) / (d_tau*T + dt)     derivative of the measurement, filtered:
 *      e_f += (e - e_f) * dt / (d_tau*T + dt)        kd*s/(1 + d_tau*T*s); a step s in e gives
 *                                                    D <= kd*s/d_tau, no impulse, decaying
 *      I   += ki * e * dt / T      only while |e| <= i_band (no integration through large
 *                                  transients), not toward increase (e < 0) while the rate
 *                                  is at the line rate or the other loop ruled the last
 *                                  step, not toward decrease (e > 0) at min_rate
 *      I   *= i_tau*T / (i_tau*T + dt)   leak (i_tau > 0): flows that started at different
 *                                        times forget that history, so ai can equalise them
 *      I   = clamp(I, -i_max, i_max)     anti-windup bound
 *      y   = (kp * e + I + D) * Ti / delay
 *    y > 0 asks for a decrease. delay is the loop's feedback delay: T for INT (a switch
 *    reports the queue as it is now), the sample itself for the RTT (an RTT sample is as
 *    old as the RTT), so a long queue cannot make the RTT loop act several times on one
 *    stale measurement. The targets are constants, so D acts on the measurement alone.
 *    The loop dynamics (I's growth, D's filter, the step) stay in the flow's own T: a
 *    flow can act once per RTT of its own.
 *
 * 3. Control step, at most once per Ti (default T), run by the first sample at or after
 *    the deadline or by the timer (cc->timer_ns), whichever comes first:
 *      y = max(y_q, y_r) over the loops that are on (a gain > 0) and had a sample in the
 *          last 4 Ti: the more congested loop rules
 *      R = clamp(R * (1 - clamp(y, -max_inc, max_dec)) + ai, min_rate, line rate)
 *    A step with no new sample since the previous one holds the rate and disarms the
 *    timer until the next sample: stale feedback never keeps moving the rate. With ai,
 *    flows on one bottleneck converge to equal rates (in equilibrium y*R_i = ai for all i);
 *    the queue then sits about N*ai/(B*(kp + ki*i_tau)) base RTTs above q_target for N
 *    flows, and it settles only while N*ai < max_dec * B.
 *
 * Tuning: linearised around the target, the plant is e'' = -y (rate is the integral of
 * y, queue the integral of rate) with about one T of delay, so kd gives the damping and
 * kp the stiffness; the defaults settle a step in tens of T without sustained
 * oscillation in the closed-loop tests (tests/unit/test_idcc.c). With fewer than ~20
 * packets per BDP the queue signal is too coarse (one packet is a large error).
 *
 * Deviations, and why:
 *  - Rate-based (the source adjusts a window); qpace's senders are paced QPs.
 *  - The INT-accounted delay a comes from the latest INT report, not from the same packet
 *    as the RTT sample: the cc gets the two as separate events.
 *  - A WAN link that adds an INT hop is counted as DC queueing (INT loop, DC target):
 *    keeping WAN links out of INT is the switch's configuration, not the cc's.
 *
 * Parameters (name: unit, range, default):
 *   q_target    bytes, [0, 4G], 0 = q_frac * B_h * dc_rtt / 8 per hop, at least one MTU
 *   q_frac      fraction of a hop's BDP over dc_rtt, (0, 10], 0.15
 *   dc_rtt      ns, [1 ns, 1 s], 12 us: the DC round trip that scales the queue loop
 *   rtt_target  ns, 0 or above T, 0 = 1.5 T
 *   kp_q ki_q kd_q        queue loop gains, [0, 100] each: 0.1, 0.01, 0.6
 *   kp_rtt ki_rtt kd_rtt  RTT loop gains, [0, 100] each: 0.1, 0.01, 0.6
 *                         a loop whose three gains are 0 is off; one must stay on
 *   i_max       bound on |I|, rate fraction per base RTT, [0, 1], 0.25
 *   i_band      |e| up to which I integrates, base RTTs, [0, 1000], 1
 *   i_tau       integral leak time constant, base RTTs, [0, 1e6], 40 (0 = no leak)
 *   d_tau       derivative filter time constant, base RTTs, (0, 1000], 0.5
 *   interval    control interval Ti, ns, [0, 10 s], 0 = T
 *   max_inc     largest increase per step, fraction, (0, 10], 0.25
 *   max_dec     largest decrease per step, fraction, (0, 1), 0.5
 *   min_rate    bits/s, [0, line], 0 = line / 1000
 *   ai          additive increase per step, bits/s, [0, line], 0 = line / 1000
 *   init_rate   first rate, bits/s, [0, line] and >= min_rate, 0 = line rate
 *
 * Measured, on the real switch in virtual time (test_loop_idcc.c): no in-flight cap, so
 * a 16 -> 1 at line rate overflows a 1 MB buffer HPCC holds (495 drops); and a WAN flow
 * (T 1 ms) against four DC flows (T 6 us) on one DC queue keeps 6.5 Gb/s to their 2.8
 * instead of yielding: the DC flows step every 6 us and hold the queue at the target, so
 * the WAN flow, stepping once per its own RTT, sees little error. The source's claim
 * (the inter-DC flow yields) is not met by the INT loop alone.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cc_algs.h"
#include "cc_check.h"

enum idcc_loop_id { IDCC_Q = 0, IDCC_RTT, IDCC_LOOPS };

/* A loop counts in the selector while its last sample is this many intervals old. */
#define IDCC_STALE_INTERVALS 4

struct idcc_gains {
	double kp, ki, kd;
};

struct idcc_params {
	uint64_t q_target_bytes;
	double q_frac;
	qp_time_ns dc_rtt_ns;
	qp_time_ns rtt_target_ns;
	struct idcc_gains gains[IDCC_LOOPS];
	double i_max;
	double i_band_rtts;
	double i_tau_rtts;
	double d_tau_rtts;
	qp_time_ns interval_ns;
	double max_inc, max_dec;
	qp_rate_bps min_rate_bps, ai_bps, init_rate_bps;
};

/* Every gain: a plain number in [0, 100]. */
#define IDCC_GAIN(name, loop, field, def, doc) \
	{ name, CC_P_DOUBLE, offsetof(struct idcc_params, gains[loop].field), def, 0, 100, 0, doc }

static const struct cc_param idcc_params_table[] = {
	{ "q_target", CC_P_BYTES, offsetof(struct idcc_params, q_target_bytes), 0, 0, 4294967295.0,
	  0, "queue target in bytes per hop; 0 = q_frac of the hop's rate * dc_rtt" },
	{ "q_frac", CC_P_DOUBLE, offsetof(struct idcc_params, q_frac), 0.15, 0, 10, CC_P_MIN_OPEN,
	  "derived queue target as a fraction of a hop's rate * dc_rtt / 8" },
	{ "dc_rtt", CC_P_TIME, offsetof(struct idcc_params, dc_rtt_ns), 12e3, 1, 1e9, 0,
	  "DC round trip that scales the queue loop's target and error (not the flow's T)" },
	{ "rtt_target", CC_P_TIME, offsetof(struct idcc_params, rtt_target_ns), 0, 0, 1e10, 0,
	  "RTT target in ns, above the base RTT; 0 = 1.5 base RTTs" },
	IDCC_GAIN("kp_q", IDCC_Q, kp, 0.1, "queue loop P gain: y = kp * e"),
	IDCC_GAIN("ki_q", IDCC_Q, ki, 0.01, "queue loop I gain: I grows ki * e per base RTT"),
	IDCC_GAIN("kd_q", IDCC_Q, kd, 0.6, "queue loop D gain: kd * (change of e per base RTT)"),
	IDCC_GAIN("kp_rtt", IDCC_RTT, kp, 0.1, "RTT loop P gain: y = kp * e"),
	IDCC_GAIN("ki_rtt", IDCC_RTT, ki, 0.01, "RTT loop I gain: I grows ki * e per base RTT"),
	IDCC_GAIN("kd_rtt", IDCC_RTT, kd, 0.6, "RTT loop D gain: kd * (change of e per base RTT)"),
	{ "i_max", CC_P_DOUBLE, offsetof(struct idcc_params, i_max), 0.25, 0, 1, 0,
	  "anti-windup bound on each integral term, rate fraction per base RTT" },
	{ "i_band", CC_P_DOUBLE, offsetof(struct idcc_params, i_band_rtts), 1, 0, 1000, 0,
	  "integrate only while |error| is at most this many base RTTs" },
	{ "i_tau", CC_P_DOUBLE, offsetof(struct idcc_params, i_tau_rtts), 40, 0, 1e6, 0,
	  "integral leak time constant in base RTTs; 0 = no leak" },
	{ "d_tau", CC_P_DOUBLE, offsetof(struct idcc_params, d_tau_rtts), 0.5, 0, 1000,
	  CC_P_MIN_OPEN, "derivative filter time constant in base RTTs" },
	{ "interval", CC_P_TIME, offsetof(struct idcc_params, interval_ns), 0, 0, 1e10, 0,
	  "control interval in ns; 0 = one base RTT" },
	{ "max_inc", CC_P_DOUBLE, offsetof(struct idcc_params, max_inc), 0.25, 0, 10, CC_P_MIN_OPEN,
	  "largest rate increase per step, as a fraction of the rate" },
	{ "max_dec", CC_P_DOUBLE, offsetof(struct idcc_params, max_dec), 0.5, 0, 1,
	  CC_P_MIN_OPEN | CC_P_MAX_OPEN, "largest rate decrease per step, as a fraction" },
	{ "min_rate", CC_P_RATE, offsetof(struct idcc_params, min_rate_bps), 0, 0, 1e13, 0,
	  "lowest rate in bits/s; 0 = line / 1000" },
	{ "ai", CC_P_RATE, offsetof(struct idcc_params, ai_bps), 0, 0, 1e13, 0,
	  "additive increase per step in bits/s (fairness); 0 = line / 1000" },
	{ "init_rate", CC_P_RATE, offsetof(struct idcc_params, init_rate_bps), 0, 0, 1e13, 0,
	  "first rate in bits/s; 0 = line rate" },
	{ .name = NULL },
};

/* Parameters resolved against the path: every 0 = derived replaced, times in ns. */
struct idcc_cfg {
	double q_target_bytes;    /* 0: derived per hop from q_frac */
	double q_frac;
	double dc_rtt_ns;
	double rtt_target_ns;
	struct idcc_gains gains[IDCC_LOOPS];
	bool enabled[IDCC_LOOPS];
	double i_max;
	double i_band;
	double i_tau_ns;  /* 0 = no leak */
	double d_tau_ns;
	qp_time_ns interval_ns;
	double max_inc, max_dec;
	qp_rate_bps min_rate_bps, ai_bps;
};

struct idcc_loop {
	bool has_sample;
	bool fresh;        /* a sample since the last control step */
	qp_time_ns last_ns;
	double e;          /* latest error, base RTTs */
	double e_f;        /* low-passed error, for the derivative */
	double integ;      /* I term, already times ki */
	double deriv;      /* D term, already times kd */
	double delay_ns;   /* feedback delay of the loop: T for INT, the latest RTT */
};

struct idcc_stats {
	uint64_t steps;              /* control steps that changed or kept the rate */
	uint64_t holds;              /* steps skipped: no new sample */
	uint64_t ruled[IDCC_LOOPS];  /* steps each loop decided */
	uint64_t windup_clamps;      /* integral updates cut by the i_max bound */
	uint64_t samples[IDCC_LOOPS];/* samples each loop took (INT reports, RTT samples) */
};

struct idcc_state {
	struct cc cc; /* first: the public part */
	struct idcc_cfg cfg;
	struct idcc_loop loop[IDCC_LOOPS];
	int ruler;    /* loop that decided the last step, -1 before the first */
	bool has_int;             /* an INT report came */
	double int_delay_ns;      /* queueing the latest INT report accounts for */
	qp_time_ns int_ns;        /* when it came; int_delay_ns counts while fresh */
	qp_time_ns next_step_ns;
	struct idcc_stats stats;
};

static struct idcc_state *to_idcc(struct cc *cc)
{
	return (struct idcc_state *)cc;
}

static bool gains_on(const struct idcc_gains *g)
{
	return g->kp > 0 || g->ki > 0 || g->kd > 0;
}

static qp_rate_bps or_derived(qp_rate_bps v, qp_rate_bps derived)
{
	return v ? v : derived;
}

static const struct cc_rate_field idcc_line_capped[] = {
	{ "min_rate", offsetof(struct idcc_params, min_rate_bps) },
	{ "ai", offsetof(struct idcc_params, ai_bps) },
	{ "init_rate", offsetof(struct idcc_params, init_rate_bps) },
};

static int idcc_check(const void *params, const struct cc_path *path, char *err, size_t errlen)
{
	const struct idcc_params *p = params;
	qp_rate_bps min_rate = or_derived(p->min_rate_bps, path->line_bps / 1000);

	if (cc_check_rates_le_line("idcc", params, idcc_line_capped,
				   sizeof(idcc_line_capped) / sizeof(idcc_line_capped[0]), path, err,
				   errlen))
		return -EINVAL;
	if (p->rtt_target_ns && p->rtt_target_ns <= path->base_rtt_ns) {
		snprintf(err, errlen, "idcc: rtt_target=%lluns must be above the base RTT %lluns "
			 "(or 0 = 1.5 base RTTs)", (unsigned long long)p->rtt_target_ns,
			 (unsigned long long)path->base_rtt_ns);
		return -EINVAL;
	}
	if (!gains_on(&p->gains[IDCC_Q]) && !gains_on(&p->gains[IDCC_RTT])) {
		snprintf(err, errlen, "idcc: kp_q, ki_q, kd_q, kp_rtt, ki_rtt and kd_rtt are all 0: "
			 "at least one loop needs a gain above 0");
		return -EINVAL;
	}
	if (p->init_rate_bps && p->init_rate_bps < min_rate) {
		snprintf(err, errlen, "idcc: init_rate=%llu is below min_rate %llu bits/s "
			 "(0 = line rate)", (unsigned long long)p->init_rate_bps,
			 (unsigned long long)min_rate);
		return -EINVAL;
	}
	return 0;
}

static void idcc_resolve(struct idcc_cfg *c, const struct idcc_params *p, const struct cc_path *path)
{
	double t_ns = (double)path->base_rtt_ns;

	c->q_target_bytes = (double)p->q_target_bytes;
	c->q_frac = p->q_frac;
	c->dc_rtt_ns = (double)p->dc_rtt_ns;
	c->rtt_target_ns = p->rtt_target_ns ? (double)p->rtt_target_ns : 1.5 * t_ns;
	for (int l = 0; l < IDCC_LOOPS; l++) {
		c->gains[l] = p->gains[l];
		c->enabled[l] = gains_on(&p->gains[l]);
	}
	c->i_max = p->i_max;
	c->i_band = p->i_band_rtts;
	c->i_tau_ns = p->i_tau_rtts * t_ns;
	c->d_tau_ns = p->d_tau_rtts * t_ns;
	c->interval_ns = p->interval_ns ? p->interval_ns : path->base_rtt_ns;
	c->max_inc = p->max_inc;
	c->max_dec = p->max_dec;
	c->min_rate_bps = or_derived(p->min_rate_bps, path->line_bps / 1000);
	c->ai_bps = or_derived(p->ai_bps, path->line_bps / 1000);
}

static void idcc_init(struct cc *cc, const void *params, qp_time_ns now)
{
	struct idcc_state *st = to_idcc(cc);
	const struct idcc_params *p = params;

	idcc_resolve(&st->cfg, p, &cc->path);
	cc->rate_bps = or_derived(p->init_rate_bps, cc->path.line_bps);
	st->ruler = -1;
	st->next_step_ns = now + st->cfg.interval_ns;
	cc->timer_ns = QP_TIME_NEVER; /* armed by the first sample */
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* May loop @l's integral move in the direction of @e? (conditional integration) */
static bool may_integrate(const struct idcc_state *st, int l, double e)
{
	if (e < 0)
		return st->cc.rate_bps < st->cc.path.line_bps && (st->ruler < 0 || st->ruler == l);
	return e == 0 || st->cc.rate_bps > st->cfg.min_rate_bps;
}

/* One sample of loop @l's error @e (base RTTs) at @now: update I and D. */
static void loop_sample(struct idcc_state *st, int l, double e, double delay_ns, qp_time_ns now)
{
	const struct idcc_cfg *c = &st->cfg;
	const struct idcc_gains *g = &c->gains[l];
	struct idcc_loop *lp = &st->loop[l];
	double t_ns = (double)st->cc.path.base_rtt_ns;
	double dt, integ;

	if (!lp->has_sample) {
		lp->has_sample = true;
		lp->e_f = e;
	} else {
		dt = (double)qp_time_since(now, lp->last_ns);
		if (dt > (double)c->interval_ns)
			dt = (double)c->interval_ns;
		lp->deriv = g->kd * t_ns * (e - lp->e_f) / (c->d_tau_ns + dt);
		lp->e_f += (e - lp->e_f) * dt / (c->d_tau_ns + dt);
		integ = lp->integ;
		if (e >= -c->i_band && e <= c->i_band && may_integrate(st, l, e))
			integ += g->ki * e * dt / t_ns;
		if (c->i_tau_ns > 0)
			integ *= c->i_tau_ns / (c->i_tau_ns + dt);
		if (integ > c->i_max || integ < -c->i_max)
			st->stats.windup_clamps++;
		lp->integ = clamp(integ, -c->i_max, c->i_max);
	}
	lp->e = e;
	lp->delay_ns = delay_ns;
	lp->last_ns = now;
	lp->fresh = true;
	st->stats.samples[l]++;
}

static bool loop_counts(const struct idcc_state *st, int l, qp_time_ns now)
{
	const struct idcc_loop *lp = &st->loop[l];

	return st->cfg.enabled[l] && lp->has_sample &&
	       qp_time_since(now, lp->last_ns) <= IDCC_STALE_INTERVALS * st->cfg.interval_ns;
}

static unsigned idcc_step(struct idcc_state *st, qp_time_ns now)
{
	const struct idcc_cfg *c = &st->cfg;
	struct cc *cc = &st->cc;
	bool fresh = false;
	double y = 0, g, rate;
	int ruler = -1;

	for (int l = 0; l < IDCC_LOOPS; l++) {
		const struct idcc_loop *lp = &st->loop[l];
		double yl;

		if (!loop_counts(st, l, now))
			continue;
		yl = (c->gains[l].kp * lp->e + lp->integ + lp->deriv) * (double)c->interval_ns /
		     lp->delay_ns;
		fresh |= lp->fresh;
		if (ruler < 0 || yl > y) {
			y = yl;
			ruler = l;
		}
	}
	if (!fresh) {
		st->stats.holds++;
		cc->timer_ns = QP_TIME_NEVER;
		return 0;
	}
	g = clamp(y, -c->max_inc, c->max_dec);
	rate = (double)cc->rate_bps * (1 - g) + (double)c->ai_bps;
	cc->rate_bps = cc_clamp_rate(rate, c->min_rate_bps, cc->path.line_bps);
	for (int l = 0; l < IDCC_LOOPS; l++)
		st->loop[l].fresh = false;
	st->ruler = ruler;
	st->stats.steps++;
	st->stats.ruled[ruler]++;
	st->next_step_ns = now + c->interval_ns;
	cc->timer_ns = st->next_step_ns;
	return CC_ACT_RATE;
}

/* After a sample: step when the interval is over, else make sure the timer will. */
static unsigned idcc_after_sample(struct idcc_state *st, qp_time_ns now)
{
	if (now >= st->next_step_ns)
		return idcc_step(st, now);
	st->cc.timer_ns = st->next_step_ns;
	return 0;
}

/* Hop @h's queue target in bytes: the same queueing delay at every hop (or q_target). */
static double hop_target(const struct idcc_cfg *c, const struct qp_int_hop *h, uint32_t mtu)
{
	double qt = c->q_frac * (double)h->link_bps * c->dc_rtt_ns / 8e9;

	if (c->q_target_bytes > 0)
		return c->q_target_bytes;
	return qt > mtu ? qt : mtu;
}

static unsigned idcc_on_int(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct idcc_state *st = to_idcc(cc);
	const struct cc_int_report *r = &ev->u.int_report;
	double t_ns = (double)cc->path.base_rtt_ns, d_ns = st->cfg.dc_rtt_ns;
	double e = 0, delay = 0;

	/* cc_event rejects reports with no hop or a zero link rate before they get here. */
	for (unsigned i = 0; i < r->nhops; i++) {
		const struct qp_int_hop *h = &r->hops[i];
		double qd_ns = (double)h->qlen_bytes * 8e9 / (double)h->link_bps;
		double eh = qd_ns / d_ns - hop_target(&st->cfg, h, cc->path.mtu_bytes) * 8e9 /
			    ((double)h->link_bps * d_ns);

		delay += qd_ns;
		if (i == 0 || eh > e)
			e = eh;
	}
	st->has_int = true;
	st->int_delay_ns = delay;
	st->int_ns = now;
	if (!st->cfg.enabled[IDCC_Q])
		return 0;
	loop_sample(st, IDCC_Q, e, t_ns, now);
	return idcc_after_sample(st, now);
}

static unsigned idcc_on_rtt(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct idcc_state *st = to_idcc(cc);
	double t_ns = (double)cc->path.base_rtt_ns;
	double rtt_ns = (double)ev->u.rtt.rtt_ns, wan_ns = rtt_ns;
	bool int_fresh = st->has_int && qp_time_since(now, st->int_ns) <=
					       IDCC_STALE_INTERVALS * st->cfg.interval_ns;

	if (!st->cfg.enabled[IDCC_RTT])
		return 0;
	/* The WAN part: what INT accounts for is the queue loop's. */
	if (int_fresh)
		wan_ns = rtt_ns > st->int_delay_ns ? rtt_ns - st->int_delay_ns : 0;
	/* An RTT sample is as old as the RTT: that, not T, is this loop's feedback delay. */
	loop_sample(st, IDCC_RTT, (wan_ns - st->cfg.rtt_target_ns) / t_ns,
		    rtt_ns > t_ns ? rtt_ns : t_ns, now);
	return idcc_after_sample(st, now);
}

static unsigned idcc_on_timer(struct cc *cc, qp_time_ns now)
{
	struct idcc_state *st = to_idcc(cc);

	if (now < st->next_step_ns)
		return 0;
	return idcc_step(st, now);
}

#define IDCC_C(name, f, doc) { name, offsetof(struct idcc_state, stats.f), doc }
static const struct cc_counter idcc_counters[] = {
	IDCC_C("int_samples", samples[IDCC_Q], "INT reports the queue loop took"),
	IDCC_C("rtt_samples", samples[IDCC_RTT], "RTT samples the RTT loop took"),
	IDCC_C("steps", steps, "control steps (one per interval with a new sample)"),
	IDCC_C("int_steps", ruled[IDCC_Q], "steps the queue loop decided"),
	IDCC_C("rtt_steps", ruled[IDCC_RTT], "steps the RTT loop decided"),
	IDCC_C("holds", holds, "intervals without a new sample: the rate held"),
	{ .name = NULL },
};

const struct cc_ops cc_idcc_ops = {
	.name = "idcc",
	.summary = "two PID loops (INT queue, RTT); the more congested one scales the rate",
	.params = idcc_params_table,
	.params_size = sizeof(struct idcc_params),
	.state_size = sizeof(struct idcc_state),
	.check = idcc_check,
	.init = idcc_init,
	.on = {
		[CC_EV_INT] = idcc_on_int,
		[CC_EV_RTT] = idcc_on_rtt,
	},
	.on_timer = idcc_on_timer,
	.counters = idcc_counters,
};
