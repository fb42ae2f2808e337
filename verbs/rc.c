/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC state machine: parameters, queues, completions, error state, and the dispatch of
 * frames and timers to the requester (rc_req.c, its READ responses and atomic ACKs in
 * rc_rdresp.c) and responder (rc_resp.c, its READs and atomics in rc_rdatomic.c). The
 * semantics are documented in qpace/rc.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc_int.h"

/* IBTA vol. 1 table 45, in units of 10 us. */
static const uint32_t rnr_timer_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576,
	32768, 49152,
};

qp_time_ns rc_rnr_timer_ns(uint8_t code)
{
	return (qp_time_ns)rnr_timer_10us[code & 31] * 10 * QP_NS_PER_US;
}

static const char *const drop_names[RC_DROP_COUNT] = {
	[RC_DROP_STATE] = "qp-state",
	[RC_DROP_NOT_ROCE] = "not-roce",
	[RC_DROP_QPN] = "wrong-qpn",
	[RC_DROP_HEADER] = "bad-header",
	[RC_DROP_OPCODE] = "unsupported-opcode",
	[RC_DROP_DUPLICATE] = "duplicate",
	[RC_DROP_OUT_OF_SEQ] = "out-of-sequence",
	[RC_DROP_RNR] = "rnr",
	[RC_DROP_INVALID] = "invalid-request",
	[RC_DROP_ACK_STALE] = "stale-ack",
	[RC_DROP_ACK_RANGE] = "ack-beyond-sent",
	[RC_DROP_SYNDROME] = "bad-syndrome",
	[RC_DROP_RESPONSE] = "bad-response",
	[RC_DROP_RESPONSE_GAP] = "response-gap",
	[RC_DROP_NO_SAVED] = "no-saved-request",
};

const char *rc_drop_str(enum rc_drop d)
{
	return (unsigned)d < RC_DROP_COUNT ? drop_names[d] : "UNKNOWN";
}

/* ---- parameters ---- */

void rc_params_init(struct rc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->qpn = 0x11;
	p->sq_depth = 128;
	p->rq_depth = 512;
	p->window_pkts = 128;
	p->ackreq_every = 64;
	p->ack_every = 16;
	p->rto_ns = 4096ULL << 14;
	p->rto_backoff_max = 3;
	p->retry_cnt = 7;
	p->rnr_retry = 7;
	p->min_rnr_timer = 12;
	p->cnp_interval_ns = 50 * QP_NS_PER_US;
	p->max_rd_atomic = 16;
	p->max_dest_rd_atomic = 16;
}

/* One range rule per field; checked in table order. */
struct rc_range {
	const char *name;
	size_t off;
	size_t size;
	uint64_t min, max;
};
#define RANGE(f, lo, hi) { #f, offsetof(struct rc_params, f), sizeof(((struct rc_params *)0)->f), \
			   lo, hi }
static const struct rc_range ranges[] = {
	RANGE(qpn, 1, RC_PSN_MASK),
	RANGE(sq_psn, 0, RC_PSN_MASK),
	RANGE(sq_depth, 1, RC_DEPTH_MAX),
	RANGE(rq_depth, 1, RC_DEPTH_MAX),
	RANGE(max_inline, 0, RC_INLINE_MAX),
	RANGE(window_pkts, 1, RC_WINDOW_MAX),
	RANGE(ackreq_every, 1, RC_WINDOW_MAX),
	RANGE(ack_every, 0, RC_WINDOW_MAX),
	RANGE(rto_ns, 0, 3600 * QP_NS_PER_S),
	RANGE(rto_backoff_max, 0, 10),
	RANGE(retry_cnt, 0, 7),
	RANGE(rnr_retry, 0, 7),
	RANGE(min_rnr_timer, 0, 31),
	RANGE(cnp_interval_ns, 0, QP_NS_PER_S),
	RANGE(max_rd_atomic, 1, RC_RD_ATOMIC_MAX),
	RANGE(max_dest_rd_atomic, 1, RC_RD_ATOMIC_MAX),
};
#undef RANGE

