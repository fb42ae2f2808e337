/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC responder: RDMA READ and the atomics (IBTA vol. 1, 9.4.3-9.4.5 and 9.7.5.1; rules
 * in qpace/rc.h), as Linux rxe serves them (rxe_resp.c).
 *
 * Each new READ or atomic takes the next of max_dest_rd_atomic saved requests (a ring in
 * PSN order; the oldest is reused). A READ is checked (remote read access to [va, va+L))
 * and answered later, packet by packet, from the region's memory: ceil(L/MTU) packets,
 * one per PSN it took. An atomic is checked (remote atomic access, 8 aligned bytes),
 * executed at once on the host-order 64-bit value and answered with its original value.
 * The expected PSN moves past the request's PSNs when it is accepted.
 *
 * Answers leave oldest first (ring order is PSN order), before any ACK or NAK of the QP,
 * so an ACK never gets ahead of a response it would imply lost. A duplicate READ is
 * executed again from its saved request, starting at the duplicate's PSN (its RETH must
 * be the part of the saved range from that PSN on, with the same rkey); a duplicate
 * atomic gets its saved original value again and is never executed twice. A duplicate
 * whose saved request is gone, or that does not match it, is dropped (class D): the
 * requester's timer resends, and finds the QP's answers to newer requests.
 *
 * The saved READ keeps the address of its data in the region: a region must stay
 * registered while READs of it may be answered, as a WRITE's target must while it is
 * written (rxe holds a reference instead). */
#include <string.h>

#include "rc_int.h"

/* The saved request whose response's PSNs hold @psn; NULL when none. */
static struct rc_rdres *res_find(struct rc_qp *qp, uint32_t psn)
{
	for (uint32_t i = 0; i < qp->p.max_dest_rd_atomic; i++) {
		struct rc_rdres *e = &qp->resp.res[i];

		if (e->kind != RC_K_NONE && rc_psn_diff(psn, e->first_psn) >= 0 &&
		    rc_psn_diff(psn, e->last_psn) <= 0)
			return e;
	}
	return NULL;
}

static void res_activate(struct rc_resp *s, struct rc_rdres *e)
{
	if (!e->active)
		s->rd_active++;
	e->active = true;
}

/* READ: the region of rkey with remote read access holds [va, va + len). NULL for a
 * zero-length READ (it reads nothing: no key check, as for WRITE). */
static int read_src(struct rc_qp *qp, const struct frame_reth *reth, const uint8_t **src)
{
	struct rc_region rg;

	*src = NULL;
	if (!reth->dma_len)
		return 0;
	if (!qp->p.mr_find(qp->p.mr_arg, reth->rkey, &rg) || !rg.remote_read ||
	    reth->va < rg.va || reth->dma_len > rg.len || reth->va - rg.va > rg.len - reth->dma_len)
		return -1;
	*src = rg.base + (reth->va - rg.va);
	return 0;
}

/* Atomic: compare-and-swap or fetch-and-add on the 8 bytes at va; their old value. */
static int atomic_exec(struct rc_qp *qp, const struct frame_parsed *p, uint64_t *orig)
{
	const struct frame_atomiceth *a = &p->atomic;
	struct rc_region rg;
	uint64_t v, nv;
	uint8_t *at;

	if (!qp->p.mr_find(qp->p.mr_arg, a->rkey, &rg) || !rg.remote_atomic || a->va < rg.va ||
	    rg.len < 8 || a->va - rg.va > rg.len - 8)
		return -1;
	at = rg.base + (a->va - rg.va);
	memcpy(&v, at, sizeof(v));
	if (p->bth.opcode == FRAME_OP_RC_CMP_SWAP)
		nv = v == a->compare ? a->swap_add : v;
	else
		nv = v + a->swap_add;
	memcpy(at, &nv, sizeof(nv));
	*orig = v;
	return 0;
}

