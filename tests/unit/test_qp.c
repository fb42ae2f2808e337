/* The QP API's common layer, over an in-memory RC backend defined here ("mock": WRITEs copy
 * into the peer's registered memory, SENDs and WRITE_IMMs consume its posted receives):
 * splitting and pacing of send WRs, blocking and non-blocking posts, progress and
 * deadlines, credits, argument checks, the EOPNOTSUPP default table, counters, and the TCP
 * connection exchange between two threads (including a peer speaking another version). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/qp.h"

/* ---- the mock backend ---- */

#define MOCK_MAX_QPS 16
#define MOCK_CQ 4096
#define MOCK_RQ 64
#define MOCK_LOG 1024

struct mock_piece {
	enum qp_opcode opcode;
	uint32_t length;
	uint64_t remote_addr;
	unsigned flags;
	qp_time_ns at;
};

struct mock_qp {
	struct qp pub;
	struct mock_qp *peer;
	struct qp_wc cq[MOCK_CQ];
	unsigned cq_head, cq_count;
	struct qp_recv_wr rq[MOCK_RQ];
	unsigned rq_head, rq_count;
	struct mock_piece log[MOCK_LOG];
	unsigned nlog;
	unsigned busy_every;   /* refuse every Nth piece once with -EAGAIN (queue full) */
	unsigned offered;
};

static pthread_mutex_t mock_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mock_qp *mock_qps[MOCK_MAX_QPS];
static uint32_t mock_next_qpn = 0x100, mock_next_key = 0x1000;

static struct mock_qp *to_mock(struct qp *qp)
{
	return qp_container_of(qp, struct mock_qp, pub);
}

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

