/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC requester: segmentation, the window, AckReq, ACK/NAK processing, go-back-N, the
 * local ACK timer with backoff and the RNR wait (rules in qpace/rc.h). */
#include "rc_int.h"

/* Request opcodes by WR opcode and packet position. */
enum { POS_ONLY = 0, POS_FIRST, POS_MIDDLE, POS_LAST };
static const uint8_t req_opcodes[QP_OP_COUNT][4] = {
	[QP_OP_WRITE] = { FRAME_OP_RC_WRITE_ONLY, FRAME_OP_RC_WRITE_FIRST,
			  FRAME_OP_RC_WRITE_MIDDLE, FRAME_OP_RC_WRITE_LAST },
	[QP_OP_WRITE_IMM] = { FRAME_OP_RC_WRITE_ONLY_IMM, FRAME_OP_RC_WRITE_FIRST,
			      FRAME_OP_RC_WRITE_MIDDLE, FRAME_OP_RC_WRITE_LAST_IMM },
	[QP_OP_SEND] = { FRAME_OP_RC_SEND_ONLY, FRAME_OP_RC_SEND_FIRST,
			 FRAME_OP_RC_SEND_MIDDLE, FRAME_OP_RC_SEND_LAST },
	[QP_OP_SEND_IMM] = { FRAME_OP_RC_SEND_ONLY_IMM, FRAME_OP_RC_SEND_FIRST,
			     FRAME_OP_RC_SEND_MIDDLE, FRAME_OP_RC_SEND_LAST_IMM },
};

/* NAK codes that end the QP, and the status their WR completes with. */
static const enum qp_wc_status nak_status[4] = {
	[RC_NAK_PSN_SEQ] = QP_WC_SUCCESS,   /* not an error: go back N */
	[RC_NAK_INV_REQ] = QP_WC_REM_INV_REQ_ERR,
	[RC_NAK_REM_ACCESS] = QP_WC_REM_ACCESS_ERR,
	[RC_NAK_REM_OP] = QP_WC_REM_OP_ERR,
};

void rc_req_init(struct rc_qp *qp)
{
	struct rc_req *r = &qp->req;
	uint32_t psn = qp->p.sq_psn;

	*r = (struct rc_req){ .next_psn = psn, .una = psn, .max = psn, .tx_psn = psn,
			      .retries_left = qp->p.retry_cnt, .rnr_left = qp->p.rnr_retry,
			      .rto_at = QP_TIME_NEVER, .rnr_at = QP_TIME_NEVER };
	rc_dl_changed(qp);
}

static qp_time_ns rto_deadline(const struct rc_qp *qp, qp_time_ns now)
{
	if (!qp->p.rto_ns)
		return QP_TIME_NEVER;
	return now + (qp->p.rto_ns << qp->req.backoff);
}

/* Send from @psn next (go back N). @psn is in [una, next_psn]. */
static void req_seek(struct rc_qp *qp, uint32_t psn)
{
	struct rc_req *r = &qp->req;

	r->tx_psn = psn;
	r->since_ackreq = 0;
	for (uint32_t i = qp->sq_head; i != qp->sq_tail; i++) {
		const struct rc_swqe *w = rc_sq_at(qp, i);
		int32_t d = rc_psn_diff(psn, w->first_psn);

		if (d >= 0 && (uint32_t)d < w->npkts) {
			r->tx_idx = i;
			return;
		}
	}
	r->tx_idx = qp->sq_tail;
}

