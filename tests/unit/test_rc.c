/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RC state machine, two QPs back to back on an in-memory wire in injected time:
 * bulk WRITEs under loss and under reordering/duplication arrive byte-exact; RNR NAK then
 * success once a receive is posted; RNR and transport retry limits; remote access and
 * invalid-request errors leave both QPs cleanly in error; immediates and zero lengths.
 *
 * Size: QPACE_TEST_MB (default 100; 16 under AddressSanitizer) per bulk transfer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "qpace/rc.h"
#include "rc_pair.h"
#include "test_size.h"

static struct rc_params params(void)
{
	struct rc_params p;

	rc_params_init(&p);
	p.rto_ns = 4096ULL << 9;   /* ~2.1 ms, as rxe retries under emulation */
	return p;
}

/* ---- bulk WRITE ---- */

struct bulk {
	struct rc_pair *pr;
	uint8_t *src, *dst;
	uint32_t rkey;
	size_t total, posted, done_bytes;
	uint64_t msgs, imms, errors, nposted, imm_posted;
	uint64_t next_done;            /* the wr_id (its offset) the next send completion has */
	uint32_t sq_room;
	uint8_t recv_slot[1];
};

static uint32_t pick_len(struct rc_wire *w, size_t left)
{
	uint64_t n = rc_wire_rand(w) < 0.25 ? 1 + rc_wire_randn(w, 4096)
					    : 1 + rc_wire_randn(w, 1 << 20);
	return (uint32_t)(n < left ? n : left);
}

static bool bulk_step(void *arg)
{
	struct bulk *b = arg;
	struct rc_pair *pr = b->pr;
	struct qp_wc wc[16];
	int n;

	while ((n = rc_poll_cq(pr->s[0].qp, wc, 16)) > 0) {
		for (int k = 0; k < n; k++) {
			/* in post order, each once, through a completion ring that wraps */
			if (wc[k].status != QP_WC_SUCCESS || wc[k].wr_id != b->next_done)
				b->errors++;
			b->done_bytes += wc[k].byte_len;
			b->next_done += wc[k].byte_len;
			b->msgs++;
			b->sq_room++;
		}
	}
	while ((n = rc_poll_cq(pr->s[1].qp, wc, 16)) > 0) {
		for (int k = 0; k < n; k++) {
			/* The k-th WRITE_IMM carries k and completes the k-th receive. */
			if (wc[k].status != QP_WC_SUCCESS || wc[k].opcode != QP_WC_RECV_WRITE_IMM ||
			    wc[k].imm != (uint32_t)b->imms)
				b->errors++;
			b->imms++;
			rc_pair_recv(pr, 1, wc[k].wr_id, b->recv_slot, 1);
		}
	}
	while (b->posted < b->total && b->sq_room) {
		uint32_t len = pick_len(&pr->w, b->total - b->posted);
		enum qp_opcode op = b->nposted++ % 8 == 7 ? QP_OP_WRITE_IMM : QP_OP_WRITE;

		rc_pair_post(pr, 0, op, b->posted, b->src + b->posted, len,
			     rc_pair_va(pr, 1, b->rkey) + b->posted, b->rkey,
			     (uint32_t)b->imm_posted);
		if (op == QP_OP_WRITE_IMM)
			b->imm_posted++;
		b->posted += len;
		b->sq_room--;
	}
	return b->errors || b->done_bytes == b->total;
}

