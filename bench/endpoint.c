/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One end of a perftest-style connection: see endpoint.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/soft.h"
#include "endpoint.h"
#include "stats.h"

volatile sig_atomic_t ep_stop;

static void ep_on_signal(int sig)
{
	(void)sig;
	ep_stop = 1;
}

int ep_open(struct endpoint *e, const struct bench_conf *c, size_t buf_bytes, char *err,
	    size_t errlen)
{
	qp_time_ns now = qp_now_ns();
	int rc;

	memset(e, 0, sizeof(*e));
	e->c = c;
	signal(SIGINT, ep_on_signal);
	signal(SIGTERM, ep_on_signal);
	e->soft = c->backend == BACKEND_SOFT;
	if (e->soft) {
		char opts[400];
		snprintf(opts, sizeof(opts), "attach=%s,ip=%s,link_rate=%llu,window=%llu,shm=%s",
			 c->attach, c->ip, (unsigned long long)c->link_bps,
			 (unsigned long long)c->window_pkts,
			 c->transport == BENCH_TRANSPORT_SHM ? c->shm_path :
			 c->transport == BENCH_TRANSPORT_UDP ? "off" : "auto");
		struct host_conf hc = { .options = opts, .cc = c->cc,
					      .credits = c->credits == CREDITS_IA, .seed = c->seed,
					      .key = c->have_key ? c->key : NULL,
					      .clock_offset_ns = qp_wall_offset_ns() };
		if ((rc = host_open(&e->host, &hc, now, err, errlen)))
			return rc;
		e->ctx = e->host.ctx;
	} else {
		char opts[32] = "";
		if (c->gid_given)
			snprintf(opts, sizeof(opts), "gid=%" PRIu64, c->gid_index);
		/* ibv QPs register with the host's qpaced (if one runs) with the algorithm asked
		 * for; as receivers when this is the server, so its credit pacer covers them.
		 * Their line rate is --rate when given (the bottleneck's, e.g. an emulated
		 * switch's), else the library's default (rxe reports a nominal 10G, and HPCC
		 * would start each QP there, and scale its floor and steps to it). As payload,
		 * like the embedded incast's: the gate meters payload bytes. */
		qp_rate_bps line = c->rate_given ? (qp_rate_bps)stats_payload_bps(
			c->link_bps, (uint32_t)c->mtu_bytes, STATS_ROCE_PKT_OVERHEAD) : 0;
		struct qp_ctx_attr a = { .device = c->ib_dev, .port = (uint8_t)c->ib_port,
					 .options = *opts ? opts : NULL,
					 .agent = { .link_bps = line,
						    .algo = c->cc_given ? c->cc : NULL,
						    .receiver = c->server == NULL } };
		if ((rc = qp_ctx_open("ibv", &a, &e->ctx, err, errlen)) < 0)
			return rc;
	}
	e->buf_bytes = buf_bytes;
	/* cache-line aligned, so the exposed areas are (atomics need 8-byte alignment) */
	e->buf = aligned_alloc(64, (buf_bytes + 64 + 63) & ~(size_t)63);
	if (e->buf)
		memset(e->buf, 0, buf_bytes + 64);
	rc = e->buf ? qp_mr_reg(e->ctx, e->buf, buf_bytes + 64, QP_ACCESS_LOCAL_WRITE |
				QP_ACCESS_REMOTE_WRITE | QP_ACCESS_REMOTE_READ |
				QP_ACCESS_REMOTE_ATOMIC, &e->mr) : -ENOMEM;
	if (rc < 0)
		return qp_errmsg(rc, err, errlen, "cannot register %zu bytes", buf_bytes);
	return 0;
}

/* The smallest local ACK timeout exponent from @from up (to EP_QP_TIMEOUT_MAX) whose
 * 4.096 us << t outlasts twice the worst queueing delay of the bottleneck: @buffer_bytes
 * drained at @link_bps. An RTT across a full queue must not expire the timer, or rxe's
 * go-back-N resends a whole window that was only delayed, and those resends (not paced
 * by the gate) fill the queue again. 128K at 20 Mb/s is 52 ms: t = 15 (134 ms), where the
 * default 12 (16.8 ms) fired on a third of a buffer. */
uint8_t ep_timeout_for_drain(uint64_t buffer_bytes, uint64_t link_bps, uint8_t from)
{
	double need_ns = 2.0 * qp_tx_time_ns(buffer_bytes, link_bps);
	uint8_t t = from;

	while (t < EP_QP_TIMEOUT_MAX && (double)qp_ack_timeout_ns(t) < need_ns)
		t++;
	return t;
}

/* The local ACK timeout (4.096 us << t): -u, else for ibv ep_timeout_for_drain from
 * EP_QP_TIMEOUT up, else EP_QP_TIMEOUT. */
uint8_t ep_ack_timeout(const struct bench_conf *c)
{
	if (c->qp_timeout)           /* -u (incast) */
		return (uint8_t)c->qp_timeout;
	if (c->backend != BACKEND_IBV)
		return EP_QP_TIMEOUT;
	return ep_timeout_for_drain(c->buffer_bytes, c->link_bps, EP_QP_TIMEOUT);
}