/* Every PSN before @end is acknowledged. Returns true when that is news. */
static bool req_acked(struct rc_qp *qp, uint32_t end, qp_time_ns now)
{
	struct rc_req *r = &qp->req;

	if (rc_psn_diff(end, r->una) <= 0)
		return false;
	r->una = end;
	while (qp->sq_head != qp->sq_tail) {
		const struct rc_swqe *w = rc_sq_at(qp, qp->sq_head);

		if (rc_psn_diff(rc_psn_add(w->first_psn, w->npkts), end) > 0)
			break;
		qp->sq_head++;
		rc_complete_send(qp, w, QP_WC_SUCCESS);
	}
	r->retries_left = qp->p.retry_cnt;
	r->rnr_left = qp->p.rnr_retry;
	r->backoff = 0;
	r->timeouts_run = 0;
	r->nak_fresh = false;
	r->rto_at = rc_psn_diff(r->max, r->una) > 0 ? rto_deadline(qp, now) : QP_TIME_NEVER;
	rc_dl_changed(qp);
	if (rc_psn_diff(r->tx_psn, r->una) < 0)
		req_seek(qp, r->una);
	return true;
}

bool rc_req_tx_pending(const struct rc_qp *qp)
{
	const struct rc_req *r = &qp->req;

	return qp->state == RC_RTS && r->rnr_at == QP_TIME_NEVER && r->tx_idx != qp->sq_tail &&
	       rc_psn_diff(r->tx_psn, r->una) < (int32_t)rc_window(qp);
}

bool rc_req_tx(struct rc_qp *qp, qp_time_ns now, struct frame_roce_spec *s)
{
	struct rc_req *r = &qp->req;
	const struct rc_swqe *w;
	uint32_t idx, mtu = qp->conn.mtu_bytes, n;
	uint64_t off;
	bool first, last, ackreq;
	int pos;

	if (!rc_req_tx_pending(qp))
		return false;
	w = rc_sq_at(qp, r->tx_idx);
	idx = (uint32_t)rc_psn_diff(r->tx_psn, w->first_psn);
	first = idx == 0;
	last = idx + 1 == w->npkts;
	pos = first && last ? POS_ONLY : first ? POS_FIRST : last ? POS_LAST : POS_MIDDLE;
	off = (uint64_t)idx * mtu;
	n = last ? (uint32_t)(w->len - off) : mtu;

	r->since_ackreq++;
	ackreq = last || r->since_ackreq >= qp->p.ackreq_every ||
		 rc_psn_diff(r->tx_psn, r->una) + 1 >= (int32_t)rc_window(qp);
	if (ackreq)
		r->since_ackreq = 0;

	s->bth = (struct frame_bth){ .opcode = req_opcodes[w->op][pos], .pkey = 0xffff,
				     .dest_qp = qp->conn.dest_qpn, .ackreq = ackreq,
				     .psn = r->tx_psn };
	s->reth = (struct frame_reth){ 0 };
	if (first && (w->op == QP_OP_WRITE || w->op == QP_OP_WRITE_IMM))
		s->reth = (struct frame_reth){ .va = w->remote_addr, .rkey = w->rkey,
					       .dma_len = w->len };
	s->aeth = (struct frame_aeth){ 0 };
	s->imm = w->imm;
	s->payload = n ? w->buf + off : NULL;
	s->payload_len = n;

	if (rc_psn_diff(r->tx_psn, r->max) < 0) {
		qp->st.retrans_pkts++;
		rc_ev_sent(qp, r->tx_psn, true, now);
	} else {
		r->max = rc_psn_add(r->tx_psn, 1);
		rc_ev_sent(qp, r->tx_psn, false, now);
	}
	qp->st.tx_pkts++;
	qp->st.tx_bytes += n;
	if (r->rto_at == QP_TIME_NEVER) {
		r->rto_at = rto_deadline(qp, now);
		rc_dl_changed(qp);
	}
	r->tx_psn = rc_psn_add(r->tx_psn, 1);
	if (last)
		r->tx_idx++;
	return true;
}