static void bulk_run(const char *name, uint32_t mtu, const struct rc_wire_params *wp,
		     uint64_t bytes)
{
	struct rc_params p = params();
	struct rc_pair pr;
	struct bulk b = { .pr = &pr, .total = bytes };
	const struct rc_stats *sa, *sb;
	qp_time_ns t0;
	uint32_t crc_src, crc_dst;
	double secs;

	p.sq_depth = 13;   /* not a power of two: a ring of 16, wrapped many times */
	p.rq_depth = 8;    /* completion rings of 13 + 8 + 1 slots: the sender's wraps ~10 times */
	rc_pair_open(&pr, &p, mtu, wp);
	b.sq_room = p.sq_depth;
	b.rkey = rc_pair_mem(&pr, 1, b.total, true);
	b.dst = rc_pair_buf(&pr, 1, b.rkey);
	b.src = malloc(b.total);
	assert_non_null(b.src);
	for (size_t i = 0; i < b.total; i++)
		b.src[i] = (uint8_t)(i * 2654435761u >> 13);
	for (uint32_t i = 0; i < p.rq_depth; i++)   /* receives for the WRITE_IMMs */
		rc_pair_recv(&pr, 1, i, b.recv_slot, 1);
	t0 = pr.w.now;
	assert_true(rc_wire_run(&pr.w, bulk_step, &b, t0 + 600 * QP_NS_PER_S));

	sa = rc_stats(pr.s[0].qp);
	sb = rc_stats(pr.s[1].qp);
	crc_src = (uint32_t)crc32(0, b.src, (uInt)b.total);
	crc_dst = (uint32_t)crc32(0, b.dst, (uInt)b.total);
	secs = (double)(pr.w.now - t0) / 1e9;
	print_message("%s: %zu MB in %llu WRs (%llu with imm), MTU %u: crc32 src %08x dst %08x\n",
		      name, b.total >> 20, (unsigned long long)b.msgs,
		      (unsigned long long)b.imms, mtu, crc_src, crc_dst);
	print_message("  wire: %llu frames, %llu lost, %llu reordered, %llu duplicated, "
		      "%llu ICRC-checked bitwise\n",
		      (unsigned long long)pr.w.st.sent, (unsigned long long)pr.w.st.lost,
		      (unsigned long long)pr.w.st.reordered,
		      (unsigned long long)pr.w.st.duplicated,
		      (unsigned long long)pr.w.st.icrc_checked);
	print_message("  A: %llu pkts, %llu retransmitted (%.1f%%), %llu timeouts, %llu NAKs in; "
		      "B: %llu NAKs out, %llu dups, %llu out-of-seq; %.2f Gb/s simulated\n",
		      (unsigned long long)sa->tx_pkts, (unsigned long long)sa->retrans_pkts,
		      100.0 * (double)sa->retrans_pkts / (double)sa->tx_pkts,
		      (unsigned long long)sa->timeouts, (unsigned long long)sa->naks_rx,
		      (unsigned long long)sb->naks_tx,
		      (unsigned long long)sb->drops[RC_DROP_DUPLICATE],
		      (unsigned long long)sb->drops[RC_DROP_OUT_OF_SEQ],
		      (double)b.total * 8 / secs / 1e9);

	assert_int_equal(b.errors, 0);
	assert_int_equal(pr.w.bad, 0);
	assert_int_equal(b.done_bytes, b.total);
	assert_int_equal(crc_src, crc_dst);
	assert_memory_equal(b.src, b.dst, b.total);
	assert_true(b.imms > 0);
	assert_int_equal(b.imms, b.imm_posted);
	assert_int_equal(sb->rx_msgs, b.msgs);
	if (wp->bottleneck_bps)
		print_message("  switch: %llu tail drops\n", (unsigned long long)pr.w.st.tail_drops);
	if (wp->loss > 0 || wp->reorder > 0 || wp->dup > 0 || wp->bottleneck_bps)
		assert_true(sa->retrans_pkts > 0 || sb->drops[RC_DROP_DUPLICATE] > 0);
	if (wp->loss > 0 || wp->bottleneck_bps) {
		/* Go-back-N resends at most one window per loss (or timeout). */
		uint64_t losses = pr.w.st.lost + pr.w.st.tail_drops + sa->timeouts;

		assert_true(sa->retrans_pkts > 0);
		assert_true(sa->naks_rx > 0);
		assert_true(sa->retrans_pkts <= losses * p.window_pkts);
	}
	assert_int_equal(rc_state(pr.s[0].qp), RC_RTS);
	assert_int_equal(rc_state(pr.s[1].qp), RC_RTS);
	free(b.src);
	rc_pair_close(&pr);
}

