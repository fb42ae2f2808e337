/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The QP API's common layer, over the in-memory RC backend of tests/support/qp_mock.c:
 * splitting and pacing of send WRs, blocking and non-blocking posts, progress and
 * deadlines, credits, argument checks, the EOPNOTSUPP default table, counters (the TCP
 * connection exchange: test_qp_tcp.c). */
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

#include "qp_mock.h"

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
	assert_false(qp_send_busy(p.a));
	assert_int_equal(qp_post_send(p.a, &wr), 0);
	assert_true(p.a->pend.active);
	assert_true(p.a->pend.offset >= 12288);
	/* One accepted WR at a time: qp_send_busy says so without a post. */
	assert_true(qp_send_busy(p.a));
	assert_int_equal(qp_post_send(p.a, &wr), -EAGAIN);
	assert_true(qp_send_busy(p.a));
	deadline = qp_ctx_deadline(p.ctx);
	assert_true(deadline > t0 && deadline != QP_TIME_NEVER);
	while (p.a->pend.active) {
		while ((now = qp_now_ns()) < qp_ctx_deadline(p.ctx))
			;
		assert_true(qp_ctx_progress(p.ctx, now) >= 0);
		assert_true(qp_send_busy(p.a) == p.a->pend.active);
		rounds++;
	}
	assert_false(qp_send_busy(p.a));   /* handed on: the next post is taken */
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
 * of every QP (newest first), whatever posts, progress and destroys did. Returns how many. */
static unsigned pend_list_matches(const struct qp_ctx *ctx)
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
	return n;
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
		pending_seen += pend_list_matches(p.ctx) > 1;
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
