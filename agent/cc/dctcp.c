/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* dctcp: DCTCP's window (Alizadeh et al., "Data Center TCP", SIGCOMM 2010; RFC 8257) on
 * the transport's ACKs and their ECN echo: the baseline FFDTCP compares against, and one
 * of HPCC's (its rdma-hw.cc cc mode 8 is a rate-based version of it).
 *
 *   switch    marks CE when its queue is above K (RED with Kmin = K, Pmax = 1: a step);
 *             the receiver echoes the marks in its ACKs (BTH BECN; the soft RC splits an
 *             ACK at each change of CE state, as DCTCP's receiver does: rc.h)
 *   alpha     once per window of data (the first ACK past the highest PSN sent at the
 *             last update):  F = bytes acknowledged with CE / bytes acknowledged,
 *                            alpha = (1 - g) * alpha + g * F
 *   cut       the first CE-echoed ACK outside a CWR: cwnd = cwnd * (1 - alpha / 2),
 *             ssthresh = cwnd, and CWR until the ACK of the highest PSN sent then
 *             (at most one cut per window)
 *   otherwise TCP's window (tcp.c, win_core.c): slow start, +1 MSS per RTT, halving on a
 *             NAK, one packet after a timeout
 *
 * Parameters: g (the paper's 1/16), init_alpha (RFC 8257 and Linux: 1, a first mark cuts
 * by half), iw, max_cwnd, ssthresh as tcp's. K is the switch's (ops->feedback): the
 * paper's 20 packets at 1 Gb/s (30,000 bytes of 1500-byte packets), scaled with the link
 * rate as the bench scales every ECN threshold (so 300 KB at 10 Gb/s, where the paper
 * used 65 packets: its K grows with C * RTT / 7, and RTT with it).
 *
 * Deviations: marking at dequeue, on the queue the frame leaves behind (qpace-switch's
 * RED, as DCQCN and HPCC's ns-3 switch mark), where the paper marks on arrival; the echo
 * is one bit per ACK of the RC, not per packet. A source without PSNs (0 in the events)
 * updates alpha once per base RTT and ends CWR after one; one without an ECN echo
 * (CC_ECN_NONE) makes DCTCP TCP.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "cc_algs.h"
#include "dctcp.h"
#include "win_core.h"

struct dctcp_params {
	struct win_params win;
	double g;
	double init_alpha;
};

static const struct cc_param dctcp_params_table[] = {
	WIN_PARAM_ENTRIES(offsetof(struct dctcp_params, win), 2),
	{ "g", CC_P_DOUBLE, offsetof(struct dctcp_params, g), 1.0 / 16, 0, 1,
	  CC_P_MIN_OPEN, "EWMA gain of alpha, per window of data" },
	{ "init_alpha", CC_P_DOUBLE, offsetof(struct dctcp_params, init_alpha), 1, 0, 1, 0,
	  "alpha before the first window's F" },
	{ .name = NULL },
};

struct dctcp_state {
	struct cc cc;
	struct win w;
	double g, alpha;
	uint64_t acked, marked;        /* this window's bytes, and of them echoed CE */
	uint64_t window_end;           /* the update comes at the ACK of this PSN */
	qp_time_ns window_until;       /* ... or then (no PSNs) */
	bool cwr;
	uint64_t cwr_end;
	qp_time_ns cwr_until;
	struct cc_dctcp_stats stats;
};

static struct dctcp_state *to_dctcp(struct cc *cc)
{
	return (struct dctcp_state *)cc;
}

static int dctcp_check(const void *params, const struct cc_path *path, char *err,
		       size_t errlen)
{
	(void)path;
	return win_check("dctcp", &((const struct dctcp_params *)params)->win, err, errlen);
}

static void dctcp_init(struct cc *cc, const void *params, qp_time_ns now)
{
	struct dctcp_state *s = to_dctcp(cc);
	const struct dctcp_params *p = params;

	win_init(&s->w, &p->win, &cc->path);
	s->g = p->g;
	s->alpha = p->init_alpha;
	s->window_until = now + cc->path.base_rtt_ns;
	win_publish(&s->w, cc);
}

/* Past @end (a PSN; 0 = not known: past @until instead)? */
static bool past(const struct cc_ack *a, uint64_t end, qp_time_ns until, qp_time_ns now)
{
	return end && a->psn ? a->psn > end : now >= until;
}

static void alpha_update(struct dctcp_state *s, const struct cc_ack *a, qp_time_ns now)
{
	s->acked += a->bytes;
	if (a->ecn == CC_ECN_CE)
		s->marked += a->bytes;
	if (!past(a, s->window_end, s->window_until, now))
		return;
	double f = s->acked ? (double)s->marked / (double)s->acked : 0;
	s->alpha = (1 - s->g) * s->alpha + s->g * f;
	s->stats.alpha_updates++;
	s->acked = s->marked = 0;
	s->window_end = a->snd_psn;
	s->window_until = now + s->cc.path.base_rtt_ns;
}

static unsigned dctcp_on_ack(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct dctcp_state *s = to_dctcp(cc);
	const struct cc_ack *a = &ev->u.ack;

	alpha_update(s, a, now);
	if (s->cwr && past(a, s->cwr_end, s->cwr_until, now))
		s->cwr = false;
	if (a->ecn == CC_ECN_CE && !s->cwr) {
		win_cut(&s->w, 1 - s->alpha / 2);
		s->stats.ecn_cuts++;
		s->cwr = true;
		s->cwr_end = a->snd_psn;
		s->cwr_until = now + cc->path.base_rtt_ns;
	} else if (a->ecn != CC_ECN_CE) {
		win_on_ack(&s->w, a, false, now);
	}
	return win_publish(&s->w, cc);
}

static unsigned dctcp_on_nak(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct dctcp_state *s = to_dctcp(cc);

	win_on_nak(&s->w, &ev->u.loss, now);
	return win_publish(&s->w, cc);
}

static unsigned dctcp_on_timeout(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct dctcp_state *s = to_dctcp(cc);

	win_on_timeout(&s->w, &ev->u.loss, now);
	return win_publish(&s->w, cc);
}

int cc_dctcp_view(const struct cc *cc, struct cc_dctcp_view *out)
{
	const struct dctcp_state *s = (const struct dctcp_state *)cc;

	if (!cc || cc->ops != &cc_dctcp_ops || !out)
		return -EINVAL;
	*out = (struct cc_dctcp_view){ .alpha = s->alpha, .cwnd_bytes = s->w.cwnd,
				       .ssthresh_bytes = s->w.ssthresh, .stats = s->stats };
	return 0;
}

#define DCTCP_C(f, doc) { #f, offsetof(struct dctcp_state, stats.f), doc }
#define DCTCP_W(f, doc) { #f, offsetof(struct dctcp_state, w.stats.f), doc }
static const struct cc_counter dctcp_counters[] = {
	DCTCP_C(alpha_updates, "alpha updates (one per window of data)"),
	DCTCP_C(ecn_cuts, "windows cut by 1 - alpha/2 on an ECN echo"),
	DCTCP_W(halvings, "NAKs that halved the window"),
	DCTCP_W(timeouts, "retransmission timeouts"),
	{ .name = NULL },
};

const struct cc_ops cc_dctcp_ops = {
	.name = "dctcp",
	.summary = "DCTCP: TCP's window, cut by alpha/2 once per window of ECN echoes, alpha "
		   "the fraction of CE-echoed bytes",
	.params = dctcp_params_table,
	.params_size = sizeof(struct dctcp_params),
	.state_size = sizeof(struct dctcp_state),
	.check = dctcp_check,
	.init = dctcp_init,
	.on = {
		[CC_EV_ACKED] = dctcp_on_ack,
		[CC_EV_NAK] = dctcp_on_nak,
		[CC_EV_TIMEOUT] = dctcp_on_timeout,
	},
	/* K = 20 packets of 1500 bytes at 1 Gb/s (the paper's), a step (Pmax 1) */
	.feedback = { .ecn_kmin_bytes = 30000, .ecn_kmax_bytes = 30000, .ecn_pmax = 1,
		      .ecn_at_bps = 1000000000ull, .ecn_echo = true },
	.counters = dctcp_counters,
};