static uint64_t field_get(const void *base, size_t off, size_t size)
{
	const uint8_t *f = (const uint8_t *)base + off;
	uint64_t v64;
	uint32_t v32;

	if (size == 1)
		return *f;
	if (size == 4) {
		memcpy(&v32, f, 4);
		return v32;
	}
	memcpy(&v64, f, 8);
	return v64;
}

int rc_params_check(const struct rc_params *p, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const struct rc_range *r = &ranges[i];
		uint64_t v = field_get(p, r->off, r->size);

		if (v < r->min || v > r->max) {
			snprintf(err, errlen, "rc: %s = %llu is out of range %llu..%llu", r->name,
				 (unsigned long long)v, (unsigned long long)r->min,
				 (unsigned long long)r->max);
			return -EINVAL;
		}
	}
	if (p->ackreq_every > p->window_pkts) {
		snprintf(err, errlen, "rc: ackreq_every = %u exceeds window_pkts = %u",
			 p->ackreq_every, p->window_pkts);
		return -EINVAL;
	}
	if (!p->mr_find) {
		snprintf(err, errlen, "rc: mr_find is required");
		return -EINVAL;
	}
	return 0;
}

/* ---- life cycle ---- */

/* The smallest power of two at or above @n, less one: a ring's mask (@n <= 2^31). */
static uint32_t ring_mask(uint32_t n)
{
	uint32_t m = 1;

	while (m < n)
		m <<= 1;
	return m - 1;
}

struct rc_qp *rc_create(const struct rc_params *p, char *err, size_t errlen)
{
	struct rc_qp *qp;

	if (rc_params_check(p, err, errlen) < 0)
		return NULL;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		goto nomem;
	qp->p = *p;
	qp->cq_cap = p->sq_depth + p->rq_depth;
	qp->sq_mask = ring_mask(p->sq_depth);
	qp->rq_mask = ring_mask(p->rq_depth);
	qp->sq = calloc((size_t)qp->sq_mask + 1, sizeof(*qp->sq));
	qp->rq = calloc((size_t)qp->rq_mask + 1, sizeof(*qp->rq));
	qp->cq = calloc((size_t)qp->cq_cap + 1, sizeof(*qp->cq));
	qp->inl = p->max_inline ? calloc((size_t)qp->sq_mask + 1, p->max_inline) : NULL;
	qp->aargs = calloc(p->max_rd_atomic, sizeof(*qp->aargs));
	qp->resp.res = calloc(p->max_dest_rd_atomic, sizeof(*qp->resp.res));
	if (!qp->sq || !qp->rq || !qp->cq || (p->max_inline && !qp->inl) || !qp->aargs ||
	    !qp->resp.res || rc_ev_alloc(qp)) {
		rc_destroy(qp);
		goto nomem;
	}
	qp->state = RC_INIT;
	qp->cnp_last_ns = qp->cnp_self_ns = QP_TIME_NEVER;
	rc_req_init(qp);
	return qp;
nomem:
	snprintf(err, errlen, "rc: out of memory for a QP of %u+%u WRs", p->sq_depth,
		 p->rq_depth);
	return NULL;
}

void rc_destroy(struct rc_qp *qp)
{
	if (!qp)
		return;
	free(qp->sq);
	free(qp->rq);
	free(qp->cq);
	free(qp->inl);
	rc_ev_free(qp);
	free(qp->aargs);
	free(qp->resp.res);
	free(qp);
}

static bool mtu_ok(uint32_t mtu)
{
	return mtu >= RC_MTU_MIN && mtu <= RC_MTU_MAX && !(mtu & (mtu - 1));
}

