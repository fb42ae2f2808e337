/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ffd: the sender side of FFDTCP's multi-level congestion feedback (Su, Niu, Shao, "a fast
 * feedback transmission control protocol for datacenter networks"; the source is
 * ../shared/seeds/004_*.txt, whose Table 1 and equations (3)-(5) were images and are
 * missing; its prose gives each level's meaning and reaction, quoted below).
 *
 * The switch compares the RED average queue with minth < midth < maxth (midth halfway)
 * and sends the sender a 3-bit congestion level (CC_EV_LEVEL; cc.c rejects anything but
 * 0..3). The sender's reaction, per the source's section 3.2:
 *
 *   level 0  (000, avg < minth)         "not congested: adjust as standard TCP, per ACK,
 *                                        by eq. (3)": additive increase, R += R_AI per RTT
 *                                        for as long as the level lasts
 *   level 1  (001, minth <= avg < midth) "about to be congested: keep the window": hold
 *   level 2  (010, midth <= avg < maxth) "congested, not yet severely": R = R * k, k = 0.75
 *   level 3  (011, avg >= maxth)         "severely congested: standard TCP, eq. (5)":
 *                                        R = R * 0.5
 *
 * Section 3.3: the sender answers a level with 111 so that the switch stops sending it;
 * the switch sends again only "when the congestion level changes". So a decrease is the
 * reaction to one notification, applied once per level change; it is not repeated while
 * the level lasts (nothing arrives to repeat it). Rules:
 *  - A new level (different from the current one) acts at once and returns
 *    CC_ACT_ACK_LEVEL with cc->level_to_ack = that level; the shell sends 7 for it.
 *  - The current level received again (the switch repeated it before our ack arrived)
 *    changes nothing, but is acknowledged again (CC_ACT_ACK_LEVEL) so the switch stops.
 *  - Level 0's increase runs on, once per base RTT T from when the level was entered (the
 *    per-ACK growth of standard TCP is one MSS per RTT); a cc_timer k periods late applies
 *    it k times in closed form (R + k R_AI), so a late call costs O(1). It stops at the
 *    line rate, so a settled QP has no timer. Every event first runs what is due.
 *  - Decreases (levels 2 and 3) cut at most once per base RTT, as standard TCP reduces
 *    once per window: a decrease level entered within T of the last cut applies only what
 *    it cuts beyond that cut (level 3 after level 2: x0.5/0.75 more; level 2 after level
 *    3: nothing), so a level flapping at a threshold does not cut on every flap.
 *
 * The window. The source adjusts TCP's congestion window, and a window limits what is in
 * flight: a sender that holds its window after a cut cannot grow the queue, so one cut
 * per notification is enough to stop it. qpace paces a rate and caps bytes in flight at
 * W = R * T + MTU - 1 (cc->cap_bytes, as hpcc.c): without the cap a held rate above the
 * bottleneck's share would fill the buffer while the level stays at 3 and no further
 * notification comes (measured in `make demo`, 16 -> 1 at 250 Mb/s: 21,444 drops
 * rate-only, against 680 with the old per-RTT repetition).
 *
 * Deviations, and why: the rate and the window move together (R is paced, W = R * T), so
 * level 0 adds R_AI per RTT instead of one MSS per RTT and levels 2 and 3 scale the rate;
 * R never goes below min_rate.
 *
 * Parameters:
 *   rate_ai   additive step R_AI, bits/s, <= line; 0 = line/100 (1 Gb/s at 100G), default 0
 *   down      level-2 factor k, (0, 1), default 0.75 (the source's "middle value" of
 *             0.5 <= k <= 1)
 *   severe    level-3 factor, (0, 1), <= down, default 0.5 (standard TCP's halving)
 *   min_rate  floor R_min, bits/s, <= line; 0 = line/1000 (100 Mb/s at 100G), default 0
 *
 * Measured, on the real switch in virtual time (test_loop_ffd.c, 16 -> 1 at 10 Gb/s, the
 * switch's levels from the queue a frame joins): no drops and 98% of the link, but one
 * cut per level change leaves 16 flows at 4.73 G with level 3 standing for the whole run
 * and nothing more to act on: the window cap, not the levels, holds the queue, at ~390 KB
 * (7.9 x the top level). The source's senders keep cutting while congestion lasts (TCP's
 * window per RTT); whether to re-apply a standing level is a choice still open.
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
	  "level-2 rate factor, once per level change" },
	{ "severe", CC_P_DOUBLE, FFD_P(severe), 0.5, 0, 1, CC_P_MIN_OPEN | CC_P_MAX_OPEN,
	  "level-3 rate factor, once per level change, <= down" },
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
	qp_time_ns next_ns;      /* next level-0 increase, QP_TIME_NEVER when none */
	qp_time_ns cut_ns;       /* last decrease; meaningful when cut_factor < 1 */
	double cut_factor;       /* the factor cut since cut_ns (1 = no cut yet) */
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