static const struct qp_backend_ops mock_ops = {
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

/* ---- fixtures: one context, a rate table the test writes, a connected pair ---- */

#define BUF_BYTES (1u << 20)

struct pair {
	struct qp_ratetable *rates;
	struct qp_ctx *ctx;
	struct qp *a, *b;
	struct qp_mr *mr_a, *mr_b;
	uint8_t *buf_a, *buf_b;
	unsigned log_lines;
	char last_log[256];
};

static void pair_log(void *arg, const char *line)
{
	struct pair *p = arg;

	p->log_lines++;
	snprintf(p->last_log, sizeof(p->last_log), "%s", line);
	print_message("  log: %s\n", line);
}

/* Publish @rate_bps for @qp (0 = remove its slot) with @flags and @credits. */
static void set_rate(struct pair *p, struct qp *qp, qp_rate_bps rate_bps, uint32_t flags,
		     uint64_t credits)
{
	int slot = qp_ratetable_assign(p->rates, qp->qpn);

	assert_true(slot >= 0);
	qp_ratetable_set(p->rates, (uint32_t)slot, rate_bps, 0, flags, qp_now_ns());
	if (credits)
		qp_ratetable_grant(p->rates, (uint32_t)slot, credits, qp_now_ns());
	qp_ratetable_heartbeat(p->rates, qp_now_ns());
}

static void pair_open(struct pair *p, const struct qp_attr *attr)
{
	struct qp_ctx_attr ca = { .log = pair_log, .log_arg = p };
	struct qp_conn_info ia, ib;
	char err[200];

	memset(p, 0, sizeof(*p));
	assert_int_equal(qp_ratetable_create_mem(16, &p->rates, err, sizeof(err)), 0);
	qp_ratetable_heartbeat(p->rates, qp_now_ns());
	ca.rate_table_mem = p->rates;
	assert_int_equal(qp_ctx_open_ops(&mock_ops, &ca, &p->ctx, err, sizeof(err)), 0);
	p->buf_a = calloc(1, BUF_BYTES);
	p->buf_b = calloc(1, BUF_BYTES);
	assert_int_equal(qp_mr_reg(p->ctx, p->buf_a, BUF_BYTES, QP_ACCESS_LOCAL_WRITE |
				   QP_ACCESS_REMOTE_WRITE, &p->mr_a), 0);
	assert_int_equal(qp_mr_reg(p->ctx, p->buf_b, BUF_BYTES, QP_ACCESS_LOCAL_WRITE |
				   QP_ACCESS_REMOTE_WRITE, &p->mr_b), 0);
	assert_int_equal(qp_create(p->ctx, attr, &p->a, err, sizeof(err)), 0);
	assert_int_equal(qp_create(p->ctx, attr, &p->b, err, sizeof(err)), 0);
	qp_local_info(p->a, p->mr_a, &ia);
	qp_local_info(p->b, p->mr_b, &ib);
	assert_int_equal(qp_connect(p->a, &ib, err, sizeof(err)), 0);
	assert_int_equal(qp_connect(p->b, &ia, err, sizeof(err)), 0);
	assert_int_equal(p->a->remote.rkey, p->mr_b->rkey);
}

static void pair_close(struct pair *p)
{
	qp_ctx_close(p->ctx); /* destroys QPs and regions */
	qp_ratetable_close(p->rates);
	free(p->buf_a);
	free(p->buf_b);
}

static int poll_one(struct qp *qp, struct qp_wc *wc)
{
	return qp_poll(qp, wc, 1);
}

/* ---- tests ---- */

static void test_write_split_paced_and_exact(void **state)
{
	/* A long stale_ns: a loaded machine may stop this process for over 100 ms. */
	struct qp_attr attr = { .gate = { .chunk_bytes = 4096, .stale_ns = 10 * QP_NS_PER_S } };
	struct pair p;
	struct mock_qp *m;
	struct qp_recv_wr rwr;
	struct qp_wc wc;
	struct qp_stats st;
	qp_time_ns t0, took;
	uint64_t cap;
	(void)state;

	pair_open(&p, &attr);
	set_rate(&p, p.a, QP_GBPS, 0, 0);
	for (uint32_t i = 0; i < BUF_BYTES; i++)
		p.buf_a[i] = (uint8_t)(i * 7 + (i >> 11));
	rwr = (struct qp_recv_wr){ .wr_id = 77 };
	assert_int_equal(qp_post_recv(p.b, &rwr), 0);
	t0 = qp_now_ns();
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){
		.opcode = QP_OP_WRITE_IMM, .wr_id = 5, .mr = p.mr_a, .addr = p.buf_a,
		.length = BUF_BYTES, .remote_addr = p.a->remote.addr, .rkey = p.a->remote.rkey,
		.imm = 0xfeedbeef, .flags = QP_WR_SIGNALED }), 0);
	took = qp_now_ns() - t0;
	cap = qp_gate_cap_bytes(&p.a->pacer.gate);
	/* Byte-exact, split into 256 pieces, the immediate and the completion on the last. */
	assert_memory_equal(p.buf_a, p.buf_b, BUF_BYTES);
	m = to_mock(p.a);
	assert_int_equal(m->nlog, 256);
	for (unsigned i = 0; i < m->nlog; i++) {
		bool last = i + 1 == m->nlog;

		assert_int_equal(m->log[i].length, 4096);
		assert_int_equal(m->log[i].remote_addr, p.a->remote.addr + 4096ull * i);
		assert_int_equal(m->log[i].opcode, last ? QP_OP_WRITE_IMM : QP_OP_WRITE);
		assert_int_equal(!!(m->log[i].flags & QP_WR_SIGNALED), last);
	}
	assert_int_equal(poll_one(p.a, &wc), 1);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_int_equal(poll_one(p.a, &wc), 0);
	assert_int_equal(poll_one(p.b, &wc), 1);
	assert_int_equal(wc.opcode, QP_WC_RECV_WRITE_IMM);
	assert_int_equal(wc.imm, 0xfeedbeef);
	/* Paced: 1 MiB at 1 Gb/s cannot take less than (1 MiB - one bucket) / rate. */
	print_message("1 MiB WRITE_IMM at 1 Gb/s: %.2f ms (ideal %.2f ms, bucket %llu B)\n",
		      (double)took / 1e6, (double)qp_tx_time_ns(BUF_BYTES, QP_GBPS) / 1e6,
		      (unsigned long long)cap);
	assert_true(took >= qp_tx_time_ns(BUF_BYTES - cap, QP_GBPS));
	qp_get_stats(p.a, &st);
	assert_int_equal(st.tx_msgs, 1);
	assert_int_equal(st.tx_chunks, 256);
	assert_int_equal(st.tx_bytes, BUF_BYTES);
	assert_int_equal(st.gate.bytes, BUF_BYTES);
	assert_true(st.have & QP_STAT_RETRANS);
	qp_get_stats(p.b, &st);
	assert_int_equal(st.rx_msgs, 1);
	assert_int_equal(p.log_lines, 0); /* the agent's rate was in force: nothing to say */
	pair_close(&p);
}

