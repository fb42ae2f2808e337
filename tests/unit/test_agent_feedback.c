/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent's translation of feedback messages into cc events (fb_to_cc_event): INT, NOTICE
 * and LEVEL map onto their events with every field carried; level acks and credits are no
 * cc event. Hop values no switch would send reach the agent's monitoring safely. */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_fx.h"
#include "fb_samples.h"
#include "qpace/agent.h"

static void test_cc_mapping(void **state)
{
	struct fb_msg msgs[FB_SAMPLES_MAX];
	struct cc_event ev;
	size_t n;
	(void)state;

	fb_samples(msgs, &n);
	assert_int_equal(fb_to_cc_event(&msgs[4], &ev), 0);
	assert_int_equal(ev.type, CC_EV_INT);
	assert_int_equal(ev.u.int_report.nhops, 5);
	assert_ptr_equal(ev.u.int_report.hops, msgs[4].u.int_report.hops);
	assert_int_equal(ev.u.int_report.hops[4].tx_bytes, (1ULL << 40) + 4);
	assert_int_equal(fb_to_cc_event(&msgs[6], &ev), 0);
	assert_int_equal(ev.type, CC_EV_NOTICE);
	assert_int_equal(ev.u.notice.switch_id, 9);
	assert_int_equal(ev.u.notice.queue_bytes, 150000);
	assert_int_equal(ev.u.notice.link_bps, 25 * QP_GBPS);
	assert_int_equal(ev.u.notice.flows, 12);
	assert_int_equal(ev.u.notice.reflected_ts_ns, 1ULL << 50);
	assert_int_equal(fb_to_cc_event(&msgs[9], &ev), 0);
	assert_int_equal(ev.type, CC_EV_LEVEL);
	assert_int_equal(ev.u.level, 2);
	assert_int_equal(fb_to_cc_event(&msgs[11], &ev), -ENOENT);  /* ack */
	assert_int_equal(fb_to_cc_event(&msgs[12], &ev), -ENOENT);  /* credit */
}

/* Regression (found by tests/fuzz/fuzz_agent.c): an INT hop claiming a 1 b/s link and a
 * 4e9-byte queue made the queueing delay 3.2e19 ns, past what a uint64_t holds, and its
 * conversion undefined (clang's float-cast-overflow check stops here under SAN=1). The RTT
 * shown saturates; the algorithm's rate stays within the link. */
static void test_absurd_hop_saturates(void **state)
{
	struct agent_params p = afx_params("hpcc");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct agent_qp_view v;
	struct fb_msg m = { .type = FB_T_INT };
	(void)state;

	afx_register(f, &r);
	m.u.int_report = (struct fb_int){
		.flow = { HOST_A, HOST_B, r.sport, 0x21 }, .psn = 1, .nhops = 1,
		.hops = { { .switch_id = 1, .port = 1, .ts_ns = T0, .tx_bytes = 1000,
			    .qlen_bytes = 4000000000u, .link_bps = 1 } },
	};
	assert_true(afx_feed(f, &m, SWITCH, T0 + 1000) & AGENT_RX_MATCHED);
	m.u.int_report.psn = 2;
	m.u.int_report.hops[0].ts_ns = T0 + 1000;
	m.u.int_report.hops[0].tx_bytes = 2000;
	assert_true(afx_feed(f, &m, SWITCH, T0 + 2000) & AGENT_RX_MATCHED);
	assert_int_equal(agent_qp_view(f->a, 0x11, &v), 0);
	print_message("rtt shown %llu ns, utilization %g, rate %llu b/s\n",
		      (unsigned long long)v.rtt_ns, v.utilization,
		      (unsigned long long)v.rate_bps);
	assert_true(v.rtt_ns == UINT64_MAX);
	assert_true(v.rate_bps > 0 && v.rate_bps <= r.link_bps);
	afx_free(f);
}

/* The WANT a QP sends: taken at registration (afx_register checks it), repeated every
 * AGENT_WANT_REFRESH_NS, withdrawn (int_every 0) when its algorithm changes to one that
 * takes no INT, never repeated after; a QP of such an algorithm asks for nothing and
 * withdraws nothing. --int-sample's values travel in it. */
static struct fb_msg take_want(struct afx *f)
{
	struct agent_dgram d;
	struct fb_msg m;

	assert_int_equal(agent_tx_take(f->a, &d, 1), 1);
	assert_int_equal(d.dst_ip, HOST_B);
	assert_int_equal(fb_decode(&m, d.buf, d.len), 0);
	assert_int_equal(m.type, FB_T_WANT);
	return m;
}