int rc_connect(struct rc_qp *qp, const struct rc_conn *c)
{
	if (qp->state != RC_INIT)
		return -EALREADY;
	if (!c->dest_qpn || c->dest_qpn > RC_PSN_MASK || c->rq_psn > RC_PSN_MASK ||
	    !mtu_ok(c->mtu_bytes))
		return -EINVAL;
	qp->conn = *c;
	if (c->max_rd_atomic && c->max_rd_atomic < qp->p.max_rd_atomic)
		qp->p.max_rd_atomic = c->max_rd_atomic;   /* nothing posted yet: the ring shrinks */
	qp->resp.epsn = c->rq_psn;
	qp->state = RC_RTS;
	rc_dl_changed(qp);
	return 0;
}

/* ---- completions ---- */

/* The completion ring has cq_cap + 1 slots (head == tail: empty) and its indices wrap at
 * its end: sized exactly, not to a power of two as the send and receive rings are (their
 * counters are masked on every packet; completions come once a message). A flow's sending
 * QP of 320 + 16 WRs kept 512 slots of 32 B, 5.6 KB more than these. */
static inline uint32_t cq_next(const struct rc_qp *qp, uint32_t i)
{
	return i == qp->cq_cap ? 0 : i + 1;
}

void rc_cq_push(struct rc_qp *qp, const struct qp_wc *wc)
{
	/* Cannot overflow: the post rules bound unpolled completions (see rc.h). */
	qp->cq[qp->cq_tail] = *wc;
	qp->cq_tail = cq_next(qp, qp->cq_tail);
	if (qp_wc_is_recv(wc->opcode))
		qp->rq_unpolled++;
	else
		qp->sq_unpolled++;
	if (wc->status != QP_WC_SUCCESS)
		qp->st.err_wcs++;
}

static const uint8_t send_wc_opcode[QP_OP_COUNT] = {
	[QP_OP_WRITE] = QP_WC_WRITE, [QP_OP_WRITE_IMM] = QP_WC_WRITE,
	[QP_OP_SEND] = QP_WC_SEND, [QP_OP_SEND_IMM] = QP_WC_SEND,
	[QP_OP_READ] = QP_WC_READ, [QP_OP_CMP_SWAP] = QP_WC_COMP_SWAP,
	[QP_OP_FETCH_ADD] = QP_WC_FETCH_ADD,
};

void rc_complete_send(struct rc_qp *qp, const struct rc_swqe *w, enum qp_wc_status status)
{
	struct qp_wc wc = { .wr_id = w->wr_id, .status = status,
			    .opcode = (enum qp_wc_opcode)send_wc_opcode[w->op],
			    .byte_len = w->len };

	qp->sq_bytes -= w->len;  /* every caller has just taken @w off the SQ */
	if (w->rd_sent)
		qp->req.rd_out--;
	if (qp_op_is_atomic((enum qp_opcode)w->op))
		qp->aargs_used--;   /* WRs complete in order: the oldest operands' slot */

	if (status == QP_WC_SUCCESS) {
		qp->st.tx_msgs++;
		qp->st.tx_msg_bytes += w->len;
	}
	if (w->signaled || status != QP_WC_SUCCESS)
		rc_cq_push(qp, &wc);
}

static void flush_all(struct rc_qp *qp)
{
	while (qp->sq_head != qp->sq_tail)
		rc_complete_send(qp, rc_sq_at(qp, qp->sq_head++), QP_WC_WR_FLUSH_ERR);
	while (qp->rq_head != qp->rq_tail) {
		const struct rc_rwqe *r = rc_rq_at(qp, qp->rq_head++);
		struct qp_wc wc = { .wr_id = r->wr_id, .status = QP_WC_WR_FLUSH_ERR,
				    .opcode = QP_WC_RECV };
		rc_cq_push(qp, &wc);
	}
	qp->req.tx_idx = qp->sq_tail;
	qp->req.rto_at = qp->req.rnr_at = QP_TIME_NEVER;
	rc_dl_changed(qp);
	qp->resp.kind = RC_K_NONE;
	qp->resp.ack_pending = false;
	rc_rd_flush(qp);
}

