/* The soft backend's real-time batching, over loopback UDP, two hosts in this process:
 * the pieces qp_ctx_progress hands on go out in one sendmmsg (not one per piece), and an
 * empty CQ poll right after a progress leaves the receive to it (one recvmmsg per turn)
 * while every frame still arrives: the WRITE completes byte-exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "qpace/soft.h"
#include "soft_net.h"

enum { MTU = 1024, LEN = 1 << 20 };

static void test_progress_sends_pieces_in_one_batch(void **state)
{
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
	char a[160], b[160], err[200];
	bool done = false, hit = false;
	int slot;
	(void)state;

	assert_int_equal(qp_ratetable_create_mem(4, &rates, err, sizeof(err)), 0);
	snprintf(a, sizeof(a), "bind=%u,peer=127.0.0.1:%u,ip=10.0.0.1,mtu=%d", p, p + 1, MTU);
	snprintf(b, sizeof(b), "bind=%u,peer=127.0.0.1:%u,ip=10.0.0.2,mtu=%d", p + 1, p, MTU);
	soft_side_open_rates(&sa, a, LEN, QP_ACCESS_LOCAL_WRITE, &attr, rates);
	soft_side_open(&sb, b, LEN, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE, NULL);
	all[0] = sa.ctx;
	all[1] = sb.ctx;
	soft_connect(&sa, &sb);
	slot = qp_ratetable_assign(rates, sa.qp->qpn);
	assert_true(slot >= 0);
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
	assert_int_equal(io->tx_datagrams - frames, (sa.qp->stats.tx_chunks - pieces) * 4096 / MTU);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_progress_sends_pieces_in_one_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
