/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ffd: the sender side of FFDTCP's multi-level congestion feedback (Su, Niu, Shao, "a fast
 * feedback transmission control protocol for datacenter networks"; the source is
 * ../shared/seeds/004_*.txt, whose Table 1 and equations (3)-(5) were images and are
 * missing; its prose gives each level's meaning and reaction, quoted below), on a TCP
 * window (win_core.c, tcp.c): FFDTCP is TCP whose window the levels steer.
 *
 * The switch compares the RED average queue with minth < midth < maxth (midth halfway)
 * and sends the sender a 3-bit congestion level (CC_EV_LEVEL; cc.c rejects anything but
 * 0..3). The sender's reaction, per the source's section 3.2:
 *
 *   level 0  (000, avg < minth)         "not congested: adjust as standard TCP, per ACK,
 *                                        by eq. (3)": slow start (cwnd += the bytes an ACK
 *                                        acknowledges), then one MSS per RTT
 *   level 1  (001, minth <= avg < midth) "about to be congested: keep the window": ACKs
 *                                        do not grow it
 *   level 2  (010, midth <= avg < maxth) "congested, not yet severely": cwnd = cwnd * k,
 *                                        k = 0.75 (the source's middle of 0.5 <= k <= 1)
 *   level 3  (011, avg >= maxth)         "severely congested: standard TCP, eq. (5)":
 *                                        cwnd = cwnd * 0.5
 * Before any level the sender is at 000, the field's initial value: standard TCP from
 * its initial window (2 packets, as tcp's: the source's NS-2 TCP). A cut also sets
 * ssthresh = cwnd; levels 2 and 3 then hold the window, as level 1 does, until a new
 * level. Losses are TCP's (tcp.c): a NAK halves, a timeout leaves one MSS.
 *
 * Section 3.3: the sender answers a level with 111 so that the switch stops sending it;
 * the switch sends again only "when the congestion level changes". So a cut is the
 * reaction to one notification, applied once per level change:
 *  - A new level (different from the current one) acts at once and returns
 *    CC_ACT_ACK_LEVEL with cc->level_to_ack = that level; the shell sends 7 for it.
 *  - The current level received again (the switch repeated it before our ack arrived)
 *    changes nothing, but is acknowledged again (CC_ACT_ACK_LEVEL) so the switch stops.
 *  - Cuts (levels 2 and 3) come at most once per base RTT, as standard TCP reduces once
 *    per window: a cut level entered within T of the last cut applies only what it cuts
 *    beyond that cut (level 3 after level 2: x0.5/0.75 more; level 2 after level 3:
 *    nothing), so a level flapping at a threshold does not cut on every flap.
 *
 * Deviations, and why: the window is the RC's (the published cap; its retransmissions
 * too), sent at the line rate. qpace's FFD was rate-based before (the source's reactions
 * as rate steps, W = R * T, level 0 adding line/100 per RTT from the line rate): its first
 * window was one BDP at the line rate where the source's TCP starts slow.
 *
 * Parameters:
 *   down      level-2 factor k, (0, 1), default 0.75
 *   severe    level-3 factor, (0, 1), <= down, default 0.5 (standard TCP's halving)
 *   iw, max_cwnd, ssthresh   the TCP window's (tcp.c): 2 packets, none, none
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cc_algs.h"
#include "ffd.h"
#include "win_core.h"

struct ffd_params {
	double down;
	double severe;
	struct win_params win;
};

#define FFD_P(field) offsetof(struct ffd_params, field)

static const struct cc_param ffd_params_table[] = {
	{ "down", CC_P_DOUBLE, FFD_P(down), 0.75, 0, 1, CC_P_MIN_OPEN | CC_P_MAX_OPEN,
	  "level-2 window factor, once per level change" },
	{ "severe", CC_P_DOUBLE, FFD_P(severe), 0.5, 0, 1, CC_P_MIN_OPEN | CC_P_MAX_OPEN,
	  "level-3 window factor, once per level change, <= down" },
	WIN_PARAM_ENTRIES(FFD_P(win), 2),
	{ .name = NULL },
};

#define FFD_NO_LEVEL (-1)

struct ffd {
	struct cc cc;            /* first: the public part */
	struct ffd_params p;
	struct win w;
	int level;               /* 0..3, FFD_NO_LEVEL before the first (acts as 0) */
	qp_time_ns cut_ns;       /* last cut; meaningful when cut_factor < 1 */
	double cut_factor;       /* the factor cut since cut_ns (1 = no cut yet) */
	struct cc_ffd_stats stats;
};

static struct ffd *to_ffd(struct cc *cc)
{
	return (struct ffd *)((char *)cc - offsetof(struct ffd, cc));
}

static int ffd_check(const void *params, const struct cc_path *path, char *err, size_t errlen)
{
	const struct ffd_params *p = params;

	(void)path;
	if (p->severe > p->down) {
		if (err && errlen)
			snprintf(err, errlen, "ffd: severe=%g is a smaller cut than down=%g "
				 "(level 3 must cut at least as hard as level 2: severe <= down)",
				 p->severe, p->down);
		return -EINVAL;
	}
	return win_check("ffd", &p->win, err, errlen);
}

/* Each level's reaction: a cut factor (1 = none) and whether ACKs grow the window. */
static const struct {
	bool grow;
	bool cut;
} ffd_levels[] = {
	[CC_LEVEL_FREE] = { true, false },
	[CC_LEVEL_HOLD] = { false, false },
	[CC_LEVEL_DOWN] = { false, true },
	[CC_LEVEL_SEVERE] = { false, true },
};

static void ffd_init(struct cc *cc, const void *params, qp_time_ns now)
{
	struct ffd *f = to_ffd(cc);

	(void)now;
	f->p = *(const struct ffd_params *)params;
	win_init(&f->w, &f->p.win, &cc->path);
	f->level = FFD_NO_LEVEL;
	f->cut_factor = 1;
	win_publish(&f->w, cc);
}

/* A cut level entered at @now: its factor, or within T of the last cut only what it cuts
 * beyond that one. */
static void ffd_cut(struct ffd *f, qp_time_ns now)
{
	double factor = f->level == CC_LEVEL_SEVERE ? f->p.severe : f->p.down;

	if (f->cut_factor < 1 && qp_time_since(now, f->cut_ns) < f->cc.path.base_rtt_ns) {
		if (factor >= f->cut_factor) {
			f->stats.cuts_merged++;
			return;
		}
		win_cut(&f->w, factor / f->cut_factor);
		f->cut_factor = factor;
		return;
	}
	win_cut(&f->w, factor);
	f->cut_ns = now;
	f->cut_factor = factor;
}

static unsigned ffd_on_level(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct ffd *f = to_ffd(cc);

	cc->level_to_ack = ev->u.level;
	f->stats.acks++;
	if (ev->u.level == f->level) {
		f->stats.repeats++;
		return win_publish(&f->w, cc) | CC_ACT_ACK_LEVEL;
	}
	f->level = ev->u.level;
	f->stats.entered[f->level]++;
	if (ffd_levels[f->level].cut)
		ffd_cut(f, now);
	return win_publish(&f->w, cc) | CC_ACT_ACK_LEVEL;
}

static unsigned ffd_on_ack(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct ffd *f = to_ffd(cc);
	bool hold = f->level != FFD_NO_LEVEL && !ffd_levels[f->level].grow;

	f->stats.held_acks += hold;
	win_on_ack(&f->w, &ev->u.ack, hold, now);
	return win_publish(&f->w, cc);
}

static unsigned ffd_on_nak(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct ffd *f = to_ffd(cc);

	win_on_nak(&f->w, &ev->u.loss, now);
	return win_publish(&f->w, cc);
}

static unsigned ffd_on_timeout(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct ffd *f = to_ffd(cc);

	win_on_timeout(&f->w, &ev->u.loss, now);
	return win_publish(&f->w, cc);
}

int cc_ffd_view(const struct cc *cc, struct cc_ffd_view *out)
{
	const struct ffd *f;

	if (!cc || cc->ops != &cc_ffd_ops || !out)
		return -EINVAL;
	f = (const struct ffd *)((const char *)cc - offsetof(struct ffd, cc));
	out->level = f->level;
	out->cwnd_bytes = f->w.cwnd;
	out->ssthresh_bytes = f->w.ssthresh;
	out->stats = f->stats;
	return 0;
}

#define FFD_C(name, f, doc) { name, offsetof(struct ffd, f), doc }
static const struct cc_counter ffd_counters[] = {
	FFD_C("level_changes_2", stats.entered[CC_LEVEL_DOWN], "level 2 entered (x down)"),
	FFD_C("level_changes_3", stats.entered[CC_LEVEL_SEVERE], "level 3 entered (x severe)"),
	FFD_C("cuts_merged", stats.cuts_merged, "cut levels within T of a deeper cut"),
	FFD_C("held_acks", stats.held_acks, "ACKs a level 1-3 kept from growing the window"),
	FFD_C("halvings", w.stats.halvings, "NAKs that halved the window"),
	FFD_C("timeouts", w.stats.timeouts, "retransmission timeouts"),
	{ .name = NULL },
};

const struct cc_ops cc_ffd_ops = {
	.name = "ffd",
	.summary = "FFDTCP multi-level feedback on a TCP window: level 0 standard TCP (slow "
		   "start), 1 hold, 2 x0.75 and 3 x0.5 once per level change, acknowledged",
	.params = ffd_params_table,
	.params_size = sizeof(struct ffd_params),
	.state_size = sizeof(struct ffd),
	.check = ffd_check,
	.init = ffd_init,
	.on = {
		[CC_EV_LEVEL] = ffd_on_level,
		[CC_EV_ACKED] = ffd_on_ack,
		[CC_EV_NAK] = ffd_on_nak,
		[CC_EV_TIMEOUT] = ffd_on_timeout,
	},
	/* The switch's level thresholds: min, mid and max queue bytes of levels 1..3; the
	 * source sets midth halfway between minth and maxth (its Table 1 of values is
	 * missing: min and max are qpace's). */
	.feedback = { .level_bytes = { 8 * 1024, 28 * 1024, 48 * 1024 } },
	.counters = ffd_counters,
};
