/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ACC: the notice cut and the ramp-up jump on synthetic input. ACC against HPCC in the same
 * closed loops, on the real switch in virtual time, is test_loop_acc.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cc_algs.h"
#include "hpcc_core.h"
#include "int_feed.h"
#include "cc_assert.h"
#include "cc_expect.h"

#define LINE (100 * QP_GBPS)
#define T_NS (10 * QP_NS_PER_US)
#define BDP 125000u
#define STEP_NS 1000u
#define SEQ_STEP 12500u
#define AI (40 * QP_MBPS)
#define ETA 0.95
#define CAP(rate) (cc_rate_window((rate), T_NS) + 999)

static const struct cc_path path = { .line_bps = LINE, .base_rtt_ns = T_NS, .mtu_bytes = 1000 };
static const qp_rate_bps link_b = LINE;

static struct cc *mk(const char *params)
{
	return cc_expect_create(&cc_acc_ops, &path, params);
}

static unsigned notice(struct cc *cc, uint32_t queue_bytes, uint16_t flows, qp_time_ns now)
{
	struct cc_event ev = { .type = CC_EV_NOTICE };

	ev.u.notice.switch_id = 1;
	ev.u.notice.queue_bytes = queue_bytes;
	ev.u.notice.link_bps = LINE;
	ev.u.notice.flows = flows;
	ev.u.notice.reflected_ts_ns = now;
	return cc_event(cc, &ev, now);
}

/* The queue that makes share = (eta*B - q*8/T)/1 equal @share_bps. */
static uint32_t queue_for_share(double share_bps)
{
	return (uint32_t)((ETA * (double)LINE - share_bps) * (double)T_NS / 8e9);
}

/* fair=0: share = (eta*B - q*8/T)/n; one cut per T; a notice above the rate changes
 * nothing; flows = 0 counts as 1; a queue beyond one RTT's drain gives min_rate. */
static void test_notice_cut(void **state)
{
	struct cc *cc = mk("fair=0");
	(void)state;

	/* q = 31250 B: 25 Gb/s to drain in T; (95 - 25) / 4 = 17.5 Gb/s. */
	assert_int_equal(notice(cc, 31250, 4, 1000), CC_ACT_RATE);
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	assert_int_equal(cc->cap_bytes, CAP(17500 * QP_MBPS));
	assert_int_equal(notice(cc, 100000, 4, 1000 + T_NS - 1), 0); /* within T: held */
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	assert_int_equal(notice(cc, 0, 4, 1000 + T_NS), 0);           /* 23.75G >= rate */
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	assert_int_equal(notice(cc, 0, 10, 1000 + T_NS), CC_ACT_RATE); /* 9.5G */
	assert_int_equal(cc->rate_bps, 9500 * QP_MBPS);
	assert_int_equal(notice(cc, 200000, 10, 1000 + 2 * T_NS), CC_ACT_RATE); /* < 0 */
	assert_int_equal(cc->rate_bps, 100 * QP_MBPS);
	cc_destroy(cc);

	cc = mk("fair=0"); /* flows = 0 is one flow: (95 - 25) / 1 */
	notice(cc, 31250, 0, 5);
	assert_int_equal(cc->rate_bps, 70 * QP_GBPS);
	cc_destroy(cc);
}

/* The default floor (fair=1): a notice cuts to no less than eta*B/n. At a queue beyond one
 * RTT's drain, the drain rule alone (fair=0) sends the flow to min_rate = line/1000; the
 * default gives each of 4 flows 23.75G, of 16 flows 5.94G. */
static void test_default_cut_not_min_rate(void **state)
{
	static const struct {
		const char *params;
		uint32_t q;
		uint16_t n;
		qp_rate_bps want;
	} cases[] = {
		{ NULL, 200000, 4, 23750 * QP_MBPS },
		{ NULL, 125000, 16, 5937500 * QP_KBPS },
		{ "fair=0", 200000, 4, 100 * QP_MBPS },
		{ "fair=0", 125000, 16, 100 * QP_MBPS },
		{ NULL, 31250, 4, 23750 * QP_MBPS },    /* drain 17.5G < F */
		{ NULL, 0, 8, 11875 * QP_MBPS },        /* drain = F */
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cc *cc = mk(cases[i].params);

		assert_int_equal(notice(cc, cases[i].q, cases[i].n, 0), CC_ACT_RATE);
		print_message("%-6s q %6u B, %2u flows: cut to %.4g Gb/s\n",
			      cases[i].params ? cases[i].params : "fair=1", cases[i].q, cases[i].n,
			      cc->rate_bps / 1e9);
		assert_int_equal(cc->rate_bps, cases[i].want);
		cc_destroy(cc);
	}
}

