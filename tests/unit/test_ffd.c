/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* FFD: each level's action and its acknowledgement, repeats, one decrease per level change
 * (at most one per RTT), level 0's per-RTT increase, clamps, parameters. */
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

static struct cc_ffd_view view(const struct cc *cc)
{
	struct cc_ffd_view v;
	assert_int_equal(cc_ffd_view(cc, &v), 0);
	return v;
}

/* Entering each level applies its action once, at once, and asks for an ack of it. Only
 * level 0 arms a timer (its increase runs on per RTT); a decrease within one RTT of the
 * last cut applies only what it cuts beyond it. */
static void test_each_level_action(void **state)
{
	static const struct {
		qp_time_ns t;
		uint8_t level;
		double factor, add_bps; /* R' = R * factor + add, before clamps */
		int timer;              /* the level-0 increase is armed */
	} steps[] = {
		{ 1 * RTT, CC_LEVEL_SEVERE, 0.5, 0, 0 },        /* 100G -> 50G */
		{ 3 * RTT, CC_LEVEL_DOWN, 0.75, 0, 0 },         /* -> 37.5G (a new RTT) */
		{ 4 * RTT + 1, CC_LEVEL_HOLD, 1, 0, 0 },        /* hold */
		{ 4 * RTT + 2, CC_LEVEL_FREE, 1, 1e9, 1 },      /* + line/100 */
		{ 6 * RTT + 2, CC_LEVEL_SEVERE, 0.5, 0, 0 },    /* +2G due at 5 and 6 RTT + 2, x0.5 */
		{ 6 * RTT + 3, CC_LEVEL_DOWN, 1, 0, 0 },        /* within T of a deeper cut: none */
		{ 6 * RTT + 4, CC_LEVEL_FREE, 1, 1e9, 1 },
	};
	struct cc *cc = make(NULL);
	double want = (double)path.line_bps;
	(void)state;

	for (unsigned i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		qp_time_ns t = steps[i].t;
		unsigned act;

		if (i == 4)
			want += 2e9; /* level 0's increases due by then run first */
		cc->level_to_ack = 0xff;
		act = level(cc, steps[i].level, t);
		want = want * steps[i].factor + steps[i].add_bps;
		print_message("level %u at %.2f RTT: rate %.4g (want %.4g), act %#x, ack %u\n",
			      steps[i].level, (double)t / RTT, view(cc).rate_bps, want, act,
			      cc->level_to_ack);
		assert_true(act & CC_ACT_ACK_LEVEL);
		assert_int_equal(cc->level_to_ack, steps[i].level);
		assert_true(fabs(view(cc).rate_bps - want) < 1.0);
		assert_int_equal(view(cc).level, steps[i].level);
		if (steps[i].timer)
			assert_int_equal(cc->timer_ns, t + RTT);
		else
			assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	}
	assert_int_equal(view(cc).stats.entered[CC_LEVEL_SEVERE], 2);
	assert_int_equal(view(cc).stats.cuts_merged, 1);
	cc_destroy(cc);
}

/* The switch repeats the level before our ack reaches it: acknowledged again, nothing
 * else changes (rate, timer). */
static void test_repeat_changes_nothing(void **state)
{
	struct cc *cc = make(NULL);
	qp_rate_bps rate;
	qp_time_ns timer;
	(void)state;

	level(cc, CC_LEVEL_DOWN, 1000);
	rate = cc->rate_bps;
	timer = cc->timer_ns;
	for (qp_time_ns t = 2000; t < 1000 + RTT; t += 2000) {
		unsigned act = level(cc, CC_LEVEL_DOWN, t);

		assert_int_equal(act, CC_ACT_ACK_LEVEL);
		assert_int_equal(cc->level_to_ack, CC_LEVEL_DOWN);
		assert_int_equal(cc->rate_bps, rate);
		assert_int_equal(cc->timer_ns, timer);
	}
	assert_int_equal(view(cc).stats.repeats, 5); /* at 2, 4, 6, 8, 10 us */
	assert_int_equal(view(cc).stats.acks, 6);
	assert_int_equal(view(cc).stats.entered[CC_LEVEL_DOWN], 1);
	print_message("5 repeats of level 2: rate stays %llu, 6 acks\n", (unsigned long long)rate);
	cc_destroy(cc);
}

/* A decrease is the reaction to one notification: a persisting level 2 or 3 cuts once,
 * however long it lasts (the switch sends again only when the level changes). A level
 * flapping at a threshold cuts at most once per RTT, to the deepest level of that RTT.
 * Level 0's increase runs on per RTT, a timer k RTTs late applying it k times; level 1
 * holds. */