static void test_bulk_write_loss(void **state)
{
	struct rc_wire_params wp = { .loss = 0.01, .seed = 1 };

	(void)state;
	bulk_run("1% loss", 1024, &wp, test_size_bytes(100, 16));
}

static void test_bulk_write_reorder_dup(void **state)
{
	struct rc_wire_params wp = { .reorder = 0.02, .reorder_ns = 20 * QP_NS_PER_US,
				     .dup = 0.01, .seed = 2 };

	(void)state;
	bulk_run("2% reordered, 1% duplicated", 4096, &wp, test_size_bytes(100, 16));
}

static void test_bulk_write_all(void **state)
{
	struct rc_wire_params wp = { .loss = 0.005, .reorder = 0.01, .reorder_ns = 10000,
				     .dup = 0.005, .seed = 3 };

	(void)state;
	bulk_run("0.5% loss, 1% reordered, 0.5% duplicated", 4096, &wp, test_size_bytes(100, 16));
}

static void test_bulk_write_drop_tail(void **state)
{
	/* A 10 Gb/s sender into a 500 Mb/s switch port with 32 KB of buffer: every window
	 * overflows it, at its tail; the responder's ACK every ack_every packets opens the
	 * window, and the next packets, arriving after the gap, draw the NAK. The go-back-N
	 * cost of an uncontrolled sender is printed. */
	struct rc_wire_params wp = { .bottleneck_bps = 500 * QP_MBPS, .buffer_bytes = 32 << 10,
				     .delay_ns = 5 * QP_NS_PER_US, .seed = 12 };

	(void)state;
	bulk_run("drop-tail switch, 500M, 32K buffer", 1024, &wp, test_size_bytes(16, 4));
}

/* ---- RNR ---- */

static void test_send_rnr_then_success(void **state)
{
	struct rc_params pa = params(), pb = params();
	struct rc_wire_params wp = { .seed = 4 };
	struct rc_pair pr;
	struct qp_wc wc;
	uint8_t msg[10000], rbuf[16384];
	qp_time_ns t0, window = 20 * QP_NS_PER_MS;
	uint64_t rnrs;

	(void)state;
	pb.min_rnr_timer = 14;   /* 1.28 ms */
	rc_pair_open2(&pr, &pa, &pb, 4096, &wp);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	rc_pair_post(&pr, 0, QP_OP_SEND_IMM, 42, msg, sizeof(msg), 0, 0, 0xabcdef01);
	t0 = pr.w.now;
	/* No receive posted: nothing completes for 20 ms, RNR NAKs come every 1.28 ms. */
	assert_false(rc_pair_wait(&pr, 0, &wc, window));
	rnrs = rc_stats(pr.s[0].qp)->rnr_rx;
	print_message("RNR: %llu RNR NAKs in %.1f ms with a 1.28 ms RNR timer (B sent %llu)\n",
		      (unsigned long long)rnrs, (double)(pr.w.now - t0) / 1e6,
		      (unsigned long long)rc_stats(pr.s[1].qp)->rnr_tx);
	assert_true(rnrs >= window / rc_rnr_timer_ns(14) - 1 &&
		    rnrs <= window / rc_rnr_timer_ns(14) + 1);
	assert_int_equal(rc_stats(pr.s[1].qp)->rnr_tx, rnrs);
	assert_int_equal(rc_stats(pr.s[1].qp)->rx_msgs, 0);
	assert_int_equal(rc_state(pr.s[0].qp), RC_RTS);
	/* Post the receive: the next retry succeeds. */
	rc_pair_recv(&pr, 1, 7, rbuf, sizeof(rbuf));
	assert_true(rc_pair_wait(&pr, 0, &wc, 10 * QP_NS_PER_MS));
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 42);
	assert_int_equal(wc.opcode, QP_WC_SEND);
	assert_true(rc_pair_poll1(&pr, 1, &wc));
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	assert_int_equal(wc.opcode, QP_WC_RECV);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.byte_len, sizeof(msg));
	assert_true(wc.has_imm);
	assert_int_equal(wc.imm, 0xabcdef01);
	assert_memory_equal(rbuf, msg, sizeof(msg));
	assert_int_equal(pr.w.bad, 0);
	rc_pair_close(&pr);
}

