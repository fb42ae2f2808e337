/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* idcc: the control law on synthetic samples (exact proportions, selector, anti-windup,
 * timer, parameter errors), then the RTT loop alone on a small fluid WAN queue written
 * here (no RTT samples reach the cc in the agent yet). The INT loop's closed loops, on
 * the real switch in virtual time, are test_loop_idcc.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cc_algs.h"
#include "cc_expect.h"

#define LINE (100 * QP_GBPS)
#define T_NS (10 * QP_NS_PER_US)
#define DC_RTT_NS 12000    /* default dc_rtt: the queue loop's scale, not the flow's T */
#define BDP_BYTES 150000.0 /* LINE * dc_rtt / 8: a DC round trip of queue at the hop */
#define QT_BYTES 22500.0   /* default per-hop target: 0.15 of it */
#define Q_DELAY_NS(q) ((q) * 8e9 / (double)LINE) /* queueing delay of q bytes at a hop */

static const struct cc_path path = { .line_bps = LINE, .base_rtt_ns = T_NS, .mtu_bytes = 1000 };

/* Only the proportional term of one loop: the step is exactly R * (1 - kp * e). */
#define ONLY_KP_Q "ki_q=0,kd_q=0,kp_rtt=0,ki_rtt=0,kd_rtt=0,ai=1,init_rate=50G"
#define ONLY_KP_RTT "kp_q=0,ki_q=0,kd_q=0,ki_rtt=0,kd_rtt=0,ai=1,init_rate=50G"
#define ONLY_KP_BOTH "ki_q=0,kd_q=0,ki_rtt=0,kd_rtt=0,ai=1,init_rate=50G"

static struct cc *mk(const char *params)
{
	return cc_expect_create(&cc_idcc_ops, &path, params);
}

static unsigned feed_int(struct cc *cc, double qlen_bytes, qp_time_ns now)
{
	struct qp_int_hop hops[2] = {
		{ .switch_id = 1, .qlen_bytes = 0, .link_bps = LINE },
		{ .switch_id = 2, .qlen_bytes = (uint32_t)qlen_bytes, .link_bps = LINE },
	};
	struct cc_event ev = { .type = CC_EV_INT };

	ev.u.int_report.hops = hops;
	ev.u.int_report.nhops = 2;
	return cc_event(cc, &ev, now);
}

static unsigned feed_rtt(struct cc *cc, qp_time_ns rtt, qp_time_ns now)
{
	struct cc_event ev = { .type = CC_EV_RTT, .u.rtt.rtt_ns = rtt };
	return cc_event(cc, &ev, now);
}

/* Ten samples over one base RTT (queue and/or RTT; a negative value feeds none), ending
 * at @end_ns, the step deadline. Returns the rate ratio of that step. */
static double one_step(struct cc *cc, double qlen_bytes, double rtt_ns, qp_time_ns end_ns)
{
	double before = (double)cc->rate_bps;

	for (qp_time_ns t = end_ns - T_NS + T_NS / 10; t <= end_ns; t += T_NS / 10) {
		if (qlen_bytes >= 0)
			feed_int(cc, qlen_bytes, t);
		if (rtt_ns >= 0)
			feed_rtt(cc, (qp_time_ns)rtt_ns, t);
	}
	return (double)cc->rate_bps / before;
}

static void expect_ratio(const char *what, double got, double want)
{
	print_message("%-44s ratio %.5f, expected %.5f\n", what, got, want);
	assert_true(got > want - 1e-4 && got < want + 1e-4);
}