/* The cut moves the reference Rc too: the next fast reaction (on data sent after the cut)
 * works from it. */
static void test_cut_sets_reference(void **state)
{
	struct cc *cc = mk("fair=0");
	struct int_feed f;
	double u;
	(void)state;

	int_feed_init(&f, cc, 1, &link_b, BDP);
	int_feed_step_all(&f, STEP_NS, 0.5, 0, SEQ_STEP); /* baseline; snd_nxt seq + BDP */
	notice(cc, 31250, 4, f.now);                      /* 17.5G, cut_seq = that snd_nxt */
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	int_feed_step_all(&f, STEP_NS, 0.5, 0, BDP);      /* seq = cut_seq: fast reaction */
	u = (1.0 * (T_NS - STEP_NS) + 0.5 * STEP_NS) / T_NS;
	cc_assert_rate_near(cc->rate_bps, 17.5e9 * ETA / u + (double)AI, 1e-6);
	cc_destroy(cc);
}

/* Reports on data sent before the cut (seq < snd_nxt at the cut) never move the rate; the
 * first report on later data does. */
static void test_pre_cut_reports_ignored(void **state)
{
	struct cc *cc = mk("fair=0");
	struct int_feed f;
	(void)state;

	int_feed_init(&f, cc, 1, &link_b, BDP);
	for (int k = 0; k < 6; k++)
		int_feed_step_all(&f, STEP_NS, 0.5, 0, SEQ_STEP);
	notice(cc, 31250, 4, f.now); /* cut_seq = last snd_nxt = seq + BDP */
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	for (int k = 1; k < 10; k++) { /* seq < cut_seq: a 2x overload, ignored */
		assert_int_equal(int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP), 0);
		assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	}
	/* seq == cut_seq: data sent after the cut; the EWMA kept the overload. */
	int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
	assert_true(cc->rate_bps < 17500 * QP_MBPS);
	cc_destroy(cc);
}

/* The first RTT: the notice cuts before any INT report (the case it is for). The reports
 * that follow are on data sent at line rate before the cut (a 2x overload, one BDP
 * queued): the first sets cut_seq = snd_nxt - (what 23.75G sent since the cut) - MTU,
 * and none of the pre-cut ones moves the rate. Without the bound (cut_seq 0 until the
 * first report) the second report cut the flow again, to 13.7G. */
static void test_first_rtt_filter(void **state)
{
	struct cc *cc = mk(NULL);
	struct int_feed f;
	int moved_at = -1;
	(void)state;

	assert_int_equal(notice(cc, 200000, 4, 0), CC_ACT_RATE);
	assert_int_equal(cc->rate_bps, 23750 * QP_MBPS);
	int_feed_init(&f, cc, 1, &link_b, BDP);
	/* Pre-cut data: seq 12500 .. 125000 (snd_nxt at the cut = BDP). */
	for (int k = 1; k <= 10; k++) {
		int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
		if (moved_at < 0 && cc->rate_bps != 23750 * QP_MBPS)
			moved_at = k;
	}
	print_message("first RTT: notice cut to 23.75G; 10 reports on pre-cut data: rate %s\n",
		      moved_at < 0 ? "unchanged" : "moved");
	assert_int_equal(moved_at, -1);
	/* seq 137500 > the bound (137500 - 2969 - 1000): post-cut data moves it. */
	int_feed_step_all(&f, STEP_NS, 1.0, BDP, SEQ_STEP);
	assert_true(cc->rate_bps < 23750 * QP_MBPS);
	cc_destroy(cc);
}

/* The ramp-up: a later notice from the same switch with fewer flows raises the rate at
 * once to min(line, eta*B/n, R * n_last / n); not from another switch, not when the count
 * rises or stays; with fair=0 no higher than the drain share allows. */