static void test_rnr_retry_exceeded(void **state)
{
	struct rc_params pa = params(), pb = params();
	struct rc_wire_params wp = { .seed = 5 };
	struct rc_pair pr;
	struct qp_wc wc;
	uint8_t msg[100] = { 1 }, rbuf[128];

	(void)state;
	pa.rnr_retry = 2;
	pb.min_rnr_timer = 1;   /* 10 us */
	rc_pair_open2(&pr, &pa, &pb, 1024, &wp);
	rc_pair_post(&pr, 0, QP_OP_SEND, 1, msg, sizeof(msg), 0, 0, 0);
	rc_pair_post(&pr, 0, QP_OP_SEND, 2, msg, sizeof(msg), 0, 0, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, 10 * QP_NS_PER_MS));
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, QP_WC_RNR_RETRY_EXC_ERR);
	assert_true(rc_pair_poll1(&pr, 0, &wc));
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, QP_WC_WR_FLUSH_ERR);
	/* rnr_retry = 2: the first NAK and two retries, then the error on the third. */
	assert_int_equal(rc_stats(pr.s[0].qp)->rnr_rx, 3);
	assert_int_equal(rc_state(pr.s[0].qp), RC_ERROR);
	/* RNR is not an error for the responder: B stays usable and takes a receive. */
	assert_int_equal(rc_state(pr.s[1].qp), RC_RTS);
	rc_pair_recv(&pr, 1, 9, rbuf, sizeof(rbuf));
	assert_false(rc_pair_poll1(&pr, 1, &wc));
	rc_pair_close(&pr);
}

/* ---- transport retry ---- */

static bool drop_a_to_b(void *arg, int from, const struct frame_parsed *p)
{
	(void)arg;
	(void)p;
	return from == 0;
}

static void test_retry_exceeded(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 6 };
	struct rc_pair pr;
	struct qp_wc wc;
	uint8_t msg[3000] = { 0 };
	qp_time_ns t0, expect = 0;

	(void)state;
	p.rto_ns = 100 * QP_NS_PER_US;
	p.retry_cnt = 3;
	p.rto_backoff_max = 2;
	rc_pair_open(&pr, &p, 1024, &wp);
	pr.w.filter = drop_a_to_b;
	t0 = pr.w.now;
	rc_pair_post(&pr, 0, QP_OP_WRITE, 5, msg, sizeof(msg), 0x1000, 0x99, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
	assert_int_equal(wc.status, QP_WC_RETRY_EXC_ERR);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(rc_stats(pr.s[0].qp)->timeouts, p.retry_cnt + 1);
	/* 3 packets, resent after each of the 3 tolerated timeouts. */
	assert_int_equal(rc_stats(pr.s[0].qp)->retrans_pkts, 3 * p.retry_cnt);
	/* rto, then doubled up to << rto_backoff_max: 100 + 200 + 400 + 400 us. */
	for (unsigned k = 0; k <= p.retry_cnt; k++)
		expect += p.rto_ns << (k < p.rto_backoff_max ? k : p.rto_backoff_max);
	print_message("retry: RETRY_EXC_ERR after %llu timeouts at %.1f us (expected %.1f us + "
		      "serialization)\n",
		      (unsigned long long)rc_stats(pr.s[0].qp)->timeouts,
		      (double)(pr.w.now - t0) / 1e3, (double)expect / 1e3);
	assert_true(pr.w.now - t0 >= expect && pr.w.now - t0 <= expect + 10 * QP_NS_PER_US);
	assert_int_equal(rc_state(pr.s[0].qp), RC_ERROR);
	rc_pair_close(&pr);
}

/* Drops the first 3 copies of every request packet: progress resets the retry counter. */
struct drop_first {
	uint32_t seen[64];
};

static bool drop_first_three(void *arg, int from, const struct frame_parsed *p)
{
	struct drop_first *d = arg;

	if (from != 0)
		return false;
	return d->seen[p->bth.psn % 64]++ % 4 < 3;
}

