/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The mock RC backend of the QP API's tests: see qp_mock.h. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qp_mock.h"

static pthread_mutex_t mock_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mock_qp *mock_qps[MOCK_MAX_QPS];
static uint32_t mock_next_qpn = 0x100, mock_next_key = 0x1000;

static void mock_cq_push(struct mock_qp *m, const struct qp_wc *wc)
{
	assert_true(m->cq_count < MOCK_CQ);
	m->cq[(m->cq_head + m->cq_count++) % MOCK_CQ] = *wc;
}

static int mock_mr_init(struct qp_mr *mr)
{
	pthread_mutex_lock(&mock_lock);
	mr->lkey = mr->rkey = mock_next_key++;
	pthread_mutex_unlock(&mock_lock);
	return 0;
}

static int mock_qp_init(struct qp *qp, char *err, size_t errlen)
{
	(void)err; (void)errlen;
	pthread_mutex_lock(&mock_lock);
	qp->qpn = mock_next_qpn++;
	for (int i = 0; i < MOCK_MAX_QPS; i++) {
		if (!mock_qps[i]) {
			mock_qps[i] = to_mock(qp);
			break;
		}
	}
	pthread_mutex_unlock(&mock_lock);
	qp->local.qpn = qp->qpn;
	qp->local.psn = qp_initial_psn(qp);
	qp->local.mtu_bytes = qp->attr.mtu_bytes ? qp->attr.mtu_bytes : 1024;
	qp->local.gid[10] = qp->local.gid[11] = 0xff;
	qp->local.gid[15] = (uint8_t)qp->qpn;
	return 0;
}

static void mock_qp_fini(struct qp *qp)
{
	pthread_mutex_lock(&mock_lock);
	for (int i = 0; i < MOCK_MAX_QPS; i++) {
		if (mock_qps[i] == to_mock(qp))
			mock_qps[i] = NULL;
		else if (mock_qps[i] && mock_qps[i]->peer == to_mock(qp))
			mock_qps[i]->peer = NULL;
	}
	pthread_mutex_unlock(&mock_lock);
}

static int mock_qp_connect(struct qp *qp, char *err, size_t errlen)
{
	(void)err; (void)errlen;
	pthread_mutex_lock(&mock_lock);
	for (int i = 0; i < MOCK_MAX_QPS; i++)
		if (mock_qps[i] && mock_qps[i]->pub.qpn == qp->remote.qpn)
			to_mock(qp)->peer = mock_qps[i];
	pthread_mutex_unlock(&mock_lock);
	return to_mock(qp)->peer ? 0 : -ECONNREFUSED;
}

static struct qp_mr *mock_find_mr(struct qp_ctx *ctx, uint32_t rkey, uint64_t addr,
				  uint32_t len)
{
	for (struct qp_mr *mr = ctx->mrs; mr; mr = mr->next)
		if (mr->rkey == rkey && addr >= (uintptr_t)mr->addr &&
		    addr + len <= (uintptr_t)mr->addr + mr->length)
			return mr;
	return NULL;
}

/* Deliver into the peer's next receive; false when none is posted. */
static bool mock_deliver(struct mock_qp *peer, const void *data, uint32_t len,
			 enum qp_wc_opcode op, bool has_imm, uint32_t imm)
{
	struct qp_recv_wr *r;
	struct qp_wc wc = { .opcode = op, .byte_len = len, .has_imm = has_imm, .imm = imm };

	if (!peer->rq_count)
		return false;
	r = &peer->rq[peer->rq_head];
	peer->rq_head = (peer->rq_head + 1) % MOCK_RQ;
	peer->rq_count--;
	wc.wr_id = r->wr_id;
	if (op == QP_WC_RECV) {
		assert_true(len <= r->length);
		memcpy(r->addr, data, len);
	}
	mock_cq_push(peer, &wc);
	return true;
}

static int mock_post_send(struct qp *qp, const struct qp_wr *wr)
{
	struct mock_qp *m = to_mock(qp), *peer = m->peer;
	struct qp_wc wc = { .wr_id = wr->wr_id };
	bool write = wr->opcode == QP_OP_WRITE || wr->opcode == QP_OP_WRITE_IMM;
	bool has_imm = wr->opcode == QP_OP_WRITE_IMM || wr->opcode == QP_OP_SEND_IMM;

	if (m->busy_every && ++m->offered % m->busy_every == 0)
		return -EAGAIN; /* the same piece comes again: the next offer passes */
	if (m->nlog < MOCK_LOG)
		m->log[m->nlog++] = (struct mock_piece){ wr->opcode, wr->length, wr->remote_addr,
							 wr->flags, qp_now_ns() };
	if (!peer)
		return -ENOTCONN;
	if (write) {
		if (!mock_find_mr(peer->pub.ctx, wr->rkey, wr->remote_addr, wr->length))
			wc.status = QP_WC_REM_ACCESS_ERR;
		else
			memcpy((void *)(uintptr_t)wr->remote_addr, wr->addr, wr->length);
		if (!wc.status && has_imm &&
		    !mock_deliver(peer, NULL, wr->length, QP_WC_RECV_WRITE_IMM, true, wr->imm))
			wc.status = QP_WC_RNR_RETRY_EXC_ERR;
		wc.opcode = QP_WC_WRITE;
	} else {
		if (!mock_deliver(peer, wr->addr, wr->length, QP_WC_RECV, has_imm, wr->imm))
			wc.status = QP_WC_RNR_RETRY_EXC_ERR;
		wc.opcode = QP_WC_SEND;
	}
	if ((wr->flags & QP_WR_SIGNALED) || wc.status)
		mock_cq_push(m, &wc);
	return 0;
}

static int mock_post_recv(struct qp *qp, const struct qp_recv_wr *wr)
{
	struct mock_qp *m = to_mock(qp);

	if (m->rq_count == MOCK_RQ)
		return -ENOMEM;
	m->rq[(m->rq_head + m->rq_count++) % MOCK_RQ] = *wr;
	return 0;
}

static int mock_poll(struct qp *qp, struct qp_wc *wc, int n)
{
	struct mock_qp *m = to_mock(qp);
	int got = 0;

	while (got < n && m->cq_count) {
		wc[got++] = m->cq[m->cq_head];
		m->cq_head = (m->cq_head + 1) % MOCK_CQ;
		m->cq_count--;
	}
	return got;
}

static void mock_get_stats(struct qp *qp, struct qp_stats *st)
{
	(void)qp;
	st->retransmissions = 0;
	st->have |= QP_STAT_RETRANS;
}

const struct qp_backend_ops mock_ops = {
	.name = "mock",
	.qp_size = sizeof(struct mock_qp),
	.mr_init = mock_mr_init,
	.qp_init = mock_qp_init,
	.qp_fini = mock_qp_fini,
	.qp_connect = mock_qp_connect,
	.post_send = mock_post_send,
	.post_recv = mock_post_recv,
	.poll = mock_poll,
	.get_stats = mock_get_stats,
};
