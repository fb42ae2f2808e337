/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* HPCC: the reference code's arithmetic on synthetic INT reports. Its closed loops, on the
 * real switch in virtual time, are test_loop_hpcc.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cc_algs.h"
#include "../../agent/cc/hpcc_core.h"
#include "int_feed.h"
#include "cc_assert.h"
#include "cc_expect.h"

#define LINE (100 * QP_GBPS)
#define T_NS (10 * QP_NS_PER_US)
#define BDP 125000u        /* LINE * T_NS / 8 */
#define STEP_NS 1000u      /* one report per us */
#define SEQ_STEP 12500u    /* LINE * STEP_NS / 8: the sender keeps sending at line rate */
#define AI (40 * QP_MBPS)  /* default rate_ai at 100G */
#define ETA 0.95
#define CAP(rate) (cc_rate_window((rate), T_NS) + 999) /* W = R*T, plus MTU - 1 (hpcc.c) */

static const struct cc_path path = { .line_bps = LINE, .base_rtt_ns = T_NS, .mtu_bytes = 1000 };

static struct cc *mk(const char *params)
{
	return cc_expect_create(&cc_hpcc_ops, &path, params);
}

static const struct hpcc_core *core_of(const struct cc *cc)
{
	return &((const struct hpcc_state *)(const void *)cc)->core;
}

/* The EWMA as the reference computes it, for expected values. */
static double ewma(double u_avg, double u, double dt, double t)
{
	if (dt > t)
		dt = t;
	return (u_avg * (t - dt) + u * dt) / t;
}

static void test_idle_path_keeps_line_rate(void **state)
{
	const qp_rate_bps fast = 400 * QP_GBPS;
	struct cc *cc = mk(NULL);
	struct int_feed f;
	(void)state;

	assert_int_equal(cc->rate_bps, LINE);
	assert_int_equal(cc->cap_bytes, CAP(LINE));
	int_feed_init(&f, cc, 1, &fast, BDP);
	/* Our 100G on a 400G link, nothing queued: u = 0.25 for 10 RTTs. */
	for (int k = 0; k < 110; k++) {
		int_feed_step_all(&f, STEP_NS, 0.25, 0, SEQ_STEP);
		assert_int_equal(cc->rate_bps, LINE);
		assert_int_equal(cc->cap_bytes, CAP(LINE));
	}
	assert_true(core_of(cc)->stats.full_updates >= 9);
	cc_destroy(cc);
}

/* Full utilization and one BDP queued: u = 1 + 1 = 2 on every report. Fast reactions
 * come from the unchanged Rc = line (no compounding); the full update one RTT later moves
 * Rc to R*eta/U + R_AI with U the EWMA at that moment. */
static void test_bdp_queue_one_rtt(void **state)
{
	const qp_rate_bps b = LINE;
	struct cc *cc = mk(NULL);
	struct int_feed f;
	double u = 1.0, rc = (double)LINE;
	(void)state;

	int_feed_init(&f, cc, 1, &b, BDP);
	assert_int_equal(int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP), 0); /* baseline */
	assert_int_equal(cc->rate_bps, LINE);
	for (int k = 1; k <= 22; k++) {
		bool full = (uint64_t)k * SEQ_STEP + SEQ_STEP > core_of(cc)->last_update_seq;
		int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
		u = ewma(u, 2.0, STEP_NS, T_NS);
		cc_assert_rate_near(cc->rate_bps, rc * ETA / u + (double)AI, 1e-6);
		if (full) {
			rc = (double)cc->rate_bps;
			if (k == 11)
				print_message("after one RTT: U=%.3f rate %.2f Gb/s (R*eta/U + R_AI = %.2f)\n",
					      u, (double)cc->rate_bps / 1e9,
					      ((double)LINE * ETA / u + (double)AI) / 1e9);
		}
		assert_true(fabs(core_of(cc)->rc_bps - rc) < 1.0);
	}
	assert_int_equal(core_of(cc)->stats.full_updates, 2);
	assert_int_equal(core_of(cc)->stats.fast_reactions, 20);
	/* One RTT of a 2x overload roughly halves the rate: 100G * 0.95 / 1.69 = 56 G. */
	assert_true(cc->rate_bps < 40 * QP_GBPS && cc->rate_bps > 25 * QP_GBPS);
	assert_int_equal(cc->cap_bytes, CAP(cc->rate_bps));
	cc_destroy(cc);
}

/* Three hops, the middle one the most congested; the result equals a one-hop path that
 * has only that hop, wherever it sits in the path. */
