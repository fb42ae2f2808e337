/* ffd: the sender side of FFD, from FFDTCP's multi-level congestion feedback. No public
 * source of FFDTCP was found (references.md §3); the rules below are qpace's reading of its
 * design as DESIGN.md gives it.
 *
 * The switch compares its egress queue with RED-style thresholds min < mid < max and sends
 * the sender a 3-bit congestion level when the level changes (CC_EV_LEVEL; cc.c rejects
 * anything but 0..3):
 *
 *   level 0  (000, queue < min)       increase  R = min(line, R + R_AI)
 *   level 1  (001, min <= queue < mid) hold      R unchanged
 *   level 2  (010, mid <= queue < max) decrease  R = max(R_min, R * down)    (x0.75)
 *   level 3  (011, queue >= max)       severe    R = max(R_min, R * severe)  (x0.5)
 *
 * The switch repeats a level until the sender acknowledges it with level 7 (111). Rules:
 *  - A new level (different from the current one) applies its action at once and returns
 *    CC_ACT_ACK_LEVEL with cc->level_to_ack = that level; the shell sends 7 for it.
 *  - The current level received again (the switch repeated it before our ack arrived)
 *    changes nothing, but is acknowledged again (CC_ACT_ACK_LEVEL) so the switch stops.
 *  - While a level persists, its action is re-applied once per base RTT T (the path's
 *    base_rtt_ns), counted from when the level was entered: congestion that persists keeps
 *    cutting, free capacity keeps being probed. Level 1 holds and runs no timer.
 *  - A cc_timer k periods late applies the action k times in closed form (R + k R_AI,
 *    R down^k), so a late call costs O(1). The timer stops once the action no longer
 *    changes the rate (at line rate, or at R_min), so a settled QP has no timer.
 *  - Every event first runs the re-applications due at or before its time.
 *
 * Parameters:
 *   rate_ai   additive step R_AI, bits/s, <= line; 0 = line/100 (1 Gb/s at 100G), default 0
 *   down      level-2 factor, (0, 1), default 0.75
 *   severe    level-3 factor, (0, 1), <= down, default 0.5
 *   min_rate  floor R_min, bits/s, <= line; 0 = line/1000 (100 Mb/s at 100G), default 0
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cc_algs.h"
#include "cc_check.h"
#include "ffd.h"

struct ffd_params {
	qp_rate_bps rate_ai;
	double down;
	double severe;
	qp_rate_bps min_rate;
};

#define FFD_P(field) offsetof(struct ffd_params, field)

static const struct cc_param ffd_params_table[] = {
	{ "rate_ai", CC_P_RATE, FFD_P(rate_ai), 0, 0, 1e13, 0,
	  "level-0 additive step per RTT, bits/s; 0 = line/100" },
	{ "down", CC_P_DOUBLE, FFD_P(down), 0.75, 0, 1, CC_P_MIN_OPEN | CC_P_MAX_OPEN,
	  "level-2 rate factor per RTT" },
	{ "severe", CC_P_DOUBLE, FFD_P(severe), 0.5, 0, 1, CC_P_MIN_OPEN | CC_P_MAX_OPEN,
	  "level-3 rate factor per RTT, <= down" },
	{ "min_rate", CC_P_RATE, FFD_P(min_rate), 0, 0, 1e13, 0,
	  "rate floor, bits/s; 0 = line/1000" },
	{ .name = NULL },
};

#define FFD_NO_LEVEL (-1)

struct ffd {
	struct cc cc;            /* first: the public part */
	struct ffd_params p;     /* zero defaults resolved against the line rate */
	int level;               /* 0..3, FFD_NO_LEVEL before the first */
	double rate;             /* bits/s; cc.rate_bps is this, truncated */
	qp_time_ns next_ns;      /* next re-application, QP_TIME_NEVER when none */
	struct cc_ffd_stats stats;
};

static struct ffd *to_ffd(struct cc *cc)
{
	return (struct ffd *)((char *)cc - offsetof(struct ffd, cc));
}

/* ---- check ---- */

static const struct cc_rate_field ffd_line_capped[] = {
	{ "rate_ai", FFD_P(rate_ai) },
	{ "min_rate", FFD_P(min_rate) },
};

static int ffd_check(const void *params, const struct cc_path *path, char *err, size_t errlen)
{
	const struct ffd_params *p = params;

	if (p->severe > p->down) {
		if (err && errlen)
			snprintf(err, errlen, "ffd: severe=%g is a smaller cut than down=%g "
				 "(level 3 must cut at least as hard as level 2: severe <= down)",
				 p->severe, p->down);
		return -EINVAL;
	}
	return cc_check_rates_le_line("ffd", params, ffd_line_capped,
				      sizeof(ffd_line_capped) / sizeof(ffd_line_capped[0]),
				      path, err, errlen);
}

/* ---- the level table: each level's action, applied @k times at once ---- */

typedef double (*ffd_action_fn)(const struct ffd *f, double rate, uint64_t k);

static double ffd_increase(const struct ffd *f, double rate, uint64_t k)
{
	return rate + (double)f->p.rate_ai * (double)k;
}