static void test_want_lifecycle(void **state)
{
	struct agent_params p = afx_params("hpcc");
	struct afx *f;
	struct agent_qp_reg r = afx_reg(0x11, 0x21), r2 = afx_reg(0x12, 0x22);
	struct fb_msg m;
	char err[200];
	(void)state;

	p.int_every = 8;
	p.int_interval_ns = 20 * QP_NS_PER_US;
	f = afx_new(&p);
	afx_register(f, &r);
	assert_int_equal(f->wants, 1);
	agent_poll(f->a, T0 + AGENT_WANT_REFRESH_NS - 1);
	assert_int_equal(agent_tx_pending(f->a), 0);
	agent_poll(f->a, T0 + AGENT_WANT_REFRESH_NS);
	m = take_want(f);
	assert_int_equal(m.u.want.int_every, 8);
	assert_int_equal(m.u.want.int_interval_ns, 20 * QP_NS_PER_US);
	assert_int_equal(m.u.want.flow.dest_qp, 0x21);
	assert_int_equal(agent_set_algo(f->a, 0x11, "dcqcn", NULL, 1, T0 + 1500 * QP_NS_PER_MS,
					err, sizeof(err)), 0);
	m = take_want(f);
	assert_int_equal(m.u.want.int_every, 0);               /* withdrawn */
	agent_poll(f->a, T0 + 10 * QP_NS_PER_S);
	assert_int_equal(agent_tx_pending(f->a), 0);           /* and not repeated */
	assert_int_equal(agent_unregister(f->a, 0x11, T0 + 11 * QP_NS_PER_S), 0);
	assert_int_equal(agent_tx_pending(f->a), 0);           /* nothing to withdraw */
	snprintf(r2.algo, sizeof(r2.algo), "none");
	afx_register(f, &r2);                                  /* checks: no WANT */
	assert_int_equal(agent_counters(f->a)[AGENT_C_WANTS_SENT], 3);
	afx_free(f);
}

/* A peer's WANT reaching this agent: seen and counted, from any source (it is for the
 * switches on the way; the allow-list names switches), never a rejection. */
static void test_want_seen(void **state)
{
	struct agent_params p = afx_params("hpcc");
	struct afx *f = afx_new(&p);
	struct fb_msg m = { .type = FB_T_WANT };
	(void)state;

	m.u.want = (struct fb_want){ .flow = { HOST_B, HOST_A, 0xc000, 0x11 }, .int_every = 1 };
	assert_int_equal(afx_feed(f, &m, HOST_B, T0), AGENT_RX_ACCEPTED);
	assert_int_equal(afx_feed(f, &m, 0xc0a80101u, T0), 0);   /* 192.168.1.1: not allowed */
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_WANT_SEEN], 2);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_REJ_SOURCE], 0);
	afx_free(f);
}

/* ACC's last window: the message's size, then ACKs until what is left fits in its window:
 * one WANT with FB_WANT_F_LAST (and the INT wish kept), to the data's receiver; the next
 * message draws a WANT without it. */
static void test_last_window_announced(void **state)
{
	struct agent_params p = afx_params("acc");
	struct afx *f = afx_new(&p);
	struct agent_qp_reg r = afx_reg(0x11, 0x21);
	struct cc_event start = { .type = CC_EV_FLOW_START, .u.flow_bytes = 200000 };
	struct agent_tp_event e = { .type = AGENT_TP_ACK, .flags = AGENT_TP_F_PSN | AGENT_TP_F_SND,
				    .bytes = 10000 };
	struct fb_msg m;
	unsigned lasts = 0, acks = 0;
	(void)state;

	afx_register(f, &r);                            /* takes the registration's wish */
	assert_int_equal(agent_tx_pending(f->a), 0);
	assert_int_equal(agent_qp_event(f->a, 0x11, &start, T0), 0);
	while (!agent_tx_pending(f->a) && acks < 20) {
		e.psn += 10;
		e.snd_psn = e.psn + 10;
		agent_qp_transport(f->a, 0x11, &e, T0 + ++acks);
	}
	m = take_want(f);
	lasts += !!(m.u.want.flags & FB_WANT_F_LAST);
	assert_int_equal(lasts, 1);
	assert_true(m.u.want.int_every > 0);            /* INT still wanted */
	assert_int_equal(m.u.want.flow.dest_qp, 0x21);
	/* 200000 B, a window of 10 Gb/s x 10 us + MTU - 1 = 13499 B: after 19 ACKs of 10000 */
	assert_int_equal(acks, 19);
	for (int i = 0; i < 5; i++) {                   /* once */
		e.psn += 10;
		agent_qp_transport(f->a, 0x11, &e, T0 + 100 + (qp_time_ns)i);
	}
	assert_int_equal(agent_tx_pending(f->a), 0);
	assert_int_equal(agent_qp_event(f->a, 0x11, &start, T0 + 200), 0);   /* a new message */
	m = take_want(f);
	assert_int_equal(m.u.want.flags, 0);
	afx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cc_mapping),
		cmocka_unit_test(test_absurd_hop_saturates),
		cmocka_unit_test(test_want_lifecycle),
		cmocka_unit_test(test_want_seen),
		cmocka_unit_test(test_last_window_announced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
