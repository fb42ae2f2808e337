/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC responder: PSN checking, duplicates, one NAK per gap, coalesced ACKs, RNR NAKs,
 * remote-access and invalid-request errors, data placement and receive completions
 * (rules in qpace/rc.h); READs and atomics are rc_rdatomic.c's. */
#include <string.h>

#include "rc_int.h"

enum { F_FIRST = 1, F_LAST = 2, F_IMM = 4, F_RETH = 8 };
struct reqop {
	uint8_t kind;   /* enum rc_kind; RC_K_NONE: not a request an RC responder serves */
	uint8_t flags;
};
static const struct reqop reqops[256] = {
	[FRAME_OP_RC_SEND_FIRST] = { RC_K_SEND, F_FIRST },
	[FRAME_OP_RC_SEND_MIDDLE] = { RC_K_SEND, 0 },
	[FRAME_OP_RC_SEND_LAST] = { RC_K_SEND, F_LAST },
	[FRAME_OP_RC_SEND_LAST_IMM] = { RC_K_SEND, F_LAST | F_IMM },
	[FRAME_OP_RC_SEND_ONLY] = { RC_K_SEND, F_FIRST | F_LAST },
	[FRAME_OP_RC_SEND_ONLY_IMM] = { RC_K_SEND, F_FIRST | F_LAST | F_IMM },
	[FRAME_OP_RC_WRITE_FIRST] = { RC_K_WRITE, F_FIRST | F_RETH },
	[FRAME_OP_RC_WRITE_MIDDLE] = { RC_K_WRITE, 0 },
	[FRAME_OP_RC_WRITE_LAST] = { RC_K_WRITE, F_LAST },
	[FRAME_OP_RC_WRITE_LAST_IMM] = { RC_K_WRITE, F_LAST | F_IMM },
	[FRAME_OP_RC_WRITE_ONLY] = { RC_K_WRITE, F_FIRST | F_LAST | F_RETH },
	[FRAME_OP_RC_WRITE_ONLY_IMM] = { RC_K_WRITE, F_FIRST | F_LAST | F_RETH | F_IMM },
	[FRAME_OP_RC_READ_REQUEST] = { RC_K_READ, F_FIRST | F_LAST | F_RETH },
	[FRAME_OP_RC_CMP_SWAP] = { RC_K_ATOMIC, F_FIRST | F_LAST },
	[FRAME_OP_RC_FETCH_ADD] = { RC_K_ATOMIC, F_FIRST | F_LAST },
};

bool rc_is_request(uint8_t opcode)
{
	return reqops[opcode].kind != RC_K_NONE;
}

static void nak(struct rc_resp *s, uint8_t syndrome, uint32_t psn)
{
	s->nak_pending = true;
	s->nak_syndrome = syndrome;
	s->nak_psn = psn;
}

int rc_resp_fail(struct rc_qp *qp, uint32_t psn, enum rc_nak_code code)
{
	nak(&qp->resp, (uint8_t)(RC_AETH_NAK | code), psn);
	/* Requests before this one are answered first, as a responder that serves them in
	 * order does: the QP enters error when the NAK goes, after their responses. */
	if (qp->resp.rd_active && qp->state == RC_RTS)
		qp->resp.fail_pending = true;
	else
		rc_set_error(qp);
	return rc_drop(qp, RC_DROP_INVALID);
}

static void complete_recv(struct rc_qp *qp, enum qp_wc_status status, enum qp_wc_opcode opc,
			  uint32_t byte_len, bool has_imm, uint32_t imm)
{
	const struct rc_rwqe *r = rc_rq_at(qp, qp->rq_head++);
	struct qp_wc wc = { .wr_id = r->wr_id, .status = status, .opcode = opc,
			    .byte_len = byte_len, .imm = has_imm ? imm : 0, .has_imm = has_imm };

	rc_cq_push(qp, &wc);
}