static void test_most_congested_hop_rules(void **state)
{
	const qp_rate_bps rates[3] = { 100 * QP_GBPS, 40 * QP_GBPS, 400 * QP_GBPS };
	const double util[3] = { 0.5, 1.0, 0.3 };
	const uint32_t qlen[3] = { 0, 50000, 200000 }; /* u = 0.5, 2.0, 0.7 */
	const unsigned order[3][3] = { { 0, 1, 2 }, { 1, 2, 0 }, { 2, 0, 1 } };
	struct cc *one = mk(NULL);
	struct int_feed f1;
	(void)state;

	int_feed_init(&f1, one, 1, &rates[1], BDP);
	for (int k = 0; k < 30; k++)
		int_feed_step(&f1, STEP_NS, &util[1], &qlen[1], SEQ_STEP);
	for (unsigned o = 0; o < 3; o++) {
		qp_rate_bps r[3];
		double u[3];
		uint32_t q[3];
		struct cc *three = mk(NULL);
		struct int_feed f3;

		for (unsigned i = 0; i < 3; i++) {
			r[i] = rates[order[o][i]];
			u[i] = util[order[o][i]];
			q[i] = qlen[order[o][i]];
		}
		int_feed_init(&f3, three, 3, r, BDP);
		for (int k = 0; k < 30; k++)
			int_feed_step(&f3, STEP_NS, u, q, SEQ_STEP);
		assert_int_equal(three->rate_bps, one->rate_bps);
		assert_true(fabs(core_of(three)->u - core_of(one)->u) < 1e-12);
		cc_destroy(three);
	}
	assert_true(one->rate_bps < LINE / 2);
	cc_destroy(one);
}

/* Cut the rate with one congested RTT, then show u = 0.5 for one RTT: maxStage 0 always
 * takes the multiplicative branch (Rc*eta/U + R_AI, an increase here), maxStage 5 the
 * additive one (Rc + R_AI). */
static void test_max_stage_zero_and_five(void **state)
{
	const qp_rate_bps b = LINE;
	const char *params[2] = { "max_stage=0", "max_stage=5" };
	(void)state;

	for (int m = 0; m < 2; m++) {
		struct cc *cc = mk(params[m]);
		struct int_feed f;
		double u = 1.0, rc;

		int_feed_init(&f, cc, 1, &b, BDP);
		int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
		for (int k = 1; k <= 11; k++) {
			int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
			u = ewma(u, 2.0, STEP_NS, T_NS);
		}
		rc = core_of(cc)->rc_bps;
		cc_assert_rate_near(cc->rate_bps, (double)LINE * ETA / u + (double)AI, 1e-6);
		/* Next full update: 11 reports later (seq passes the snd_nxt of the last one). */
		for (int k = 1; k <= 11; k++) {
			int_feed_step_all(&f, STEP_NS, 0.5, 0, SEQ_STEP);
			u = ewma(u, 0.5, STEP_NS, T_NS);
		}
		assert_int_equal(core_of(cc)->stats.full_updates, 2);
		assert_true(u < ETA); /* so the branch is the stage's choice */
		if (m == 0) {
			cc_assert_rate_near(cc->rate_bps, rc * ETA / u + (double)AI, 1e-6);
			assert_true((double)cc->rate_bps > rc * 1.04);
		} else {
			cc_assert_rate_near(cc->rate_bps, rc + (double)AI, 1e-9);
			assert_int_equal(core_of(cc)->inc_stage, 1);
		}
		cc_destroy(cc);
	}
}

/* After maxStage additive steps the next update is multiplicative. */
static void test_stage_counts_to_max(void **state)
{
	const qp_rate_bps b = LINE;
	struct cc *cc = mk("max_stage=2");
	struct int_feed f;
	(void)state;

	int_feed_init(&f, cc, 1, &b, BDP);
	for (int k = 0; k < 12; k++) /* baseline + one RTT at u = 5: Rc near line/4 */
		int_feed_step_all(&f, STEP_NS, 1.0, 4 * BDP, SEQ_STEP);
	for (int k = 0; k < 40; k++) /* a long quiet spell: U settles near 0.3 */
		int_feed_step_all(&f, STEP_NS, 0.3, 0, 0);
	for (unsigned want = 1; want <= 3; want++) {
		double rc = core_of(cc)->rc_bps;
		for (int k = 0; k < 11; k++)
			int_feed_step_all(&f, STEP_NS, 0.3, 0, SEQ_STEP);
		if (want <= 2) {
			assert_int_equal(core_of(cc)->inc_stage, want);
			assert_true(fabs(core_of(cc)->rc_bps - (rc + (double)AI)) < 1.0);
		} else {
			assert_int_equal(core_of(cc)->inc_stage, 0);
			assert_true(core_of(cc)->rc_bps > rc * 2); /* eta / 0.3 ~ 3x */
		}
	}
	cc_destroy(cc);
}

