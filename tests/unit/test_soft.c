/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft backend through the QP API over real loopback UDP, two hosts in this process
 * wired to each other: options and their errors; a large WRITE arrives byte-exact with the
 * backend's counters filled; SEND without a receive draws RNR NAKs, then succeeds once one
 * is posted; a bad rkey gives a remote-access error and both QPs end in error; qp_poll
 * makes progress by itself, and in one receive per turn; progress sends its pieces in one
 * batch; a readiness wait's "empty" (qp_soft_rx_idle) saves the receive; four hosts and eight QPs on one libev loop driven by the
 * contexts' fds and deadlines. Size: QPACE_TEST_MB (default 64; 8 under ASan). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <cmocka.h>
#include <ev.h>
#include <zlib.h>

#include <arpa/inet.h>
#include <unistd.h>

#include "qpace/shm_ring.h"
#include "qpace/soft_bw.h"
#include "soft_net.h"
#include "test_size.h"

/* "bind=P,peer=127.0.0.1:Q,ip=10.0.0.N[,extra]" */
static void direct_opts(char *buf, size_t len, unsigned bind, unsigned peer, int host,
			const char *extra)
{
	snprintf(buf, len, "bind=%u,peer=127.0.0.1:%u,ip=10.0.0.%d%s%s", bind, peer, host,
		 extra ? "," : "", extra ? extra : "");
}

static void test_options(void **state)
{
	static const struct {
		const char *opts, *expect;
	} bad[] = {
		{ "attach=127.0.0.1:7000", "ip=A.B.C.D is required" },
		{ "ip=10.0.0.1", "attach=HOST:P" },
		{ "ip=10.0.0.1,attach=localhost:7000", "attach 'localhost:7000'" },
		{ "ip=10.0.0.1,attach=127.0.0.1:65535", "attach '127.0.0.1:65535'" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,mtu=1000", "mtu '1000'" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,mac=01:00:00:00:00:01", "mac '01:00" },
		{ "ip=224.0.0.1,attach=127.0.0.1:7000", "ip '224.0.0.1'" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,peer=127.0.0.1:1", "attach= replaces" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,colour=blue", "unknown option 'colour'" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,window=0", "window '0'" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,telemetry_port=4791", "telemetry_port" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,link_rate=fast",
		  "link_rate 'fast': accepted 1K..10T" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,link_rate=100", "link_rate '100'" },
		{ "ip=10.0.0.1,bind=7000", "attach=HOST:P (or both" },
		{ "ip=10.0.0.1,attach=127.0.0.1:7000,shm=", "shm '': accepted auto, off or PATH" },
		{ NULL, "options are required" },
	};
	struct qp_ctx *ctx = NULL, *ctx2 = NULL;
	char err[200], opts[128];
	unsigned p = soft_port_base(1);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct qp_ctx_attr ca = { .options = bad[i].opts, .rate_table = "" };

		err[0] = 0;
		assert_int_equal(qp_ctx_open_ops(&qp_soft_ops, &ca, &ctx, err, sizeof(err)),
				 -EINVAL);
		if (!strstr(err, bad[i].expect))
			fail_msg("'%s': got '%s', expected '%s'", bad[i].opts, err, bad[i].expect);
		print_message("%s\n", err);
	}
	/* A port already taken is reported with the address. */
	snprintf(opts, sizeof(opts), "ip=10.0.0.1,attach=127.0.0.1:%u", p);
	assert_int_equal(qp_ctx_open_ops(&qp_soft_ops, &(struct qp_ctx_attr){ .options = opts,
								 .rate_table = "" },
					 &ctx, err, sizeof(err)), 0);
	assert_int_equal(qp_ctx_open_ops(&qp_soft_ops, &(struct qp_ctx_attr){ .options = opts,
								 .rate_table = "" },
					 &ctx2, err, sizeof(err)), -EADDRINUSE);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "bind 127.0.0.1:"));
	assert_non_null(qp_soft_host(ctx));
	assert_int_equal(soft_host_ip(qp_soft_host(ctx)), 0x0a000001);
	assert_int_equal(soft_host_mac(qp_soft_host(ctx))[5], 1);   /* 02:00:0a:00:00:01 */
	qp_ctx_close(ctx);
}