/* A backend whose send queue is full refuses a piece with -EAGAIN: the piece is offered
 * again after progress, and the WR arrives whole and in order, blocking or not. */
static void test_backend_busy_loses_nothing(void **state)
{
	struct qp_attr attr = { .gate = { .chunk_bytes = 4096 } };
	struct pair p;
	struct mock_qp *m;
	struct qp_stats st;
	struct qp_wc wc;
	(void)state;

	pair_open(&p, &attr);
	set_rate(&p, p.a, 10 * QP_GBPS, 0, 0);
	for (uint32_t i = 0; i < BUF_BYTES; i++)
		p.buf_a[i] = (uint8_t)(i * 13 + (i >> 9));
	m = to_mock(p.a);
	m->busy_every = 3;
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){
		.opcode = QP_OP_WRITE, .wr_id = 9, .mr = p.mr_a, .addr = p.buf_a,
		.length = BUF_BYTES, .remote_addr = p.a->remote.addr, .rkey = p.a->remote.rkey,
		.flags = QP_WR_SIGNALED }), 0);
	assert_memory_equal(p.buf_a, p.buf_b, BUF_BYTES);
	assert_int_equal(m->nlog, 256);
	for (unsigned i = 0; i < m->nlog; i++)
		assert_int_equal(m->log[i].remote_addr, p.a->remote.addr + 4096ull * i);
	assert_int_equal(poll_one(p.a, &wc), 1);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	qp_get_stats(p.a, &st);
	assert_int_equal(st.tx_bytes, BUF_BYTES);
	assert_int_equal(st.tx_chunks, 256);
	assert_int_equal(st.backend_busy, 127); /* every third of 383 offers refused, 256 passed */
	pair_close(&p);
}

static void test_burst_default_two_mtus(void **state)
{
	struct qp_attr attr = { .mtu_bytes = 1024 };
	struct pair p;
	(void)state;

	pair_open(&p, &attr);
	assert_int_equal(p.a->attr.gate.burst_bytes, 2048);
	assert_int_equal(p.a->attr.gate.chunk_bytes, QP_GATE_DEF_CHUNK_BYTES);
	pair_close(&p);
}

static void test_send_whole_and_signal_all(void **state)
{
	struct qp_attr attr = { .flags = QP_F_SIGNAL_ALL };
	struct pair p;
	struct qp_wc wc;
	uint8_t *dst = NULL;
	(void)state;

	pair_open(&p, &attr);
	set_rate(&p, p.a, 10 * QP_GBPS, 0, 0);
	memset(p.buf_a, 0x5a, 65536);
	dst = p.buf_b + 4096;
	assert_int_equal(qp_post_recv(p.b, &(struct qp_recv_wr){ .wr_id = 9, .mr = p.mr_b,
		.addr = dst, .length = 65536 }), 0);
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){ .opcode = QP_OP_SEND, .wr_id = 3,
		.mr = p.mr_a, .addr = p.buf_a, .length = 65536 }), 0);
	assert_int_equal(to_mock(p.a)->nlog, 1); /* a SEND is never split */
	assert_int_equal(to_mock(p.a)->log[0].length, 65536);
	assert_int_equal(poll_one(p.a, &wc), 1); /* signalled by QP_F_SIGNAL_ALL */
	assert_int_equal(wc.wr_id, 3);
	assert_int_equal(poll_one(p.b, &wc), 1);
	assert_int_equal(wc.opcode, QP_WC_RECV);
	assert_int_equal(wc.byte_len, 65536);
	assert_memory_equal(dst, p.buf_a, 65536);
	assert_int_equal(p.a->pacer.gate.stats.debt_pieces, 1);
	pair_close(&p);
}