static void test_queue_loop_proportion(void **state)
{
	struct cc *cc;
	(void)state;

	/* e_q = (q - q_target) * 8 / (B * dc_rtt); step: R *= 1 - kp * e_q (kp 0.1). */
	cc = mk(ONLY_KP_Q);
	expect_ratio("queue q_t + 0.5 BDP (e=+0.5): decrease", one_step(cc, QT_BYTES + 0.5 * BDP_BYTES, -1, T_NS),
		     1 - 0.1 * 0.5);
	expect_ratio("queue q_t + 2 BDP (e=+2): decrease", one_step(cc, QT_BYTES + 2 * BDP_BYTES, -1, 2 * T_NS),
		     1 - 0.1 * 2);
	expect_ratio("queue empty (e=-0.15): increase", one_step(cc, 0, -1, 3 * T_NS), 1 + 0.1 * 0.15);
	expect_ratio("queue at target (e=0): hold", one_step(cc, QT_BYTES, -1, 4 * T_NS), 1);
	cc_destroy(cc);

	/* The most congested hop rules: the second hop (q_t + BDP) over the first (empty). */
	cc = mk(ONLY_KP_Q ",q_target=10000");
	expect_ratio("q_target=10000, hop 2 at 10000 + BDP", one_step(cc, 10000 + BDP_BYTES, -1, T_NS), 0.9);
	cc_destroy(cc);
}

static void test_rtt_loop_proportion(void **state)
{
	struct cc *cc = mk(ONLY_KP_RTT);
	(void)state;

	/* e_r = (rtt - 1.5 T) / T, scaled by T / rtt (the sample's own age). */
	expect_ratio("rtt 2.5 T (e=+1, delay 2.5 T): decrease", one_step(cc, -1, 2.5 * T_NS, T_NS),
		     1 - 0.1 * 1.0 / 2.5);
	expect_ratio("rtt 1.5 T (e=0): hold", one_step(cc, -1, 1.5 * T_NS, 2 * T_NS), 1);
	expect_ratio("rtt T (e=-0.5): increase", one_step(cc, -1, T_NS, 3 * T_NS), 1 + 0.1 * 0.5);
	cc_destroy(cc);

	cc = mk(ONLY_KP_RTT ",rtt_target=30us");
	expect_ratio("rtt_target 3 T, rtt 5 T (e=+2, delay 5 T)", one_step(cc, -1, 5.0 * T_NS, T_NS),
		     1 - 0.1 * 2 / 5);
	cc_destroy(cc);
}

static void test_more_congested_loop_rules(void **state)
{
	struct cc *cc = mk(ONLY_KP_BOTH);
	(void)state;

	/* The RTT loop sees the RTT minus the queueing INT accounts for: an RTT of 2.5 T plus
	 * the DC queue's delay is e_r = 1. y_q = 0.1 * 0.2 = 0.02; y_r = 0.1 * 1 / (rtt / T)
	 * = 0.034: the RTT loop rules. */
	expect_ratio("queue e=0.2 vs WAN part e=1 (y 0.02 vs 0.034)",
		     one_step(cc, QT_BYTES + 0.2 * BDP_BYTES,
			      2.5 * T_NS + Q_DELAY_NS(QT_BYTES + 0.2 * BDP_BYTES), T_NS),
		     1 - 0.1 / (2.5 + Q_DELAY_NS(QT_BYTES + 0.2 * BDP_BYTES) / T_NS));
	/* y_q = 0.2; the RTT (T) is all DC queue, its WAN part 0 (e_r = -1.5): the queue rules. */
	expect_ratio("queue e=2 vs rtt e=-0.5 (y 0.2 vs -0.05)",
		     one_step(cc, QT_BYTES + 2 * BDP_BYTES, T_NS, 2 * T_NS), 0.8);
	/* Both ask for more: the smaller increase wins (y -0.015 vs -0.05). */
	expect_ratio("queue empty vs rtt T (y -0.015 vs -0.05)", one_step(cc, 0, T_NS, 3 * T_NS),
		     1.015);
	cc_destroy(cc);

	/* A DC queue seen by both signals counts once, in the queue loop: with the queue loop
	 * off, an RTT of T plus exactly the INT-accounted delay is a WAN part of T (e_r =
	 * -0.5): an increase, 0.1 * 0.5 / (rtt / T). The raw RTT (3.58 T) would cut by 6%. */
	cc = mk(ONLY_KP_RTT);
	expect_ratio("RTT = T + INT-accounted delay: WAN part T",
		     one_step(cc, QT_BYTES + 2 * BDP_BYTES, T_NS + Q_DELAY_NS(QT_BYTES + 2 * BDP_BYTES),
			      T_NS),
		     1 + 0.1 * 0.5 / (1 + Q_DELAY_NS(QT_BYTES + 2 * BDP_BYTES) / T_NS));
	cc_destroy(cc);
}

