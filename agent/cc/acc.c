/* acc: HPCC plus early switch feedback inside the first RTT and a proactive ramp-up into
 * bandwidth that finishing flows free.
 *
 * Sources: HPCC (see hpcc.c; the whole HPCC core is reused through hpcc_core.h, not
 * copied) and, in spirit, Bolt (Arslan et al., NSDI 2023; ns-3 code serhatarslan-hub/
 * bolt_cc_ns3): SRC, a switch notice sent straight back to the sender at enqueue, and
 * PRU/SM, taking over freed bandwidth at once instead of by additive steps. qpace's rules
 * are its own, rate-based like HPCC's:
 *
 * (a) Early feedback. On CC_EV_NOTICE {queue q bytes, link B bits/s, flows n (0 = unknown,
 *     taken as 1)}, at most one cut per base RTT T (a notice within T of the last cut is
 *     ignored):
 *
 *       share = (eta * B - q * 8 / T) / n
 *
 *     the rate which, if all n flows sent at it, keeps eta of the link busy and drains q
 *     within one RTT. When share is below the current pacing rate R:
 *
 *       R = Rc = max(min_rate, share),  incStage = 0,  cut_seq = largest snd_nxt seen
 *
 *     A notice whose share is not below R changes nothing (the QP already sends at or
 *     below its share) and does not start the hold-off. snd_nxt arrives only in INT
 *     reports, so cut_seq is the largest one seen (0 before the first report: nothing is
 *     filtered in the very first RTT). INT reports with seq < cut_seq carry data sent
 *     before the cut: they describe the queue the notice already reported, so they update
 *     the stored hops and the EWMA U but never the rate. last_update_seq is raised to
 *     cut_seq, so the first report on post-cut data makes the next full update.
 *
 * (b) Ramp-up. Over each reference period (from one full update or cut to the next full
 *     update) u_peak is the largest instantaneous most-congested-hop utilization u of the
 *     reports (pre-cut reports included: they are real measurements of the bottleneck).
 *     At the full update, after HPCC's own update gives Rc', if u_peak < eta (the
 *     bottleneck had idle capacity for the whole period):
 *
 *       jump = Rc_meas * eta / max(u_peak, u_floor)
 *       if jump > Rc':  Rc = R = min(line, jump),  incStage = 0
 *
 *     Rc_meas is the reference the period's reports measured: the one in force before the
 *     previous full update (or the cut rate after a cut). The reports arriving between two
 *     full updates carry data sent before the first of them, so scaling the current Rc by
 *     them would apply the same idle capacity twice (one jump on top of the last); scaled
 *     from Rc_meas, a period that still shows the idle capacity an earlier jump already
 *     took asks for no more than that jump. One jump is at most eta/u_floor times Rc_meas
 *     (9.5x with the defaults) and never less than what HPCC alone would do.
 *
 * (c) Fair anchor (fair = 1). The notice's n gives the fair share F = eta * B / n. A
 *     cut goes no lower than F (share = max(share, F)): draining is left to HPCC's own
 *     updates, whose U carries the queue. And a ramp-up jump goes no higher than the F of
 *     the last notice (jump = min(jump, F); 0 notices: no bound), so one flow that hears
 *     of idle capacity first does not take all of it. Why: with a notice threshold of one
 *     BDP, q * 8 / T >= eta * B at every notice, so rule (a) alone cuts every flow of an
 *     incast to min_rate; flows at min_rate hear INT once per many RTTs, and the first to
 *     hear of the idle link jumped far past the others (Jain 0.7-0.8 in qpace-bench's
 *     16 -> 1 incast, 0.96-0.99 with the anchor).
 *
 * Parameters: HPCC's (eta, max_stage, rate_ai, min_rate, fast_react, window; see hpcc.c)
 * plus
 *   u_floor   fraction, (0, 1], default 0.1: the utilization a jump divides by at least,
 *             which bounds one jump to eta/u_floor times the reference rate.
 *   fair      0/1, default 0: the fair anchor (c).
 *
 * Cost: every handler is O(hops) with no allocation.
 */
#include "cc_algs.h"
#include "hpcc_core.h"

struct acc_params {
	struct hpcc_params hpcc;
	double u_floor;
	uint32_t fair;
};

static const struct cc_param acc_params_table[] = {
	HPCC_PARAM_ENTRIES(offsetof(struct acc_params, hpcc)),
	{ "u_floor", CC_P_DOUBLE, offsetof(struct acc_params, u_floor), 0.1, 0, 1, CC_P_MIN_OPEN,
	  "smallest utilization a ramp-up jump divides by (one jump <= eta/u_floor times)" },
	{ "fair", CC_P_U32, offsetof(struct acc_params, fair), 0, 0, 1, 0,
	  "1: a notice cuts to no less, and a jump rises to no more, than eta*B/n" },
	{ .name = NULL },
};