void rc_fail(struct rc_qp *qp, enum qp_wc_status head_status)
{
	if (qp->state == RC_ERROR)
		return;
	if (qp->sq_head != qp->sq_tail)
		rc_complete_send(qp, rc_sq_at(qp, qp->sq_head++), head_status);
	qp->state = RC_ERROR;
	rc_dl_changed(qp);
	flush_all(qp);
}

void rc_set_error(struct rc_qp *qp)
{
	if (qp->state == RC_ERROR)
		return;
	qp->state = RC_ERROR;
	rc_dl_changed(qp);
	flush_all(qp);
}

int rc_poll_cq(struct rc_qp *qp, struct qp_wc *wc, int n)
{
	int got = 0;

	while (got < n && qp->cq_head != qp->cq_tail) {
		wc[got] = qp->cq[qp->cq_head];
		qp->cq_head = cq_next(qp, qp->cq_head);
		if (qp_wc_is_recv(wc[got].opcode))
			qp->rq_unpolled--;
		else
			qp->sq_unpolled--;
		got++;
	}
	return got;
}

/* ---- posts ---- */

int rc_post_send(struct rc_qp *qp, const struct qp_wr *wr, qp_time_ns now)
{
	struct rc_swqe *w;
	uint32_t mtu = qp->conn.mtu_bytes, slot, npkts;

	(void)now;
	if (qp->state == RC_INIT)
		return -ENOTCONN;
	if ((unsigned)wr->opcode >= QP_OP_COUNT || wr->length > RC_MSG_MAX_BYTES ||
	    (wr->length && !wr->addr))
		return -EINVAL;
	if ((wr->flags & QP_WR_INLINE) &&
	    (wr->length > qp->p.max_inline || qp_op_is_rd_atomic(wr->opcode)))
		return -EINVAL;
	if (qp_op_is_atomic(wr->opcode) && (wr->length != 8 || (wr->remote_addr & 7)))
		return -EINVAL;
	if (qp->sq_tail - qp->sq_head + qp->sq_unpolled >= qp->p.sq_depth)
		return -ENOMEM;
	if (qp_op_is_atomic(wr->opcode) && qp->aargs_used >= qp->p.max_rd_atomic)
		return -ENOMEM;   /* the operands' ring: free again as atomics complete */
	npkts = wr->length ? (wr->length + mtu - 1) / mtu : 1;
	if (qp->state == RC_RTS && npkts > RC_PSN_SPAN_MAX)
		return -EINVAL;   /* 2 GiB at a 256-byte MTU: more PSNs than stay unambiguous */
	if (qp->state == RC_RTS &&
	    ((qp->req.next_psn - qp->req.una) & RC_PSN_MASK) + npkts > RC_PSN_SPAN_MAX)
		return -ENOMEM;   /* wait for ACKs: PSN order must stay unambiguous */
	slot = qp->sq_tail & qp->sq_mask;
	w = &qp->sq[slot];
	*w = (struct rc_swqe){
		.wr_id = wr->wr_id, .buf = wr->addr, .remote_addr = wr->remote_addr,
		.len = wr->length, .rkey = wr->rkey, .imm = wr->imm, .op = (uint8_t)wr->opcode,
		.signaled = wr->flags & QP_WR_SIGNALED,
	};
	if (qp_op_is_atomic(wr->opcode)) {
		w->imm = qp->aargs_next;
		qp->aargs_next = qp->aargs_next + 1 == qp->p.max_rd_atomic ? 0 : qp->aargs_next + 1;
		qp->aargs_used++;
		qp->aargs[w->imm] = (struct rc_atomic_args){ .compare_add = wr->compare_add,
							     .swap = wr->swap };
	}
	if (wr->flags & QP_WR_INLINE) {
		uint8_t *dst = qp->inl + (size_t)slot * qp->p.max_inline;

		if (wr->length)
			memcpy(dst, wr->addr, wr->length);
		w->buf = dst;
	}
	qp->sq_tail++;
	qp->sq_bytes += w->len;
	if (qp->state == RC_ERROR) {
		qp->sq_head++;
		rc_complete_send(qp, w, QP_WC_WR_FLUSH_ERR);
		return 0;
	}
	w->npkts = npkts;
	w->first_psn = qp->req.next_psn;
	qp->req.next_psn = rc_psn_add(qp->req.next_psn, w->npkts);
	return 0;
}

