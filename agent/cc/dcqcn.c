/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* dcqcn: DCQCN's reaction point, the Mellanox (CX4+) variant as HPCC's ns-3 code implements
 * it (alibaba-edu/High-Precision-Congestion-Control, simulation/src/point-to-point/model/
 * rdma-hw.cc, CC_MODE 1; Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015). Input: CNPs for this QP (CC_EV_CNP). Time-based only: no byte counter.
 *
 *   first CNP at t0:  alpha = 1; target = R; R = max(R_min, R(1 - alpha/2));
 *                     the alpha, decrease and increase timers start from t0
 *   alpha timer, every T_alpha:  alpha = (1-g) alpha + g   if a CNP arrived in the period
 *                                alpha = (1-g) alpha       otherwise
 *   decrease check, every T_dec, only if a CNP arrived since the last check:
 *                     target = R            (when clamp_target, or when stage != 0)
 *                     R = max(R_min, R(1 - alpha/2)); stage = 0; restart the increase timer
 *   increase timer, every T_inc:
 *                     stage <  F: fast recovery   R = (R + target)/2
 *                     stage == F: additive        target = min(line, target + R_AI);  R = (R + target)/2
 *                     stage >  F: hyper           target = min(line, target + R_HAI); R = (R + target)/2
 *                     stage++
 *   At one instant the alpha update runs first, then the decrease check (which cancels an
 *   increase tick due at the same ns), as ns-3 orders them (its decrease timer runs 1 ns
 *   after the alpha timer).
 *
 * Where this differs from ns-3: ns-3 multiplies the rate by RateOnFirstCnp (1.0) on the
 * first CNP and makes the cut at the first decrease check T_dec later, with alpha already
 * decayed to (1-g)^(T_dec/T_alpha) (a cut to 0.508 R with the defaults). Here the first CNP
 * cuts at once with alpha = 1 (to 0.5 R) and counts as that check's CNP, so the check at
 * t0 + T_dec cuts again only if another CNP came.
 *
 * Late timers. A real-time agent may run cc_timer milliseconds late while T_alpha is 1 us,
 * so no work is proportional to the periods missed:
 *  - alpha is kept lazily on its own grid t0 + k T_alpha: k elapsed periods are applied
 *    at once, the first with the CNP flag of its period and the k-1 idle ones as
 *    alpha (1-g)^(k-1) (pow). alpha is only read by a cut, so its grid never enters
 *    cc->timer_ns; a CNP first brings alpha up to its arrival time, then sets the flag.
 *  - the decrease check is armed only while a CNP is pending, on the grid t0 + k T_dec.
 *  - k increase periods are applied per phase in closed form: with target growing by s
 *    per period and R = (R + target)/2, the gap target - R becomes s + (gap - s)/2^k
 *    (s = 0 in fast recovery); once the target meets the line rate the gap halves each
 *    period. At most three phases, so a call costs O(1) however late it is.
 *  - the increase timer stops once R == target == line rate (R snaps to the line rate when
 *    less than 1 bit/s below it): further periods would change nothing. A flow that is
 *    back at line rate therefore has cc->timer_ns == QP_TIME_NEVER.
 * cc_event first runs every timer due at or before its time, so the order in which the
 * shell calls cc_event and cc_timer does not matter.
 *
 * Parameters (defaults as HPCC's run.py --cc dcqcn; bw = line rate in Gb/s):
 *   g             alpha gain, (0, 1], default 1/256
 *   t_alpha       alpha update period T_alpha, ns, [1 ns, 1 s], default 1 us
 *   t_dec         rate-decrease check period T_dec, ns, [1 ns, 1 s], default 4 us
 *   t_inc         increase timer T_inc (RP timer), ns, [1 ns, 10 s], default 300 us
 *   f             fast-recovery periods F, [0, 1000], default 1
 *   rate_ai       additive step R_AI, bits/s, <= line; 0 = line*5/25000 (5*bw/25 Mb/s,
 *                 20 Mb/s at 100G), default 0
 *   rate_hai      hyper step R_HAI, bits/s, <= line; 0 = line*50/25000 (200 Mb/s at 100G),
 *                 default 0
 *   min_rate      floor R_min, bits/s, <= line; 0 = line/100 (1 Gb/s at 100G), default 0
 *   clamp_target  1: every cut sets target = R; 0: only when stage != 0, [0, 1], default 0
 *                 (run.py's config template writes CLAMP_TARGET_RATE 0 for every cc, dcqcn
 *                 included: alibaba-edu/High-Precision-Congestion-Control simulation/run.py;
 *                 rdma-hw.cc sets the target on a cut only if m_EcnClampTgtRate or
 *                 rpTimeStage != 0)
 *   init_rate     first rate, bits/s, <= line, >= min_rate (refused below); 0 = line rate (the
 *                 reference's start), default 0. Below the line the flow starts as if just
 *                 cut: target at the line and the increase timer running, so without CNPs
 *                 it is back at the line within a few t_inc. A deviation from the
 *                 reference's line-rate start, for senders that cannot take back what they
 *                 commit before the first CNP (qpaced --wire-start: the tc program stamps
 *                 a discovered flow's first frames before any feedback is back); in
 *                 closed loop: test_loop_dcqcn.c test_init_rate_first_rtts
 *
 * Measured, on the real switch in virtual time (test_loop_dcqcn.c, the switch's early
 * notice at 16 KiB, one per flow per 50 us, standing in for the CNP): two flows are fair
 * with a 0.38 BDP queue, but a 16 -> 1 overflows a 1 MB buffer as `none` does (2372
 * drops in 20 ms): the stand-in is not the source's notification point.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "cc_algs.h"
#include "cc_check.h"
#include "dcqcn.h"

struct dcqcn_params {
	double g;
	qp_time_ns t_alpha;
	qp_time_ns t_dec;
	qp_time_ns t_inc;
	uint32_t f;
	qp_rate_bps rate_ai;
	qp_rate_bps rate_hai;
	qp_rate_bps min_rate;
	uint32_t clamp_target;
	qp_rate_bps init_rate;
};

#define DCQCN_P(field) offsetof(struct dcqcn_params, field)
#define DCQCN_MIN_DIVISOR 100u   /* default min_rate = line / 100 */

static const struct cc_param dcqcn_params_table[] = {
	{ "g", CC_P_DOUBLE, DCQCN_P(g), 1.0 / 256, 0, 1, CC_P_MIN_OPEN,
	  "alpha EWMA gain" },
	{ "t_alpha", CC_P_TIME, DCQCN_P(t_alpha), 1e3, 1, 1e9, 0,
	  "alpha update period, ns" },
	{ "t_dec", CC_P_TIME, DCQCN_P(t_dec), 4e3, 1, 1e9, 0,
	  "rate-decrease check period, ns" },
	{ "t_inc", CC_P_TIME, DCQCN_P(t_inc), 300e3, 1, 1e10, 0,
	  "rate-increase timer period, ns" },
	{ "f", CC_P_U32, DCQCN_P(f), 1, 0, 1000, 0,
	  "fast-recovery periods before additive increase" },
	{ "rate_ai", CC_P_RATE, DCQCN_P(rate_ai), 0, 0, 1e13, 0,
	  "additive increase step, bits/s; 0 = line*5/25000" },
	{ "rate_hai", CC_P_RATE, DCQCN_P(rate_hai), 0, 0, 1e13, 0,
	  "hyper increase step, bits/s; 0 = line*50/25000" },
	{ "min_rate", CC_P_RATE, DCQCN_P(min_rate), 0, 0, 1e13, 0,
	  "rate floor, bits/s; 0 = line/100" },
	{ "clamp_target", CC_P_U32, DCQCN_P(clamp_target), 0, 0, 1, 0,
	  "1: each cut sets target = rate; 0: only when stage != 0" },
	{ "init_rate", CC_P_RATE, DCQCN_P(init_rate), 0, 0, 1e13, 0,
	  "first rate, bits/s, at least min_rate, recovering to the line; 0 = line rate" },
	{ .name = NULL },
};

struct dcqcn {
	struct cc cc;             /* first: the public part */
	struct dcqcn_params p;    /* zero defaults resolved against the line rate */
	bool started;             /* first CNP seen */
	bool alpha_cnp;           /* a CNP arrived in the current alpha period */
	bool dec_cnp;             /* a CNP arrived since the last decrease check */
	double alpha;
	double rate;              /* bits/s; cc.rate_bps is this, truncated */
	double target;            /* bits/s */
	uint32_t stage;
	qp_time_ns alpha_next_ns; /* next alpha tick (kept lazily, not in cc.timer_ns) */
	qp_time_ns dec_next_ns;   /* next decrease check; armed while dec_cnp */
	qp_time_ns inc_next_ns;   /* next increase tick, QP_TIME_NEVER when stopped */
	struct cc_dcqcn_stats stats;
};

static struct dcqcn *to_dcqcn(struct cc *cc)
{
	return (struct dcqcn *)((char *)cc - offsetof(struct dcqcn, cc));
}

/* ---- check ---- */

/* Rates that may not exceed the line rate (0 means a default below it). */
static const struct cc_rate_field dcqcn_line_capped[] = {
	{ "rate_ai", DCQCN_P(rate_ai) },
	{ "rate_hai", DCQCN_P(rate_hai) },
	{ "min_rate", DCQCN_P(min_rate) },
	{ "init_rate", DCQCN_P(init_rate) },
};

static int dcqcn_check(const void *params, const struct cc_path *path, char *err,
		       size_t errlen)
{
	const struct dcqcn_params *p = params;
	int rc = cc_check_rates_le_line("dcqcn", params, dcqcn_line_capped,
					sizeof(dcqcn_line_capped) / sizeof(dcqcn_line_capped[0]),
					path, err, errlen);

	return rc ? rc : cc_check_init_rate("dcqcn", p->init_rate, p->min_rate,
					    DCQCN_MIN_DIVISOR, path, err, errlen);
}

/* ---- timers, each applied in closed form ---- */

static uint32_t stage_add(uint32_t stage, uint64_t n)
{
	return n >= (uint64_t)(UINT32_MAX - stage) ? UINT32_MAX : stage + (uint32_t)n;
}

/* 2^-n, exactly 0 once it underflows. */
static double halvings(uint64_t n)
{
	return n >= 2000 ? 0.0 : ldexp(1.0, -(int)n);
}

/* @n increase periods in which the target grows by @step_bps (capped at the line rate)
 * and R = (R + target)/2 each period. Uncapped: gap' = (gap + s)/2, so
 * gap_n = s + (gap_0 - s) 2^-n. From the period that meets the cap on, target = line and
 * line - R halves each period. */
static void dcqcn_grow(struct dcqcn *d, uint64_t n, double step_bps)
{
	double line = (double)d->cc.path.line_bps;
	uint64_t free_n = n;
	double gap;

	if (step_bps > 0 && (line - d->target) / step_bps < (double)n) {
		double room = (line - d->target) / step_bps;
		free_n = room > 0 ? (uint64_t)room : 0;
	}
	gap = step_bps + (d->target - d->rate - step_bps) * halvings(free_n);
	d->target = fmin(line, d->target + step_bps * (double)free_n);
	d->rate = d->target - gap;
	if (free_n < n) {
		d->rate = line - (line - d->rate) * halvings(n - free_n);
		d->target = line;
	}
	if (d->target == line && line - d->rate < 1.0)
		d->rate = line;
}

enum dcqcn_phase { DCQCN_FAST_RECOVERY, DCQCN_ADDITIVE, DCQCN_HYPER };

static enum dcqcn_phase dcqcn_phase_of(const struct dcqcn *d)
{
	if (d->stage < d->p.f)
		return DCQCN_FAST_RECOVERY;
	return d->stage == d->p.f ? DCQCN_ADDITIVE : DCQCN_HYPER;
}

/* Apply @n increase periods: at most one pass per phase. */
static void dcqcn_inc_periods(struct dcqcn *d, uint64_t n)
{
	while (n) {
		const double step_bps[] = {
			[DCQCN_FAST_RECOVERY] = 0,
			[DCQCN_ADDITIVE] = (double)d->p.rate_ai,
			[DCQCN_HYPER] = (double)d->p.rate_hai,
		};
		const uint64_t left[] = {
			[DCQCN_FAST_RECOVERY] = (uint64_t)(d->p.f - d->stage),
			[DCQCN_ADDITIVE] = 1,
			[DCQCN_HYPER] = UINT64_MAX,
		};
		enum dcqcn_phase ph = dcqcn_phase_of(d);
		uint64_t take = n < left[ph] ? n : left[ph];

		dcqcn_grow(d, take, step_bps[ph]);
		d->stage = stage_add(d->stage, take);
		n -= take;
	}
}

/* Periods of @period_ns due at or before @t on a grid whose next point is @next. */
static uint64_t periods_due(qp_time_ns next, qp_time_ns period_ns, qp_time_ns t)
{
	return next > t ? 0 : (t - next) / period_ns + 1;
}

static void dcqcn_inc_advance(struct dcqcn *d, qp_time_ns t)
{
	uint64_t n = periods_due(d->inc_next_ns, d->p.t_inc, t);
	qp_rate_bps line = d->cc.path.line_bps;

	if (n == 0)
		return;
	d->inc_next_ns += n * d->p.t_inc;
	d->stats.inc_ticks += n;
	if (n > 1)
		d->stats.catch_ups++;
	dcqcn_inc_periods(d, n);
	if (d->rate == (double)line && d->target == (double)line)
		d->inc_next_ns = QP_TIME_NEVER;
}

static void dcqcn_alpha_advance(struct dcqcn *d, qp_time_ns t)
{
	uint64_t n = d->started ? periods_due(d->alpha_next_ns, d->p.t_alpha, t) : 0;
	double keep = 1.0 - d->p.g;

	if (n == 0)
		return;
	d->alpha = keep * d->alpha + (d->alpha_cnp ? d->p.g : 0.0);
	d->alpha *= pow(keep, (double)(n - 1));
	d->alpha_cnp = false;
	d->alpha_next_ns += n * d->p.t_alpha;
	d->stats.alpha_ticks += n;
}

static void dcqcn_cut(struct dcqcn *d, qp_time_ns t, bool clamp)
{
	double floor_bps = (double)d->p.min_rate;

	if (clamp)
		d->target = d->rate;
	d->rate *= 1.0 - d->alpha / 2;
	if (d->rate <= floor_bps) {
		d->rate = floor_bps;
		d->stats.floor_hits++;
	}
	d->stage = 0;
	d->inc_next_ns = t + d->p.t_inc;
	d->stats.decreases++;
}

/* Run everything due at or before @t, in time order. At most one decrease is pending (CNPs
 * arrive through cc_event, which calls this first), so no loop is needed. */
static void dcqcn_run_until(struct dcqcn *d, qp_time_ns t)
{
	if (d->dec_cnp && d->dec_next_ns <= t) {
		qp_time_ns td = d->dec_next_ns;

		dcqcn_inc_advance(d, td - 1);
		dcqcn_alpha_advance(d, td);
		d->dec_cnp = false;
		dcqcn_cut(d, td, d->p.clamp_target || d->stage != 0);
		d->dec_next_ns = td + d->p.t_dec;
	}
	dcqcn_inc_advance(d, t);
	dcqcn_alpha_advance(d, t);
}

static unsigned dcqcn_publish(struct dcqcn *d)
{
	d->cc.rate_bps = cc_clamp_rate(d->rate, d->p.min_rate, d->cc.path.line_bps);
	d->cc.timer_ns = qp_time_min(d->inc_next_ns, d->dec_cnp ? d->dec_next_ns : QP_TIME_NEVER);
	return CC_ACT_RATE;
}

/* ---- handlers ---- */

static void dcqcn_init(struct cc *cc, const void *params, qp_time_ns now)
{
	struct dcqcn *d = to_dcqcn(cc);
	qp_rate_bps line = cc->path.line_bps;

	d->p = *(const struct dcqcn_params *)params;
	if (!d->p.rate_ai)
		d->p.rate_ai = line * 5 / 25000 ? line * 5 / 25000 : 1;
	if (!d->p.rate_hai)
		d->p.rate_hai = line * 50 / 25000 ? line * 50 / 25000 : 1;
	if (!d->p.min_rate)
		d->p.min_rate = line / DCQCN_MIN_DIVISOR ? line / DCQCN_MIN_DIVISOR : 1;
	d->alpha = 1.0;
	d->rate = (double)line;
	d->target = (double)line;
	d->alpha_next_ns = QP_TIME_NEVER;
	d->dec_next_ns = QP_TIME_NEVER;
	d->inc_next_ns = QP_TIME_NEVER;
	if (d->p.init_rate && d->p.init_rate < line) {
		/* as if just cut: the increase timer brings it back towards the line */
		d->rate = (double)cc_clamp_rate((double)d->p.init_rate, d->p.min_rate, line);
		d->inc_next_ns = now + d->p.t_inc;
	}
	dcqcn_publish(d);
}

static unsigned dcqcn_on_cnp(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct dcqcn *d = to_dcqcn(cc);
	(void)ev;

	dcqcn_run_until(d, now);
	d->stats.cnps++;
	if (!d->started) {
		d->started = true;
		d->alpha = 1.0;
		d->alpha_next_ns = now + d->p.t_alpha;
		d->dec_next_ns = now + d->p.t_dec;
		dcqcn_cut(d, now, true);
		return dcqcn_publish(d);
	}
	d->alpha_cnp = true;
	if (!d->dec_cnp) {
		/* The first check strictly after now: one due at now already ran. */
		d->dec_next_ns += periods_due(d->dec_next_ns, d->p.t_dec, now) * d->p.t_dec;
		d->dec_cnp = true;
	}
	return dcqcn_publish(d);
}

static unsigned dcqcn_on_timer(struct cc *cc, qp_time_ns now)
{
	struct dcqcn *d = to_dcqcn(cc);

	dcqcn_run_until(d, now);
	return dcqcn_publish(d);
}

int cc_dcqcn_view(const struct cc *cc, qp_time_ns now, struct cc_dcqcn_view *out)
{
	struct dcqcn d;

	if (!cc || cc->ops != &cc_dcqcn_ops || !out)
		return -EINVAL;
	memcpy(&d, (const char *)cc - offsetof(struct dcqcn, cc), sizeof(d));
	dcqcn_run_until(&d, now);
	out->started = d.started;
	out->alpha = d.alpha;
	out->rate_bps = d.rate;
	out->target_bps = d.target;
	out->stage = d.stage;
	out->stats = d.stats;
	return 0;
}

const struct cc_ops cc_dcqcn_ops = {
	.name = "dcqcn",
	.summary = "DCQCN reaction point (Mellanox variant, as HPCC's ns-3): alpha, cut on CNP, "
		   "fast recovery, additive and hyper increase",
	.params = dcqcn_params_table,
	.params_size = sizeof(struct dcqcn_params),
	.state_size = sizeof(struct dcqcn),
	.check = dcqcn_check,
	.init = dcqcn_init,
	.on = { [CC_EV_CNP] = dcqcn_on_cnp },
	.on_timer = dcqcn_on_timer,
	/* The reference's marking (HPCC's config.txt / run.py at 25G: Kmin 100 KB, Kmax
	 * 400 KB, Pmax 0.2, scaled with the rate), at dequeue; the receivers' NP turns
	 * marks into CNPs, at most one per QP per 50 us. The notice values are for a
	 * network without marking (one notice per flow per 50 us above 16 KiB). */
	.feedback = { .notice_bytes = 16 * 1024, .notice_interval_ns = 50 * QP_NS_PER_US,
		      .ecn_kmin_bytes = 100000, .ecn_kmax_bytes = 400000, .ecn_pmax = 0.2,
		      .ecn_at_bps = 25 * QP_GBPS },
};