static void test_nonblocking_progress(void **state)
{
	struct qp_attr attr = { .flags = QP_F_NONBLOCK, .gate = { .chunk_bytes = 4096,
								  .burst_bytes = 8192 } };
	struct qp_wr wr;
	struct pair p;
	qp_time_ns t0, deadline, now;
	unsigned rounds = 0;
	(void)state;

	pair_open(&p, &attr);
	set_rate(&p, p.a, 10 * QP_MBPS, 0, 0);
	wr = (struct qp_wr){ .opcode = QP_OP_WRITE, .mr = p.mr_a, .addr = p.buf_a,
			     .length = 65536, .remote_addr = p.a->remote.addr,
			     .rkey = p.a->remote.rkey, .flags = QP_WR_SIGNALED };
	/* Accepted: the full bucket passes 12 KiB now (more only if this process was stopped
	 * for over 3 ms); the rest waits for progress. */
	t0 = qp_now_ns();
	assert_int_equal(qp_post_send(p.a, &wr), 0);
	assert_true(p.a->pend.active);
	assert_true(p.a->pend.offset >= 12288);
	/* One accepted WR at a time. */
	assert_int_equal(qp_post_send(p.a, &wr), -EAGAIN);
	deadline = qp_ctx_deadline(p.ctx);
	assert_true(deadline > t0 && deadline != QP_TIME_NEVER);
	while (p.a->pend.active) {
		while ((now = qp_now_ns()) < qp_ctx_deadline(p.ctx))
			;
		assert_true(qp_ctx_progress(p.ctx, now) >= 0);
		rounds++;
	}
	print_message("64 KiB at 10 Mb/s non-blocking: %u progress rounds, %.2f ms (ideal for "
		      "the 52 KiB after the bucket %.2f ms)\n", rounds,
		      (double)(qp_now_ns() - t0) / 1e6,
		      (double)qp_tx_time_ns(65536 - 12288, 10 * QP_MBPS) / 1e6);
	assert_true(qp_now_ns() - t0 >= qp_tx_time_ns(65536 - 12288, 10 * QP_MBPS));
	assert_int_equal(to_mock(p.a)->nlog, 16);
	assert_int_equal(qp_ctx_deadline(p.ctx), QP_TIME_NEVER);
	/* At 1 Mb/s (a 4 KiB piece per 32.8 ms) empty the bucket with one-piece posts; the
	 * next post is then refused, not half-accepted. */
	set_rate(&p, p.a, QP_MBPS, 0, 0);
	wr.length = 4096;
	while (qp_post_send(p.a, &wr) == 0)
		assert_false(p.a->pend.active);
	assert_int_equal(qp_post_send(p.a, &wr), -EAGAIN);
	assert_false(p.a->pend.active);
	assert_true(qp_send_deadline(p.a, qp_now_ns()) > qp_now_ns());
	pair_close(&p);
}

/* The context's list of pending QPs is the QPs with pend.active, in the order of its list
 * of every QP (newest first), whatever posts, progress and destroys did. */
static void pend_list_matches(const struct qp_ctx *ctx)
{
	const struct qp *q = ctx->qps, *p = ctx->pend_head;
	unsigned n = 0;

	for (; q; q = q->next) {
		if (!q->pend.active)
			continue;
		assert_ptr_equal(p, q);
		assert_true(p->pref && *p->pref == p);
		p = p->pnext;
		n++;
	}
	assert_null(p);
	assert_int_equal(n, ctx->npend);
}

