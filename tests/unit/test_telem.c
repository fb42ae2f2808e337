/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Telemetry decisions: early notices above the threshold and once per interval, levels
 * through 0..3 with repeats until acknowledged, INT sampling. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../switchsim/red.h"
#include "../../switchsim/telem.h"

#define US QP_NS_PER_US

static struct sw_flow fresh(void)
{
	struct sw_flow f = { .used = true, .level_acked = true, .notice_ns = QP_TIME_NEVER,
			     .int_ns = QP_TIME_NEVER };
	return f;
}

static const struct sw_telem_params tp = {
	.early_bytes = 10000, .notice_interval_ns = 10 * US,
	.level_bytes = { 10000, 20000, 30000 }, .level_repeat_ns = 20 * US, .level_weight = 1,
	.int_mode = SW_INT_DIRECT, .int_every = 1,
};

static void test_notice(void **state)
{
	struct sw_telem_params p = tp;
	struct sw_flow f = fresh();
	(void)state;

	p.level_bytes[2] = 0;
	assert_int_equal(sw_telem_enqueue(&p, &f, 9999, 9999, 1, 0), 0);
	assert_int_equal(sw_telem_enqueue(&p, &f, 10000, 10000, 1, 1 * US), SW_T_NOTICE);
	assert_int_equal(sw_telem_enqueue(&p, &f, 50000, 50000, 1, 5 * US), 0);   /* within interval */
	assert_int_equal(sw_telem_enqueue(&p, &f, 50000, 50000, 1, 11 * US), SW_T_NOTICE);
	assert_int_equal(sw_telem_enqueue(&p, &f, 5000, 5000, 1, 30 * US), 0);   /* below */
	p.early_bytes = 0;
	assert_int_equal(sw_telem_enqueue(&p, &f, 1 << 20, 1 << 20, 1, 100 * US), 0);
}

/* A flow that has had a notice gets another when the active-flow count falls below the
 * one it was told (flows left), whatever the queue; not when it stays or rises, not
 * within the interval, and not without a count (0). */
static void test_notice_on_falling_count(void **state)
{
	struct sw_telem_params p = tp;
	struct sw_flow f = fresh(), g = fresh();
	(void)state;

	p.level_bytes[2] = 0;
	assert_int_equal(sw_telem_enqueue(&p, &g, 100, 100, 2, 0), 0);   /* never noticed */
	assert_int_equal(sw_telem_enqueue(&p, &f, 20000, 20000, 16, 0), SW_T_NOTICE);
	assert_int_equal(f.notice_flows, 16);
	assert_int_equal(sw_telem_enqueue(&p, &f, 100, 100, 16, 20 * US), 0);  /* same */
	assert_int_equal(sw_telem_enqueue(&p, &f, 100, 100, 12, 25 * US), SW_T_NOTICE);
	assert_int_equal(f.notice_flows, 12);
	assert_int_equal(sw_telem_enqueue(&p, &f, 100, 100, 8, 30 * US), 0);   /* interval */
	assert_int_equal(sw_telem_enqueue(&p, &f, 100, 100, 8, 40 * US), SW_T_NOTICE);
	assert_int_equal(sw_telem_enqueue(&p, &f, 100, 100, 9, 60 * US), 0);   /* rose */
	assert_int_equal(sw_telem_enqueue(&p, &f, 100, 100, 0, 80 * US), 0);   /* no count */
	assert_int_equal(sw_telem_enqueue(&p, &g, 100, 100, 1, 90 * US), 0);
}

static void test_levels_and_ack(void **state)
{
	struct sw_telem_params p = tp;
	struct sw_flow f = fresh();
	qp_time_ns t = 0;
	(void)state;

	p.early_bytes = 0;
	assert_int_equal(sw_level_of(&p, 9999), 0);
	assert_int_equal(sw_level_of(&p, 10000), 1);
	assert_int_equal(sw_level_of(&p, 29999), 2);
	assert_int_equal(sw_level_of(&p, 30000), 3);

	assert_int_equal(sw_telem_enqueue(&p, &f, 5000, 5000, 1, t), 0);          /* still 0 */
	assert_int_equal(sw_telem_enqueue(&p, &f, 12000, 12000, 1, t += US), SW_T_LEVEL);
	assert_int_equal(f.level_sent, 1);
	assert_int_equal(sw_telem_enqueue(&p, &f, 13000, 13000, 1, t += US), 0);   /* repeat not due */
	assert_int_equal(sw_telem_enqueue(&p, &f, 13000, 13000, 1, t += 20 * US), SW_T_LEVEL);
	assert_true(sw_telem_level_ack(&f, 1));
	assert_int_equal(sw_telem_enqueue(&p, &f, 13000, 13000, 1, t += 50 * US), 0);  /* acked: quiet */
	assert_int_equal(sw_telem_enqueue(&p, &f, 25000, 25000, 1, t += US), SW_T_LEVEL);
	assert_int_equal(f.level_sent, 2);
	assert_false(sw_telem_level_ack(&f, 1));                          /* stale ack */
	assert_int_equal(sw_telem_enqueue(&p, &f, 25000, 25000, 1, t += 30 * US), SW_T_LEVEL);
	assert_true(sw_telem_level_ack(&f, 2));
	assert_int_equal(sw_telem_enqueue(&p, &f, 35000, 35000, 1, t += US), SW_T_LEVEL);
	assert_int_equal(f.level_sent, 3);
	assert_int_equal(sw_telem_enqueue(&p, &f, 0, 0, 1, t += US), SW_T_LEVEL);
	assert_int_equal(f.level_sent, 0);
	assert_int_equal(f.level_seq, 4);
}