int rc_post_recv(struct rc_qp *qp, const struct qp_recv_wr *wr)
{
	struct rc_rwqe *r;

	if (wr->length > RC_MSG_MAX_BYTES || (wr->length && !wr->addr))
		return -EINVAL;
	if (qp->rq_tail - qp->rq_head + qp->rq_unpolled >= qp->p.rq_depth)
		return -ENOMEM;
	r = rc_rq_at(qp, qp->rq_tail++);
	*r = (struct rc_rwqe){ .wr_id = wr->wr_id, .buf = wr->addr, .len = wr->length };
	if (qp->state == RC_ERROR) {
		struct qp_wc wc = { .wr_id = wr->wr_id, .status = QP_WC_WR_FLUSH_ERR,
				    .opcode = QP_WC_RECV };
		qp->rq_head++;
		rc_cq_push(qp, &wc);
	}
	return 0;
}

/* ---- events ---- */

/* DCQCN's NP: a CE-marked request asks for a CNP, at most one per cnp_interval_ns. */
static void np_mark(struct rc_qp *qp, qp_time_ns now)
{
	qp->st.ce_rx++;
	if (!qp->p.cnp_interval_ns || qp->cnp_pending)
		return;
	if (qp->cnp_last_ns != QP_TIME_NEVER && now < qp->cnp_last_ns + qp->p.cnp_interval_ns)
		return;
	qp->cnp_pending = true;
	qp->cnp_last_ns = now;
}

/* A READ's requester is the reaction point of its responses (they are paced by its
 * requests): a CE-marked response is a CNP for itself, at most one per cnp_interval_ns,
 * counted in cnp_self for its owner (the soft host hands it on as a CNP). */
static void rp_mark(struct rc_qp *qp, qp_time_ns now)
{
	qp->st.ce_rx++;
	if (!qp->p.cnp_interval_ns || (qp->cnp_self_ns != QP_TIME_NEVER &&
				       now < qp->cnp_self_ns + qp->p.cnp_interval_ns))
		return;
	qp->cnp_self_ns = now;
	qp->st.cnp_self++;
}

static bool np_tx(struct rc_qp *qp, struct frame_roce_spec *s)
{
	if (!qp->cnp_pending || qp->state != RC_RTS)
		return false;
	qp->cnp_pending = false;
	qp->st.cnp_tx++;
	s->bth = (struct frame_bth){ .opcode = FRAME_OP_CNP, .becn = true, .pkey = 0xffff,
				     .dest_qp = qp->conn.dest_qpn };
	s->reth = (struct frame_reth){ 0 };
	s->aeth = (struct frame_aeth){ 0 };
	s->imm = 0;
	s->payload = NULL;
	s->payload_len = 0;
	return true;
}