static void test_pending_list_in_qp_order(void **state)
{
	enum { NQ = 8 };
	struct qp_attr attr = { .flags = QP_F_NONBLOCK, .gate = { .chunk_bytes = 4096,
								  .burst_bytes = 8192 } };
	struct qp *q[NQ];
	struct qp_conn_info info;
	struct pair p;
	char err[200];
	uint64_t rng = 5;
	unsigned posts = 0, pending_seen = 0;
	(void)state;

	pair_open(&p, &attr);
	qp_local_info(p.b, p.mr_b, &info);
	for (int i = 0; i < NQ; i++) {
		assert_int_equal(qp_create(p.ctx, &attr, &q[i], err, sizeof(err)), 0);
		assert_int_equal(qp_connect(q[i], &info, err, sizeof(err)), 0);
		set_rate(&p, q[i], (i % 3 + 1) * QP_MBPS, 0, 0);
	}
	for (int step = 0; step < 3000; step++) {
		uint64_t r = rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		int i = (int)((r >> 33) % NQ);
		struct qp_wr wr = { .opcode = QP_OP_WRITE, .mr = p.mr_a, .addr = p.buf_a,
				    .length = 4096u * (1 + (uint32_t)(r >> 40) % 8),
				    .remote_addr = p.a->remote.addr, .rkey = p.a->remote.rkey };
		switch ((r >> 20) % 8) {
		case 0:   /* a QP goes and a new one (the newest: the head) takes its place */
			assert_int_equal(qp_ratetable_release(p.rates, (uint32_t)
					 qp_ratetable_assign(p.rates, q[i]->qpn)), 0);
			assert_int_equal(qp_destroy(q[i]), 0);
			assert_int_equal(qp_create(p.ctx, &attr, &q[i], err, sizeof(err)), 0);
			assert_int_equal(qp_connect(q[i], &info, err, sizeof(err)), 0);
			set_rate(&p, q[i], (i % 3 + 1) * QP_MBPS, 0, 0);
			break;
		case 1:
		case 2:
			assert_true(qp_ctx_progress(p.ctx, qp_now_ns()) >= 0);
			break;
		case 3:
			assert_true(qp_ctx_retry(p.ctx, qp_now_ns()) >= 0);
			break;
		default:
			posts += qp_post_send(q[i], &wr) == 0;
		}
		pend_list_matches(p.ctx);
		pending_seen += p.ctx->npend > 1;
	}
	print_message("%u posts accepted; more than one QP pending at %u of 3000 steps\n",
		      posts, pending_seen);
	assert_true(pending_seen > 300);   /* the list was exercised with several in it */
	pair_close(&p);
}

static void test_credits_gate_posts(void **state)
{
	/* A deep bucket: here only credits may close the gate. */
	struct qp_attr attr = { .flags = QP_F_NONBLOCK, .gate = { .burst_bytes = 1 << 20 } };
	struct qp_wr wr;
	struct pair p;
	int slot;
	(void)state;

	pair_open(&p, &attr);
	set_rate(&p, p.a, 10 * QP_GBPS, QP_RATE_F_CREDITS, 0);
	wr = (struct qp_wr){ .opcode = QP_OP_WRITE, .mr = p.mr_a, .addr = p.buf_a,
			     .length = 4096, .remote_addr = p.a->remote.addr,
			     .rkey = p.a->remote.rkey };
	assert_int_equal(qp_post_send(p.a, &wr), -EAGAIN); /* tokens, but no credits */
	assert_int_equal(p.a->pacer.gate.stats.credit_waits, 1);
	slot = qp_ratetable_assign(p.rates, p.a->qpn); /* new generation: count restarts */
	qp_ratetable_set(p.rates, (uint32_t)slot, 10 * QP_GBPS, 0, QP_RATE_F_CREDITS, qp_now_ns());
	qp_ratetable_grant(p.rates, (uint32_t)slot, 8192, qp_now_ns());
	assert_int_equal(qp_post_send(p.a, &wr), 0);
	assert_int_equal(qp_post_send(p.a, &wr), 0);
	assert_int_equal(qp_post_send(p.a, &wr), -EAGAIN); /* 8 KiB granted, 8 KiB spent */
	qp_ratetable_grant(p.rates, (uint32_t)slot, 4096, qp_now_ns());
	assert_int_equal(qp_post_send(p.a, &wr), 0);
	assert_int_equal(to_mock(p.a)->nlog, 3);
	pair_close(&p);
}