static void test_int_sampling(void **state)
{
	struct sw_telem_params p = tp;
	struct sw_flow f = fresh();
	int reports = 0;
	(void)state;

	for (int i = 0; i < 100; i++)
		reports += sw_telem_int_due(&p, &f, (qp_time_ns)i * US);
	assert_int_equal(reports, 100);
	p.int_every = 4;
	reports = 0;
	for (int i = 0; i < 100; i++)
		reports += sw_telem_int_due(&p, &f, (qp_time_ns)i * US);
	assert_int_equal(reports, 25);
	p.int_every = 1;
	p.int_interval_ns = 10 * US;
	f = fresh();
	reports = 0;
	for (int i = 0; i < 100; i++)   /* a frame every microsecond for 100 us */
		reports += sw_telem_int_due(&p, &f, (qp_time_ns)i * US);
	assert_int_equal(reports, 10);
	assert_false(sw_telem_int_due(&p, NULL, 0));   /* sampled: untracked flows skipped */
	p.int_interval_ns = 0;
	assert_true(sw_telem_int_due(&p, NULL, 0));
	p.int_mode = SW_INT_OFF;
	assert_false(sw_telem_int_due(&p, &f, 1000 * US));
}

static void test_check(void **state)
{
	char err[200];
	struct sw_telem_params p = tp;
	(void)state;

	assert_int_equal(sw_telem_check(&p, err, sizeof(err)), 0);
	p.level_bytes[0] = 40000;
	assert_int_equal(sw_telem_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "MIN <= MID <= MAX"));
	p = tp;
	p.int_every = 0;
	assert_int_equal(sw_telem_check(&p, err, sizeof(err)), -EINVAL);
	p = tp;
	p.level_weight = 0;
	assert_int_equal(sw_telem_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "level-weight"));
}

/* FFD's levels from RED's average (w = 0.002, 1 KB frames back to back at 1 Gb/s): a
 * burst that takes the queue to 40 KB, above max, then drains, leaves the level at 0
 * (the instantaneous queue would have sent 3); a queue that stays at 40 KB raises the
 * average through 1 and 2 to 3, after the number of arrivals RED's filter takes:
 * avg_n = 40000 (1 - (1 - w)^n) >= 30000 at n = ln(0.25) / ln(0.998) = 693. */
static void test_levels_from_red_average(void **state)
{
	struct sw_telem_params p = tp;
	struct sw_flow f = fresh(), g = fresh();
	struct sw_red_avg a = { 0 }, inst = { 0 };
	qp_time_ns t = 0, tx = 8 * US;
	int n3 = 0, max_inst = 0;
	(void)state;

	p.early_bytes = 0;
	p.level_weight = 0.002;
	for (int i = 1; i <= 40; i++, t += 100) {   /* a burst: 40 frames in 4 us */
		uint64_t q = (uint64_t)i * 1000;
		uint64_t avg = sw_red_avg_update(&a, 0.002, q, t, t + (qp_time_ns)i * tx, tx);
		uint64_t now_q = sw_red_avg_update(&inst, 1, q, t, t + (qp_time_ns)i * tx, tx);
		sw_telem_enqueue(&p, &f, q, avg, 1, t);
		if (sw_level_of(&p, now_q) > max_inst)
			max_inst = sw_level_of(&p, now_q);
		sw_telem_level_ack(&f, f.level_sent);
	}
	assert_int_equal(max_inst, 3);
	assert_int_equal(f.level_sent, 0);
	print_message("burst to 40 KB: average %.0f B, level %d (instantaneous: 3)\n", a.avg,
		      f.level_sent);
	/* An arrival after the queue idled (from its last departure to 10 ms: m = idle /
	 * 8 us frame times): avg = 35000 (1 - w)^m, then the arrival's own term. */
	qp_time_ns idle = 10 * QP_NS_PER_MS - a.busy_until;
	double m = (double)idle / (double)tx, want = 35000 * pow(0.998, m) * 0.998 + 2;
	t = 10 * QP_NS_PER_MS;
	a.avg = 35000;
	sw_red_avg_update(&a, 0.002, 1000, t, t + tx, tx);
	print_message("idle %.2f ms (%.0f frame times): 35000 -> %.0f B\n", idle / 1e6, m, a.avg);
	assert_true(fabs(a.avg - want) < 1e-6 && a.avg < 3500);
	/* A standing queue of 40 KB: one arrival per departure. */
	a = (struct sw_red_avg){ 0 };
	for (int i = 1; i <= 2000 && !n3; i++) {
		t += tx;
		uint64_t avg = sw_red_avg_update(&a, 0.002, 40000, t, t + 5 * tx, tx);
		sw_telem_enqueue(&p, &g, 40000, avg, 1, t);
		sw_telem_level_ack(&g, g.level_sent);
		if (g.level_sent == 3)
			n3 = i;
	}
	print_message("standing 40 KB: level 3 after %d arrivals (expected 693 +- 1)\n", n3);
	assert_true(n3 >= 692 && n3 <= 694);
	assert_int_equal(g.level_seq, 3);   /* 0 -> 1 -> 2 -> 3: each level once */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notice),
		cmocka_unit_test(test_notice_on_falling_count),
		cmocka_unit_test(test_levels_and_ack),
		cmocka_unit_test(test_levels_from_red_average),
		cmocka_unit_test(test_int_sampling),
		cmocka_unit_test(test_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