/* The queue loop's target and error do not scale with the flow's own T: a WAN flow (T =
 * 100 ms on 10 Gb/s) facing a full 1 MB DC queue at a 10 Gb/s hop cuts by max_dec (50%)
 * each of its RTTs, like a DC flow would; before the fix (target 0.15 * line * T / 8 =
 * 18.75 MB) it raised its rate instead. */
static void test_queue_loop_independent_of_t(void **state)
{
	const qp_time_ns wan_t = 100 * QP_NS_PER_MS;
	struct cc_path wp = { .line_bps = 10 * QP_GBPS, .base_rtt_ns = wan_t, .mtu_bytes = 1000 };
	struct cc *wan = cc_expect_create(&cc_idcc_ops, &wp, "init_rate=5G");
	struct qp_int_hop hop = { .switch_id = 1, .qlen_bytes = 1000000, .link_bps = 10 * QP_GBPS };
	struct cc_event ev = { .type = CC_EV_INT };
	qp_time_ns t = 0;
	double r0 = (double)wan->rate_bps;
	(void)state;

	ev.u.int_report.hops = &hop;
	ev.u.int_report.nhops = 1;
	for (unsigned k = 1; k <= 10; k++) {
		for (unsigned i = 0; i < 100; i++)
			cc_event(wan, &ev, t += wan_t / 100);
		print_message("WAN flow, full 1 MB DC queue, after %u T: %.4g Gb/s\n", k,
			      wan->rate_bps / 1e9);
		/* Each RTT: at most (1 - max_dec) of the last, plus ai (10 Mb/s). */
		assert_true((double)wan->rate_bps <= r0 * 0.5 + 10e6 + 1);
		r0 = (double)wan->rate_bps;
	}
	/* R = R/2 + ai: 20M + (5G - 20M) / 2^10 after 10 T */
	assert_true(wan->rate_bps <= 25 * QP_MBPS);
	cc_destroy(wan);
}

/* Defaults (I and D on): still the direction and roughly the size of kp * e. */
static void test_defaults_direction(void **state)
{
	struct cc *cc = mk("init_rate=50G");
	double r;
	(void)state;

	r = one_step(cc, QT_BYTES + 0.5 * BDP_BYTES, -1, T_NS);
	print_message("defaults, e=+0.5 for one T: ratio %.4f (kp alone: 0.95)\n", r);
	assert_true(r < 0.951 && r > 0.93);
	cc_destroy(cc);

	cc = mk("init_rate=50G");
	r = one_step(cc, 0, T_NS, T_NS);
	print_message("defaults, empty queue and rtt = T: ratio %.4f (kp alone: 1.015 + ai)\n", r);
	assert_true(r > 1.015 && r < 1.03);
	cc_destroy(cc);
}

/* Steps (of an empty queue, e = -0.15) until the rate rises by more than 0.1%; 0 = not
 * within 10. */
static unsigned steps_until_rise(struct cc *cc, qp_time_ns *t)
{
	for (unsigned k = 1; k <= 10; k++)
		if (one_step(cc, 0, -1, *t += T_NS) > 1.001)
			return k;
	return 0;
}

/* ki 1 per T on e = +0.5 would reach I = 0.5 n after n RTTs (and after 12 T need 40 T of
 * e = -0.15 to unwind); i_max bounds it at 0.25, so every step cuts exactly 25% and the
 * rate turns up within 3 steps of the error flipping. */