/* Defaults: min_rate = line/1000 is the floor under overload; rate_ai = line/2500. */
static void test_default_floor_and_ai(void **state)
{
	const qp_rate_bps b = LINE;
	struct cc *cc = mk(NULL);
	struct int_feed f;
	uint64_t full;
	double rc;
	(void)state;

	int_feed_init(&f, cc, 1, &b, BDP);
	for (int k = 0; k < 60; k++)
		int_feed_step_all(&f, STEP_NS, 1.0, 10 * 1000 * 1000, SEQ_STEP);
	assert_int_equal(cc->rate_bps, 100 * QP_MBPS);
	assert_int_equal(cc->cap_bytes, 125 + 999); /* R*T = 125 B: one packet may go */
	/* Quiet again, a long time between reports (dt capped at T): U drops to 0.2. */
	int_feed_step_all(&f, 5 * T_NS, 0.2, 0, 0);
	rc = core_of(cc)->rc_bps;
	full = core_of(cc)->stats.full_updates;
	for (int k = 0; k < 20; k++)
		int_feed_step_all(&f, STEP_NS, 0.2, 0, SEQ_STEP);
	full = core_of(cc)->stats.full_updates - full;
	assert_int_equal(full, 2); /* two additive stages of exactly R_AI */
	assert_true(fabs(core_of(cc)->rc_bps - (rc + (double)(full * AI))) < 1.0);
	cc_destroy(cc);
}

/* Two records with the same switch time: no sample, no division by zero, the hop's
 * previous record kept so its bytes count in the next interval. */
static void test_zero_tau(void **state)
{
	const qp_rate_bps b = LINE;
	struct cc *cc = mk(NULL), *ref = mk(NULL);
	struct int_feed f, g;
	qp_rate_bps before;
	(void)state;

	int_feed_init(&f, cc, 1, &b, BDP);
	int_feed_init(&g, ref, 1, &b, BDP);
	for (int k = 0; k < 5; k++) {
		int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
		int_feed_step_all(&g, STEP_NS, 1.0, BDP, SEQ_STEP);
	}
	before = cc->rate_bps;
	f.hops[0].tx_bytes += 500; /* sent in no time: a counter tick without a clock tick */
	assert_int_equal(int_feed_step_all(&f, 0, 0.0, BDP, 0), 0);
	assert_int_equal(cc->rate_bps, before);
	assert_int_equal(core_of(cc)->stats.zero_tau_hops, 1);
	assert_int_equal(core_of(cc)->stats.no_sample, 1);
	/* Next report: 1 us later, measured against the kept record (500 B more than ref's). */
	int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
	int_feed_step_all(&g, STEP_NS, 1.0, BDP, SEQ_STEP);
	assert_true(core_of(cc)->u > core_of(ref)->u);
	assert_true(cc->rate_bps < ref->rate_bps);
	cc_destroy(cc);
	cc_destroy(ref);
}

/* A different switch, hop count, or counters going back: a new baseline, no rate change. */
static void test_path_change_rebaselines(void **state)
{
	const qp_rate_bps b[2] = { LINE, LINE };
	struct cc *cc = mk(NULL);
	struct int_feed f;
	qp_rate_bps before;
	(void)state;

	int_feed_init(&f, cc, 2, b, BDP);
	for (int k = 0; k < 5; k++)
		int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
	assert_int_equal(core_of(cc)->stats.baselines, 1);
	before = cc->rate_bps;
	assert_true(before < LINE);

	f.hops[1].switch_id = 77;
	int_feed_step_all(&f, STEP_NS, 3.0, BDP, SEQ_STEP);
	assert_int_equal(cc->rate_bps, before);
	f.nhops = 1;
	int_feed_step_all(&f, STEP_NS, 3.0, BDP, SEQ_STEP);
	assert_int_equal(cc->rate_bps, before);
	f.hops[0].tx_bytes -= 100000; /* a restarted switch */
	int_feed_step_all(&f, STEP_NS, 0.0, BDP, SEQ_STEP);
	assert_int_equal(cc->rate_bps, before);
	assert_int_equal(core_of(cc)->stats.baselines, 4);
	int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP); /* comparable again */
	assert_true(cc->rate_bps < before);
	cc_destroy(cc);
}

