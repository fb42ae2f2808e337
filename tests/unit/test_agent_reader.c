/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core's reader role (AGENT_QP_READER, qpace/agent.h): a QP that issues RDMA
 * READs, whose data comes from its peer and whose requests are what its agent paces.
 *  - credits: it is its link's pacer's sender, and a grant becomes its own credit (its
 *    rate-table slot's credit_bytes, gating on), never a CREDIT datagram to the peer;
 *  - INT about its data (the switch sends what it says of READ responses to their
 *    receiver, FB_F_TO_RECEIVER) feeds its own controller and is not echoed, while the
 *    same report for a plain receiving QP is echoed as before;
 *  - a notice about its data is its controller's; one about a plain receiver's is not;
 *  - its INT wish names its data flow (peer -> here, its own QPN), sent to the peer;
 *  - a level acknowledgement names the data flow too. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent_fx.h"

static struct agent_qp_reg reader(uint32_t qpn, uint32_t peer_qpn)
{
	struct agent_qp_reg r = afx_reg(qpn, peer_qpn);

	r.flags = AGENT_QP_READER;
	r.link_bps = QP_GBPS;
	r.base_rtt_ns = 100 * QP_NS_PER_US;
	return r;
}

/* Every datagram the agent queued: how many, and of what type (the last). */
static unsigned take_all(struct afx *f, uint8_t *type, struct fb_msg *last)
{
	struct agent_dgram d[16];
	unsigned n, all = 0;

	while ((n = agent_tx_take(f->a, d, 16))) {
		for (unsigned i = 0; i < n; i++) {
			struct fb_msg m;

			assert_int_equal(fb_decode(&m, d[i].buf, d[i].len), 0);
			*type = m.type;
			if (last)
				*last = m;
		}
		all += n;
	}
	return all;
}

static void test_reader_credits_are_its_own(void **state)
{
	struct agent_params p = afx_params("none");
	struct afx *f;
	struct agent_qp_reg r = reader(0x11, 0x21);
	uint8_t type = 0;
	qp_time_ns t;
	(void)state;

	p.credits = true;
	p.arrivals = true;
	f = afx_new(&p);
	afx_register(f, &r);
	take_all(f, &type, NULL);
	assert_int_equal(afx_slot(f, 0x11).credit_bytes, 0);
	/* the first grant comes within RTT + delta, the next as data arrives */
	for (t = T0; t < T0 + 10 * QP_NS_PER_MS; t += 10 * QP_NS_PER_US) {
		agent_poll(f->a, t);
		if (afx_slot(f, 0x11).credit_bytes)
			break;
	}
	assert_true(afx_slot(f, 0x11).credit_bytes > 0);
	assert_true(afx_slot(f, 0x11).flags & QP_RATE_F_CREDITS);
	assert_int_equal(take_all(f, &type, NULL), 0);   /* no CREDIT datagram */
	assert_int_equal(agent_qp_arrived(f->a, 0x11, 1000, t + 50 * QP_NS_PER_US), 0);
	agent_poll(f->a, t + 50 * QP_NS_PER_US);
	assert_int_equal(take_all(f, &type, NULL), 0);
	print_message("reader: %llu B of its own credit, %llu grants, none sent\n",
		      (unsigned long long)afx_slot(f, 0x11).credit_bytes,
		      (unsigned long long)agent_counters(f->a)[AGENT_C_GRANTS]);
	assert_true(agent_counters(f->a)[AGENT_C_GRANTS] >= 1);
	afx_free(f);
}

static struct fb_msg int_report(uint32_t src, uint32_t dst, uint32_t qp, uint32_t psn,
				uint32_t qlen)
{
	struct fb_msg m = { .type = FB_T_INT, .flags = FB_F_TO_RECEIVER };

	m.u.int_report = (struct fb_int){
		.flow = { src, dst, 0xc011, qp }, .psn = psn, .nhops = 1,
		.hops = { { .switch_id = 1, .port = 0, .ts_ns = T0 + psn * 1000,
			    .tx_bytes = psn * 1000ull, .qlen_bytes = qlen, .link_bps = QP_GBPS } },
	};
	return m;
}

static void test_reader_int_and_notice(void **state)
{
	struct agent_params p = afx_params("hpcc");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = reader(0x11, 0x21), rx = afx_reg(0x12, 0x22);
	struct fb_msg m, got;
	uint8_t type = 0;
	qp_rate_bps before;
	(void)state;

	rx.flags = AGENT_QP_RECEIVER;
	snprintf(rx.algo, sizeof(rx.algo), "none");
	afx_register(f, &r);
	afx_register(f, &rx);
	/* its INT wish names the data flow: the peer's data to its own QP, sent to the peer */
	assert_int_equal(f->wants, 1);
	before = afx_slot(f, 0x11).rate_bps;
	/* INT about its data, a queue of 200 KB: its own controller, no echo */
	for (uint32_t k = 1; k <= 20; k++) {
		m = int_report(HOST_B, HOST_A, 0x11, k, 200000);
		assert_true(afx_feed(f, &m, SWITCH, T0 + k * 1000) & AGENT_RX_MATCHED);
	}
	assert_int_equal(take_all(f, &type, NULL), 0);
	print_message("reader: hpcc %llu -> %llu b/s from INT about its READ responses\n",
		      (unsigned long long)before, (unsigned long long)afx_slot(f, 0x11).rate_bps);
	assert_true(afx_slot(f, 0x11).rate_bps < before);
	assert_int_equal(agent_counters(f->a)[AGENT_C_ECHOES], 0);
	/* the same report about a plain receiver's data is echoed to its sender */
	m = int_report(HOST_B, HOST_A, 0x12, 1, 0);
	afx_feed(f, &m, SWITCH, T0 + 30000);
	assert_int_equal(take_all(f, &type, &got), 1);
	assert_int_equal(type, FB_T_ECHO);
	/* a notice about a reader's data is its controller's; a plain receiver's is not */
	m = (struct fb_msg){ .type = FB_T_NOTICE, .flags = FB_F_TO_RECEIVER };
	m.u.notice = (struct fb_notice){ .flow = { HOST_B, HOST_A, 0xc011, 0x11 },
					 .switch_id = 1, .queue_bytes = 300000,
					 .link_bps = QP_GBPS };
	assert_true(afx_feed(f, &m, SWITCH, T0 + 40000) & AGENT_RX_MATCHED);
	m.u.notice.flow.dest_qp = 0x12;
	assert_false(afx_feed(f, &m, SWITCH, T0 + 41000) & AGENT_RX_MATCHED);
	assert_true(agent_counters(f->a)[AGENT_C_FB_UNKNOWN_FLOW] >= 1);
	afx_free(f);
}

/* The wish the reader sends (agent_fx's afx_register counts and drops it): decoded here. */
static void test_reader_want_and_level_ack(void **state)
{
	struct agent_params p = afx_params("ffd");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = reader(0x11, 0x21);
	struct fb_msg m, got;
	uint8_t type = 0;
	(void)state;

	assert_int_equal(agent_register(f->a, &r, 1, 4242, T0, f->lastlog, sizeof(f->lastlog)),
			 0);
	take_all(f, &type, NULL);
	/* hpcc's wish, after an algorithm change: the data flow (peer -> here, own QPN) */
	assert_int_equal(agent_set_algo(f->a, 0x11, "hpcc", "", 0, T0 + 1, f->lastlog,
					   sizeof(f->lastlog)), 0);
	assert_int_equal(take_all(f, &type, &got), 1);
	assert_int_equal(type, FB_T_WANT);
	assert_int_equal(got.u.want.flow.src_ip, HOST_B);
	assert_int_equal(got.u.want.flow.dst_ip, HOST_A);
	assert_int_equal(got.u.want.flow.dest_qp, 0x11);
	/* ffd acknowledges a level: the acknowledgement names the data flow too */
	assert_int_equal(agent_set_algo(f->a, 0x11, "ffd", "", 0, T0 + 2, f->lastlog,
					   sizeof(f->lastlog)), 0);
	take_all(f, &type, NULL);
	m = (struct fb_msg){ .type = FB_T_LEVEL, .flags = FB_F_TO_RECEIVER };
	m.u.level = (struct fb_level){ .flow = { HOST_B, HOST_A, 0xc011, 0x11 },
				       .switch_id = 7, .port = 0, .level = 3, .seq = 1, .psn = 5 };
	assert_true(afx_feed(f, &m, SWITCH, T0 + 1000) & AGENT_RX_MATCHED);
	assert_int_equal(take_all(f, &type, &got), 1);
	assert_int_equal(type, FB_T_LEVEL);
	assert_int_equal(got.u.level.level, FB_LEVEL_ACK);
	assert_int_equal(got.u.level.flow.src_ip, HOST_B);
	assert_int_equal(got.u.level.flow.dest_qp, 0x11);
	afx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_credits_are_its_own),
		cmocka_unit_test(test_reader_int_and_notice),
		cmocka_unit_test(test_reader_want_and_level_ack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