/* ---- the QP API over loopback ---- */

static void test_write_direct(void **state)
{
	unsigned p = soft_port_base(2);
	char a[160], b[160];
	struct soft_bw_params bp = { .opts_a = a, .opts_b = b, .bytes = test_size_bytes(64, 8),
				     .msg_bytes = 1 << 20, .quiet = true };
	struct soft_bw_result r;
	int rc;

	(void)state;
	direct_opts(a, sizeof(a), p, p + 1, 1, "mtu=4096");
	direct_opts(b, sizeof(b), p + 1, p, 2, "mtu=4096");
	rc = soft_bw_run(&bp, &r);
	if (rc)
		fail_msg("%s", r.err);
	print_message("direct: %llu MB in %.3f s = %.2f Gb/s, crc32 %08x/%08x, %llu datagrams in "
		      "%llu batches (%.1f per recvmmsg), %llu retransmissions\n",
		      (unsigned long long)(r.bytes >> 20), (double)r.elapsed_ns / 1e9, r.gbps,
		      r.crc_src, r.crc_dst, (unsigned long long)r.ib.rx_datagrams,
		      (unsigned long long)r.ib.rx_batches,
		      (double)r.ib.rx_datagrams / (double)(r.ib.rx_batches ? r.ib.rx_batches : 1),
		      (unsigned long long)r.ra.retrans_pkts);
	assert_true(r.exact);
	assert_int_equal(r.crc_src, r.crc_dst);
	assert_int_equal(r.bytes, bp.bytes);
	/* The backend's counters reach qp_get_stats. */
	assert_true(r.qa.have & QP_STAT_RETRANS);
	assert_true(r.qa.have & QP_STAT_RNRS);
	assert_int_equal(r.qa.retransmissions, r.ra.retrans_pkts);
	assert_int_equal(r.qa.tx_bytes, bp.bytes);
	assert_int_equal(r.rb.rx_bytes, bp.bytes);
	/* Batching: more than one datagram per system call on the busy side. */
	assert_true(r.ib.rx_datagrams > r.ib.rx_batches);
}

/* Hosts A (10.0.0.1) and B (10.0.0.2) wired to each other, 8 KB regions, connected;
 * @attr_b for B's QP (NULL: the default). all[] gets both contexts. */
static void open_direct_pair(struct soft_side *sa, struct soft_side *sb, unsigned salt,
			     const struct qp_attr *attr_b, struct qp_ctx *all[2])
{
	unsigned p = soft_port_base(salt);
	char a[160], b[160];

	direct_opts(a, sizeof(a), p, p + 1, 1, NULL);
	direct_opts(b, sizeof(b), p + 1, p, 2, NULL);
	soft_side_open(sa, a, 8192, QP_ACCESS_LOCAL_WRITE, NULL);
	soft_side_open(sb, b, 8192, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE, attr_b);
	all[0] = sa->ctx;
	all[1] = sb->ctx;
	soft_connect(sa, sb);
}

/* A (paced from @rates, QP @attr) and B wired to each other over ports @p, @p + 1, MTU
 * 1024, @len-byte regions, connected; returns A's slot in @rates. */
static int open_paced_pair(struct soft_side *sa, struct soft_side *sb, unsigned p,
			   const struct qp_attr *attr, struct qp_ratetable *rates, size_t len,
			   struct qp_ctx *all[2])
{
	char a[160], b[160];
	int slot;

	direct_opts(a, sizeof(a), p, p + 1, 1, "mtu=1024");
	direct_opts(b, sizeof(b), p + 1, p, 2, "mtu=1024");
	soft_side_open_rates(sa, a, len, QP_ACCESS_LOCAL_WRITE, attr, rates);
	soft_side_open(sb, b, len, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE, NULL);
	all[0] = sa->ctx;
	all[1] = sb->ctx;
	soft_connect(sa, sb);
	slot = qp_ratetable_assign(rates, sa->qp->qpn);
	assert_true(slot >= 0);
	return slot;
}