static void test_no_agent_fallback_said_once(void **state)
{
	/* No gate line rate given: the link rate the QPs register with, 20 Gb/s, whose
	 * default tenth is the safe rate. */
	struct qp_ctx_attr ca = { .agent = { .link_bps = 20 * QP_GBPS } };
	struct qp_attr attr = { 0 };
	struct qp_ctx *ctx;
	struct qp *a, *b;
	struct qp_conn_info ia, ib;
	struct pair logs = { 0 };
	uint8_t *buf = calloc(1, 65536);
	struct qp_mr *mr;
	char err[200];
	(void)state;

	ca.rate_table = "/tmp/qpace-test-no-such-table";
	ca.agent_socket = "/tmp/qpace-test-no-such-agent.sock";
	ca.log = pair_log;
	ca.log_arg = &logs;
	assert_int_equal(qp_ctx_open_ops(&mock_ops, &ca, &ctx, err, sizeof(err)), 0);
	assert_int_equal(qp_mr_reg(ctx, buf, 65536, QP_ACCESS_REMOTE_WRITE, &mr), 0);
	assert_int_equal(qp_create(ctx, &attr, &a, err, sizeof(err)), 0);
	assert_int_equal(qp_create(ctx, &attr, &b, err, sizeof(err)), 0);
	qp_local_info(a, mr, &ia);
	qp_local_info(b, mr, &ib);
	assert_int_equal(qp_connect(a, &ib, err, sizeof(err)), 0);
	assert_int_equal(qp_connect(b, &ia, err, sizeof(err)), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(qp_post_send(a, &(struct qp_wr){ .opcode = QP_OP_WRITE,
			.mr = mr, .addr = buf, .length = 65536, .remote_addr = ib.addr,
			.rkey = ib.rkey }), 0);
	/* One line for the missing agent, one for the missing table, one for the safe rate;
	 * none per post (registration retries are quiet). Never an agent: no hold. */
	assert_int_equal(logs.log_lines, 3);
	assert_non_null(strstr(logs.last_log, "safe rate 2Gb/s"));
	assert_int_equal(a->pacer.gate.p.line_bps, 20 * QP_GBPS);
	assert_int_equal(a->pacer.gate.rate_bps, 2 * QP_GBPS);
	assert_int_equal(a->pacer.gate.mode, QP_GATE_SAFE);
	assert_int_equal(a->pacer.gate.stats.fallback_entries, 1);
	assert_int_equal(a->pacer.gate.stats.fallback_bytes, 50 * 65536);
	assert_int_equal(a->pacer.gate.stats.safe_bytes, 50 * 65536);
	qp_ctx_close(ctx);
	free(buf);
}

static void test_bad_requests_rejected(void **state)
{
	struct qp_attr attr = { .max_inline = 64 };
	struct pair p, q;
	struct qp *lone;
	char err[200];
	uint8_t small[16];
	(void)state;

	pair_open(&p, &attr);
	pair_open(&q, &attr);
	set_rate(&p, p.a, 10 * QP_GBPS, 0, 0);
	/* Bad opcode, beyond the region, another context's region, inline too long. */
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){ .opcode = QP_OP_COUNT,
		.mr = p.mr_a, .addr = p.buf_a, .length = 8 }), -EINVAL);
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){ .opcode = QP_OP_WRITE,
		.mr = p.mr_a, .addr = p.buf_a + BUF_BYTES - 4, .length = 8 }), -EINVAL);
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){ .opcode = QP_OP_WRITE,
		.mr = q.mr_a, .addr = q.buf_a, .length = 8 }), -EINVAL);
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){ .opcode = QP_OP_SEND,
		.addr = small, .length = 65, .flags = QP_WR_INLINE }), -EINVAL);
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){ .opcode = QP_OP_SEND,
		.mr = p.mr_a, .addr = p.buf_a, .length = 8, .flags = 0x80 }), -EINVAL);
	assert_int_equal(qp_post_recv(p.a, &(struct qp_recv_wr){ .mr = p.mr_a,
		.addr = p.buf_a - 1, .length = 8 }), -EINVAL);
	assert_int_equal(to_mock(p.a)->nlog, 0);
	/* Not connected; a bad peer; bad attributes named. */
	assert_int_equal(qp_create(p.ctx, NULL, &lone, err, sizeof(err)), 0);
	assert_int_equal(qp_post_send(lone, &(struct qp_wr){ .opcode = QP_OP_SEND }), -ENOTCONN);
	assert_int_equal(qp_connect(lone, &(struct qp_conn_info){ .qpn = 0x1000000,
		.mtu_bytes = 1024 }, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_int_equal(qp_create(p.ctx, &(struct qp_attr){ .mtu_bytes = 1500 }, &lone, err,
				   sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "mtu 1500"));
	assert_int_equal(qp_create(p.ctx, &(struct qp_attr){ .gate = { .chunk_bytes = 1 } },
				   &lone, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "chunk_bytes"));
	/* An error completion marks the QP broken: later posts are refused. */
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){ .opcode = QP_OP_WRITE,
		.mr = p.mr_a, .addr = p.buf_a, .length = 8, .rkey = 0xbad,
		.remote_addr = 1 }), 0);
	{
		struct qp_wc wc;

		assert_int_equal(poll_one(p.a, &wc), 1);
		assert_int_equal(wc.status, QP_WC_REM_ACCESS_ERR);
		print_message("bad rkey: %s\n", qp_wc_status_str(wc.status));
	}
	assert_int_equal(qp_post_send(p.a, &(struct qp_wr){ .opcode = QP_OP_SEND }), -ENOTCONN);
	pair_close(&q);
	pair_close(&p);
}