static void req_rnr(struct rc_qp *qp, uint32_t psn, uint8_t timer, qp_time_ns now)
{
	struct rc_req *r = &qp->req;

	if (r->rnr_at != QP_TIME_NEVER && psn == r->rnr_psn)
		return;   /* a duplicate of the NAK being waited out */
	qp->st.rnr_rx++;
	if (qp->p.rnr_retry != 7) {
		if (!r->rnr_left) {
			rc_fail(qp, QP_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		r->rnr_left--;
	}
	r->rnr_psn = psn;
	r->rnr_at = now + rc_rnr_timer_ns(timer);
	r->rto_at = QP_TIME_NEVER;
	rc_dl_changed(qp);
}

static void req_nak_seq(struct rc_qp *qp, uint32_t psn, bool progress, qp_time_ns now)
{
	struct rc_req *r = &qp->req;

	qp->st.naks_rx++;
	if (r->rnr_at != QP_TIME_NEVER)
		return;   /* the RNR wait ends with a go-back anyway */
	if (!progress && r->nak_fresh && psn == r->nak_psn)
		return;   /* duplicate NAK: already sending again from psn */
	r->nak_psn = psn;
	r->nak_fresh = true;
	req_seek(qp, psn);
	r->rto_at = rto_deadline(qp, now);
	rc_dl_changed(qp);
	rc_ev_nak(qp, psn, now);
}

int rc_req_rx(struct rc_qp *qp, const struct frame_parsed *p, qp_time_ns now)
{
	struct rc_req *r = &qp->req;
	uint32_t psn = p->bth.psn;
	uint8_t syn = p->aeth.syndrome, kind = syn >> 5;
	bool progress;

	if (p->payload_len)
		return rc_drop(qp, RC_DROP_HEADER);
	if (kind != 0 && kind != 1 && kind != 3)
		return rc_drop(qp, RC_DROP_SYNDROME);
	if (kind == 3 && (syn & 31) > RC_NAK_REM_OP)
		return rc_drop(qp, RC_DROP_SYNDROME);
	if (kind == 0)   /* ACK: psn and everything before it */
		psn = rc_psn_add(psn, 1);
	/* ACK: una-1 < psn <= max - 1; NAK: una <= psn < max (what it refers to was sent). */
	if (rc_psn_diff(psn, r->max) > (kind == 0 ? 0 : -1))
		return rc_drop(qp, RC_DROP_ACK_RANGE);
	if (rc_psn_diff(psn, r->una) < (kind == 0 ? 1 : 0))
		return rc_drop(qp, RC_DROP_ACK_STALE);

	uint64_t unacked = qp->p.on_event ? rc_sq_unacked_bytes(qp) : 0;

	progress = req_acked(qp, psn, now);
	if (progress)
		rc_ev_acked(qp, kind == 0, p->bth.psn, p->bth.becn, unacked, now);
	if (kind == 0) {
		qp->st.acks_rx++;
		return 0;
	}
	if (kind == 1) {
		req_rnr(qp, psn, syn & 31, now);
		return 0;
	}
	if ((syn & 31) == RC_NAK_PSN_SEQ) {
		req_nak_seq(qp, psn, progress, now);
		return 0;
	}
	rc_fail(qp, nak_status[syn & 31]);
	return 0;
}

void rc_req_tick(struct rc_qp *qp, qp_time_ns now)
{
	struct rc_req *r = &qp->req;

	if (r->rnr_at <= now) {
		r->rnr_at = QP_TIME_NEVER;
		rc_dl_changed(qp);
		req_seek(qp, rc_psn_diff(r->rnr_psn, r->una) >= 0 ? r->rnr_psn : r->una);
	}
	if (r->rto_at > now)
		return;
	if (rc_psn_diff(r->max, r->una) <= 0) {
		r->rto_at = QP_TIME_NEVER;
		rc_dl_changed(qp);
		return;
	}
	qp->st.timeouts++;
	r->timeouts_run++;
	rc_ev_timeout(qp, now);
	if (!r->retries_left) {
		rc_fail(qp, QP_WC_RETRY_EXC_ERR);
		return;
	}
	r->retries_left--;
	if (r->backoff < qp->p.rto_backoff_max)
		r->backoff++;
	r->nak_fresh = false;
	req_seek(qp, r->una);
	r->rto_at = rto_deadline(qp, now);
	rc_dl_changed(qp);
}