/* The agent's in-flight cap reaches the wire: A's slot says 10 Gb/s but at most 4 packets
 * + MTU - 1 unacknowledged (HPCC's window form). A 1 MiB WRITE goes in pieces of one packet
 * (the cap cuts them), the backend never holds more than 4 packets unacknowledged, and the
 * bytes arrive intact. */
static void test_inflight_cap_on_the_wire(void **state)
{
	enum { MTU = 1024, LEN = 1 << 20 };
	const uint64_t cap = 4 * MTU + MTU - 1;
	struct qp_attr attr = { .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL, .timeout = 10 };
	struct qp_ratetable *rates;
	struct soft_side sa, sb;
	struct qp_ctx *all[2];
	struct qp_wr wr;
	struct qp_wc wc = { 0 };
	bool done = false;
	uint64_t peak = 0, samples = 0;
	unsigned p = soft_port_base(5);
	char err[200];
	int slot;
	(void)state;

	assert_int_equal(qp_ratetable_create_mem(4, &rates, err, sizeof(err)), 0);
	slot = open_paced_pair(&sa, &sb, p, &attr, rates, LEN, all);
	assert_int_equal(qp_ratetable_set(rates, (uint32_t)slot, 10 * QP_GBPS, cap, 0,
					  qp_now_ns()), 0);
	for (size_t i = 0; i < LEN; i++)
		sa.buf[i] = (uint8_t)(i * 7 + (i >> 12));
	wr = (struct qp_wr){ .opcode = QP_OP_WRITE, .mr = sa.mr, .addr = sa.buf, .length = LEN,
			     .remote_addr = sa.qp->remote.addr, .rkey = sa.qp->remote.rkey,
			     .flags = QP_WR_SIGNALED };
	qp_ratetable_heartbeat(rates, qp_now_ns());
	assert_int_equal(qp_post_send(sa.qp, &wr), 0);
	for (qp_time_ns end = qp_now_ns() + 10 * QP_NS_PER_S; !done && qp_now_ns() < end;) {
		uint64_t u = sa.ctx->ops->unacked_bytes(sa.qp);

		peak = u > peak ? u : peak;
		samples++;
		qp_ratetable_heartbeat(rates, qp_now_ns());
		done = soft_wait_wc(&sa, all, 2, &wc, 100 * QP_NS_PER_US);
	}
	print_message("cap %llu B: peak unacknowledged %llu B over %llu samples, %llu pieces, "
		      "%llu window waits\n", (unsigned long long)cap, (unsigned long long)peak,
		      (unsigned long long)samples, (unsigned long long)sa.qp->stats.tx_chunks,
		      (unsigned long long)sa.qp->pacer.gate.stats.window_waits);
	assert_true(done);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_true(peak <= 4 * MTU);
	assert_true(peak > 0);
	assert_true(sa.qp->pacer.gate.stats.window_waits > 0);
	assert_true(sa.qp->stats.tx_chunks >= LEN / (4 * MTU));
	assert_memory_equal(sb.buf, sa.buf, LEN);
	soft_side_close(&sa);
	soft_side_close(&sb);
	qp_ratetable_close(rates);
}

/* Real-time batching: the pieces qp_ctx_progress hands on leave in one sendmmsg (not one
 * per piece), and an empty CQ poll right after a progress leaves the receive to it (one
 * recvmmsg per turn) while every frame still arrives: the WRITE completes byte-exact. */