static double ffd_hold(const struct ffd *f, double rate, uint64_t k)
{
	(void)f;
	(void)k;
	return rate;
}

static double ffd_down(const struct ffd *f, double rate, uint64_t k)
{
	return rate * pow(f->p.down, (double)k);
}

static double ffd_severe(const struct ffd *f, double rate, uint64_t k)
{
	return rate * pow(f->p.severe, (double)k);
}

static const struct {
	ffd_action_fn apply;
	bool per_rtt;            /* re-applied every base RTT while the level persists */
} ffd_levels[] = {
	[CC_LEVEL_FREE] = { ffd_increase, true },
	[CC_LEVEL_HOLD] = { ffd_hold, false },
	[CC_LEVEL_DOWN] = { ffd_down, true },
	[CC_LEVEL_SEVERE] = { ffd_severe, true },
};

static double ffd_clamp(const struct ffd *f, double rate)
{
	return fmax((double)f->p.min_rate, fmin((double)f->cc.path.line_bps, rate));
}

/* Apply the current level's action @k times at @t, then arm the next re-application
 * unless the action has stopped changing the rate. */
static void ffd_apply(struct ffd *f, uint64_t k, qp_time_ns t)
{
	ffd_action_fn apply = ffd_levels[f->level].apply;

	f->rate = ffd_clamp(f, apply(f, f->rate, k));
	if (ffd_levels[f->level].per_rtt && ffd_clamp(f, apply(f, f->rate, 1)) != f->rate)
		f->next_ns = t + f->cc.path.base_rtt_ns;
	else
		f->next_ns = QP_TIME_NEVER;
}

/* Re-applications due at or before @t, all at once. */
static void ffd_run_until(struct ffd *f, qp_time_ns t)
{
	qp_time_ns rtt = f->cc.path.base_rtt_ns;
	uint64_t k;

	if (f->next_ns > t)
		return;
	k = (t - f->next_ns) / rtt + 1;
	f->stats.reapplied += k;
	if (k > 1)
		f->stats.catch_ups++;
	ffd_apply(f, k, f->next_ns + (k - 1) * rtt);
}

static unsigned ffd_publish(struct ffd *f, unsigned act)
{
	f->cc.rate_bps = cc_clamp_rate(f->rate, f->p.min_rate, f->cc.path.line_bps);
	f->cc.timer_ns = f->next_ns;
	return act;
}

/* ---- handlers ---- */

static void ffd_init(struct cc *cc, const void *params, qp_time_ns now)
{
	struct ffd *f = to_ffd(cc);
	qp_rate_bps line = cc->path.line_bps;
	(void)now;

	f->p = *(const struct ffd_params *)params;
	if (!f->p.rate_ai)
		f->p.rate_ai = line / 100 ? line / 100 : 1;
	if (!f->p.min_rate)
		f->p.min_rate = line / 1000 ? line / 1000 : 1;
	f->level = FFD_NO_LEVEL;
	f->rate = (double)line;
	f->next_ns = QP_TIME_NEVER;
	ffd_publish(f, 0);
}

static unsigned ffd_on_level(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct ffd *f = to_ffd(cc);

	ffd_run_until(f, now);
	cc->level_to_ack = ev->u.level;
	f->stats.acks++;
	if (ev->u.level == f->level) {
		f->stats.repeats++;
		return ffd_publish(f, CC_ACT_ACK_LEVEL | CC_ACT_RATE);
	}
	f->level = ev->u.level;
	f->stats.entered[f->level]++;
	ffd_apply(f, 1, now);
	return ffd_publish(f, CC_ACT_ACK_LEVEL | CC_ACT_RATE);
}

static unsigned ffd_on_timer(struct cc *cc, qp_time_ns now)
{
	struct ffd *f = to_ffd(cc);

	ffd_run_until(f, now);
	return ffd_publish(f, CC_ACT_RATE);
}

int cc_ffd_view(const struct cc *cc, struct cc_ffd_view *out)
{
	const struct ffd *f;

	if (!cc || cc->ops != &cc_ffd_ops || !out)
		return -EINVAL;
	f = (const struct ffd *)((const char *)cc - offsetof(struct ffd, cc));
	out->level = f->level;
	out->rate_bps = f->rate;
	out->stats = f->stats;
	return 0;
}

const struct cc_ops cc_ffd_ops = {
	.name = "ffd",
	.summary = "FFD multi-level feedback: level 0 increase, 1 hold, 2 x0.75, 3 x0.5, "
		   "acknowledged, re-applied every base RTT while it persists",
	.params = ffd_params_table,
	.params_size = sizeof(struct ffd_params),
	.state_size = sizeof(struct ffd),
	.check = ffd_check,
	.init = ffd_init,
	.on = { [CC_EV_LEVEL] = ffd_on_level },
	.on_timer = ffd_on_timer,
	/* The switch's level thresholds: min, mid and max queue bytes of levels 1..3. */
	.feedback = { .level_bytes = { 8 * 1024, 24 * 1024, 48 * 1024 } },
};