/* fast_react=0: reports inside the RTT are ignored; the rate moves once per RTT. */
static void test_no_fast_react(void **state)
{
	const qp_rate_bps b = LINE;
	struct cc *cc = mk("fast_react=0");
	struct int_feed f;
	qp_rate_bps last = LINE;
	unsigned changes = 0;
	(void)state;

	int_feed_init(&f, cc, 1, &b, BDP);
	for (int k = 0; k < 34; k++) {
		int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
		if (cc->rate_bps != last)
			changes++;
		last = cc->rate_bps;
	}
	assert_int_equal(changes, 3);
	assert_int_equal(core_of(cc)->stats.full_updates, 3);
	assert_int_equal(core_of(cc)->stats.fast_reactions, 0);
	assert_int_equal(core_of(cc)->stats.skipped, 30);
	cc_destroy(cc);
}

static void test_window_param(void **state)
{
	const qp_rate_bps b = LINE;
	struct cc *cc = mk("window=0");
	struct int_feed f;
	(void)state;

	assert_int_equal(cc->cap_bytes, CC_CAP_NONE);
	int_feed_init(&f, cc, 1, &b, BDP);
	for (int k = 0; k < 12; k++)
		int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
	assert_true(cc->rate_bps < LINE);
	assert_int_equal(cc->cap_bytes, CC_CAP_NONE);
	cc_destroy(cc);
}

/* init_rate: R and Rc start there, and the first full update moves on from it, not from the
 * line rate; below min_rate it is refused (test_bad_params), not raised unsaid. */
static void test_init_rate(void **state)
{
	const qp_rate_bps b = LINE;
	struct cc *cc = mk("init_rate=10G");
	struct cc *low = mk("init_rate=20G,min_rate=20G");
	struct int_feed f;
	(void)state;

	assert_int_equal(cc->rate_bps, 10 * QP_GBPS);
	assert_int_equal(cc->cap_bytes, CAP(10 * QP_GBPS));
	assert_true(core_of(cc)->rc_bps == (double)(10 * QP_GBPS));
	assert_int_equal(low->rate_bps, 20 * QP_GBPS);
	int_feed_init(&f, cc, 1, &b, BDP);
	for (int k = 0; k < 12; k++)
		int_feed_step_all(&f, STEP_NS, 0.5, 0, SEQ_STEP);
	assert_int_equal(core_of(cc)->stats.full_updates, 1);
	cc_assert_rate_near(cc->rate_bps, (double)(10 * QP_GBPS) + (double)AI, 1e-9);
	cc_destroy(low);
	cc_destroy(cc);
}

static void test_bad_params(void **state)
{
	static const struct cc_expect_bad bad[] = {
		{ "min_rate=200G", "min_rate" }, { "rate_ai=101G", "rate_ai" },
		{ "eta=0", "eta" },              { "eta=1.5", "eta" },
		{ "max_stage=1001", "max_stage" }, { "fast_react=2", "fast_react" },
		{ "window=-1", "window" },       { "gain=1", "gain" },
		{ "init_rate=101G", "init_rate" },
		{ "init_rate=10G,min_rate=20G", "init_rate=10G is below min_rate 20G" },
		{ "init_rate=10M", "below min_rate 100M (the default" },   /* line / 1000 */
	};
	char help[2048];
	(void)state;

	cc_expect_bad_params(&cc_hpcc_ops, &path, bad, sizeof(bad) / sizeof(bad[0]));
	assert_ptr_equal(cc_find("hpcc"), &cc_hpcc_ops);
	assert_int_equal(cc_params_help(&cc_hpcc_ops, help, sizeof(help)), 0);
	assert_non_null(strstr(help, "max_stage"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_path_keeps_line_rate),
		cmocka_unit_test(test_bdp_queue_one_rtt),
		cmocka_unit_test(test_most_congested_hop_rules),
		cmocka_unit_test(test_max_stage_zero_and_five),
		cmocka_unit_test(test_stage_counts_to_max),
		cmocka_unit_test(test_default_floor_and_ai),
		cmocka_unit_test(test_zero_tau),
		cmocka_unit_test(test_path_change_rebaselines),
		cmocka_unit_test(test_no_fast_react),
		cmocka_unit_test(test_window_param),
		cmocka_unit_test(test_init_rate),
		cmocka_unit_test(test_bad_params),
	};
	return cmocka_run_group_tests_name("hpcc", tests, NULL, NULL);
}
