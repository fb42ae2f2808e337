/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* FFD on its TCP window: slow start and one MSS per RTT on level 000 (and before any
 * level), level 1 holding the window, levels 2 and 3 cutting it once per level change (at
 * most once per RTT), each level acknowledged, repeats, TCP's loss reactions, parameters. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cc_algs.h"
#include "ffd.h"
#include "../support/cc_expect.h"

#define RTT (10 * QP_NS_PER_US)
#define MSS 1000.0

static const struct cc_path path = {
	.line_bps = 100 * QP_GBPS, .base_rtt_ns = RTT, .mtu_bytes = 1000,
};

static struct cc *make(const char *params)
{
	return cc_expect_create(&cc_ffd_ops, &path, params);
}

static unsigned level(struct cc *cc, uint8_t lv, qp_time_ns t)
{
	const struct cc_event ev = { .type = CC_EV_LEVEL, .u.level = lv };
	return cc_event(cc, &ev, t);
}

/* An ACK of @pkts packets with as many left in flight (the window is in use). */
static void ack(struct cc *cc, uint64_t *psn, uint32_t pkts, qp_time_ns t)
{
	struct cc_event ev = { .type = CC_EV_ACKED };

	*psn += pkts;
	ev.u.ack = (struct cc_ack){ .bytes = pkts * 1000ull, .psn = *psn, .snd_psn = *psn + pkts,
				    .ecn = CC_ECN_NONE };
	cc_event(cc, &ev, t);
}

static struct cc_ffd_view view(const struct cc *cc)
{
	struct cc_ffd_view v;
	assert_int_equal(cc_ffd_view(cc, &v), 0);
	return v;
}

/* Before any level, and on level 0: standard TCP from 2 packets, slow start (the window
 * doubles per window acknowledged), then one MSS per window past ssthresh; line rate, the
 * window as the cap; no timer. */
static void test_level0_is_standard_tcp(void **state)
{
	struct cc *cc = make("ssthresh=8000");
	uint64_t psn = 100;
	(void)state;

	assert_int_equal(cc->cap_bytes, 2000);
	assert_int_equal(cc->rate_bps, path.line_bps);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	ack(cc, &psn, 2, 1);
	assert_int_equal(cc->cap_bytes, 4000);
	assert_true(level(cc, CC_LEVEL_FREE, 2) & CC_ACT_ACK_LEVEL);
	ack(cc, &psn, 4, 3);
	assert_int_equal(cc->cap_bytes, 8000);
	ack(cc, &psn, 8, 4);                      /* past ssthresh: + MSS * 8000 / 8000 */
	assert_int_equal(cc->cap_bytes, 9000);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	cc_destroy(cc);
}

/* Each level's action at once, and an ack of it; a cut within one RTT of the last applies
 * only what it cuts beyond it. */
static void test_each_level_action(void **state)
{
	struct cc *cc = make("iw=100");
	uint64_t psn = 0;
	(void)state;

	assert_true(level(cc, CC_LEVEL_SEVERE, 1 * RTT) & CC_ACT_ACK_LEVEL);
	assert_int_equal(cc->level_to_ack, CC_LEVEL_SEVERE);
	assert_true(fabs(view(cc).cwnd_bytes - 50 * MSS) < 1e-6);
	assert_true(fabs(view(cc).ssthresh_bytes - 50 * MSS) < 1e-6);
	ack(cc, &psn, 10, 1 * RTT + 1);           /* level 3 holds the window */
	assert_true(fabs(view(cc).cwnd_bytes - 50 * MSS) < 1e-6);
	level(cc, CC_LEVEL_DOWN, 3 * RTT);        /* x0.75 (a new RTT) */
	assert_true(fabs(view(cc).cwnd_bytes - 37.5 * MSS) < 1e-6);
	level(cc, CC_LEVEL_HOLD, 4 * RTT);
	ack(cc, &psn, 10, 4 * RTT + 1);           /* held */
	assert_true(fabs(view(cc).cwnd_bytes - 37.5 * MSS) < 1e-6);
	level(cc, CC_LEVEL_FREE, 5 * RTT);
	ack(cc, &psn, 10, 5 * RTT + 1);           /* avoidance: cwnd = ssthresh */
	assert_true(fabs(view(cc).cwnd_bytes - (37.5 * MSS + MSS * 10 * MSS / (37.5 * MSS))) < 1e-6);
	double w = view(cc).cwnd_bytes;
	level(cc, CC_LEVEL_SEVERE, 6 * RTT);
	level(cc, CC_LEVEL_DOWN, 6 * RTT + 1);    /* within T of a deeper cut: none */
	assert_true(fabs(view(cc).cwnd_bytes - w * 0.5) < 1e-6);
	assert_int_equal(view(cc).stats.entered[CC_LEVEL_SEVERE], 2);
	assert_int_equal(view(cc).stats.cuts_merged, 1);
	assert_int_equal(view(cc).stats.held_acks, 2);
	cc_destroy(cc);
}

/* The switch repeats the level before our ack reaches it: acknowledged again, nothing
 * else changes. */