/* WRITE FIRST/ONLY: the RETH must name writable memory that holds the whole message. */
static int write_begin(struct rc_qp *qp, const struct frame_reth *reth, uint32_t psn)
{
	struct rc_resp *s = &qp->resp;
	struct rc_region rg;

	if (reth->dma_len > RC_MSG_MAX_BYTES)
		return rc_resp_fail(qp, psn, RC_NAK_INV_REQ);
	s->dst = NULL;
	s->resid = s->total = reth->dma_len;
	if (!reth->dma_len)
		return 0;   /* a zero-length WRITE touches no memory: no key check (IBTA) */
	if (!qp->p.mr_find(qp->p.mr_arg, reth->rkey, &rg) || !rg.remote_write ||
	    reth->va < rg.va || reth->dma_len > rg.len || reth->va - rg.va > rg.len - reth->dma_len)
		return rc_resp_fail(qp, psn, RC_NAK_REM_ACCESS);
	s->dst = rg.base + (reth->va - rg.va);
	return 0;
}

static int place_write(struct rc_qp *qp, const struct frame_parsed *p, const uint8_t *data,
		       uint8_t flags)
{
	struct rc_resp *s = &qp->resp;
	uint32_t n = p->payload_len;
	int rc;

	if (flags & F_RETH) {
		rc = write_begin(qp, &p->reth, p->bth.psn);
		if (rc < 0)
			return rc;
	}
	if (n > s->resid || ((flags & F_LAST) && s->resid != n))
		return rc_resp_fail(qp, p->bth.psn, RC_NAK_INV_REQ);
	if (n) {
		memcpy(s->dst, data, n);
		s->dst += n;
	}
	s->resid -= n;
	if ((flags & F_LAST) && (flags & F_IMM))
		complete_recv(qp, QP_WC_SUCCESS, QP_WC_RECV_WRITE_IMM, s->total, true, p->imm);
	return 0;
}

static int place_send(struct rc_qp *qp, const struct frame_parsed *p, const uint8_t *data,
		      uint8_t flags)
{
	struct rc_resp *s = &qp->resp;
	const struct rc_rwqe *r = rc_rq_at(qp, qp->rq_head);
	uint32_t n = p->payload_len;

	if (flags & F_FIRST)
		s->off = 0;
	if (n > r->len - s->off) {
		complete_recv(qp, QP_WC_LOC_LEN_ERR, QP_WC_RECV, s->off, false, 0);
		return rc_resp_fail(qp, p->bth.psn, RC_NAK_INV_REQ);
	}
	if (n)
		memcpy(r->buf + s->off, data, n);
	s->off += n;
	if (flags & F_LAST)
		complete_recv(qp, QP_WC_SUCCESS, QP_WC_RECV, s->off, flags & F_IMM, p->imm);
	return 0;
}