static void test_once_per_level_change(void **state)
{
	struct cc *cc = make("min_rate=1M");
	const qp_time_ns t0 = 5000;
	double want;
	(void)state;

	level(cc, CC_LEVEL_DOWN, t0);
	want = 75e9;
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	assert_int_equal(cc_timer(cc, t0 + 100 * RTT), 0);
	level(cc, CC_LEVEL_DOWN, t0 + 100 * RTT);          /* a repeat: nothing */
	assert_true(fabs(view(cc).rate_bps - want) < 1.0);
	print_message("level 2 for 100 RTTs: %.4g Gb/s (one cut)\n", view(cc).rate_bps / 1e9);

	/* 2 -> 1 -> 2 -> 1 -> 3 within one RTT: one cut to x0.5 in all. */
	level(cc, CC_LEVEL_HOLD, t0 + 101 * RTT);
	level(cc, CC_LEVEL_DOWN, t0 + 101 * RTT + 1000);   /* x0.75 */
	level(cc, CC_LEVEL_HOLD, t0 + 101 * RTT + 2000);
	level(cc, CC_LEVEL_DOWN, t0 + 101 * RTT + 3000);   /* merged */
	level(cc, CC_LEVEL_HOLD, t0 + 101 * RTT + 4000);
	level(cc, CC_LEVEL_SEVERE, t0 + 101 * RTT + 5000); /* x0.5 / 0.75 more */
	want *= 0.5;
	assert_true(fabs(view(cc).rate_bps - want) < 1.0);
	/* The next RTT: a new change cuts again. */
	level(cc, CC_LEVEL_HOLD, t0 + 102 * RTT + 1000);
	level(cc, CC_LEVEL_DOWN, t0 + 102 * RTT + 1001);
	want *= 0.75;
	assert_true(fabs(view(cc).rate_bps - want) < 1.0);

	/* Level 0 probes: + R_AI per RTT, 3 late periods at once. */
	level(cc, CC_LEVEL_FREE, t0 + 110 * RTT);
	want += 1e9;
	assert_int_equal(cc->timer_ns, t0 + 111 * RTT);
	assert_int_equal(cc_timer(cc, t0 + 111 * RTT - 1), 0); /* not before */
	cc_timer(cc, t0 + 113 * RTT + RTT / 2);
	want += 3e9;
	assert_true(fabs(view(cc).rate_bps - want) < 1.0);
	assert_int_equal(view(cc).stats.reapplied, 3);
	assert_int_equal(view(cc).stats.catch_ups, 1);

	/* Level 1 holds, however long. */
	level(cc, CC_LEVEL_HOLD, t0 + 113 * RTT + RTT / 2 + 1);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	assert_int_equal(cc_timer(cc, t0 + 1000 * RTT), 0);
	assert_true(fabs(view(cc).rate_bps - want) < 1.0);
	cc_destroy(cc);
}

/* Level 0 stops at the line rate, levels 2/3 at min_rate; the timer stops with them. */
static void test_clamps(void **state)
{
	struct cc *cc = make("min_rate=60G");
	(void)state;

	level(cc, CC_LEVEL_FREE, 0); /* at line already: nothing to probe */
	assert_int_equal(cc->rate_bps, path.line_bps);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);

	level(cc, CC_LEVEL_SEVERE, 1); /* 50G, floored at 60G */
	assert_int_equal(cc->rate_bps, 60 * QP_GBPS);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);

	level(cc, CC_LEVEL_FREE, 2 + 100 * RTT); /* 61G, then +1G per RTT to 100G */
	assert_int_equal(cc->rate_bps, 61 * QP_GBPS);
	cc_timer(cc, 2 + 1000 * RTT);
	assert_int_equal(cc->rate_bps, path.line_bps);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	assert_int_equal(view(cc).stats.reapplied, 900); /* periods covered */
	cc_destroy(cc);
}

/* The reactions act on a window: bytes in flight are capped at W = R * T + MTU - 1 as the
 * rate moves, so a held level after a cut cannot keep growing the queue. */
static void test_window_follows_rate(void **state)
{
	struct cc *cc = make(NULL);
	(void)state;

	assert_int_equal(cc->cap_bytes, 125000 + 999); /* 100G x 10 us */
	level(cc, CC_LEVEL_SEVERE, 1000);
	assert_int_equal(cc->cap_bytes, 62500 + 999);
	level(cc, CC_LEVEL_DOWN, 1000 + 2 * RTT);
	assert_int_equal(cc->cap_bytes, cc_rate_window(cc->rate_bps, RTT) + 999);
	assert_int_equal(cc->cap_bytes, 46875 + 999);
	cc_destroy(cc);
}

static void test_invalid_level_rejected(void **state)
{
	struct cc *cc = make(NULL);
	(void)state;

	assert_int_equal(level(cc, CC_LEVEL_ACK, 1), 0);
	assert_int_equal(level(cc, 4, 2), 0);
	assert_int_equal(cc->stats.rejected[CC_EV_LEVEL], 2);
	assert_int_equal(cc->rate_bps, path.line_bps);
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
		{ "rate_ai=200G", "rate_ai" },
		{ "min_rate=101G", "min_rate" },
		{ "min_rate=lots", "min_rate" },
	};
	(void)state;

	cc_expect_bad_params(&cc_ffd_ops, &path, bad, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(cc_ffd_view(NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_level_action),
		cmocka_unit_test(test_repeat_changes_nothing),
		cmocka_unit_test(test_once_per_level_change),
		cmocka_unit_test(test_clamps),
		cmocka_unit_test(test_window_follows_rate),
		cmocka_unit_test(test_invalid_level_rejected),
		cmocka_unit_test(test_bad_params_named),
	};
	return cmocka_run_group_tests_name("ffd", tests, NULL, NULL);
}