static void test_repeat_changes_nothing(void **state)
{
	struct cc *cc = make("iw=100");
	uint64_t cap;
	(void)state;

	level(cc, CC_LEVEL_DOWN, 1000);
	cap = cc->cap_bytes;
	for (qp_time_ns t = 2000; t < 1000 + RTT; t += 2000) {
		unsigned act = level(cc, CC_LEVEL_DOWN, t);

		assert_true(act & CC_ACT_ACK_LEVEL);
		assert_int_equal(cc->level_to_ack, CC_LEVEL_DOWN);
		assert_int_equal(cc->cap_bytes, cap);
	}
	assert_int_equal(view(cc).stats.repeats, 5); /* at 2, 4, 6, 8, 10 us */
	assert_int_equal(view(cc).stats.acks, 6);
	assert_int_equal(view(cc).stats.entered[CC_LEVEL_DOWN], 1);
	cc_destroy(cc);
}

/* A persisting level 2 cuts once, however long it lasts; a level flapping at a threshold
 * cuts at most once per RTT, to the deepest level of that RTT. */
static void test_once_per_level_change(void **state)
{
	struct cc *cc = make("iw=100");
	const qp_time_ns t0 = 5000;
	double want = 75 * MSS;
	(void)state;

	level(cc, CC_LEVEL_DOWN, t0);
	level(cc, CC_LEVEL_DOWN, t0 + 100 * RTT);          /* a repeat: nothing */
	assert_true(fabs(view(cc).cwnd_bytes - want) < 1e-6);
	/* 2 -> 1 -> 2 -> 1 -> 3 within one RTT: one cut to x0.5 in all. */
	level(cc, CC_LEVEL_HOLD, t0 + 101 * RTT);
	level(cc, CC_LEVEL_DOWN, t0 + 101 * RTT + 1000);   /* x0.75 */
	level(cc, CC_LEVEL_HOLD, t0 + 101 * RTT + 2000);
	level(cc, CC_LEVEL_DOWN, t0 + 101 * RTT + 3000);   /* merged */
	level(cc, CC_LEVEL_HOLD, t0 + 101 * RTT + 4000);
	level(cc, CC_LEVEL_SEVERE, t0 + 101 * RTT + 5000); /* x0.5 / 0.75 more */
	want *= 0.5;
	assert_true(fabs(view(cc).cwnd_bytes - want) < 1e-6);
	level(cc, CC_LEVEL_HOLD, t0 + 102 * RTT + 1000);   /* the next RTT: cuts again */
	level(cc, CC_LEVEL_DOWN, t0 + 102 * RTT + 1001);
	want *= 0.75;
	assert_true(fabs(view(cc).cwnd_bytes - want) < 1e-6);
	cc_destroy(cc);
}

/* TCP's losses: a NAK halves, a timeout leaves one MSS; a cut never below one MSS. */
static void test_losses_and_floor(void **state)
{
	struct cc *cc = make("iw=40");
	struct cc_event ev = { .type = CC_EV_NAK, .u.loss = { .psn = 10, .snd_psn = 50 } };
	(void)state;

	cc_event(cc, &ev, 1);
	assert_int_equal(cc->cap_bytes, 20000);
	ev.type = CC_EV_TIMEOUT;
	ev.u.loss.count = 1;
	cc_event(cc, &ev, 2);
	assert_int_equal(cc->cap_bytes, 1000);
	level(cc, CC_LEVEL_SEVERE, 3);
	assert_int_equal(cc->cap_bytes, 1000);
	cc_destroy(cc);
}

static void test_invalid_level_rejected(void **state)
{
	struct cc *cc = make(NULL);
	(void)state;

	assert_int_equal(level(cc, CC_LEVEL_ACK, 1), 0);
	assert_int_equal(level(cc, 4, 2), 0);
	assert_int_equal(cc->stats.rejected[CC_EV_LEVEL], 2);
	assert_int_equal(cc->cap_bytes, 2000);
	assert_int_equal(view(cc).level, -1);
	cc_destroy(cc);
}

static void test_bad_params_named(void **state)
{
	static const struct cc_expect_bad bad[] = {
		{ "down=1", "down" },
		{ "down=0", "down" },
		{ "severe=1.5", "severe" },
		{ "severe=0.9", "severe" },       /* gentler than down */
		{ "iw=0", "iw" },
		{ "iw=4,max_cwnd=2", "max_cwnd" },
		{ "rate_ai=1G", "rate_ai" },      /* the rate-based FFD's: gone */
	};
	(void)state;

	cc_expect_bad_params(&cc_ffd_ops, &path, bad, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(cc_ffd_view(NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level0_is_standard_tcp),
		cmocka_unit_test(test_each_level_action),
		cmocka_unit_test(test_repeat_changes_nothing),
		cmocka_unit_test(test_once_per_level_change),
		cmocka_unit_test(test_losses_and_floor),
		cmocka_unit_test(test_invalid_level_rejected),
		cmocka_unit_test(test_bad_params_named),
	};
	return cmocka_run_group_tests_name("ffd", tests, NULL, NULL);
}
