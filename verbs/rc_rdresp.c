/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC requester: READ responses and atomic ACKs (IBTA vol. 1, 9.7.5.1; rules in
 * qpace/rc.h). A response is for the oldest WR not completed and must come at its next
 * PSN (una): it first acknowledges every PSN before it (rc_req_acked: SEND/WRITE WRs
 * ending earlier complete; a READ or atomic passed over lost its response, an implicit
 * NAK), then it must fit that WR's next packet exactly, by opcode and length, or it is
 * dropped. A READ response past una is a gap in the data: send the READ again from una
 * (once per gap), as an implied NAK (rxe waits for its timer instead; a NIC resends).
 * Data lands at the packet's place in the WR's buffer; an atomic's original value
 * (big-endian on the wire) is written there in host order, as rxe does. */
#include <string.h>

#include "rc_int.h"

enum { R_FIRST = 1, R_LAST = 2, R_AETH = 4, R_READ = 8, R_ATOMIC = 16 };
static const uint8_t resp_ops[256] = {
	[FRAME_OP_RC_READ_RESP_FIRST] = R_READ | R_FIRST | R_AETH,
	[FRAME_OP_RC_READ_RESP_MIDDLE] = R_READ,
	[FRAME_OP_RC_READ_RESP_LAST] = R_READ | R_LAST | R_AETH,
	[FRAME_OP_RC_READ_RESP_ONLY] = R_READ | R_FIRST | R_LAST | R_AETH,
	[FRAME_OP_RC_ATOMIC_ACK] = R_ATOMIC | R_FIRST | R_LAST | R_AETH,
};

bool rc_is_response(uint8_t opcode)
{
	return resp_ops[opcode] != 0;
}

/* A READ or atomic's response packet at @psn (== una) fits @w: its opcode is the one of
 * its place (FIRST/ONLY starts, LAST/ONLY ends), and a READ's data the place's length. */
static bool fits(const struct rc_qp *qp, const struct rc_swqe *w, uint8_t flags, uint32_t psn,
		 uint32_t n)
{
	uint32_t idx = (uint32_t)rc_psn_diff(psn, w->first_psn), mtu = qp->conn.mtu_bytes;
	bool first = idx == 0, last = idx + 1 == w->npkts;

	if (!!(flags & R_FIRST) != first || !!(flags & R_LAST) != last)
		return false;
	if (flags & R_ATOMIC)
		return w->op != QP_OP_READ && n == 0;
	return w->op == QP_OP_READ &&
	       n == (last ? w->len - (uint64_t)idx * mtu : (uint64_t)mtu);
}

int rc_rdresp_rx(struct rc_qp *qp, const uint8_t *frame, const struct frame_parsed *p,
		 qp_time_ns now)
{
	struct rc_req *r = &qp->req;
	uint8_t flags = resp_ops[p->bth.opcode];
	uint32_t psn = p->bth.psn, n = p->payload_len;
	const struct rc_swqe *w;
	uint64_t unacked;
	unsigned acked;

	if ((flags & R_AETH) && (p->aeth.syndrome >> 5) != 0)
		return rc_drop(qp, RC_DROP_SYNDROME);   /* responses carry an ACK syndrome */
	if (rc_psn_diff(psn, r->max) >= 0)
		return rc_drop(qp, RC_DROP_ACK_RANGE);  /* never asked for */
	if (rc_psn_diff(psn, r->una) < 0)
		return rc_drop(qp, RC_DROP_ACK_STALE);  /* a duplicate: already taken */
	unacked = qp->p.on_event ? rc_sq_unacked_bytes(qp) : 0;
	acked = rc_req_acked(qp, psn, now);
	if (acked & RC_ACKED_IMPLICIT) {
		qp->st.implicit_naks++;
		rc_req_go_back(qp, r->una, acked & RC_ACKED_NEWS, now);
		return rc_drop(qp, RC_DROP_RESPONSE_GAP);
	}
	if (qp->sq_head == qp->sq_tail)
		return rc_drop(qp, RC_DROP_RESPONSE);
	w = rc_sq_at(qp, qp->sq_head);
	if (!qp_op_is_rd_atomic((enum qp_opcode)w->op) || rc_psn_diff(psn, w->first_psn) < 0)
		return rc_drop(qp, RC_DROP_RESPONSE);
	if (rc_psn_diff(psn, r->una) > 0) {
		rc_req_go_back(qp, r->una, acked & RC_ACKED_NEWS, now);
		return rc_drop(qp, RC_DROP_RESPONSE_GAP);
	}
	if (!fits(qp, w, flags, psn, n))
		return rc_drop(qp, RC_DROP_RESPONSE);
	if (flags & R_ATOMIC) {
		memcpy(w->buf, &p->atomic_orig, sizeof(p->atomic_orig));
	} else if (n) {
		memcpy(w->buf + (uint64_t)rc_psn_diff(psn, w->first_psn) * qp->conn.mtu_bytes,
		       frame + p->payload_off, n);
		qp->st.read_rx_bytes += n;
	}
	if (flags & R_LAST) {
		qp->sq_head++;
		rc_complete_send(qp, w, QP_WC_SUCCESS);
	}
	rc_req_progress(qp, rc_psn_add(psn, 1), now);
	/* the ACK event of the bytes taken, without an RTT sample: a response's PSN is not
	 * one the requester sent and stamped */
	rc_ev_acked(qp, false, psn, p->bth.becn, unacked, now);
	return 0;
}