static const struct {
	ffd_action_fn apply;     /* levels 0 and 1 */
	bool per_rtt;            /* runs on every base RTT while the level lasts */
	bool cut;                /* a decrease: at most once per base RTT */
} ffd_levels[] = {
	[CC_LEVEL_FREE] = { ffd_increase, true, false },
	[CC_LEVEL_HOLD] = { ffd_hold, false, false },
	[CC_LEVEL_DOWN] = { NULL, false, true },   /* ffd_cut, with ffd_factor */
	[CC_LEVEL_SEVERE] = { NULL, false, true },
};

static double ffd_factor(const struct ffd *f, int level)
{
	return level == CC_LEVEL_SEVERE ? f->p.severe : f->p.down;
}

static double ffd_clamp(const struct ffd *f, double rate)
{
	return fmax((double)f->p.min_rate, fmin((double)f->cc.path.line_bps, rate));
}

/* Apply the current level's action @k times at @t, then arm the next one (level 0 only)
 * unless it has stopped changing the rate. */
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
	/* The source's reactions act on a window: W = R * T (plus MTU - 1, as hpcc.c) */
	f->cc.cap_bytes = cc_rate_window(f->cc.rate_bps, f->cc.path.base_rtt_ns) +
			  f->cc.path.mtu_bytes - 1;
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
	f->cut_factor = 1;
	ffd_publish(f, 0);
}

/* A decrease level entered at @now: its factor, or within T of the last cut only what it
 * cuts beyond that one. No timer: nothing repeats while the level lasts. */
static void ffd_cut(struct ffd *f, qp_time_ns now)
{
	double factor = ffd_factor(f, f->level);

	f->next_ns = QP_TIME_NEVER;
	if (f->cut_factor < 1 && qp_time_since(now, f->cut_ns) < f->cc.path.base_rtt_ns) {
		if (factor >= f->cut_factor) {
			f->stats.cuts_merged++;
			return;
		}
		f->rate = ffd_clamp(f, f->rate * factor / f->cut_factor);
		f->cut_factor = factor;
		return;
	}
	f->rate = ffd_clamp(f, f->rate * factor);
	f->cut_ns = now;
	f->cut_factor = factor;
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
	if (ffd_levels[f->level].cut)
		ffd_cut(f, now);
	else
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
	.summary = "FFDTCP multi-level feedback: level 0 increase per RTT, 1 hold, 2 x0.75 "
		   "and 3 x0.5 once per level change, acknowledged",
	.params = ffd_params_table,
	.params_size = sizeof(struct ffd_params),
	.state_size = sizeof(struct ffd),
	.check = ffd_check,
	.init = ffd_init,
	.on = { [CC_EV_LEVEL] = ffd_on_level },
	.on_timer = ffd_on_timer,
	/* The switch's level thresholds: min, mid and max queue bytes of levels 1..3; the
	 * source sets midth halfway between minth and maxth (its Table 1 of values is
	 * missing: min and max are qpace's). */
	.feedback = { .level_bytes = { 8 * 1024, 28 * 1024, 48 * 1024 } },
};