static void test_retry_resets_on_progress(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 7 };
	struct rc_pair pr;
	struct drop_first d = { { 0 } };
	struct qp_wc wc;
	uint8_t msg[512] = { 9 };
	uint32_t rkey;

	(void)state;
	p.rto_ns = 50 * QP_NS_PER_US;
	p.retry_cnt = 3;
	rc_pair_open(&pr, &p, 1024, &wp);
	rkey = rc_pair_mem(&pr, 1, 8192, true);
	pr.w.filter = drop_first_three;
	pr.w.filter_arg = &d;
	for (int m = 0; m < 8; m++) {   /* one at a time: each needs 3 timeouts */
		rc_pair_post(&pr, 0, QP_OP_WRITE, (uint64_t)m, msg, sizeof(msg),
			     rc_pair_va(&pr, 1, rkey) + (uint64_t)m * 512, rkey, 0);
		assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
		assert_int_equal(wc.status, QP_WC_SUCCESS);
		assert_int_equal(wc.wr_id, m);
	}
	/* 3 timeouts per message, 24 in all, each within retry_cnt = 3. */
	assert_int_equal(rc_stats(pr.s[0].qp)->timeouts, 24);
	assert_int_equal(rc_state(pr.s[0].qp), RC_RTS);
	rc_pair_close(&pr);
}

/* ---- class C errors ---- */

static void expect_both_in_error(struct rc_pair *pr, uint64_t first_id,
				 enum qp_wc_status first_status, int flushed, uint64_t recv_id)
{
	struct qp_wc wc;

	assert_true(rc_pair_wait(pr, 0, &wc, 100 * QP_NS_PER_MS));
	assert_int_equal(wc.wr_id, first_id);
	assert_int_equal(wc.status, first_status);
	for (int k = 0; k < flushed; k++) {
		assert_true(rc_pair_poll1(pr, 0, &wc));
		assert_int_equal(wc.status, QP_WC_WR_FLUSH_ERR);
	}
	assert_false(rc_pair_poll1(pr, 0, &wc));
	assert_int_equal(rc_state(pr->s[0].qp), RC_ERROR);
	assert_int_equal(rc_state(pr->s[1].qp), RC_ERROR);
	/* The responder's posted receive is flushed. */
	assert_true(rc_pair_poll1(pr, 1, &wc));
	assert_int_equal(wc.wr_id, recv_id);
	assert_int_equal(wc.status, QP_WC_WR_FLUSH_ERR);
	/* Posts in error complete flushed at once, on both sides. */
	rc_pair_post(pr, 0, QP_OP_SEND, 77, NULL, 0, 0, 0, 0);
	assert_true(rc_pair_poll1(pr, 0, &wc));
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(wc.status, QP_WC_WR_FLUSH_ERR);
	rc_pair_post(pr, 1, QP_OP_SEND, 78, NULL, 0, 0, 0, 0);
	assert_true(rc_pair_poll1(pr, 1, &wc));
	assert_int_equal(wc.status, QP_WC_WR_FLUSH_ERR);
	assert_int_equal(pr->w.bad, 0);
}

enum bad_write { BAD_RKEY, BAD_BOUNDS, BAD_ACCESS };