static void test_progress_sends_pieces_in_one_batch(void **state)
{
	enum { MTU = 1024, LEN = 1 << 20 };
	struct qp_attr attr = { .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL, .timeout = 10 };
	const struct qp_soft_io_stats *io;
	struct qp_ratetable *rates;
	struct soft_side sa, sb;
	struct qp_ctx *all[2];
	struct qp_wr wr;
	struct qp_wc wc = { 0 };
	struct timespec ms = { 0, 1000000 };
	uint64_t batches, frames, pieces, folded;
	unsigned p = soft_port_base(11);
	char err[200];
	bool done = false, hit = false;
	int slot;
	(void)state;

	assert_int_equal(qp_ratetable_create_mem(4, &rates, err, sizeof(err)), 0);
	slot = open_paced_pair(&sa, &sb, p, &attr, rates, LEN, all);
	assert_int_equal(qp_ratetable_set(rates, (uint32_t)slot, QP_GBPS, 0, 0, qp_now_ns()), 0);
	for (size_t i = 0; i < LEN; i++)
		sa.buf[i] = (uint8_t)(i * 13 + (i >> 10));
	wr = (struct qp_wr){ .opcode = QP_OP_WRITE, .mr = sa.mr, .addr = sa.buf, .length = LEN,
			     .remote_addr = sa.qp->remote.addr, .rkey = sa.qp->remote.rkey,
			     .flags = QP_WR_SIGNALED };
	/* A first small WRITE resolves the peer's address (ARP) and completes. */
	wr = (struct qp_wr){ .opcode = QP_OP_WRITE, .mr = sa.mr, .addr = sa.buf, .length = 64,
			     .remote_addr = sa.qp->remote.addr, .rkey = sa.qp->remote.rkey,
			     .flags = QP_WR_SIGNALED };
	qp_ratetable_heartbeat(rates, qp_now_ns());
	assert_int_equal(qp_post_send(sa.qp, &wr), 0);
	assert_true(soft_wait_wc(&sa, all, 2, &wc, 5 * QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	nanosleep(&ms, NULL);   /* the bucket full again */
	wr.length = LEN;
	qp_ratetable_heartbeat(rates, qp_now_ns());
	/* The first piece goes at once (one 4 KiB chunk: 4 frames); the gate then says "wait
	 * for tokens". */
	assert_int_equal(qp_post_send(sa.qp, &wr), 0);
	io = qp_soft_io_stats(sa.ctx);
	assert_non_null(io);
	assert_int_equal(sa.qp->stats.tx_chunks, 2);
	/* Back 1 ms late: the gate passes the bucket and the catch-up (4 chunks at 1 Gb/s),
	 * and the progress sends their 16 frames in one system call. */
	nanosleep(&ms, NULL);
	qp_ratetable_heartbeat(rates, qp_now_ns());
	batches = io->tx_batches;
	frames = io->tx_datagrams;
	pieces = sa.qp->stats.tx_chunks;
	assert_true(qp_ctx_progress(sa.ctx, qp_now_ns()) >= 0);
	print_message("one progress: %llu pieces, %llu frames in %llu sendmmsg\n",
		      (unsigned long long)(sa.qp->stats.tx_chunks - pieces),
		      (unsigned long long)(io->tx_datagrams - frames),
		      (unsigned long long)(io->tx_batches - batches));
	assert_true(sa.qp->stats.tx_chunks - pieces >= 2);
	/* their frames (and any the host's link held back before) */
	assert_true(io->tx_datagrams - frames >= (sa.qp->stats.tx_chunks - pieces) * 4096 / MTU);
	assert_int_equal(io->tx_batches - batches, 1);
	/* An empty CQ right after a progress: no receive of its own (unless the scheduler
	 * took more than the 200 us it trusts a progress for: a few tries) ... */
	for (int i = 0; i < 20 && !hit; i++) {
		folded = io->rx_folded;
		if (i)
			assert_true(qp_ctx_progress(sa.ctx, qp_now_ns()) >= 0);
		assert_int_equal(qp_poll(sa.qp, &wc, 1), 0);
		hit = io->rx_folded == folded + 1;
	}
	assert_true(hit);
	/* ... the next one receives again. */
	assert_int_equal(qp_poll(sa.qp, &wc, 1), 0);
	assert_int_equal(io->rx_folded, folded + 1);
	/* And the rest of the transfer: every frame arrives, the WRITE completes. */
	for (qp_time_ns end = qp_now_ns() + 20 * QP_NS_PER_S; !done && qp_now_ns() < end;) {
		qp_ratetable_heartbeat(rates, qp_now_ns());
		done = soft_wait_wc(&sa, all, 2, &wc, 100 * QP_NS_PER_US);
	}
	print_message("1 MiB: %llu frames in %llu sendmmsg, %llu recvmmsg, %llu receives "
		      "folded\n", (unsigned long long)io->tx_datagrams,
		      (unsigned long long)io->tx_batches, (unsigned long long)io->rx_batches,
		      (unsigned long long)io->rx_folded);
	assert_true(done);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_memory_equal(sb.buf, sa.buf, LEN);
	soft_side_close(&sa);
	soft_side_close(&sb);
	qp_ratetable_close(rates);
}

/* qp_soft_rx_idle: a loop's readiness wait found B's socket empty at @now (here: said so
 * while a frame waits). The next empty CQ poll makes no progress of its own, a progress
 * at that same @now makes no receive (the frame stays in the socket), and a progress at a
 * later time receives it; A's WRITE completes. Three times. */
static void test_rx_idle_skips_the_receive(void **state)
{
	struct soft_side sa, sb;
	struct qp_ctx *all[2];
	struct qp_wc wc;
	struct qp_wr wr;
	const struct qp_soft_io_stats *io;
	struct pollfd pfd;
	(void)state;

	open_direct_pair(&sa, &sb, 13, NULL, all);
	wr = (struct qp_wr){ .opcode = QP_OP_WRITE, .mr = sa.mr, .addr = sa.buf, .length = 64,
			     .remote_addr = sa.qp->remote.addr, .rkey = sa.qp->remote.rkey,
			     .flags = QP_WR_SIGNALED };
	assert_int_equal(qp_post_send(sa.qp, &wr), 0);   /* resolves ARP both ways */
	assert_true(soft_wait_wc(&sa, all, 2, &wc, 5 * QP_NS_PER_S));
	io = qp_soft_io_stats(sb.ctx);
	assert_non_null(io);
	for (int i = 0; i < 3; i++) {
		uint64_t batches, skips, frames, folded;
		qp_time_ns now;

		assert_int_equal(qp_poll(sb.qp, &wc, 1), 0);   /* no progress fresh any more */
		assert_int_equal(qp_post_send(sa.qp, &wr), 0);   /* a frame for B ... */
		pfd = (struct pollfd){ .fd = qp_ctx_fd(sb.ctx), .events = POLLIN };
		assert_int_equal(poll(&pfd, 1, 1000), 1);          /* ... in B's socket */
		now = qp_now_ns();
		qp_soft_rx_idle(sb.ctx, now);   /* as if the wait had found it empty */
		batches = io->rx_batches;
		skips = io->rx_idle_skips;
		frames = io->rx_datagrams;
		folded = io->rx_folded;
		assert_int_equal(qp_poll(sb.qp, &wc, 1), 0);
		assert_int_equal(io->rx_folded, folded + 1);
		assert_true(qp_ctx_progress(sb.ctx, now) >= 0);
		assert_int_equal(io->rx_batches, batches);
		assert_int_equal(io->rx_datagrams, frames);
		assert_true(io->rx_idle_skips > skips);
		assert_int_equal(poll(&pfd, 1, 0), 1);           /* still there */
		assert_true(qp_ctx_progress(sb.ctx, now + 1) >= 0);
		assert_true(io->rx_datagrams > frames);
		assert_true(soft_wait_wc(&sa, all, 2, &wc, 5 * QP_NS_PER_S));
		assert_int_equal(wc.status, QP_WC_SUCCESS);
	}
	soft_side_close(&sa);
	soft_side_close(&sb);
}

static void test_send_rnr_then_success(void **state)
{
	struct soft_side sa, sb;
	struct qp_ctx *all[2];
	struct qp_wc wc;
	struct qp_wr wr;
	struct qp_recv_wr rr;
	const struct rc_stats *ra;

	(void)state;
	open_direct_pair(&sa, &sb, 3, &(struct qp_attr){ .flags = QP_F_NONBLOCK,
							 .min_rnr_timer = 4 }, all);
	for (int i = 0; i < 5000; i++)
		sa.buf[i] = (uint8_t)(i * 13);
	wr = (struct qp_wr){ .opcode = QP_OP_SEND_IMM, .wr_id = 9, .mr = sa.mr, .addr = sa.buf,
			     .length = 5000, .imm = 0x5eed, .flags = QP_WR_SIGNALED };
	assert_int_equal(qp_post_send(sa.qp, &wr), 0);
	/* No receive: nothing completes, RNR NAKs come back (B asks for 40 us waits). */
	assert_false(soft_wait_wc(&sa, all, 2, &wc, 20 * QP_NS_PER_MS));
	ra = qp_soft_rc_stats(sa.qp);
	print_message("RNR: %llu RNR NAKs in 20 ms before a receive was posted\n",
		      (unsigned long long)ra->rnr_rx);
	assert_true(ra->rnr_rx >= 2);
	rr = (struct qp_recv_wr){ .wr_id = 4, .mr = sb.mr, .addr = sb.buf + 1000, .length = 6000 };
	assert_int_equal(qp_post_recv(sb.qp, &rr), 0);
	assert_true(soft_wait_wc(&sa, all, 2, &wc, 5 * QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 9);
	assert_true(soft_wait_wc(&sb, all, 2, &wc, 5 * QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_int_equal(wc.opcode, QP_WC_RECV);
	assert_int_equal(wc.byte_len, 5000);
	assert_true(wc.has_imm);
	assert_int_equal(wc.imm, 0x5eed);
	assert_memory_equal(sb.buf + 1000, sa.buf, 5000);
	{
		struct qp_stats st;

		qp_get_stats(sa.qp, &st);
		assert_int_equal(st.rnrs, ra->rnr_rx);
		qp_get_stats(sb.qp, &st);
		assert_int_equal(st.rx_msgs, 1);
		assert_int_equal(st.rx_bytes, 5000);
	}
	soft_side_close(&sa);
	soft_side_close(&sb);
}

static void test_bad_rkey_both_in_error(void **state)
{
	struct soft_side sa, sb;
	struct qp_ctx *all[2];
	struct qp_wc wc;
	struct qp_wr wr;
	struct qp_recv_wr rr;

	(void)state;
	open_direct_pair(&sa, &sb, 4, NULL, all);
	rr = (struct qp_recv_wr){ .wr_id = 1, .mr = sb.mr, .addr = sb.buf, .length = 64 };
	assert_int_equal(qp_post_recv(sb.qp, &rr), 0);
	wr = (struct qp_wr){ .opcode = QP_OP_WRITE, .wr_id = 3, .mr = sa.mr, .addr = sa.buf,
			     .length = 3000, .remote_addr = (uintptr_t)sb.buf,
			     .rkey = sb.mr->rkey ^ 0x5500, .flags = QP_WR_SIGNALED };
	assert_int_equal(qp_post_send(sa.qp, &wr), 0);
	assert_true(soft_wait_wc(&sa, all, 2, &wc, 5 * QP_NS_PER_S));
	assert_int_equal(wc.wr_id, 3);
	assert_int_equal(wc.status, QP_WC_REM_ACCESS_ERR);
	print_message("bad rkey: %s at the requester\n", qp_wc_status_str(wc.status));
	assert_true(soft_wait_wc(&sb, all, 2, &wc, 5 * QP_NS_PER_S));
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, QP_WC_WR_FLUSH_ERR);
	assert_int_equal(qp_post_send(sa.qp, &wr), -ENOTCONN);   /* the common layer: broken */
	assert_int_equal(qp_soft_rc_stats(sb.qp)->errs_tx, 1);
	soft_side_close(&sa);
	soft_side_close(&sb);
}

/* ---- many hosts on one libev loop ---- */

#define NHOSTS 4
#define PER_QP (4u << 20)

struct evrun {
	struct ev_loop *loop;
	ev_io io[NHOSTS];
	ev_timer timer;
	struct soft_side side[NHOSTS];   /* host i WRITEs to host i ^ 1 */
	int done, wakeups;
	int imm_seen[NHOSTS];            /* WRITE_IMM receives completed, by sender */
};

static void ev_rearm(struct evrun *r);

static void ev_work(struct evrun *r)
{
	qp_time_ns now = qp_now_ns();
	struct qp_wc wc;

	r->wakeups++;
	for (int i = 0; i < NHOSTS; i++)
		assert_true(qp_ctx_progress(r->side[i].ctx, now) >= 0);
	for (int i = 0; i < NHOSTS; i++)
		while (qp_poll(r->side[i].qp, &wc, 1) == 1) {
			assert_int_equal(wc.status, QP_WC_SUCCESS);
			if (wc.opcode == QP_WC_RECV_WRITE_IMM && wc.imm < NHOSTS)
				r->imm_seen[wc.imm]++;
			else
				r->done++;
		}
	if (r->done >= NHOSTS)
		ev_break(r->loop, EVBREAK_ALL);
	else
		ev_rearm(r);
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	ev_work(w->data);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	ev_work(w->data);
}

/* One timer at the earliest deadline of all contexts. */
static void ev_rearm(struct evrun *r)
{
	qp_time_ns d = QP_TIME_NEVER, now = qp_now_ns();

	for (int i = 0; i < NHOSTS; i++)
		d = qp_time_min(d, qp_ctx_deadline(r->side[i].ctx));
	ev_timer_stop(r->loop, &r->timer);
	if (d == QP_TIME_NEVER)
		return;
	ev_timer_set(&r->timer, d > now ? (double)(d - now) / 1e9 : 0, 0);
	ev_timer_start(r->loop, &r->timer);
}

static void test_many_hosts_one_libev_loop(void **state)
{
	unsigned p = soft_port_base(5);
	struct evrun *r = calloc(1, sizeof(*r));
	char opts[160];

	(void)state;
	r->loop = ev_loop_new(EVFLAG_AUTO);
	/* Hosts 0-1 and 2-3 are wired to each other; each host has one QP. */
	for (int i = 0; i < NHOSTS; i++) {
		direct_opts(opts, sizeof(opts), p + (unsigned)i, p + (unsigned)(i ^ 1), i + 1, NULL);
		soft_side_open(&r->side[i], opts, PER_QP,
			       QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE, NULL);
		for (size_t k = 0; k < PER_QP; k++)
			r->side[i].buf[k] = (uint8_t)(k * (unsigned)(i + 3));
		ev_io_init(&r->io[i], on_io, qp_ctx_fd(r->side[i].ctx), EV_READ);
		r->io[i].data = r;
		ev_io_start(r->loop, &r->io[i]);
	}
	for (int i = 0; i < NHOSTS; i += 2)
		soft_connect(&r->side[i], &r->side[i + 1]);
	ev_init(&r->timer, on_timer);
	r->timer.data = r;
	/* Every host WRITEs the first half of its region into its peer's second half. */
	for (int i = 0; i < NHOSTS; i++) {
		struct soft_side *s = &r->side[i], *peer = &r->side[i ^ 1];
		struct qp_wr wr = { .opcode = QP_OP_WRITE_IMM, .wr_id = (uint64_t)i, .mr = s->mr,
				    .addr = s->buf, .length = PER_QP / 2,
				    .remote_addr = (uintptr_t)peer->buf + PER_QP / 2,
				    .rkey = peer->mr->rkey, .imm = (uint32_t)i,
				    .flags = QP_WR_SIGNALED };
		struct qp_recv_wr rr = { .wr_id = 100, .mr = peer->mr, .addr = peer->buf,
					 .length = 0 };

		assert_int_equal(qp_post_recv(peer->qp, &rr), 0);
		assert_int_equal(qp_post_send(s->qp, &wr), 0);
	}
	ev_rearm(r);
	ev_run(r->loop, 0);
	print_message("libev: %d hosts, %d QPs, %u KB each way, done after %d wakeups\n", NHOSTS,
		      NHOSTS, PER_QP / 2048, r->wakeups);
	assert_int_equal(r->done, NHOSTS);
	for (int i = 0; i < NHOSTS; i++) {
		struct qp_wc wc;

		/* Each WRITE_IMM's receive completed once (it may trail its WRITE's ACK) ... */
		if (!r->imm_seen[i] && qp_poll(r->side[i ^ 1].qp, &wc, 1) == 1 &&
		    wc.opcode == QP_WC_RECV_WRITE_IMM && wc.imm == (uint32_t)i)
			r->imm_seen[i]++;
		assert_int_equal(r->imm_seen[i], 1);
	}
	for (int i = 0; i < NHOSTS; i++) {
		/* ... and the data is there: host i's first half equals peer's second half. */
		uint8_t *want = malloc(PER_QP / 2);

		for (size_t k = 0; k < PER_QP / 2; k++)
			want[k] = (uint8_t)(k * (unsigned)(i + 3));
		assert_memory_equal(r->side[i ^ 1].buf + PER_QP / 2, want, PER_QP / 2);
		free(want);
	}
	for (int i = 0; i < NHOSTS; i++) {
		ev_io_stop(r->loop, &r->io[i]);
		soft_side_close(&r->side[i]);
	}
	ev_timer_stop(r->loop, &r->timer);
	ev_loop_destroy(r->loop);
	free(r);
}

/* shm=auto (the default) takes the rings a switch offers for attach='s address, and
 * goes by datagram, silently, where none is offered; shm=off never takes them; closing
 * the context counts the detach the switch turns back to datagrams on. */
static void test_offered_rings(void **state)
{
	char dir[] = "/tmp/qpace-offer-XXXXXX", path[SHM_PATH_MAX], opts[160], err[256];
	unsigned p = soft_port_base(13);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct qp_ctx_attr ca = { .options = opts, .rate_table = "" };
	struct shm_region sw;
	struct qp_ctx *ctx;
	(void)state;

	assert_non_null(mkdtemp(dir));
	setenv("QPACE_SHM_DIR", dir, 1);
	snprintf(opts, sizeof(opts), "ip=10.0.0.1,attach=127.0.0.1:%u", p);
	assert_int_equal(qp_ctx_open_ops(&qp_soft_ops, &ca, &ctx, err, sizeof(err)), 0);
	assert_string_equal(qp_soft_transport(ctx), "udp");   /* none offered */
	qp_ctx_close(ctx);

	assert_int_equal(shm_offer_path(&a, path, sizeof(path)), 0);
	assert_int_equal(shm_region_create(&sw, path, 8, err, sizeof(err)), 0);
	shm_region_offer(&sw, &a);
	assert_int_equal(qp_ctx_open_ops(&qp_soft_ops, &ca, &ctx, err, sizeof(err)), 0);
	assert_string_equal(qp_soft_transport(ctx), "shm");
	assert_int_equal(shm_region_attaches(&sw), 1);
	assert_int_equal(shm_region_attached(&sw), 1);
	qp_ctx_close(ctx);
	assert_int_equal(shm_region_attached(&sw), 0);

	snprintf(opts, sizeof(opts), "ip=10.0.0.1,attach=127.0.0.1:%u,shm=off", p);
	assert_int_equal(qp_ctx_open_ops(&qp_soft_ops, &ca, &ctx, err, sizeof(err)), 0);
	assert_string_equal(qp_soft_transport(ctx), "udp");
	assert_int_equal(shm_region_attaches(&sw), 1);
	qp_ctx_close(ctx);

	shm_region_close(&sw);
	assert_int_equal(rmdir(dir), 0);   /* the link went with the region */
	unsetenv("QPACE_SHM_DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_offered_rings),
		cmocka_unit_test(test_write_direct),
		cmocka_unit_test(test_inflight_cap_on_the_wire),
		cmocka_unit_test(test_progress_sends_pieces_in_one_batch),
		cmocka_unit_test(test_rx_idle_skips_the_receive),
		cmocka_unit_test(test_send_rnr_then_success),
		cmocka_unit_test(test_bad_rkey_both_in_error),
		cmocka_unit_test(test_many_hosts_one_libev_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