static void test_default_table_never_null(void **state)
{
	static const struct qp_backend_ops bare = { .name = "bare" };
	struct qp_ctx *ctx;
	struct qp *qp;
	struct qp_wc wc;
	char err[200];
	uint8_t buf[8];
	struct qp_mr *mr;
	(void)state;

	assert_int_equal(qp_ctx_open_ops(&bare, &(struct qp_ctx_attr){ .rate_table = "" }, &ctx,
					 err, sizeof(err)), 0);
	assert_int_equal(qp_ctx_fd(ctx), -EOPNOTSUPP);
	assert_int_equal(qp_ctx_deadline(ctx), QP_TIME_NEVER);
	assert_int_equal(qp_ctx_progress(ctx, qp_now_ns()), 0);
	assert_int_equal(qp_mr_reg(ctx, buf, sizeof(buf), 0, &mr), -EOPNOTSUPP);
	assert_int_equal(qp_create(ctx, NULL, &qp, err, sizeof(err)), -EOPNOTSUPP);
	assert_int_equal(qp_dial_cm(ctx, NULL, "127.0.0.1", "1", NULL, &qp, err, sizeof(err)),
			 -EOPNOTSUPP);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "'bare'"));
	qp_ctx_close(ctx);
	/* The mock has no CM and no fd either, and poll works. */
	assert_int_equal(qp_ctx_open_ops(&mock_ops, NULL, &ctx, err, sizeof(err)), 0);
	assert_int_equal(qp_create(ctx, NULL, &qp, err, sizeof(err)), 0);
	assert_int_equal(qp_poll(qp, &wc, 1), 0);
	assert_int_equal(qp_accept_cm(ctx, NULL, NULL, "1", NULL, &qp, err, sizeof(err)),
			 -EOPNOTSUPP);
	qp_ctx_close(ctx);
	assert_int_equal(qp_ctx_open("nope", NULL, &ctx, err, sizeof(err)), -ENOENT);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "ibv"));
	assert_string_equal(qp_wc_status_str(QP_WC_STATUS_COUNT), "UNKNOWN");
	assert_string_equal(qp_opcode_str(QP_OP_WRITE_IMM), "WRITE_IMM");
}

/* ---- TCP exchange ---- */

struct side {
	bool dial;
	char port[16];
	struct qp_ctx *ctx;
	struct qp_mr *mr;
	struct qp *qp;
	int rc;
	char err[200];
	uint8_t buf[4096];
};

static void *side_main(void *arg)
{
	struct side *s = arg;

	s->rc = s->dial ? qp_dial(s->ctx, NULL, "127.0.0.1", s->port, s->mr, 5 * QP_NS_PER_S,
				  &s->qp, s->err, sizeof(s->err))
			: qp_accept(s->ctx, NULL, "127.0.0.1", s->port, s->mr, 5 * QP_NS_PER_S,
				    &s->qp, s->err, sizeof(s->err));
	return NULL;
}

static void free_port(char *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	snprintf(buf, len, "%u", ntohs(sa.sin_port));
}

