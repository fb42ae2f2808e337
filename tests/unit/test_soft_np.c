/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DCQCN's notification point on the soft host (rc.h): two soft hosts in injected time, a
 * "switch" between them that sets CE on the sender's data frames. The receiver answers
 * CE-marked data with RoCEv2 CNPs (BTH 0x81, BECN, to the sender's QP, from the
 * receiver), at most one per QP per 50 us; the sender's QP takes them and its host hands
 * each to the cnp hook with the QP's number. Unmarked data draws none; an interval of 0
 * turns the NP off. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/soft_host.h"

#define IP_S 0x0a000001u   /* sender */
#define IP_R 0x0a000002u   /* receiver */
#define FRAME_GAP_NS (10 * QP_NS_PER_US)   /* one frame across the link every 10 us */
#define MSG_BYTES (256u * 1024u)

struct np_net {
	struct soft_host *h[2];
	struct rc_qp *qp[2];
	uint8_t *rbuf;
	/* what the test saw */
	uint32_t cnp_qpn;
	int cnps_hooked;
	int cnps_wire;
	qp_time_ns cnp_ns[4096];
	int data_frames;
};

static bool np_mr(void *arg, uint32_t rkey, struct rc_region *out)
{
	struct np_net *n = arg;

	if (rkey != 7)
		return false;
	*out = (struct rc_region){ .base = n->rbuf, .va = 0x1000, .len = MSG_BYTES,
				   .remote_write = true };
	return true;
}

static void np_hook(void *arg, uint32_t qpn, qp_time_ns now)
{
	struct np_net *n = arg;

	(void)now;
	n->cnp_qpn = qpn;
	n->cnps_hooked++;
}

/* Host i (0 sender, 1 receiver) with one QP (QPN SOFT_QPN_BASE) to the other. */
static void np_open(struct np_net *n, qp_time_ns cnp_interval_ns)
{
	char err[160];

	memset(n, 0, sizeof(*n));
	n->rbuf = calloc(1, MSG_BYTES);
	assert_non_null(n->rbuf);
	for (int i = 0; i < 2; i++) {
		struct soft_host_params hp = { .ip = i ? IP_R : IP_S, .cnp = np_hook, .cnp_arg = n };
		struct rc_params p;

		soft_mac_from_ip(hp.ip, hp.mac);
		n->h[i] = soft_host_create(&hp, err, sizeof(err));
		assert_non_null(n->h[i]);
		assert_int_equal(soft_host_qpn_reserve(n->h[i]), (int)SOFT_QPN_BASE);
		rc_params_init(&p);
		p.qpn = SOFT_QPN_BASE;
		p.sq_psn = i ? 5000 : 9000;
		p.mr_find = np_mr;
		p.mr_arg = n;
		p.cnp_interval_ns = cnp_interval_ns;
		n->qp[i] = rc_create(&p, err, sizeof(err));
		assert_non_null(n->qp[i]);
		assert_int_equal(soft_host_qp_attach(n->h[i], SOFT_QPN_BASE, n->qp[i]), 0);
		assert_int_equal(rc_connect(n->qp[i], &(struct rc_conn){
					    .dest_qpn = SOFT_QPN_BASE, .rq_psn = i ? 9000 : 5000,
					    .mtu_bytes = 1024 }), 0);
		assert_int_equal(soft_host_qp_connect(n->h[i], SOFT_QPN_BASE, i ? IP_S : IP_R,
						      SOFT_QPN_BASE, i ? 0 : FRAME_ECN_ECT0), 0);
	}
}

static void np_close(struct np_net *n)
{
	for (int i = 0; i < 2; i++) {
		rc_destroy(n->qp[i]);
		soft_host_destroy(n->h[i]);
	}
	free(n->rbuf);
}

/* One frame from host @from at @now onto the wire: data from the sender marked CE when
 * @mark (as a switch's RED would), CNPs from the receiver checked and recorded. */
static bool np_step(struct np_net *n, int from, bool mark, qp_time_ns now)
{
	uint8_t buf[SOFT_FRAME_MAX];
	struct frame_parsed p;
	int len = soft_host_output(n->h[from], now, buf, sizeof(buf));

	assert_true(len >= 0);
	if (len == 0)
		return false;
	assert_int_equal(frame_parse(&p, buf, (size_t)len), 0);
	if (p.layers & FRAME_L_ROCE) {
		if (from == 0 && p.bth.opcode != FRAME_OP_CNP && p.payload_len) {
			n->data_frames++;
			assert_int_equal(p.ip.tos & 3, FRAME_ECN_ECT0);   /* ECN-capable */
			if (mark)
				frame_ipv4_set_ecn(buf + p.ip_off, FRAME_ECN_CE);
		}
		if (p.bth.opcode == FRAME_OP_CNP) {
			assert_int_equal(from, 1);
			assert_int_equal(p.ip.src, IP_R);
			assert_int_equal(p.ip.dst, IP_S);
			assert_int_equal(p.bth.dest_qp, SOFT_QPN_BASE);
			assert_true(p.bth.becn);
			assert_true(frame_icrc_ok(buf, &p));
			assert_true(n->cnps_wire < 4096);
			n->cnp_ns[n->cnps_wire++] = now;
		}
	}
	soft_host_input(n->h[!from], buf, (size_t)len, now);
	return true;
}

