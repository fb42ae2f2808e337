/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* acc: HPCC plus early switch feedback inside the first RTT and a ramp-up into the
 * bandwidth that finishing flows free, perceived in advance from the switch.
 *
 * Source: ACC, "agile congestion control in datacenter networks" (Yuan, Lu, Zhou, Dong,
 * Peng; Scientia Sinica Informationis 2025(1):46-63; only the abstract is in
 * ../shared/seeds/001_*.txt). What it says: INT-based, compared with HPCC; (1) in a flow's
 * first RTT, before any ACK-borne INT can arrive, the switch sends the path's congestion
 * straight back to the sender; (2) long flows are helped to "perceive idle bandwidth in
 * advance" (提前感知空闲带宽) when flows finish, by switch-host cooperation; (3) the
 * result keeps "the same high throughput as HPCC" with a shorter queue. HPCC is reused
 * whole through hpcc_core.h (see hpcc.c). The rules below are qpace's reading, rate-based
 * like HPCC's; the switch side is in the spirit of Bolt's SRC (Arslan et al., NSDI 2023).
 *
 * (a) Early feedback. On CC_EV_NOTICE {queue q bytes, link B bits/s, flows n (0 = unknown,
 *     taken as 1)}, with F = eta * B / n the fair share:
 *
 *       share = max(F, (eta * B - q * 8 / T) / n)       (fair = 1, the default)
 *       share = (eta * B - q * 8 / T) / n               (fair = 0)
 *
 *     (eta*B - q*8/T)/n is the rate at which n flows keep eta of the link busy and drain
 *     q within one RTT. When share is below the current pacing rate R, at most once per
 *     base RTT T (a notice within T of the last cut is held):
 *
 *       R = Rc = max(min_rate, share),  incStage = 0
 *
 *     Why fair = 1 by default: with a notice threshold >= eta * BDP (the switch's default
 *     is one BDP), q * 8 / T >= eta * B at every notice, so the drain rule alone sends
 *     every noticed flow to min_rate (measured: 0.100 G = line/1000 in a 16 -> 1). Flows
 *     at min_rate cannot keep "the same high throughput as HPCC" the source claims; the
 *     fair floor leaves the queue to HPCC's own updates, whose U carries it.
 *
 * (b) The first-RTT filter. INT reports on data sent before a cut describe the queue the
 *     notice already reported: they update the stored hops and the EWMA U but never the
 *     rate, and last_update_seq is raised to the cut's sequence so the first report on
 *     post-cut data makes the next full update. The cut's sequence cut_seq is the
 *     sender's snd_nxt at the cut. snd_nxt arrives only in INT reports; when the cut
 *     comes before any (the first RTT, the case the notice is for), the first report
 *     after it sets
 *
 *       cut_seq = snd_nxt - R_cut * (now - t_cut) / 8 - MTU
 *
 *     the most the QP can have sent since the cut at its paced rate taken off its current
 *     snd_nxt: a lower bound of the true one, so data sent after the cut is never
 *     filtered (a window-limited sender sent less: a few pre-cut reports may then pass).
 *     Without it (cut_seq = 0 until the first report) a flow was cut twice in its first
 *     RTT: 23.75 G by the notice, then 13.7 G by stale INT.
 *
 * (c) Ramp-up, in advance. A switch counts the flows active at its port (n); when flows
 *     finish, a later notice from the same switch carries a smaller n. The flows that are
 *     left take the freed share at once, before any INT report can show the idle link:
 *
 *       n < n_last (same switch):  R = Rc = min(line, F, R * n_last / n),  incStage = 0
 *
 *     (fair = 0: also no higher than max(R, the drain share)). A notice that raises the
 *     rate is not a cut: it neither waits for nor starts the hold-off.
 *     The signal comes before the bandwidth is free (last_window = 1, the default): each
 *     flow knows its message's size (CC_EV_FLOW_START) and counts what its ACKs
 *     acknowledge (CC_EV_ACKED); when what is left unacknowledged fits in its window,
 *     
 *       flow_bytes - acked <= W   (W = cc->cap_bytes, or R * T without a cap)
 *
 *     its last window is on the wire and the flow ends within about one RTT: it says so
 *     once (CC_ACT_LAST_WINDOW), its agent tells the switches on its path (a WANT with
 *     FB_WANT_F_LAST, qpace/feedback.h), and they take it out of their ports' counts at
 *     once, so the others' next notices carry the smaller n while its last window still
 *     drains: switch-host cooperation, Bolt's last-window flag (Arslan et al., NSDI 2023,
 *     PRU) in spirit. last_window = 0 is the reading before this one, kept as a named
 *     variant: the count falls only by silence (qpace-switch --flow-idle T: a flow leaves
 *     the count T after its last frame), two RTTs after the flow went quiet at the
 *     bench's T = 2 base RTTs, later than HPCC's own INT shows the idle link.
 *
 * Deviations, and why:
 *  - The switch's side (qpace-switch --flow-idle T): n counts the flows that sent a frame
 *    within T (or have bytes queued), not those that announced their last window; a flow
 *    that has had a notice gets another, whatever the queue, when n falls below the n it
 *    was last told. The announcement travels as its own message after the data it
 *    describes, not as a flag on the data (the RC's frames have no room for one).
 *  - No jump after a reference period whose INT shows idle capacity (Rc * eta / u_peak):
 *    that reacts after the fact, which the source's "in advance" is not, and HPCC at
 *    max_stage = 0 already does the same multiplicative increase.
 *
 * Parameters: HPCC's (eta, max_stage, rate_ai, min_rate, fast_react, window; see hpcc.c)
 * plus
 *   fair         0/1, default 1: the fair floor F in (a).
 *   last_window  0/1, default 1: announce the last window (c); 0: the falling count by
 *                silence alone (the named variant "acc last_window=0").
 *
 * Cost: every handler is O(hops) with no allocation.
 *
 * Tested on the real switch in virtual time (test_loop_acc.c, 16 -> 1 at 10 Gb/s, finite
 * buffers): the peak queue against HPCC's, and how soon the others take a finished flow's
 * share, with last_window = 1 and 0; the figures are in docs/algorithms.md.
 */
#include "cc_algs.h"
#include "hpcc_core.h"

struct acc_params {
	struct hpcc_params hpcc;
	uint32_t fair;
	uint32_t last_window;
};

static const struct cc_param acc_params_table[] = {
	HPCC_PARAM_ENTRIES(offsetof(struct acc_params, hpcc)),
	{ "fair", CC_P_U32, offsetof(struct acc_params, fair), 1, 0, 1, 0,
	  "1: a notice cuts to no less than eta*B/n; 0: the drain share alone" },
	{ "last_window", CC_P_U32, offsetof(struct acc_params, last_window), 1, 0, 1, 0,
	  "1: announce the flow's last window to the switches (ramp-up in advance); 0: "
	  "their flow count falls by silence alone" },
	{ .name = NULL },
};

struct acc_stats {
	uint64_t cuts;            /* notices that lowered the rate */
	uint64_t notices_held;    /* notices within T of the last cut */
	uint64_t notices_no_cut;  /* notices whose share was not below the rate */
	uint64_t pre_cut_reports; /* INT reports on data sent before the last cut */
	uint64_t ramps;           /* notices whose falling flow count raised the rate */
	uint64_t last_windows;    /* messages whose last window was announced */
};

struct acc_state {
	struct cc cc;
	struct hpcc_core core;
	uint64_t max_snd_nxt;     /* largest snd_nxt seen in an INT report */
	bool seen_int;            /* an INT report came: max_snd_nxt is meaningful */
	uint64_t cut_seq;         /* snd_nxt at the last cut (or its lower bound) */
	bool cut_seq_pending;     /* cut before any INT: cut_seq set by the next report */
	double cut_bps;           /* the rate the last cut set */
	qp_time_ns last_cut_ns;
	bool cut_once;            /* a cut happened: last_cut_ns is meaningful */
	bool fair;                /* the fair floor in (a) */
	uint32_t last_switch;     /* switch and flow count of the last notice */
	uint16_t last_flows;      /* 0 = no notice yet */
	bool last_window;         /* announce it (parameter) */
	uint64_t flow_bytes;      /* the message in flight, 0 = not known */
	uint64_t acked;           /* of it acknowledged */
	bool announced;           /* its last window was announced */
	struct acc_stats stats;
};

static int acc_check(const void *params, const struct cc_path *path, char *err, size_t errlen)
{
	const struct acc_params *p = params;
	return hpcc_core_check(&p->hpcc, path, err, errlen, "acc");
}

static struct acc_state *to_acc(struct cc *cc)
{
	return (struct acc_state *)(void *)((char *)cc - offsetof(struct acc_state, cc));
}

static void acc_init(struct cc *cc, const void *params, qp_time_ns now)
{
	const struct acc_params *p = params;
	struct acc_state *s = to_acc(cc);

	(void)now;
	hpcc_core_init(&s->core, cc, &p->hpcc);
	s->fair = p->fair;
	s->last_window = p->last_window;
}

/* A message starts: its size, nothing of it acknowledged, its last window to come. */
static unsigned acc_on_flow_start(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct acc_state *s = to_acc(cc);

	(void)now;
	s->flow_bytes = ev->u.flow_bytes;
	s->acked = 0;
	s->announced = false;
	return 0;
}

/* (c): what is left unacknowledged fits in the window: the last window is on its way. */
static unsigned acc_on_ack(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct acc_state *s = to_acc(cc);
	uint64_t w = cc->cap_bytes != CC_CAP_NONE ? cc->cap_bytes
						   : cc_rate_window(cc->rate_bps, s->core.t_ns);

	(void)now;
	s->acked += ev->u.ack.bytes;
	if (!s->last_window || !s->flow_bytes || s->announced ||
	    (s->acked < s->flow_bytes && s->flow_bytes - s->acked > w))
		return 0;
	s->announced = true;
	s->stats.last_windows++;
	return CC_ACT_LAST_WINDOW;
}

/* The cut's sequence is known: what the reports are filtered against from now on. */
static void acc_set_cut_seq(struct acc_state *s, uint64_t seq)
{
	s->cut_seq = seq;
	s->cut_seq_pending = false;
	if (seq > s->core.last_update_seq)
		s->core.last_update_seq = seq;
}

/* (c): the count of the same switch fell; 0 = no ramp. */
static double acc_ramp_target(const struct acc_state *s, const struct cc_notice *n,
			      double fair_bps, double drain_bps)
{
	double r = (double)s->cc.rate_bps, t;

	if (!s->last_flows || !n->flows || n->switch_id != s->last_switch ||
	    n->flows >= s->last_flows)
		return 0;
	t = r * s->last_flows / n->flows;
	if (t > fair_bps)
		t = fair_bps;
	if (!s->fair && t > drain_bps)
		t = drain_bps > r ? drain_bps : r;
	return t > r ? t : 0;
}

static unsigned acc_on_notice(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct acc_state *s = to_acc(cc);
	struct hpcc_core *h = &s->core;
	const struct cc_notice *n = &ev->u.notice;
	double flows = n->flows ? (double)n->flows : 1.0;
	double fair_bps = h->p.eta * (double)n->link_bps / flows;
	double drain = (h->p.eta * (double)n->link_bps -
			(double)n->queue_bytes * 8.0 * 1e9 / (double)h->t_ns) / flows;
	double share = s->fair && drain < fair_bps ? fair_bps : drain;
	double ramp = acc_ramp_target(s, n, fair_bps, drain);

	s->last_switch = n->switch_id;
	s->last_flows = n->flows;
	if (ramp > 0) {
		s->stats.ramps++;
		return hpcc_core_set_reference(h, cc, ramp);
	}
	if (s->cut_once && qp_time_since(now, s->last_cut_ns) < h->t_ns) {
		s->stats.notices_held++;
		return 0;
	}
	if (share >= (double)cc->rate_bps) {
		s->stats.notices_no_cut++;
		return 0;
	}
	s->cut_once = true;
	s->last_cut_ns = now;
	s->stats.cuts++;
	if (s->seen_int)
		acc_set_cut_seq(s, s->max_snd_nxt);
	else
		s->cut_seq_pending = true;
	hpcc_core_set_reference(h, cc, share); /* clamps at min_rate */
	s->cut_bps = (double)cc->rate_bps;
	return CC_ACT_RATE;
}

/* (b): a cut came before any report: bound its sequence from this first report. */
static void acc_bound_cut_seq(struct acc_state *s, const struct cc_int_report *r,
			      qp_time_ns now)
{
	double sent = s->cut_bps * (double)qp_time_since(now, s->last_cut_ns) / 8e9 +
		      (double)s->cc.path.mtu_bytes;

	acc_set_cut_seq(s, (double)r->snd_nxt > sent ? r->snd_nxt - (uint64_t)sent : 0);
}

static unsigned acc_on_int(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct acc_state *s = to_acc(cc);
	const struct cc_int_report *r = &ev->u.int_report;
	enum hpcc_kind kind;
	double u = 0;

	if (s->cut_seq_pending)
		acc_bound_cut_seq(s, r, now);
	if (!s->seen_int || r->snd_nxt > s->max_snd_nxt)
		s->max_snd_nxt = r->snd_nxt;
	s->seen_int = true;
	kind = hpcc_core_observe(&s->core, r, &u);
	if (kind != HPCC_FULL && kind != HPCC_FAST)
		return 0;
	if (r->seq < s->cut_seq) { /* data sent before the cut: hops and EWMA only */
		s->stats.pre_cut_reports++;
		return 0;
	}
	return hpcc_core_react(&s->core, cc, r, kind == HPCC_FULL);
}

#define ACC_C(f, doc) { #f, offsetof(struct acc_state, stats.f), doc }
static const struct cc_counter acc_counters[] = {
	ACC_C(cuts, "notices that lowered the rate"),
	ACC_C(notices_held, "notices within T of the last cut"),
	ACC_C(pre_cut_reports, "INT reports on data sent before the last cut"),
	ACC_C(ramps, "notices whose falling flow count raised the rate"),
	ACC_C(last_windows, "messages whose last window was announced"),
	{ .name = NULL },
};

const struct cc_ops cc_acc_ops = {
	.name = "acc",
	.summary = "HPCC plus a first-RTT cut on switch notices and a ramp-up when the "
		   "switch's flow count falls",
	.params = acc_params_table,
	.params_size = sizeof(struct acc_params),
	.state_size = sizeof(struct acc_state),
	.check = acc_check,
	.init = acc_init,
	.on = { [CC_EV_INT] = acc_on_int, [CC_EV_NOTICE] = acc_on_notice,
		[CC_EV_FLOW_START] = acc_on_flow_start, [CC_EV_ACKED] = acc_on_ack },
	/* Notices from a queue of one BDP (the switch's default) are what ACC's first RTT is
	 * designed for; at that threshold the drain share alone would send an incast to
	 * min_rate, so it runs with the fair floor (fair=1, also the default; named here so
	 * the bench says what it runs). */
	.feedback = { .notice_bytes = 0, .params = "fair=1", .global_rtt = true },   /* HPCC's T */
	.counters = acc_counters,
};