static void test_tcp_dial_accept(void **state)
{
	struct side s[2] = { { .dial = false }, { .dial = true } };
	pthread_t th[2];
	char err[200];
	(void)state;

	free_port(s[0].port, sizeof(s[0].port));
	memcpy(s[1].port, s[0].port, sizeof(s[0].port));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(qp_ctx_open_ops(&mock_ops, &(struct qp_ctx_attr){
			.rate_table = "" }, &s[i].ctx, err, sizeof(err)), 0);
		assert_int_equal(qp_mr_reg(s[i].ctx, s[i].buf, sizeof(s[i].buf),
					   QP_ACCESS_REMOTE_WRITE, &s[i].mr), 0);
	}
	/* The client starts first: it retries until the server listens. */
	pthread_create(&th[1], NULL, side_main, &s[1]);
	usleep(150000);
	pthread_create(&th[0], NULL, side_main, &s[0]);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	print_message("server: %d %s / client: %d %s\n", s[0].rc, s[0].err, s[1].rc, s[1].err);
	assert_int_equal(s[0].rc, 0);
	assert_int_equal(s[1].rc, 0);
	for (int i = 0; i < 2; i++) {
		struct side *me = &s[i], *peer = &s[1 - i];

		assert_true(me->qp->connected);
		assert_int_equal(me->qp->remote.qpn, peer->qp->qpn);
		assert_int_equal(me->qp->remote.psn, peer->qp->local.psn);
		assert_int_equal(me->qp->remote.rkey, peer->mr->rkey);
		assert_int_equal(me->qp->remote.addr, (uintptr_t)peer->buf);
		assert_int_equal(me->qp->remote.len, sizeof(peer->buf));
	}
	for (int i = 0; i < 2; i++)
		qp_ctx_close(s[i].ctx);
}

struct rogue {
	char port[16];
	uint8_t msg[QP_WIRE_CONN_BYTES];
	size_t len;
};

/* A peer that sends @msg (maybe truncated or of another version), then hangs up. */
static void *rogue_main(void *arg)
{
	struct rogue *r = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons((uint16_t)atoi(r->port)) };
	int fd = -1;

	for (int i = 0; i < 100; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(fd);
		fd = -1;
		usleep(20000);
	}
	if (fd >= 0) {
		/* the server's check is what is tested, not whether the write went */
		ssize_t n = write(fd, r->msg, r->len);

		(void)n;
		usleep(100000);
		close(fd);
	}
	return NULL;
}

static void expect_accept_fails(const struct qp_conn_info *ci, size_t len, uint8_t version,
				int want_rc, const char *word)
{
	struct rogue r;
	struct qp_ctx *ctx;
	struct qp *qp = NULL;
	pthread_t th;
	char err[200] = "";
	int rc;

	free_port(r.port, sizeof(r.port));
	assert_int_equal(qp_wire_conn_encode(ci, r.msg, sizeof(r.msg)), QP_WIRE_CONN_BYTES);
	r.msg[2] = version;
	r.len = len;
	assert_int_equal(qp_ctx_open_ops(&mock_ops, &(struct qp_ctx_attr){ .rate_table = "" },
					 &ctx, err, sizeof(err)), 0);
	pthread_create(&th, NULL, rogue_main, &r);
	rc = qp_accept(ctx, NULL, "127.0.0.1", r.port, NULL, 3 * QP_NS_PER_S, &qp, err,
		       sizeof(err));
	pthread_join(th, NULL);
	print_message("peer sent %zu bytes, version %u: %d %s\n", len, version, rc, err);
	assert_int_equal(rc, want_rc);
	assert_null(qp);
	assert_non_null(strstr(err, word));
	assert_null(ctx->qps); /* the half-made QP was destroyed */
	qp_ctx_close(ctx);
}

static void test_tcp_bad_peers(void **state)
{
	struct qp_conn_info ci = { .qpn = 0x222, .psn = 1, .mtu_bytes = 1024 };
	(void)state;

	expect_accept_fails(&ci, QP_WIRE_CONN_BYTES, 2, -EPROTO, "version 2");
	expect_accept_fails(&ci, 20, 1, -ECONNRESET, "exchange");
	expect_accept_fails(&ci, 3, 1, -ECONNRESET, "exchange");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_split_paced_and_exact),
		cmocka_unit_test(test_backend_busy_loses_nothing),
		cmocka_unit_test(test_burst_default_two_mtus),
		cmocka_unit_test(test_send_whole_and_signal_all),
		cmocka_unit_test(test_nonblocking_progress),
		cmocka_unit_test(test_pending_list_in_qp_order),
		cmocka_unit_test(test_credits_gate_posts),
		cmocka_unit_test(test_no_agent_fallback_said_once),
		cmocka_unit_test(test_bad_requests_rejected),
		cmocka_unit_test(test_default_table_never_null),
		cmocka_unit_test(test_tcp_dial_accept),
		cmocka_unit_test(test_tcp_bad_peers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