int rc_rd_new(struct rc_qp *qp, const struct frame_parsed *p, uint8_t kind)
{
	struct rc_resp *s = &qp->resp;
	struct rc_rdres *e = &s->res[s->res_next];
	uint32_t psn = p->bth.psn, mtu = qp->conn.mtu_bytes, npkts = 1;
	const uint8_t *src = NULL;
	uint64_t orig = 0;

	/* The oldest saved request never answered whole: the requester has more outstanding
	 * than max_dest_rd_atomic. One answered before and replaying a duplicate: the
	 * requester completed it (it asks for a new one beyond it), the replay is stale. */
	if (e->active && !e->answered)
		return rc_resp_fail(qp, psn, RC_NAK_INV_REQ);
	if (e->active)
		s->rd_active--;
	if (kind == RC_K_READ) {
		if (p->reth.dma_len > RC_MSG_MAX_BYTES)
			return rc_resp_fail(qp, psn, RC_NAK_INV_REQ);
		if (read_src(qp, &p->reth, &src) < 0)
			return rc_resp_fail(qp, psn, RC_NAK_REM_ACCESS);
		if (p->reth.dma_len)
			npkts = (p->reth.dma_len + mtu - 1) / mtu;
	} else {
		if (p->atomic.va & 7)
			return rc_resp_fail(qp, psn, RC_NAK_INV_REQ);   /* misaligned */
		if (atomic_exec(qp, p, &orig) < 0)
			return rc_resp_fail(qp, psn, RC_NAK_REM_ACCESS);
	}
	s->msn = rc_psn_add(s->msn, 1);
	*e = (struct rc_rdres){ .first_psn = psn, .last_psn = rc_psn_add(psn, npkts - 1),
				.cur_psn = psn, .msn = s->msn, .kind = kind };
	if (kind == RC_K_READ) {
		e->rkey = p->reth.rkey;
		e->len0 = e->resid = p->reth.dma_len;
		e->va0 = e->u.va = p->reth.va;
		e->src0 = src;
		qp->st.reads_rx++;
	} else {
		e->u.orig = orig;
		qp->st.atomics_rx++;
	}
	res_activate(s, e);
	s->res_next = s->res_next + 1 == qp->p.max_dest_rd_atomic ? 0 : s->res_next + 1;
	s->epsn = rc_psn_add(psn, npkts);
	s->nak_sent = false;
	qp->st.rx_pkts++;
	return 0;
}

int rc_rd_dup(struct rc_qp *qp, const struct frame_parsed *p, uint8_t kind)
{
	struct rc_rdres *e = res_find(qp, p->bth.psn);
	uint32_t psn = p->bth.psn;

	if (!e || e->kind != kind)
		return rc_drop(qp, RC_DROP_NO_SAVED);
	if (kind == RC_K_READ) {
		const struct frame_reth *r = &p->reth;
		uint64_t off = (uint64_t)rc_psn_diff(psn, e->first_psn) * qp->conn.mtu_bytes;

		/* the rest of the saved READ from this PSN on, nothing else */
		if (r->rkey != e->rkey || r->va != e->va0 + off || off > e->len0 ||
		    r->dma_len != e->len0 - off)
			return rc_drop(qp, RC_DROP_NO_SAVED);
		e->u.va = r->va;
		e->resid = r->dma_len;
		qp->st.reads_replayed++;
	} else {
		qp->st.atomics_replayed++;
	}
	e->cur_psn = psn;
	res_activate(&qp->resp, e);
	return 0;
}

bool rc_rd_tx(struct rc_qp *qp, struct frame_roce_spec *sp)
{
	struct rc_resp *s = &qp->resp;
	uint32_t mtu = qp->conn.mtu_bytes, n = 0, i = s->res_next;
	struct rc_rdres *e = NULL;
	uint8_t op;

	for (uint32_t k = 0; k < qp->p.max_dest_rd_atomic; k++) {   /* oldest first */
		if (s->res[i].active) {
			e = &s->res[i];
			break;
		}
		i = i + 1 == qp->p.max_dest_rd_atomic ? 0 : i + 1;
	}
	if (!e)
		return false;
	sp->reth = (struct frame_reth){ 0 };
	sp->imm = 0;
	sp->payload = NULL;
	sp->aeth = (struct frame_aeth){ .syndrome = RC_AETH_ACK | RC_AETH_ACK_UNLIMITED,
					.msn = e->msn };
	if (e->kind == RC_K_ATOMIC) {
		op = FRAME_OP_RC_ATOMIC_ACK;
		sp->atomic_orig = e->u.orig;
		e->active = false;
	} else {
		bool first = e->cur_psn == e->first_psn, last = e->resid <= mtu;

		n = last ? e->resid : mtu;
		op = first ? (last ? FRAME_OP_RC_READ_RESP_ONLY : FRAME_OP_RC_READ_RESP_FIRST)
			   : (last ? FRAME_OP_RC_READ_RESP_LAST : FRAME_OP_RC_READ_RESP_MIDDLE);
		if (n)
			sp->payload = e->src0 + (e->u.va - e->va0);
		e->u.va += n;
		e->resid -= n;
		e->active = !last;
		qp->st.read_tx_bytes += n;
	}
	e->answered |= !e->active;
	sp->payload_len = n;
	sp->bth = (struct frame_bth){ .opcode = op, .pkey = 0xffff, .dest_qp = qp->conn.dest_qpn,
				      .psn = e->cur_psn };
	e->cur_psn = rc_psn_add(e->cur_psn, 1);
	if (!e->active)
		s->rd_active--;
	return true;
}

void rc_rd_flush(struct rc_qp *qp)
{
	memset(qp->resp.res, 0, (size_t)qp->p.max_dest_rd_atomic * sizeof(*qp->resp.res));
	qp->resp.rd_active = 0;
}