int ep_connect(struct endpoint *e, unsigned nqps, uint32_t sq_depth, char *err,
	       size_t errlen)
{
	const struct bench_conf *c = e->c;
	struct qp_attr qa = { .sq_depth = sq_depth, .rq_depth = 2 * sq_depth,
			      .timeout = ep_ack_timeout(c),
			      .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL };

	/* ibv: a host whose CPU stalls (a TCG guest's vCPU, seen stalled > 100 ms) finds the
	 * agent's heartbeat stale although the agent lives; at the 1G fallback the gate then
	 * hands rxe a whole send queue at once. Stale means dead only after a second here. */
	if (c->backend == BACKEND_IBV)
		qa.gate.stale_ns = EP_IBV_STALE_NS;
	qa.gate.safe_permille = c->fallback_safe_permille;
	char port[8];

	if (nqps > EP_MAX_QPS)
		return qp_errmsg(-EINVAL, err, errlen, "more than %u QPs", EP_MAX_QPS);
	snprintf(port, sizeof(port), "%" PRIu64, c->tcp_port);
	for (unsigned q = 0; q < nqps; q++) {
		int rc = c->server ? qp_dial(e->ctx, &qa, c->server, port, e->mr, EP_DIAL_NS,
					     &e->qp[q], err, errlen)
				   : qp_accept(e->ctx, &qa, NULL, port, e->mr, EP_ACCEPT_NS,
					       &e->qp[q], err, errlen);
		if (rc < 0)
			return rc;
		e->nqps = q + 1;
		ep_service(e);   /* the agent's heartbeat: accept may have waited long */
		/* The QP's line rate as payload, as an incast's hosts register theirs: the gate
		 * meters payload bytes, so the wire carries the link's rate, not more. */
		qp_rate_bps line = (qp_rate_bps)stats_payload_bps(
			c->link_bps, e->qp[q]->path_mtu_bytes, STATS_ROCE_PKT_OVERHEAD);
		if (e->soft && (rc = host_register(&e->host, e->qp[q], line,
							 50 * QP_NS_PER_US, !c->server, NULL, NULL,
							 qp_now_ns(), err, errlen)))
			return rc;
	}
	return 0;
}

void ep_close(struct endpoint *e)
{
	for (unsigned q = 0; q < e->nqps; q++)
		qp_destroy(e->qp[q]);
	qp_mr_dereg(e->mr);
	if (e->soft)
		host_close(&e->host);
	else
		qp_ctx_close(e->ctx);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

void ep_service(struct endpoint *e)
{
	qp_time_ns now = qp_now_ns();

	if (qp_ctx_deadline(e->ctx) <= now)
		qp_ctx_progress(e->ctx, now);
	if (e->soft)
		host_service(&e->host, now);
}

/* The policy (docs/performance.md#cooperative-polling): a process spins only while it has
 * work due within a short horizon. A wake-up from ppoll lands ~40-80 us late on these
 * machines, so an event closer than --spin (the gate's next opening, mostly) is waited
 * for by polling. A turn that moved frames or completed work is followed by another at
 * once (the socket may hold more); a turn that found nothing blocks: a receiver is woken
 * by the kernel when a frame arrives, and does not spin between the frames of a stream
 * (lingering for 20 us after each kept the receiver, the sender and the switch all
 * spinning at 1 Gb/s, three spinners on two cores). */
void ep_idle(struct endpoint *e, bool worked)
{
	const struct qp_soft_io_stats *io;
	qp_time_ns now, next;
	uint64_t frames;

	if (!e->soft || !(io = qp_soft_io_stats(e->ctx)))
		return;
	now = qp_now_ns();
	frames = io->rx_datagrams + io->tx_datagrams;
	if (worked || frames != e->seen_frames) {
		e->seen_frames = frames;
		return;
	}
	next = host_deadline(&e->host);
	if (next != QP_TIME_NEVER && next <= now + e->c->spin_ns) {
		/* due soon: wait for it here, without a system call per turn (an empty
		 * recvmmsg each, 2 of every 3 of the sender's calls before); a frame that
		 * arrives meanwhile waits at most --spin */
		while (qp_now_ns() < next)
			qp_cpu_relax();
		return;
	}
	if (!qp_soft_wait_arm(e->ctx))   /* shm: frames came while we looked */
		return;
	e->blocks++;
	qp_block_until(qp_ctx_fd(e->ctx), next, now);
	/* what woke us (a frame, or the event due): handle it now; the next CQ poll then
	 * finds it there without a receive of its own */
	qp_ctx_progress(e->ctx, qp_now_ns());
}

int ep_post_recv(struct endpoint *e, struct qp *qp, size_t off, uint32_t len)
{
	struct qp_recv_wr r = { .wr_id = off, .mr = e->mr, .addr = e->buf + off, .length = len };

	return qp_post_recv(qp, &r);
}

int ep_post_send(struct endpoint *e, struct qp *qp, enum qp_opcode op, uint32_t len,
		 uint32_t imm, uint64_t wr_id)
{
	struct qp_wr w = { .opcode = op, .wr_id = wr_id, .mr = e->mr, .addr = e->buf,
			   .length = len, .remote_addr = qp->remote.addr, .rkey = qp->remote.rkey,
			   .imm = imm, .flags = QP_WR_SIGNALED };
	for (;;) {
		int rc = qp_post_send(qp, &w);
		if (rc != -EAGAIN && rc != -ENOMEM && rc != -ENOSPC)
			return rc;
		ep_service(e);
		ep_idle(e, false);
		if (ep_stop)
			return -EINTR;
	}
}

int ep_wait_wc(struct endpoint *e, struct qp *qp, struct qp_wc *wc, qp_time_ns limit_ns)
{
	qp_time_ns end = qp_now_ns() + limit_ns;

	while (!ep_stop && qp_now_ns() < end) {
		int n = qp_poll(qp, wc, 1);
		if (n < 0)
			return n;
		if (n == 1)
			return wc->status == QP_WC_SUCCESS ? 0 : -EIO;
		ep_service(e);
		ep_idle(e, false);
	}
	return ep_stop ? -EINTR : -ETIMEDOUT;
}
