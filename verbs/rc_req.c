/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC requester: segmentation, the window, AckReq, READ and atomic requests and their
 * limit, ACK/NAK processing (implicit NAKs of READs and atomics included), go-back-N, the
 * local ACK timer with backoff and the RNR wait (rules in qpace/rc.h). Their responses are
 * rc_rdresp.c's. */
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
	/* one request packet, whatever the response's length */
	[QP_OP_READ] = { FRAME_OP_RC_READ_REQUEST, FRAME_OP_RC_READ_REQUEST,
			 FRAME_OP_RC_READ_REQUEST, FRAME_OP_RC_READ_REQUEST },
	[QP_OP_CMP_SWAP] = { FRAME_OP_RC_CMP_SWAP },
	[QP_OP_FETCH_ADD] = { FRAME_OP_RC_FETCH_ADD },
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

void rc_req_progress(struct rc_qp *qp, uint32_t to, qp_time_ns now)
{
	struct rc_req *r = &qp->req;

	r->una = to;
	r->retries_left = qp->p.retry_cnt;
	r->rnr_left = qp->p.rnr_retry;
	r->backoff = 0;
	r->timeouts_run = 0;
	r->nak_fresh = false;
	r->rto_at = rc_psn_diff(r->max, r->una) > 0 ? rto_deadline(qp, now) : QP_TIME_NEVER;
	rc_dl_changed(qp);
	if (rc_psn_diff(r->tx_psn, r->una) < 0)
		req_seek(qp, r->una);
}

unsigned rc_req_acked(struct rc_qp *qp, uint32_t end, qp_time_ns now)
{
	struct rc_req *r = &qp->req;
	const struct rc_swqe *w = NULL;
	uint32_t to = end;
	bool implicit = false;

	while (qp->sq_head != qp->sq_tail) {
		w = rc_sq_at(qp, qp->sq_head);
		if (rc_psn_diff(rc_psn_add(w->first_psn, w->npkts), end) > 0 ||
		    qp_op_is_rd_atomic((enum qp_opcode)w->op))
			break;
		qp->sq_head++;
		rc_complete_send(qp, w, QP_WC_SUCCESS);
		w = NULL;
	}
	/* A READ or atomic at the head is acknowledged by its own responses only: what was
	 * not answered of it is not acknowledged by a later PSN, which says it was lost. */
	if (w && qp_op_is_rd_atomic((enum qp_opcode)w->op) &&
	    rc_psn_diff(w->first_psn, end) < 0) {
		to = rc_psn_diff(r->una, w->first_psn) > 0 ? r->una : w->first_psn;
		implicit = rc_psn_diff(rc_psn_add(w->first_psn, w->npkts), end) <= 0;
	}
	if (rc_psn_diff(to, r->una) > 0) {
		rc_req_progress(qp, to, now);
		return RC_ACKED_NEWS | (implicit ? RC_ACKED_IMPLICIT : 0);
	}
	return implicit ? RC_ACKED_IMPLICIT : 0;
}

bool rc_req_tx_pending(const struct rc_qp *qp)
{
	const struct rc_req *r = &qp->req;
	const struct rc_swqe *w;

	if (qp->state != RC_RTS || r->rnr_at != QP_TIME_NEVER || r->tx_idx == qp->sq_tail ||
	    rc_psn_diff(r->tx_psn, r->una) >= (int32_t)rc_window(qp))
		return false;
	/* A READ or atomic not yet sent waits for one of max_rd_atomic to complete. */
	w = rc_sq_at(qp, r->tx_idx);
	return !(qp_op_is_rd_atomic((enum qp_opcode)w->op) && !w->rd_sent &&
		 r->rd_out >= qp->p.max_rd_atomic);
}

/* The request of READ or atomic @w sent from PSN tx_psn (inside a READ when sent again). */
static void req_rd_packet(struct rc_qp *qp, struct rc_swqe *w, struct frame_roce_spec *s)
{
	struct rc_req *r = &qp->req;
	uint64_t off = (uint64_t)rc_psn_diff(r->tx_psn, w->first_psn) * qp->conn.mtu_bytes;
	const struct rc_atomic_args *a = &qp->aargs[w->imm];

	s->bth = (struct frame_bth){ .opcode = req_opcodes[w->op][POS_ONLY], .pkey = 0xffff,
				     .dest_qp = qp->conn.dest_qpn, .ackreq = true,
				     .psn = r->tx_psn };
	s->reth = (struct frame_reth){ 0 };
	s->aeth = (struct frame_aeth){ 0 };
	s->imm = 0;
	s->payload = NULL;
	s->payload_len = 0;
	if (w->op == QP_OP_READ) {
		s->reth = (struct frame_reth){ .va = w->remote_addr + off, .rkey = w->rkey,
					       .dma_len = (uint32_t)(w->len - off) };
		qp->st.reads_tx++;
	} else {
		s->atomic = (struct frame_atomiceth){
			.va = w->remote_addr, .rkey = w->rkey,
			.swap_add = w->op == QP_OP_CMP_SWAP ? a->swap : a->compare_add,
			.compare = w->op == QP_OP_CMP_SWAP ? a->compare_add : 0 };
		qp->st.atomics_tx++;
	}
	if (!w->rd_sent) {
		w->rd_sent = true;
		r->rd_out++;
	}
	r->since_ackreq = 0;
}

bool rc_req_tx(struct rc_qp *qp, qp_time_ns now, struct frame_roce_spec *s)
{
	struct rc_req *r = &qp->req;
	struct rc_swqe *w;
	uint32_t idx, mtu = qp->conn.mtu_bytes, n;
	uint64_t off;
	bool first, last, ackreq;
	int pos;

	if (!rc_req_tx_pending(qp))
		return false;
	w = rc_sq_at(qp, r->tx_idx);
	if (qp_op_is_rd_atomic((enum qp_opcode)w->op)) {
		/* one packet for every PSN from tx_psn to the end of the response */
		uint32_t end = rc_psn_add(w->first_psn, w->npkts);

		req_rd_packet(qp, w, s);
		if (rc_psn_diff(r->tx_psn, r->max) < 0)
			qp->st.retrans_pkts++;
		if (rc_psn_diff(end, r->max) > 0)
			r->max = end;
		qp->st.tx_pkts++;
		if (r->rto_at == QP_TIME_NEVER) {
			r->rto_at = rto_deadline(qp, now);
			rc_dl_changed(qp);
		}
		r->tx_psn = end;
		r->tx_idx++;
		return true;
	}
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

void rc_req_go_back(struct rc_qp *qp, uint32_t psn, bool progress, qp_time_ns now)
{
	struct rc_req *r = &qp->req;

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
	unsigned acked;
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

	acked = rc_req_acked(qp, psn, now);
	progress = acked & RC_ACKED_NEWS;
	if (progress)
		rc_ev_acked(qp, kind == 0, p->bth.psn, p->bth.becn, unacked, now);
	if (acked & RC_ACKED_IMPLICIT) {
		/* a READ or atomic before psn had no response: send again from it */
		qp->st.implicit_naks++;
		if (kind == 3 && (syn & 31) == RC_NAK_PSN_SEQ)
			qp->st.naks_rx++;
		rc_req_go_back(qp, r->una, progress, now);
		return 0;
	}
	if (kind == 0) {
		qp->st.acks_rx++;
		return 0;
	}
	if (kind == 1) {
		req_rnr(qp, psn, syn & 31, now);
		return 0;
	}
	if ((syn & 31) == RC_NAK_PSN_SEQ) {
		qp->st.naks_rx++;
		rc_req_go_back(qp, psn, progress, now);
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