static void run_bad_write(enum bad_write kind)
{
	static const char *const names[] = { "bad rkey", "out of bounds", "no remote write" };
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 8 };
	struct rc_pair pr;
	struct qp_wc wc;
	uint8_t msg[5000], rbuf[64];
	uint32_t good, ro, rkey;
	uint64_t va;

	rc_pair_open(&pr, &p, 1024, &wp);
	good = rc_pair_mem(&pr, 1, 8192, true);
	ro = rc_pair_mem(&pr, 1, 8192, false);
	memset(msg, 0x5a, sizeof(msg));
	rc_pair_recv(&pr, 1, 300, rbuf, sizeof(rbuf));
	/* A good WRITE first: it lands and completes before the error. */
	rc_pair_post(&pr, 0, QP_OP_WRITE, 1, msg, 100, rc_pair_va(&pr, 1, good), good, 0);
	rkey = kind == BAD_RKEY ? 0xdead : kind == BAD_ACCESS ? ro : good;
	va = rc_pair_va(&pr, 1, rkey == 0xdead ? good : rkey) + (kind == BAD_BOUNDS ? 4000 : 0);
	rc_pair_post(&pr, 0, QP_OP_WRITE, 2, msg, sizeof(msg), va, rkey, 0);
	rc_pair_post(&pr, 0, QP_OP_WRITE, 3, msg, 10, rc_pair_va(&pr, 1, good), good, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, 100 * QP_NS_PER_MS));
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, QP_WC_SUCCESS);
	expect_both_in_error(&pr, 2, QP_WC_REM_ACCESS_ERR, 1, 300);
	assert_int_equal(rc_stats(pr.s[1].qp)->errs_tx, 1);
	assert_int_equal(rc_pair_buf(&pr, 1, good)[99], 0x5a);
	assert_int_equal(rc_pair_buf(&pr, 1, good)[100], 0);
	print_message("%s: REM_ACCESS_ERR at A, both QPs in error, later WRs flushed\n",
		      names[kind]);
	rc_pair_close(&pr);
}

static void test_bad_rkey(void **state)
{
	(void)state;
	run_bad_write(BAD_RKEY);
}

static void test_write_out_of_bounds(void **state)
{
	(void)state;
	run_bad_write(BAD_BOUNDS);
}

static void test_write_no_access(void **state)
{
	(void)state;
	run_bad_write(BAD_ACCESS);
}

static void test_send_longer_than_receive(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .seed = 9 };
	struct rc_pair pr;
	struct qp_wc wc;
	uint8_t msg[5000] = { 0 }, rbuf[4000], rbuf2[16];

	(void)state;
	rc_pair_open(&pr, &p, 1024, &wp);
	rc_pair_recv(&pr, 1, 10, rbuf, sizeof(rbuf));
	rc_pair_recv(&pr, 1, 11, rbuf2, sizeof(rbuf2));
	rc_pair_post(&pr, 0, QP_OP_SEND, 1, msg, sizeof(msg), 0, 0, 0);
	assert_true(rc_pair_wait(&pr, 0, &wc, 100 * QP_NS_PER_MS));
	assert_int_equal(wc.status, QP_WC_REM_INV_REQ_ERR);
	assert_true(rc_pair_poll1(&pr, 1, &wc));
	assert_int_equal(wc.wr_id, 10);
	assert_int_equal(wc.status, QP_WC_LOC_LEN_ERR);
	assert_true(rc_pair_poll1(&pr, 1, &wc));
	assert_int_equal(wc.wr_id, 11);
	assert_int_equal(wc.status, QP_WC_WR_FLUSH_ERR);
	assert_int_equal(rc_state(pr.s[0].qp), RC_ERROR);
	assert_int_equal(rc_state(pr.s[1].qp), RC_ERROR);
	rc_pair_close(&pr);
}

/* ---- immediates, zero lengths, exact MTU multiples, both directions at once ---- */