int rc_rx(struct rc_qp *qp, const uint8_t *frame, const struct frame_parsed *p,
	  qp_time_ns now)
{
	const struct frame_bth *bth = &p->bth;

	if (!(p->layers & FRAME_L_ROCE) || !p->op)
		return rc_drop(qp, RC_DROP_NOT_ROCE);
	if (qp->state != RC_RTS)
		return rc_drop(qp, RC_DROP_STATE);
	if (bth->dest_qp != qp->p.qpn)
		return rc_drop(qp, RC_DROP_QPN);
	if (bth->tver != 0 || (bth->pkey & 0x7fff) != 0x7fff)
		return rc_drop(qp, RC_DROP_HEADER);
	if (bth->opcode == FRAME_OP_CNP) {
		qp->st.cnp_rx++;
		return 0;
	}
	if (bth->opcode == FRAME_OP_RC_ACK)
		return rc_req_rx(qp, p, now);
	if (rc_is_response(bth->opcode)) {
		if (frame_ecn_of(p) == FRAME_ECN_CE)
			rp_mark(qp, now);
		return rc_rdresp_rx(qp, frame, p, now);
	}
	if (rc_is_request(bth->opcode)) {
		if (frame_ecn_of(p) == FRAME_ECN_CE)
			np_mark(qp, now);
		return rc_resp_rx(qp, frame, p);
	}
	return rc_drop(qp, RC_DROP_OPCODE);
}

bool rc_tx_pending(const struct rc_qp *qp)
{
	return (qp->state == RC_RTS &&
		(qp->cnp_pending || qp->resp.ack_pending || qp->resp.split_pending ||
		 qp->resp.rd_active)) ||
	       qp->resp.nak_pending ||
	       rc_req_tx_pending(qp);
}

bool rc_tx_next(struct rc_qp *qp, qp_time_ns now, struct frame_roce_spec *s)
{
	if (qp->state == RC_INIT)
		return false;
	s->no_icrc = false;      /* the frame carries its ICRC unless the host says otherwise */
	return np_tx(qp, s) || rc_resp_tx(qp, s) || rc_req_tx(qp, now, s);
}

void rc_watch_deadline(struct rc_qp *qp, struct rc_dl_min *m)
{
	qp->dl_min = m;
	rc_dl_changed(qp);
}

qp_time_ns rc_deadline(const struct rc_qp *qp)
{
	if (qp->state != RC_RTS)
		return QP_TIME_NEVER;
	return qp_time_min(qp->req.rto_at, qp->req.rnr_at);
}

void rc_tick(struct rc_qp *qp, qp_time_ns now)
{
	if (qp->state == RC_RTS)
		rc_req_tick(qp, now);
}

enum rc_state rc_state(const struct rc_qp *qp)
{
	return qp->state;
}

const struct rc_stats *rc_stats(const struct rc_qp *qp)
{
	return &qp->st;
}

uint32_t rc_qpn(const struct rc_qp *qp)
{
	return qp->p.qpn;
}

uint32_t rc_sq_outstanding(const struct rc_qp *qp)
{
	return qp->sq_tail - qp->sq_head;
}

bool rc_sq_full(const struct rc_qp *qp)
{
	return qp->sq_tail != qp->sq_head &&
	       qp->sq_tail - qp->sq_head + qp->sq_unpolled >= qp->p.sq_depth;
}

uint32_t rc_snd_psn(const struct rc_qp *qp)
{
	return qp->req.max;
}

/* The SQ's bytes less what is acknowledged of each WR. PSNs are assigned in SQ order, so
 * only a prefix of the SQ has any PSN before una: walk that, not the whole ring. */
uint64_t rc_sq_unacked_bytes(const struct rc_qp *qp)
{
	uint64_t sum = qp->sq_bytes;

	for (uint32_t i = qp->sq_head; i != qp->sq_tail; i++) {
		const struct rc_swqe *w = rc_sq_at(qp, i);
		int32_t acked = rc_psn_diff(qp->req.una, w->first_psn);
		uint64_t done = (uint64_t)acked * qp->conn.mtu_bytes;

		if (acked <= 0)
			break;
		sum -= done < w->len ? done : w->len;
	}
	return sum;
}

uint32_t rc_rq_outstanding(const struct rc_qp *qp)
{
	return qp->rq_tail - qp->rq_head;
}
