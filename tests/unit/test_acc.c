/* ACC: the notice cut and the ramp-up jump on synthetic input, then ACC against HPCC in
 * the same closed loops (16->1 incast peak queue; taking over a finished flow's share). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cc_algs.h"
#include "int_feed.h"
#include "cc_loop.h"
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

/* share = (eta*B - q*8/T)/n; one cut per T; a notice above the rate changes nothing;
 * flows = 0 counts as 1; a queue beyond one RTT's drain gives min_rate. */
static void test_notice_cut(void **state)
{
	struct cc *cc = mk(NULL);
	(void)state;

	/* q = 31250 B: 25 Gb/s to drain in T; (95 - 25) / 4 = 17.5 Gb/s. */
	assert_int_equal(notice(cc, 31250, 4, 1000), CC_ACT_RATE);
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	assert_int_equal(cc->cap_bytes, CAP(17500 * QP_MBPS));
	assert_int_equal(notice(cc, 100000, 16, 1000 + T_NS - 1), 0); /* within T: held */
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	assert_int_equal(notice(cc, 0, 1, 1000 + T_NS), 0);           /* 95G >= rate */
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	assert_int_equal(notice(cc, 0, 10, 1000 + T_NS), CC_ACT_RATE); /* 9.5G */
	assert_int_equal(cc->rate_bps, 9500 * QP_MBPS);
	assert_int_equal(notice(cc, 200000, 0, 1000 + 2 * T_NS), CC_ACT_RATE); /* < 0 */
	assert_int_equal(cc->rate_bps, 100 * QP_MBPS);
	cc_destroy(cc);

	cc = mk(NULL); /* flows = 0 is one flow: (95 - 25) / 1 */
	notice(cc, 31250, 0, 5);
	assert_int_equal(cc->rate_bps, 70 * QP_GBPS);
	cc_destroy(cc);
}

/* The cut moves the reference Rc too: the next fast reaction works from it. */
static void test_cut_sets_reference(void **state)
{
	struct cc *cc = mk(NULL);
	struct int_feed f;
	double u;
	(void)state;

	notice(cc, 31250, 4, 0); /* 17.5G, before any INT report */
	int_feed_init(&f, cc, 1, &link_b, BDP);
	int_feed_step_all(&f, STEP_NS, 0.5, 0, SEQ_STEP); /* baseline */
	assert_int_equal(cc->rate_bps, 17500 * QP_MBPS);
	int_feed_step_all(&f, STEP_NS, 0.5, 0, SEQ_STEP); /* fast reaction, U: 1 -> 0.95 */
	u = (1.0 * (T_NS - STEP_NS) + 0.5 * STEP_NS) / T_NS;
	cc_assert_rate_near(cc->rate_bps, 17.5e9 * ETA / u + (double)AI, 1e-6);
	cc_destroy(cc);
}

/* Reports on data sent before the cut (seq < snd_nxt at the cut) never move the rate; the
 * first report on later data does. */