int rc_resp_rx(struct rc_qp *qp, const uint8_t *frame, const struct frame_parsed *p)
{
	struct rc_resp *s = &qp->resp;
	const struct reqop *op = &reqops[p->bth.opcode];
	uint32_t n = p->payload_len, mtu = qp->conn.mtu_bytes;
	int32_t d = rc_psn_diff(p->bth.psn, s->epsn);
	bool needs_recv;
	int rc;

	if (s->fail_pending)
		return rc_drop(qp, RC_DROP_STATE);   /* what follows the error is not served */

	if (d > 0) {
		if (!s->nak_sent) {
			nak(s, RC_AETH_NAK | RC_NAK_PSN_SEQ, s->epsn);
			s->nak_sent = true;
		}
		return rc_drop(qp, RC_DROP_OUT_OF_SEQ);
	}
	if (d < 0) {
		if (op->kind == RC_K_READ || op->kind == RC_K_ATOMIC)
			return rc_rd_dup(qp, p, op->kind);
		s->ack_pending = true;
		return rc_drop(qp, RC_DROP_DUPLICATE);
	}
	/* READ and atomics stand alone (between messages) and carry no data. */
	if (op->kind == RC_K_READ || op->kind == RC_K_ATOMIC)
		return s->kind != RC_K_NONE || n ? rc_resp_fail(qp, p->bth.psn, RC_NAK_INV_REQ)
						 : rc_rd_new(qp, p, op->kind);
	/* Opcode sequence: a FIRST/ONLY starts a message, MIDDLE/LAST continue the same kind. */
	if (s->kind == RC_K_NONE ? !(op->flags & F_FIRST)
				 : (op->flags & F_FIRST) || op->kind != s->kind)
		return rc_resp_fail(qp, p->bth.psn, RC_NAK_INV_REQ);
	/* FIRST/MIDDLE carry exactly one MTU, LAST 1..MTU, ONLY 0..MTU. */
	if (n > mtu || (!(op->flags & F_LAST) && n != mtu) ||
	    ((op->flags & (F_FIRST | F_LAST)) == F_LAST && n == 0))
		return rc_resp_fail(qp, p->bth.psn, RC_NAK_INV_REQ);
	needs_recv = op->kind == RC_K_SEND ? op->flags & F_FIRST : op->flags & F_IMM;
	if (needs_recv && qp->rq_head == qp->rq_tail) {
		nak(s, (uint8_t)(RC_AETH_RNR | qp->p.min_rnr_timer), p->bth.psn);
		s->nak_sent = true;
		return rc_drop(qp, RC_DROP_RNR);
	}
	rc = op->kind == RC_K_WRITE ? place_write(qp, p, frame + p->payload_off, op->flags)
				    : place_send(qp, p, frame + p->payload_off, op->flags);
	if (rc < 0)
		return rc;

	rc_ev_accepted(qp, p->bth.psn, (p->ip.tos & 3) == FRAME_ECN_CE);
	s->epsn = rc_psn_add(s->epsn, 1);
	s->nak_sent = false;
	s->since_ack++;
	qp->st.rx_pkts++;
	qp->st.rx_bytes += n;
	s->kind = op->kind;
	if (op->flags & F_LAST) {
		s->kind = RC_K_NONE;
		s->msn = rc_psn_add(s->msn, 1);
		qp->st.rx_msgs++;
	}
	if (p->bth.ackreq || (qp->p.ack_every && s->since_ack >= qp->p.ack_every))
		s->ack_pending = true;
	return 0;
}

bool rc_resp_tx(struct rc_qp *qp, struct frame_roce_spec *sp)
{
	struct rc_resp *s = &qp->resp;
	uint8_t syn;
	uint32_t psn;

	if (qp->state == RC_RTS && s->rd_active && rc_rd_tx(qp, sp))
		return true;   /* answers first: an ACK after them, never before */
	if (rc_ev_split_ack(qp, sp))
		return true;
	if (s->nak_pending) {
		syn = s->nak_syndrome;
		psn = s->nak_psn;
		s->nak_pending = false;
		if (syn == (RC_AETH_NAK | RC_NAK_PSN_SEQ))
			qp->st.naks_tx++;
		else if ((syn >> 5) == (RC_AETH_RNR >> 5))
			qp->st.rnr_tx++;
		else
			qp->st.errs_tx++;
	} else if (s->ack_pending && qp->state == RC_RTS) {
		syn = RC_AETH_ACK | RC_AETH_ACK_UNLIMITED;
		psn = rc_psn_add(s->epsn, RC_PSN_MASK);   /* epsn - 1 */
		qp->st.acks_tx++;
	} else {
		return false;
	}
	s->ack_pending = false;
	s->since_ack = 0;
	sp->bth = (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .pkey = 0xffff,
				      .dest_qp = qp->conn.dest_qpn, .psn = psn,
				      .becn = qp->p.ecn_echo && s->ce_run };
	sp->reth = (struct frame_reth){ 0 };
	sp->aeth = (struct frame_aeth){ .syndrome = syn, .msn = s->msn };
	sp->imm = 0;
	sp->payload = NULL;
	sp->payload_len = 0;
	if (s->fail_pending) {   /* the class C NAK after the answers before it */
		s->fail_pending = false;
		rc_set_error(qp);
	}
	return true;
}