/* The sender WRITEs MSG_BYTES; one frame each way per FRAME_GAP_NS until both are quiet
 * and the WRITE completed. Returns the time it took. */
static qp_time_ns np_run(struct np_net *n, bool mark)
{
	struct qp_wr wr = { .wr_id = 1, .opcode = QP_OP_WRITE,
			    .length = MSG_BYTES, .remote_addr = 0x1000, .rkey = 7,
			    .flags = QP_WR_SIGNALED };
	uint8_t *src = calloc(1, MSG_BYTES);
	struct qp_wc wc;
	qp_time_ns t = 0;
	bool done = false;

	assert_non_null(src);
	wr.addr = src;
	assert_int_equal(rc_post_send(n->qp[0], &wr, 0), 0);
	soft_host_qp_changed(n->h[0], rc_qpn(n->qp[0]));   /* a post outside the host */
	for (int idle = 0; idle < 3 && t < QP_NS_PER_S; t += FRAME_GAP_NS) {
		bool moved = np_step(n, 0, mark, t);
		moved |= np_step(n, 1, mark, t);
		soft_host_tick(n->h[0], t);
		soft_host_tick(n->h[1], t);
		idle = moved ? 0 : idle + 1;
		if (rc_poll_cq(n->qp[0], &wc, 1) == 1) {
			assert_int_equal(wc.status, QP_WC_SUCCESS);
			done = true;
		}
	}
	assert_true(done);
	free(src);
	return t;
}

static void test_ce_marked_data_draws_paced_cnps(void **state)
{
	struct np_net n;
	qp_time_ns t;
	int expect_max;
	(void)state;

	np_open(&n, 50 * QP_NS_PER_US);
	t = np_run(&n, true);
	/* 256 data frames 10 us apart, every one marked: one CNP per 50 us of marked data,
	 * i.e. one per 5 frames, never closer than 50 us. */
	expect_max = (int)(t / (50 * QP_NS_PER_US)) + 1;
	print_message("%d data frames marked over %.2f ms: %d CNPs on the wire (<= %d), %d "
		      "handed to the sender's hook\n", n.data_frames, (double)t / 1e6,
		      n.cnps_wire, expect_max, n.cnps_hooked);
	assert_int_equal(n.data_frames, (int)(MSG_BYTES / 1024));
	assert_true(n.cnps_wire >= n.data_frames / 5 - 1 && n.cnps_wire <= n.data_frames / 5 + 1);
	for (int i = 1; i < n.cnps_wire; i++)
		assert_true(n.cnp_ns[i] - n.cnp_ns[i - 1] >= 50 * QP_NS_PER_US);
	assert_int_equal(n.cnps_hooked, n.cnps_wire);
	assert_int_equal(n.cnp_qpn, SOFT_QPN_BASE);
	assert_int_equal(rc_stats(n.qp[1])->ce_rx, (uint64_t)n.data_frames);
	assert_int_equal(rc_stats(n.qp[1])->cnp_tx, (uint64_t)n.cnps_wire);
	assert_int_equal(rc_stats(n.qp[0])->cnp_rx, (uint64_t)n.cnps_wire);
	assert_int_equal(soft_host_stats(n.h[0])->cnp_rx, (uint64_t)n.cnps_wire);
	np_close(&n);
}

static void test_unmarked_or_np_off_draws_none(void **state)
{
	struct np_net n;
	(void)state;

	np_open(&n, 50 * QP_NS_PER_US);
	np_run(&n, false);
	assert_int_equal(n.cnps_wire, 0);
	assert_int_equal(n.cnps_hooked, 0);
	np_close(&n);
	np_open(&n, 0);     /* NP off: marks are counted, no CNP */
	np_run(&n, true);
	assert_int_equal(n.cnps_wire, 0);
	assert_int_equal(rc_stats(n.qp[1])->ce_rx, (uint64_t)n.data_frames);
	np_close(&n);
}

/* A shorter interval allows more: 10 us, one per marked frame. */
static void test_interval_bounds_the_rate(void **state)
{
	struct np_net n;
	(void)state;

	np_open(&n, 10 * QP_NS_PER_US);
	np_run(&n, true);
	print_message("interval 10 us: %d CNPs for %d marked frames\n", n.cnps_wire,
		      n.data_frames);
	assert_int_equal(n.cnps_wire, n.data_frames);
	np_close(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ce_marked_data_draws_paced_cnps),
		cmocka_unit_test(test_unmarked_or_np_off_draws_none),
		cmocka_unit_test(test_interval_bounds_the_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