static void test_ramp_on_falling_flow_count(void **state)
{
	struct cc *cc = mk(NULL);
	struct cc_event ev = { .type = CC_EV_NOTICE };
	(void)state;

	notice(cc, 0, 2, 0);                                 /* F = 47.5G: cut */
	assert_int_equal(cc->rate_bps, 47500 * QP_MBPS);
	assert_int_equal(notice(cc, 0, 2, 100), 0);          /* same count: nothing */
	assert_int_equal(notice(cc, 0, 1, 200), CC_ACT_RATE); /* within T of the cut, too */
	assert_int_equal(cc->rate_bps, 95 * QP_GBPS);
	assert_int_equal(cc->cap_bytes, CAP(95 * QP_GBPS));
	cc_destroy(cc);

	cc = mk(NULL);                                       /* 16 -> 15: 95/16 -> 95/15 */
	notice(cc, 0, 16, 0);
	assert_int_equal(cc->rate_bps, 5937500 * QP_KBPS);
	notice(cc, 0, 15, T_NS);
	cc_assert_rate_near(cc->rate_bps, 95e9 / 15, 1e-9);
	cc_destroy(cc);

	cc = mk(NULL);                                       /* another switch: no ramp */
	notice(cc, 0, 4, 0);
	ev.u.notice = (struct cc_notice){ .switch_id = 2, .link_bps = LINE, .flows = 1 };
	cc_event(cc, &ev, 100);
	assert_int_equal(cc->rate_bps, 23750 * QP_MBPS);
	cc_destroy(cc);

	cc = mk("fair=0");                                   /* drain share bounds the ramp */
	notice(cc, 0, 4, 0);                                 /* 23.75G */
	notice(cc, 100000, 2, 100);                          /* drain (95 - 80)/2 = 7.5G < R */
	assert_int_equal(cc->rate_bps, 23750 * QP_MBPS);
	notice(cc, 31250, 1, 200);                           /* drain 70G: ramp to 47.5G */
	assert_int_equal(cc->rate_bps, 47500 * QP_MBPS);
	cc_destroy(cc);
}

/* Idle capacity alone (no notice) is HPCC's to take: after the same cut to 10G, ACC and
 * HPCC (max_stage 0) fed the same reports of an idle bottleneck (u = 0.2) move exactly
 * alike; ACC adds no jump after the fact. */
static void test_no_reactive_jump(void **state)
{
	struct cc *acc = mk("fair=0,max_stage=0");
	struct cc *hpcc = cc_expect_create(&cc_hpcc_ops, &path, "max_stage=0");
	struct hpcc_state *hs = (struct hpcc_state *)(void *)hpcc;
	struct int_feed fa, fh;
	(void)state;

	int_feed_init(&fa, acc, 1, &link_b, BDP);
	int_feed_init(&fh, hpcc, 1, &link_b, BDP);
	int_feed_step_all(&fa, STEP_NS, 0.2, 0, SEQ_STEP); /* baselines */
	int_feed_step_all(&fh, STEP_NS, 0.2, 0, SEQ_STEP);
	notice(acc, queue_for_share(10e9), 1, fa.now);
	hpcc_core_set_reference(&hs->core, hpcc, 10e9);
	assert_int_equal(acc->rate_bps, hpcc->rate_bps);
	for (int k = 0; k < 30; k++) {
		int_feed_step_all(&fa, STEP_NS, 0.2, 0, BDP); /* every report after the cut */
		int_feed_step_all(&fh, STEP_NS, 0.2, 0, BDP);
		assert_int_equal(acc->rate_bps, hpcc->rate_bps);
	}
	print_message("after the cut to 10G, 30 reports at u = 0.2: acc %.4g Gb/s, hpcc %.4g Gb/s\n",
		      acc->rate_bps / 1e9, hpcc->rate_bps / 1e9);
	cc_destroy(acc);
	cc_destroy(hpcc);
}

static void test_bad_params(void **state)
{
	static const struct cc_expect_bad bad[] = {
		{ "u_floor=0.1", "u_floor" },    { "min_rate=200G", "min_rate" },
		{ "eta=0", "eta" },              { "fair=2", "fair" },
	};
	char help[2048];
	(void)state;

	cc_expect_bad_params(&cc_acc_ops, &path, bad, sizeof(bad) / sizeof(bad[0]));
	assert_ptr_equal(cc_find("acc"), &cc_acc_ops);
	assert_int_equal(cc_params_help(&cc_acc_ops, help, sizeof(help)), 0);
	assert_non_null(strstr(help, "fair"));
	assert_non_null(strstr(help, "max_stage"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notice_cut),
		cmocka_unit_test(test_default_cut_not_min_rate),
		cmocka_unit_test(test_cut_sets_reference),
		cmocka_unit_test(test_pre_cut_reports_ignored),
		cmocka_unit_test(test_first_rtt_filter),
		cmocka_unit_test(test_ramp_on_falling_flow_count),
		cmocka_unit_test(test_no_reactive_jump),
		cmocka_unit_test(test_bad_params),
	};
	return cmocka_run_group_tests_name("acc", tests, NULL, NULL);
}