static void test_imm_zero_and_bidir(void **state)
{
	struct rc_params p = params();
	struct rc_wire_params wp = { .loss = 0.02, .seed = 10 };
	struct rc_pair pr;
	struct qp_wc wc;
	static uint8_t big[3 * 1024], rx[2][3 * 1024];
	uint32_t rk;

	(void)state;
	rc_pair_open(&pr, &p, 1024, &wp);
	rk = rc_pair_mem(&pr, 1, sizeof(big), true);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i ^ 0xa5);
	rc_pair_recv(&pr, 1, 100, rx[1], sizeof(rx[1]));
	rc_pair_recv(&pr, 1, 101, rx[1], sizeof(rx[1]));
	rc_pair_recv(&pr, 0, 200, rx[0], sizeof(rx[0]));
	/* A: zero-length WRITE_IMM (no key needed), exact-3-MTU WRITE, zero-length SEND. */
	rc_pair_post(&pr, 0, QP_OP_WRITE_IMM, 1, NULL, 0, 0, 0, 0x11223344);
	rc_pair_post(&pr, 0, QP_OP_WRITE, 2, big, sizeof(big), rc_pair_va(&pr, 1, rk), rk, 0);
	rc_pair_post(&pr, 0, QP_OP_SEND, 3, NULL, 0, 0, 0, 0);
	/* B at the same time: a 3-MTU SEND to A. */
	rc_pair_post(&pr, 1, QP_OP_SEND, 4, big, sizeof(big), 0, 0, 0);
	for (uint64_t id = 1; id <= 3; id++) {
		assert_true(rc_pair_wait(&pr, 0, &wc, QP_NS_PER_S));
		if (wc.opcode == QP_WC_RECV) {   /* A's receive of B's SEND */
			assert_int_equal(wc.byte_len, sizeof(big));
			assert_memory_equal(rx[0], big, sizeof(big));
			id--;
			continue;
		}
		assert_int_equal(wc.wr_id, id);
		assert_int_equal(wc.status, QP_WC_SUCCESS);
	}
	assert_true(rc_pair_wait(&pr, 1, &wc, QP_NS_PER_S));
	assert_int_equal(wc.opcode, QP_WC_RECV_WRITE_IMM);
	assert_int_equal(wc.byte_len, 0);
	assert_int_equal(wc.imm, 0x11223344);
	assert_true(rc_pair_wait(&pr, 1, &wc, QP_NS_PER_S));
	if (wc.opcode == QP_WC_SEND)   /* B's own SEND may finish first */
		assert_true(rc_pair_wait(&pr, 1, &wc, QP_NS_PER_S));
	assert_int_equal(wc.opcode, QP_WC_RECV);
	assert_int_equal(wc.wr_id, 101);
	assert_int_equal(wc.byte_len, 0);
	assert_false(wc.has_imm);
	assert_memory_equal(rc_pair_buf(&pr, 1, rk), big, sizeof(big));
	assert_int_equal(pr.w.bad, 0);
	rc_pair_close(&pr);
}

static bool no_region(void *arg, uint32_t rkey, struct rc_region *out)
{
	(void)arg;
	(void)rkey;
	(void)out;
	return false;
}

/* The rings are a power of two in size (rc_int.h), the depth stays the limit: 13 posts
 * are taken, the 14th is refused, with room for it in the ring. */
static void test_depth_not_ring_size(void **state)
{
	struct rc_params p = params();
	struct rc_conn c = { .dest_qpn = 0x12, .rq_psn = 0, .mtu_bytes = 1024 };
	uint8_t byte = 7;
	struct qp_wr wr = { .opcode = QP_OP_WRITE, .addr = &byte, .length = 1, .rkey = 1 };
	char err[200];
	struct rc_qp *qp;
	(void)state;

	p.sq_depth = 13;
	p.qpn = 0x11;
	p.mr_find = no_region;
	qp = rc_create(&p, err, sizeof(err));
	if (!qp)
		fail_msg("%s", err);
	assert_int_equal(rc_connect(qp, &c), 0);
	for (int i = 0; i < 13; i++)
		assert_int_equal(rc_post_send(qp, &wr, 0), 0);
	assert_int_equal(rc_post_send(qp, &wr, 0), -ENOMEM);
	assert_int_equal(rc_sq_unacked_bytes(qp), 13);
	rc_destroy(qp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth_not_ring_size),
		cmocka_unit_test(test_bulk_write_loss),
		cmocka_unit_test(test_bulk_write_reorder_dup),
		cmocka_unit_test(test_bulk_write_all),
		cmocka_unit_test(test_bulk_write_drop_tail),
		cmocka_unit_test(test_send_rnr_then_success),
		cmocka_unit_test(test_rnr_retry_exceeded),
		cmocka_unit_test(test_retry_exceeded),
		cmocka_unit_test(test_retry_resets_on_progress),
		cmocka_unit_test(test_bad_rkey),
		cmocka_unit_test(test_write_out_of_bounds),
		cmocka_unit_test(test_write_no_access),
		cmocka_unit_test(test_send_longer_than_receive),
		cmocka_unit_test(test_imm_zero_and_bidir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
