/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RC's transport events for its owner's congestion control, and the responder's ECN
 * echo (the rules are in qpace/rc.h). Nothing here runs unless the QP was created with
 * rc_params.on_event (send times, events) or rc_params.ecn_echo (BECN on ACKs), so a QP
 * without either behaves, and puts on the wire, exactly what it did before.
 *
 * Send times: the low 32 bits of the clock, so an RTT sample is right up to 4.29 s (a
 * PSN's ACK comes long before: the local ACK timeout resends it within 0.54 s at the
 * default timeout and backoff, and a resent PSN gives no sample). Bit 0 of a stamp marks
 * a PSN sent more than once, at the cost of 1 ns of resolution. */
#include <stdlib.h>

#include "rc_int.h"

#define STAMP_RETRANS 1u

int rc_ev_alloc(struct rc_qp *qp)
{
	uint32_t n = 1;

	if (!qp->p.on_event)
		return 0;
	while (n < qp->p.window_pkts)
		n <<= 1;
	qp->stamp = calloc(n, sizeof(*qp->stamp));
	qp->stamp_mask = n - 1;
	return qp->stamp ? 0 : -1;
}

void rc_ev_free(struct rc_qp *qp)
{
	free(qp->stamp);
	qp->stamp = NULL;
}

void rc_ev_sent(struct rc_qp *qp, uint32_t psn, bool retrans, qp_time_ns now)
{
	if (!qp->stamp)
		return;
	qp->stamp[psn & qp->stamp_mask] = ((uint32_t)now & ~STAMP_RETRANS) |
					  (retrans ? STAMP_RETRANS : 0);
}

static void emit(struct rc_qp *qp, struct rc_event *ev, qp_time_ns now)
{
	ev->snd_psn = qp->req.max;
	qp->p.on_event(qp->p.event_arg, qp->p.qpn, ev, now);
}

void rc_ev_acked(struct rc_qp *qp, bool is_ack, uint32_t ack_psn, bool becn,
		 uint64_t unacked_before, qp_time_ns now)
{
	struct rc_event ev = { .type = RC_EV_ACK, .ce = becn, .psn = qp->req.una };
	uint64_t unacked = rc_sq_unacked_bytes(qp);

	if (!qp->p.on_event)
		return;
	ev.bytes = unacked_before > unacked ? unacked_before - unacked : 0;
	if (!ev.bytes)
		return;   /* zero-length WRITEs only: nothing a window counts */
	if (is_ack) {
		uint32_t st = qp->stamp[ack_psn & qp->stamp_mask];

		if (!(st & STAMP_RETRANS))
			ev.rtt_ns = (uint32_t)now - st;   /* 0 (the same ns): no sample */
	}
	emit(qp, &ev, now);
}

void rc_ev_nak(struct rc_qp *qp, uint32_t psn, qp_time_ns now)
{
	struct rc_event ev = { .type = RC_EV_NAK, .psn = psn };

	if (qp->p.on_event)
		emit(qp, &ev, now);
}

void rc_ev_timeout(struct rc_qp *qp, qp_time_ns now)
{
	struct rc_event ev = { .type = RC_EV_TIMEOUT, .psn = qp->req.una,
			       .count = qp->req.timeouts_run };

	if (qp->p.on_event)
		emit(qp, &ev, now);
}

void rc_set_window_cap(struct rc_qp *qp, uint32_t pkts)
{
	qp->window = pkts && pkts < qp->p.window_pkts ? pkts : 0;
}

/* ---- the responder's echo ---- */

void rc_ev_accepted(struct rc_qp *qp, uint32_t psn, bool ce)
{
	struct rc_resp *s = &qp->resp;

	if (!qp->p.ecn_echo)
		return;
	if (ce != s->ce_run && s->since_ack) {
		/* the packets before this one have the other state: an ACK of their own */
		s->split_ce = s->split_pending ? s->split_ce || s->ce_run : s->ce_run;
		s->split_psn = rc_psn_add(psn, RC_PSN_MASK);   /* psn - 1 */
		s->split_pending = true;
	}
	s->ce_run = ce;
}

bool rc_ev_split_ack(struct rc_qp *qp, struct frame_roce_spec *sp)
{
	struct rc_resp *s = &qp->resp;

	if (!s->split_pending || qp->state != RC_RTS)
		return false;
	s->split_pending = false;
	qp->st.acks_tx++;
	sp->bth = (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .pkey = 0xffff,
				      .dest_qp = qp->conn.dest_qpn, .psn = s->split_psn,
				      .becn = s->split_ce };
	sp->reth = (struct frame_reth){ 0 };
	sp->aeth = (struct frame_aeth){ .syndrome = RC_AETH_ACK | RC_AETH_ACK_UNLIMITED,
					.msn = s->msn };
	sp->imm = 0;
	sp->payload = NULL;
	sp->payload_len = 0;
	return true;
}