static void test_pre_cut_reports_ignored(void **state)
{
	struct cc *cc = mk(NULL);
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

/* Cut to 10G, then a link with idle capacity (u = 0.2) for a whole period: one jump to
 * Rc*eta/u = 47.5G instead of HPCC's Rc + R_AI. The next period still carries data sent
 * before the jump (u = 0.2 again): no second jump on top. A period measured at 47.5G with
 * u = 0.475 asks for 95G. */
static void test_ramp_up_jump(void **state)
{
	struct cc *cc = mk(NULL);
	struct int_feed f;
	(void)state;

	notice(cc, queue_for_share(10e9), 1, 0);
	cc_assert_rate_near(cc->rate_bps, 10e9, 1e-6);
	int_feed_init(&f, cc, 1, &link_b, BDP);
	for (int k = 0; k < 12; k++) /* baseline, 10 fast reactions, full update */
		int_feed_step_all(&f, STEP_NS, 0.2, 0, SEQ_STEP);
	cc_assert_rate_near(cc->rate_bps, 10e9 * ETA / 0.2, 1e-6);
	for (int k = 0; k < 11; k++)
		int_feed_step_all(&f, STEP_NS, 0.2, 0, SEQ_STEP);
	cc_assert_rate_near(cc->rate_bps, 47.5e9 + (double)AI, 1e-6); /* HPCC's additive step */
	for (int k = 0; k < 11; k++)
		int_feed_step_all(&f, STEP_NS, 0.475, 0, SEQ_STEP);
	cc_assert_rate_near(cc->rate_bps, 95e9, 1e-3);
	cc_destroy(cc);
}

/* One report at or above eta in the period: no jump, HPCC's own update. */
static void test_no_jump_after_busy_report(void **state)
{
	struct cc *cc = mk(NULL);
	struct int_feed f;
	(void)state;

	notice(cc, queue_for_share(10e9), 1, 0);
	int_feed_init(&f, cc, 1, &link_b, BDP);
	for (int k = 0; k < 12; k++)
		int_feed_step_all(&f, STEP_NS, k == 5 ? ETA : 0.2, 0, SEQ_STEP);
	assert_true(cc->rate_bps < 11 * QP_GBPS);
	cc_destroy(cc);
}

/* u_floor bounds one jump to eta/u_floor times the reference. */
static void test_u_floor_bounds_jump(void **state)
{
	const char *params[2] = { NULL, "u_floor=0.5" };
	const double want[2] = { 10e9 * ETA / 0.1, 10e9 * ETA / 0.5 };
	(void)state;

	for (int i = 0; i < 2; i++) {
		struct cc *cc = mk(params[i]);
		struct int_feed f;

		notice(cc, queue_for_share(10e9), 1, 0);
		int_feed_init(&f, cc, 1, &link_b, BDP);
		for (int k = 0; k < 12; k++)
			int_feed_step_all(&f, STEP_NS, 0.01, 0, SEQ_STEP);
		cc_assert_rate_near(cc->rate_bps, want[i], 1e-6);
		cc_destroy(cc);
	}
}

/* fair=1: a notice cuts to no less than eta*B/n (here (95 - 200) / 4 < 0 would be
 * min_rate; the anchor gives 23.75G), and a ramp-up jump rises to no more than it. */
static void test_fair_anchor(void **state)
{
	struct cc *cc = mk("fair=1");
	struct int_feed f;
	(void)state;

	assert_int_equal(notice(cc, 200000, 4, 0), CC_ACT_RATE);
	assert_int_equal(cc->rate_bps, 23750 * QP_MBPS);
	cc_destroy(cc);

	cc = mk("fair=1");
	notice(cc, queue_for_share(10e9), 8, 0);           /* (95 - 85) / 8 < 95 / 8 */
	cc_assert_rate_near(cc->rate_bps, 95e9 / 8, 1e-6);
	int_feed_init(&f, cc, 1, &link_b, BDP);
	/* The bottleneck idle (u = 0.01): without the anchor one jump would be 0.95/0.1
	 * times the reference (112.8G, clamped to the line); with it no jump, only HPCC's
	 * additive steps (max_stage 5). */
	for (int k = 0; k < 12; k++)
		int_feed_step_all(&f, STEP_NS, 0.01, 0, SEQ_STEP);
	assert_true(cc->rate_bps <= 95e9 / 8 + 12.0 * (double)AI);
	cc_destroy(cc);

	cc = mk(NULL);                                    /* default: the drain rule alone */
	notice(cc, queue_for_share(10e9), 8, 0);
	cc_assert_rate_near(cc->rate_bps, 10e9 / 8, 1e-6);
	cc_destroy(cc);
}

static void test_bad_params(void **state)
{
	static const struct cc_expect_bad bad[] = {
		{ "u_floor=0", "u_floor" },     { "u_floor=1.5", "u_floor" },
		{ "min_rate=200G", "min_rate" }, { "eta=0", "eta" }, { "fair=2", "fair" },
	};
	char help[2048];
	(void)state;

	cc_expect_bad_params(&cc_acc_ops, &path, bad, sizeof(bad) / sizeof(bad[0]));
	assert_ptr_equal(cc_find("acc"), &cc_acc_ops);
	assert_int_equal(cc_params_help(&cc_acc_ops, help, sizeof(help)), 0);
	assert_non_null(strstr(help, "u_floor"));
	assert_non_null(strstr(help, "max_stage"));
}

/* ---- ACC against HPCC in the same closed loop ---- */

/* 16 senders start together at line rate into one 100G port whose switch sends notices
 * above 0.25 BDP. ACC's first cut comes half an RTT after the start instead of one RTT:
 * its peak queue must be well below HPCC's, and it must not buy that with an idle link. */
static void test_incast_peak_queue(void **state)
{
	const struct cc_ops *ops[2] = { &cc_hpcc_ops, &cc_acc_ops };
	struct cc_loop_result r[2];
	double total[2] = { 0, 0 };
	(void)state;

	for (int a = 0; a < 2; a++) {
		struct cc_loop_cfg c = cc_loop_defaults(16);
		c.ops = ops[a];
		c.early_threshold_bytes = 31250;
		c.duration_rtts = 100;
		c.measure_rtts = 50;
		cc_assert_loop(&c, &r[a]);
		for (unsigned i = 0; i < 16; i++)
			total[a] += r[a].rate_bps[i];
		print_message("16->1 incast, %-4s: peak queue %7llu B (%.2f BDP), standing queue "
			      "< 0.1 BDP from %.0f RTT, notices %llu, late total %.2f Gb/s\n",
			      ops[a]->name, (unsigned long long)r[a].max_queue_bytes,
			      (double)r[a].max_queue_bytes / r[a].bdp_bytes,
			      (double)r[a].drained_ns / (double)r[a].rtt_ns,
			      (unsigned long long)r[a].notices, total[a] / 1e9);
	}
	assert_true(r[1].max_queue_bytes < r[0].max_queue_bytes);
	assert_true((double)r[1].max_queue_bytes < 0.75 * (double)r[0].max_queue_bytes);
	assert_true(r[1].drained_ns < r[0].drained_ns);
	assert_int_equal(r[1].drops, 0);
	assert_true(r[1].late_mean_queue_bytes < r[1].bdp_bytes / 10);
	assert_true(total[1] > 0.93 * (double)LINE);
}

/* Two long flows share the link; flow 1 ends. Time from its completion until the survivor
 * paces at >= 90% of eta*B: ACC's jump against HPCC's additive stages (max_stage 5).
 * Two flow sizes, so the finish falls at different points of the stage cycle. */
static void test_takes_freed_share_faster(void **state)
{
	const uint64_t sizes[2] = { 3000000, 5000000 };
	const struct cc_ops *ops[2] = { &cc_hpcc_ops, &cc_acc_ops };
	(void)state;

	for (int s = 0; s < 2; s++) {
		struct cc_loop_result r[2];
		for (int a = 0; a < 2; a++) {
			struct cc_loop_cfg c = cc_loop_defaults(2);
			c.ops = ops[a];
			c.early_threshold_bytes = 31250;
			c.flow_bytes[1] = sizes[s];
			c.duration_rtts = 120;
			c.measure_rtts = 10;
			c.reach_flow = 0;
			c.reach_bps = 0.9 * ETA * (double)LINE;
			cc_assert_loop(&c, &r[a]);
			assert_true(r[a].first_finish_ns != QP_TIME_NEVER);
			assert_true(r[a].reach_ns != QP_TIME_NEVER);
		}
		print_message("flow of %llu B ends at %.1f RTT: survivor at 90%% of eta*B after "
			      "%.2f RTT (hpcc) vs %.2f RTT (acc)\n", (unsigned long long)sizes[s],
			      (double)r[1].first_finish_ns / (double)r[1].rtt_ns,
			      (double)r[0].reach_ns / (double)r[0].rtt_ns,
			      (double)r[1].reach_ns / (double)r[1].rtt_ns);
		assert_true(r[1].reach_ns < r[0].reach_ns);
		assert_true(r[1].reach_ns <= 3 * r[1].rtt_ns);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notice_cut),
		cmocka_unit_test(test_cut_sets_reference),
		cmocka_unit_test(test_pre_cut_reports_ignored),
		cmocka_unit_test(test_ramp_up_jump),
		cmocka_unit_test(test_no_jump_after_busy_report),
		cmocka_unit_test(test_u_floor_bounds_jump),
		cmocka_unit_test(test_fair_anchor),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_incast_peak_queue),
		cmocka_unit_test(test_takes_freed_share_faster),
	};
	return cmocka_run_group_tests_name("acc", tests, NULL, NULL);
}
