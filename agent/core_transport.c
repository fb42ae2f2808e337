/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core's transport intake (qpace/agent.h, agent_qp_transport): what a QP's
 * transport saw — ACKs, RTT samples, NAKs, timeouts — as the cc events its algorithm takes.
 * One table maps each kind of event to its cc event and counter; the 24-bit PSNs are
 * extended per QP, as INT's are (agent_psn_extend). */
#include "core_priv.h"

static const struct {
	enum cc_event_type cc;
	enum agent_counter counter;
} tp_kinds[] = {
	[AGENT_TP_ACK] = { CC_EV_ACKED, AGENT_C_TP_ACKS },
	[AGENT_TP_RTT] = { CC_EV_RTT, AGENT_C_TP_RTT },
	[AGENT_TP_NAK] = { CC_EV_NAK, AGENT_C_TP_NAKS },
	[AGENT_TP_TIMEOUT] = { CC_EV_TIMEOUT, AGENT_C_TP_TIMEOUTS },
};
#define TP_KINDS (sizeof(tp_kinds) / sizeof(tp_kinds[0]))

/* Feed @ev when the QP's algorithm takes it; CC_ACT_* bits (0 for a rejected event). */
static unsigned feed(struct agent *a, struct agent_qp *q, unsigned needs,
		     const struct cc_event *ev, qp_time_ns now)
{
	uint64_t rejected;
	unsigned act;

	if (!(needs & cc_event_need(ev->type)))
		return 0;
	rejected = q->cc->stats.rejected[ev->type];
	act = cc_event(q->cc, ev, now);
	if (q->cc->stats.rejected[ev->type] != rejected)
		agent_note(a, AGENT_C_FB_CC_REJECTED, "qp 0x%06x: %s rejected a transport event "
			   "(type %d)", q->reg.qpn, q->cc->ops->name, ev->type);
	return act;
}

static unsigned rtt_sample(struct agent *a, struct agent_qp *q, unsigned needs,
			   const struct agent_tp_event *e, qp_time_ns now)
{
	struct cc_event ev = { .type = CC_EV_RTT };

	if (!e->rtt_ns)
		return 0;
	q->rtt_ns = e->rtt_ns;
	ev.u.rtt = (struct cc_rtt){ .rtt_ns = e->rtt_ns, .host_ns = e->host_ns };
	return feed(a, q, needs, &ev, now);
}

unsigned agent_qp_transport(struct agent *a, uint32_t qpn, const struct agent_tp_event *e,
			    qp_time_ns now)
{
	uint32_t idx = agent_map_find_qpn(a, qpn);
	struct agent_qp *q;
	struct cc_event ev = { 0 };
	uint64_t snd = 0, psn = 0;
	unsigned needs, act = 0;

	if (!e->type || e->type >= TP_KINDS)
		return 0;
	if (idx == AGENT_NO_IDX) {
		a->counters[AGENT_C_TP_UNKNOWN]++;
		return 0;
	}
	q = &a->qps[idx];
	a->counters[tp_kinds[e->type].counter]++;
	/* the highest first: the extension follows the sender's newest PSN */
	if (e->flags & AGENT_TP_F_SND)
		snd = agent_psn_extend(&q->tp_psn_valid, &q->tp_psn64_max, e->snd_psn);
	if (e->flags & AGENT_TP_F_PSN)
		psn = agent_psn_extend(&q->tp_psn_valid, &q->tp_psn64_max, e->psn);
	needs = cc_needs(q->cc->ops);
	ev.type = tp_kinds[e->type].cc;
	switch (e->type) {
	case AGENT_TP_ACK:
		ev.u.ack = (struct cc_ack){ .bytes = e->bytes, .psn = psn, .snd_psn = snd,
					    .ecn = e->ecn };
		act = feed(a, q, needs, &ev, now);
		if (e->rtt_ns)      /* the ACK's sample, after it */
			a->counters[AGENT_C_TP_RTT]++;
		act |= rtt_sample(a, q, needs, e, now);
		break;
	case AGENT_TP_RTT:
		act = rtt_sample(a, q, needs, e, now);
		break;
	default:
		ev.u.loss = (struct cc_loss){ .psn = psn, .snd_psn = snd, .count = e->count };
		act = feed(a, q, needs, &ev, now);
		break;
	}
	return agent_after_cc(a, idx, act, now);
}

unsigned agent_qp_needs(const struct agent *a, uint32_t qpn)
{
	uint32_t idx = agent_map_find_qpn(a, qpn);

	return idx == AGENT_NO_IDX ? 0 : cc_needs(a->qps[idx].cc->ops);
}

const struct cc *agent_qp_cc(const struct agent *a, uint32_t qpn)
{
	uint32_t idx = agent_map_find_qpn(a, qpn);

	return idx == AGENT_NO_IDX ? NULL : a->qps[idx].cc;
}