struct acc_stats {
	uint64_t cuts;            /* notices that lowered the rate */
	uint64_t notices_held;    /* notices within T of the last cut */
	uint64_t notices_no_cut;  /* notices whose share was not below the rate */
	uint64_t pre_cut_reports; /* INT reports on data sent before the last cut */
	uint64_t jumps;           /* full updates that took the ramp-up jump */
};

struct acc_state {
	struct cc cc;
	struct hpcc_core core;
	double u_floor;
	double u_peak;            /* largest u in this reference period */
	double rc_measured;       /* the reference the period's reports measure: the one
				   * before the last full update (or the cut rate) */
	uint64_t max_snd_nxt;     /* largest snd_nxt seen in an INT report */
	uint64_t cut_seq;         /* max_snd_nxt at the last cut */
	qp_time_ns last_cut_ns;
	bool cut_once;            /* a cut happened: last_cut_ns is meaningful */
	bool fair;                /* the fair anchor (c) */
	double fair_bps;          /* eta * B / n of the last notice; 0 = none yet */
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
	s->u_floor = p->u_floor;
	s->fair = p->fair;
	s->fair_bps = 0;
	s->u_peak = 0;
	s->rc_measured = s->core.rc_bps;
	s->max_snd_nxt = 0;
	s->cut_seq = 0;
	s->cut_once = false;
}

static unsigned acc_on_notice(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct acc_state *s = to_acc(cc);
	struct hpcc_core *h = &s->core;
	const struct cc_notice *n = &ev->u.notice;
	double flows = n->flows ? (double)n->flows : 1.0;
	double share;
	unsigned act;

	if (s->cut_once && qp_time_since(now, s->last_cut_ns) < h->t_ns) {
		s->stats.notices_held++;
		return 0;
	}
	share = (h->p.eta * (double)n->link_bps -
		 (double)n->queue_bytes * 8.0 * 1e9 / (double)h->t_ns) / flows;
	if (s->fair) {
		s->fair_bps = h->p.eta * (double)n->link_bps / flows;
		if (share < s->fair_bps)
			share = s->fair_bps;
	}
	if (share >= (double)cc->rate_bps) {
		s->stats.notices_no_cut++;
		return 0;
	}
	s->cut_once = true;
	s->last_cut_ns = now;
	s->cut_seq = s->max_snd_nxt;
	if (s->cut_seq > h->last_update_seq)
		h->last_update_seq = s->cut_seq;
	s->u_peak = 0;
	s->stats.cuts++;
	act = hpcc_core_set_reference(h, cc, share); /* clamps at min_rate */
	s->rc_measured = h->rc_bps;
	return act;
}

/* Full update: HPCC's, then the ramp-up jump when the period showed idle capacity. */
static unsigned acc_full_update(struct acc_state *s, const struct cc_int_report *r)
{
	struct hpcc_core *h = &s->core;
	double rc_measured = s->rc_measured;
	double u_peak = s->u_peak;
	unsigned act;

	s->rc_measured = h->rc_bps;
	act = hpcc_core_react(h, &s->cc, r, true);
	s->u_peak = 0;
	if (u_peak < h->p.eta) {
		double jump = rc_measured * h->p.eta / (u_peak > s->u_floor ? u_peak : s->u_floor);
		if (s->fair_bps > 0 && jump > s->fair_bps)
			jump = s->fair_bps;
		if (jump > h->rc_bps) {
			s->stats.jumps++;
			act |= hpcc_core_set_reference(h, &s->cc, jump);
		}
	}
	return act;
}

static unsigned acc_on_int(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct acc_state *s = to_acc(cc);
	const struct cc_int_report *r = &ev->u.int_report;
	enum hpcc_kind kind;
	double u = 0;

	(void)now;
	if (r->snd_nxt > s->max_snd_nxt)
		s->max_snd_nxt = r->snd_nxt;
	kind = hpcc_core_observe(&s->core, r, &u);
	if (kind != HPCC_FULL && kind != HPCC_FAST)
		return 0;
	if (u > s->u_peak)
		s->u_peak = u;
	if (r->seq < s->cut_seq) { /* data sent before the cut: hops and EWMA only */
		s->stats.pre_cut_reports++;
		return 0;
	}
	if (kind == HPCC_FAST)
		return hpcc_core_react(&s->core, cc, r, false);
	return acc_full_update(s, r);
}

const struct cc_ops cc_acc_ops = {
	.name = "acc",
	.summary = "HPCC plus a sub-RTT cut on switch notices and a one-step ramp-up into "
		   "idle capacity",
	.params = acc_params_table,
	.params_size = sizeof(struct acc_params),
	.state_size = sizeof(struct acc_state),
	.check = acc_check,
	.init = acc_init,
	.on = { [CC_EV_INT] = acc_on_int, [CC_EV_NOTICE] = acc_on_notice },
	/* Notices from a queue of one BDP (the switch's default) are what ACC's first RTT is
	 * designed for; at that threshold a cut alone would send an incast to min_rate, so
	 * it runs with the fair anchor (c). */
	.feedback = { .notice_bytes = 0, .params = "fair=1" },
};