static void test_anti_windup_bounded(void **state)
{
	struct cc *cc = mk("kp_q=0,ki_q=1,kd_q=0,kp_rtt=0,ki_rtt=0,kd_rtt=0,i_band=1000,i_tau=0,ai=1");
	qp_time_ns t = 0;
	double r = 1;
	unsigned turn;
	(void)state;

	for (unsigned k = 0; k < 12; k++)
		r = one_step(cc, QT_BYTES + 0.5 * BDP_BYTES, -1, t += T_NS);
	print_message("ki=1, e=+0.5 for 12 T: last step ratio %.4f (unbounded I would give 0.5)\n", r);
	assert_true(r > 0.7499 && r < 0.7501);
	turn = steps_until_rise(cc, &t);
	print_message("after the error flips to -0.15 the rate rises at step %u\n", turn);
	assert_true(turn >= 1 && turn <= 3);
	cc_destroy(cc);

	/* Defaults: at min_rate the integral stops growing and the leak empties it, so a long
	 * overload costs no recovery time. */
	cc = mk("min_rate=1G,init_rate=2G");
	t = 0;
	for (unsigned k = 0; k < 500; k++)
		one_step(cc, QT_BYTES + 0.9 * BDP_BYTES, -1, t += T_NS);
	print_message("defaults: 500 T of e=+0.9 at min_rate 1G: rate %.3f Gb/s\n", cc->rate_bps / 1e9);
	assert_true(cc->rate_bps < 1010 * QP_MBPS); /* min_rate, plus at most what ai adds */
	turn = steps_until_rise(cc, &t);
	print_message("then an empty queue: the rate rises at step %u\n", turn);
	assert_true(turn >= 1 && turn <= 2);
	cc_destroy(cc);
}

/* Steps run at most once per interval, by sample or by timer; no new sample = hold. */
static void test_interval_timer_and_hold(void **state)
{
	struct cc *cc = mk(ONLY_KP_Q);
	qp_rate_bps r;
	(void)state;

	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	feed_int(cc, QT_BYTES + BDP_BYTES, T_NS / 2);
	assert_int_equal(cc->timer_ns, T_NS);
	/* More samples before the deadline change nothing. */
	assert_int_equal(feed_int(cc, QT_BYTES + BDP_BYTES, T_NS - 1), 0);
	assert_int_equal(cc->rate_bps, 50 * QP_GBPS);
	assert_int_equal(cc_timer(cc, T_NS) & CC_ACT_RATE, CC_ACT_RATE);
	assert_int_equal(cc->rate_bps, 45 * QP_GBPS + 1);
	assert_int_equal(cc->timer_ns, 2 * T_NS);
	/* No sample since: the timer holds and disarms. */
	r = cc->rate_bps;
	assert_int_equal(cc_timer(cc, 2 * T_NS), 0);
	assert_int_equal(cc->rate_bps, r);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	/* The next sample is past the deadline: it steps at once. */
	assert_int_equal(feed_int(cc, QT_BYTES + BDP_BYTES, 2 * T_NS + 5) & CC_ACT_RATE, CC_ACT_RATE);
	assert_true(cc->rate_bps < r);
	cc_destroy(cc);

	/* interval=5us: two steps per T, each half as large. */
	cc = mk(ONLY_KP_Q ",interval=5us");
	feed_int(cc, QT_BYTES + BDP_BYTES, 1);
	cc_timer(cc, T_NS / 2);
	assert_int_equal(cc->rate_bps, 47500000001ULL);
	cc_destroy(cc);
}

/* A loop that has been silent for 4 intervals no longer rules. */
static void test_stale_loop_ignored(void **state)
{
	struct cc *cc = mk(ONLY_KP_BOTH);
	(void)state;

	one_step(cc, QT_BYTES + 2 * BDP_BYTES, 1.5 * T_NS, T_NS); /* queue rules: x0.8 */
	/* The queue loop falls silent; RTT at target says hold. */
	expect_ratio("queue silent 1 T: still rules", one_step(cc, -1, 1.5 * T_NS, 2 * T_NS), 0.8);
	for (qp_time_ns t = 3; t <= 5; t++)
		one_step(cc, -1, 1.5 * T_NS, t * T_NS);
	expect_ratio("queue silent 5 T: RTT loop alone (hold)", one_step(cc, -1, 1.5 * T_NS, 6 * T_NS), 1);
	cc_destroy(cc);
}

static void test_bad_params_named(void **state)
{
	static const struct cc_expect_bad bad[] = {
		{ "kp_q=-1", "kp_q" },
		{ "kd_rtt=101", "kd_rtt" },
		{ "q_frac=0", "q_frac" },
		{ "max_dec=1", "max_dec" },
		{ "d_tau=0", "d_tau" },
		{ "i_max=2", "i_max" },
		{ "rtt_target=5us", "rtt_target" },
		{ "min_rate=200G", "min_rate" },
		{ "ai=101G", "ai=" },
		{ "init_rate=10M", "init_rate" },
		{ "kp_q=0,ki_q=0,kd_q=0,kp_rtt=0,ki_rtt=0,kd_rtt=0", "kp_q" },
		{ "gain=1", "gain" },
	};
	char help[4096];
	(void)state;

	cc_expect_bad_params(&cc_idcc_ops, &path, bad, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(cc_params_help(&cc_idcc_ops, help, sizeof(help)), 0);
	for (const struct cc_param *p = cc_idcc_ops.params; p->name; p++)
		assert_non_null(strstr(help, p->name));
}

/* ---- closed loop: the RTT loop alone on a fluid WAN queue ---- */

struct window {
	double lo, hi, sum;
	unsigned n;
};

static void window_add(struct window *w, double v)
{
	if (w->n == 0 || v < w->lo)
		w->lo = v;
	if (w->n == 0 || v > w->hi)
		w->hi = v;
	w->sum += v;
	w->n++;
}

/* One sender at up to 100 Gb/s over a 10 Gb/s WAN bottleneck with T = 1 ms and no INT.
 * The sender's rate reaches the queue T/4 later; fluid entering the queue at t_e returns
 * as an RTT sample T + q(t_e)/C at t_e - T/4 + T + q(t_e)/C (FIFO: in order). Cross
 * traffic (unresponsive) takes 4 Gb/s from STEP_ON to STEP_OFF. */
#define WAN_C (10 * QP_GBPS)
#define WAN_T QP_NS_PER_MS
#define WAN_DT (WAN_T / 16)
#define WAN_FWD_TICKS 4 /* T/4 in ticks of T/16 */
#define WAN_RTTS 300
#define WAN_TICKS (WAN_RTTS * 16)

struct wan {
	double rate_hist[WAN_TICKS + 1]; /* sender rate by tick */
	double q_bytes;
	qp_time_ns ret_ns[WAN_TICKS + 1]; /* FIFO of RTT samples in flight */
	qp_time_ns ret_rtt[WAN_TICKS + 1];
	unsigned head, tail;
};

static struct wan wan; /* big: not on the stack */

/* @with_int: both loops on, and INT reports (every tick) show the DC hops empty: the RTT
 * step is the WAN's, so the RTT loop must drive the rate as it does alone. */
static void rtt_fluid_step(bool with_int)
{
	enum { STEP_ON = 100, STEP_OFF = 200, LAST = 20 };
	struct cc_path p = { .line_bps = LINE, .base_rtt_ns = WAN_T, .mtu_bytes = 1000 };
	struct cc *cc = cc_expect_create(&cc_idcc_ops, &p, with_int ? "init_rate=5G" :
						 "kp_q=0,ki_q=0,kd_q=0,init_rate=5G");
	double e_rtt[WAN_RTTS + 1] = { 0 };
	unsigned settle_on = 0, settle_off = 0;
	struct window before_off = { 0 }, end = { 0 }, first = { 0 };

	memset(&wan, 0, sizeof(wan));
	for (unsigned k = 0; k < WAN_TICKS; k++) {
		qp_time_ns now = (qp_time_ns)k * WAN_DT;
		unsigned rtts = k / 16;
		double cross = rtts >= STEP_ON && rtts < STEP_OFF ? 4e9 : 0;
		double in_bps = k >= WAN_FWD_TICKS ? wan.rate_hist[k - WAN_FWD_TICKS] : 0;

		/* Samples due by now, then the controller's timer. */
		while (wan.head < wan.tail && wan.ret_ns[wan.head] <= now) {
			feed_rtt(cc, wan.ret_rtt[wan.head], wan.ret_ns[wan.head]);
			wan.head++;
		}
		if (with_int)
			feed_int(cc, 0, now);
		if (cc->timer_ns <= now)
			cc_timer(cc, now);
		wan.rate_hist[k] = (double)cc->rate_bps;
		/* The queue over one tick; the fluid entering now returns as a sample. */
		wan.q_bytes += (in_bps + cross - (double)WAN_C) / 8e9 * (double)WAN_DT;
		if (wan.q_bytes < 0)
			wan.q_bytes = 0;
		if (in_bps > 0) {
			qp_time_ns qd = (qp_time_ns)(wan.q_bytes * 8e9 / (double)WAN_C);
			wan.ret_ns[wan.tail] = now - WAN_T / 4 + WAN_T + qd;
			wan.ret_rtt[wan.tail] = WAN_T + qd;
			wan.tail++;
		}
		if (k % 16 == 15)
			e_rtt[rtts] = wan.q_bytes * 8e9 / (double)WAN_C / (double)WAN_T + 1 - 1.5;
	}
	/* e_rtt = (rtt - rtt_target)/T seen by fluid entering at the end of each T. */
	for (unsigned r = STEP_ON; r < WAN_RTTS; r++) {
		bool ok = e_rtt[r] > -0.1 && e_rtt[r] < 0.1;
		if (r < STEP_OFF && !ok)
			settle_on = r - STEP_ON + 1;
		if (r >= STEP_OFF && !ok)
			settle_off = r - STEP_OFF + 1;
		if (r < STEP_ON + LAST)
			window_add(&first, e_rtt[r]);
		if (r >= STEP_OFF - LAST && r < STEP_OFF)
			window_add(&before_off, e_rtt[r]);
		if (r >= WAN_RTTS - LAST)
			window_add(&end, e_rtt[r]);
	}
	print_message("WAN, %s: before the step e_rtt %.3f; cross traffic on at %u T: "
		      "settled (|e_rtt| < 0.1) after %u T, first %u T %.3f..%.3f, last %u T before "
		      "off %.3f..%.3f; off at %u T: settled after %u T, last %u T %.3f..%.3f; "
		      "final rate %.2f Gb/s\n", with_int ? "both loops, INT shows empty DC hops" :
		      "RTT loop only", e_rtt[STEP_ON - 1], STEP_ON, settle_on, LAST, first.lo, first.hi, LAST,
		      before_off.lo, before_off.hi, STEP_OFF, settle_off, LAST, end.lo, end.hi,
		      cc->rate_bps / 1e9);
	assert_true(e_rtt[STEP_ON - 1] > -0.1 && e_rtt[STEP_ON - 1] < 0.1);
	assert_true(settle_on <= 80);
	assert_true(settle_off <= 60);
	/* No sustained oscillation: small swings at the end of each phase. */
	assert_true(before_off.hi - before_off.lo < 0.05);
	assert_true(end.hi - end.lo < 0.05);
	assert_true(before_off.hi - before_off.lo < (first.hi - first.lo) / 10);
	cc_destroy(cc);
}

static void test_rtt_loop_fluid_step(void **state)
{
	(void)state;
	rtt_fluid_step(false);
}

static void test_rtt_loop_fluid_step_with_int(void **state)
{
	(void)state;
	rtt_fluid_step(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_loop_proportion),
		cmocka_unit_test(test_rtt_loop_proportion),
		cmocka_unit_test(test_more_congested_loop_rules),
		cmocka_unit_test(test_queue_loop_independent_of_t),
		cmocka_unit_test(test_defaults_direction),
		cmocka_unit_test(test_anti_windup_bounded),
		cmocka_unit_test(test_interval_timer_and_hold),
		cmocka_unit_test(test_stale_loop_ignored),
		cmocka_unit_test(test_bad_params_named),
		cmocka_unit_test(test_rtt_loop_fluid_step),
		cmocka_unit_test(test_rtt_loop_fluid_step_with_int),
	};
	return cmocka_run_group_tests_name("idcc", tests, NULL, NULL);
}
