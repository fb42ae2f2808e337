/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* DCQCN reaction point: alpha, cuts, recovery stages, late timers, floor, parameters.
 * Every expected value is computed here from the rules (references.md §2), not read back
 * from the controller. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cc_algs.h"
#include "dcqcn.h"
#include "../support/cc_expect.h"

#define US QP_NS_PER_US
#define G_DEF (1.0 / 256)
#define YEAR_NS (365ULL * 86400 * QP_NS_PER_S)

static const struct cc_path path = {
	.line_bps = 100 * QP_GBPS, .base_rtt_ns = 10 * US, .mtu_bytes = 1000,
};

static struct cc *make(const char *params)
{
	return cc_expect_create(&cc_dcqcn_ops, &path, params);
}

static void cnp(struct cc *cc, qp_time_ns t)
{
	const struct cc_event ev = { .type = CC_EV_CNP };
	cc_event(cc, &ev, t);
}

static struct cc_dcqcn_view view(const struct cc *cc, qp_time_ns t)
{
	struct cc_dcqcn_view v;
	assert_int_equal(cc_dcqcn_view(cc, t, &v), 0);
	return v;
}

/* Run every deadline the controller announces, in order, up to @until. */
static unsigned step_until(struct cc *cc, qp_time_ns until)
{
	unsigned runs = 0;

	while (cc->timer_ns <= until) {
		cc_timer(cc, cc->timer_ns);
		runs++;
	}
	return runs;
}

static void assert_close(double got, double want, double rel, const char *what)
{
	double tol = rel * fmax(fabs(want), 1e-300);
	if (fabs(got - want) > tol) {
		print_message("%s: got %.17g want %.17g (tolerance %.3g)\n", what, got, want, tol);
		fail();
	}
}

static void test_no_cnp_no_timer(void **state)
{
	struct cc *cc = make(NULL);
	(void)state;

	assert_int_equal(cc->rate_bps, path.line_bps);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	assert_int_equal(cc_timer(cc, 10 * QP_NS_PER_S), 0);
	assert_false(view(cc, 10 * QP_NS_PER_S).started);
	cc_destroy(cc);
}

/* alpha after idle periods is (1-g)^m; after k periods with a CNP each it is
 * 1 - (1-g)^k (1 - alpha_0); after more idle periods it decays again. */
static void test_alpha_closed_form(void **state)
{
	struct cc *cc = make(NULL);
	const unsigned idle = 100, busy = 300, idle2 = 5000;
	double a0, ak;
	(void)state;

	cnp(cc, 0); /* first CNP: alpha = 1 */
	assert_close(view(cc, 0).alpha, 1.0, 1e-15, "alpha at first CNP");
	a0 = pow(1 - G_DEF, idle);
	assert_close(view(cc, idle * US + 500).alpha, a0, 1e-12, "alpha after idle periods");
	for (unsigned k = 1; k <= busy; k++) {
		double want = 1 - pow(1 - G_DEF, k) * (1 - a0);
		cnp(cc, (idle + k - 1) * US + 500); /* one CNP inside period k */
		assert_close(view(cc, (idle + k) * US + 500).alpha, want, 1e-12,
			     "alpha after CNP periods");
	}
	ak = 1 - pow(1 - G_DEF, busy) * (1 - a0);
	/* Idle again; read it once, 5000 periods later (one catch-up of 5000 periods). */
	assert_close(view(cc, (idle + busy + idle2) * US + 500).alpha,
		     ak * pow(1 - G_DEF, idle2), 1e-11, "alpha after idle again");
	print_message("alpha: %u idle %.6f (want %.6f), +%u CNP periods %.6f, +%u idle %.3e\n",
		      idle, a0, pow(1 - G_DEF, idle), busy, ak, idle2,
		      view(cc, (idle + busy + idle2) * US + 500).alpha);
	cc_destroy(cc);
}

/* Reference alpha at @t for CNPs at @c[0..n) (c[0] the first CNP): one step per period. */
static double ref_alpha(const qp_time_ns *c, unsigned n, qp_time_ns t)
{
	double a = 1.0;
	unsigned j = 1;

	for (qp_time_ns tick = c[0] + US; tick <= t; tick += US) {
		int flag = 0;
		while (j < n && c[j] < tick) { /* CNPs in [tick - T_alpha, tick) */
			flag = 1;
			j++;
		}
		a = (1 - G_DEF) * a + (flag ? G_DEF : 0);
	}
	return a;
}

/* Each cut is R(1 - alpha/2) with alpha as the rules give it at the check's time; one cut
 * per T_dec period that saw a CNP. A short increase timer interleaves recovery with the
 * cuts, and a low floor keeps the cuts visible. */
static void test_each_cut_exact(void **state)
{
	enum { N = 80 };
	struct cc *cc = make("t_inc=15us,min_rate=100M,clamp_target=1");
	qp_time_ns c[N];
	uint64_t lcg = 12345, cuts = 1, want_cuts = 1, incs = 0;
	qp_time_ns last_period = 0;
	(void)state;

	c[0] = 0;
	for (unsigned i = 1; i < N; i++) { /* gaps of 0.3..30 us, off every grid */
		lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
		c[i] = c[i - 1] + 300 + (lcg >> 33) % 29700;
	}
	for (unsigned i = 1; i < N; i++) { /* decrease periods [k T_dec, (k+1) T_dec) */
		qp_time_ns period = c[i] / (4 * US) + 1;
		if (period != last_period)
			want_cuts++;
		last_period = period;
	}
	cnp(cc, c[0]);
	assert_int_equal(cc->rate_bps, path.line_bps / 2);
	for (unsigned i = 1; i <= N; i++) {
		qp_time_ns until = i < N ? c[i] : c[N - 1] + 100 * US;
		while (cc->timer_ns <= until) {
			qp_time_ns td = cc->timer_ns;
			double before = (double)cc->rate_bps;
			double alpha = ref_alpha(c, i, td);
			double want = fmax(100e6, before * (1 - alpha / 2));

			cc_timer(cc, td);
			if (view(cc, td).stats.decreases == cuts) {
				incs++;
				continue;
			}
			cuts++;
			assert_int_equal(view(cc, td).stats.decreases, cuts);
			assert_close((double)cc->rate_bps, want, 1e-8, "cut");
			assert_close(view(cc, td).target_bps, before, 1e-8, "clamped target");
			if (cuts < 6)
				print_message("cut at %llu ns: %.0f -> %llu (alpha %.6f, want %.0f)\n",
					      (unsigned long long)td, before,
					      (unsigned long long)cc->rate_bps, alpha, want);
		}
		if (i < N)
			cnp(cc, c[i]);
	}
	print_message("cuts: %llu, want %llu; %llu increase runs in between\n",
		      (unsigned long long)cuts, (unsigned long long)want_cuts,
		      (unsigned long long)incs);
	assert_int_equal(cuts, want_cuts);
	assert_true(incs > 10);
	cc_destroy(cc);
}

/* After a cut: F periods of fast recovery (target fixed, gap halves), one additive period
 * (target + R_AI), then hyper (target + R_HAI, capped at line), R = (R + target)/2 every
 * T_inc; the timer stops at line rate. */
static void test_recovery_stages(void **state)
{
	const unsigned f = 3;
	const double ai = 1e9, hai = 5e9, line = (double)path.line_bps;
	struct cc *cc = make("f=3,rate_ai=1G,rate_hai=5G,clamp_target=1");
	struct cc_dcqcn_view v;
	double r, t;
	qp_time_ns next;
	unsigned ticks = 0;
	(void)state;

	cnp(cc, 0);
	cnp(cc, 2 * US); /* cut at 4 us: target 50G, R about 25G */
	step_until(cc, 4 * US);
	v = view(cc, 4 * US);
	assert_int_equal(v.stats.decreases, 2);
	assert_close(v.target_bps, 50e9, 1e-12, "target after second cut");
	r = v.rate_bps;
	t = v.target_bps;
	assert_int_equal(cc->timer_ns, 4 * US + 300 * US);
	for (next = cc->timer_ns; cc->timer_ns != QP_TIME_NEVER; next += 300 * US) {
		unsigned stage = ticks;
		double gap = t - r;

		assert_int_equal(cc->timer_ns, next);
		if (stage >= f) /* fast recovery keeps the target */
			t = fmin(line, t + (stage == f ? ai : hai));
		r = (r + t) / 2;
		cc_timer(cc, next);
		ticks++;
		v = view(cc, next);
		if (ticks <= 6)
			print_message("tick %u stage %u: R %.4g target %.4g\n", ticks, stage,
				      v.rate_bps, v.target_bps);
		assert_close(v.target_bps, t, 1e-12, "target");
		if (stage < f) /* the gap to a fixed target halves */
			assert_close(v.target_bps - v.rate_bps, gap / 2, 1e-9, "fast-recovery gap");
		if (v.rate_bps != line)
			assert_close(v.rate_bps, r, 1e-12, "rate");
		assert_int_equal(v.stage, ticks);
		assert_true(ticks < 200);
	}
	print_message("line rate again after %u increase periods (%.1f ms)\n", ticks,
		      ticks * 0.3);
	assert_int_equal(cc->rate_bps, path.line_bps);
	/* Hyper steps of 5G from 50G reach line in 10 periods, then the gap halves ~40 times. */
	assert_in_range(ticks, f + 1 + 10, f + 1 + 10 + 60);
	cc_destroy(cc);
}

/* clamp_target=0 (the default, as HPCC's run.py): a cut at stage 0 leaves the target where
 * it was; clamp_target=1 sets it to the rate before every cut. */
static void test_clamp_target_off(void **state)
{
	struct cc *on = make("clamp_target=1"), *off = make(NULL);
	(void)state;

	for (struct cc **p = (struct cc *[]){ on, off, NULL }; *p; p++) {
		cnp(*p, 0);        /* R 50G, target 100G */
		cnp(*p, 1 * US);   /* cut at 4 us, stage 0 */
		step_until(*p, 5 * US);
	}
	assert_close(view(on, 5 * US).target_bps, 50e9, 1e-12, "clamped target");
	assert_close(view(off, 5 * US).target_bps, 100e9, 1e-12, "unclamped target");
	assert_close(view(off, 5 * US).rate_bps, view(on, 5 * US).rate_bps, 1e-12, "same rate");
	cc_destroy(on);
	cc_destroy(off);
}

/* One cc_timer 10 ms late gives the state that running every deadline gives. A call a
 * year late returns at once (a loop per alpha period would run 3.2e13 times). */
static void test_late_timer_catches_up(void **state)
{
	static const qp_time_ns cnps[] = { 0, 2 * US + 300, 5 * US + 700, 11 * US + 100 };
	const qp_time_ns end = cnps[3] + 10 * QP_NS_PER_MS;
	struct cc *steady = make(NULL), *late = make(NULL), *hour = make(NULL);
	struct cc_dcqcn_view a, b, h;
	unsigned runs;
	(void)state;

	for (unsigned i = 0; i < sizeof(cnps) / sizeof(cnps[0]); i++) {
		step_until(steady, cnps[i]);
		cnp(steady, cnps[i]);
		cnp(late, cnps[i]);
		cnp(hour, cnps[i]);
	}
	runs = step_until(steady, end);
	assert_int_not_equal(cc_timer(late, end), 0);
	a = view(steady, end);
	b = view(late, end);
	print_message("10 ms late: one call vs %u on time: R %.6g vs %.6g, target %.6g vs %.6g, "
		      "stage %u vs %u, alpha %.3e vs %.3e\n", runs, b.rate_bps, a.rate_bps,
		      b.target_bps, a.target_bps, b.stage, a.stage, b.alpha, a.alpha);
	assert_true(runs > 30);
	assert_close(b.rate_bps, a.rate_bps, 1e-9, "late rate");
	assert_close(b.target_bps, a.target_bps, 1e-9, "late target");
	assert_int_equal(b.stage, a.stage);
	assert_int_equal(b.stats.inc_ticks, a.stats.inc_ticks);
	assert_close(b.alpha, ref_alpha(cnps, 4, end), 1e-9, "late alpha");
	assert_true(b.stats.catch_ups >= 1);
	assert_true(late->rate_bps < path.line_bps); /* still recovering: a real comparison */

	cc_timer(hour, cnps[3] + YEAR_NS);
	h = view(hour, cnps[3] + YEAR_NS);
	print_message("1 year late: R %llu, alpha %.3g, %llu alpha periods, timer %s\n",
		      (unsigned long long)hour->rate_bps, h.alpha,
		      (unsigned long long)h.stats.alpha_ticks,
		      hour->timer_ns == QP_TIME_NEVER ? "stopped" : "running");
	assert_int_equal(hour->rate_bps, path.line_bps);
	assert_int_equal(hour->timer_ns, QP_TIME_NEVER);
	assert_true(h.alpha < 1e-300);
	assert_true(h.stats.alpha_ticks > 31000000000000ULL);
	cc_destroy(steady);
	cc_destroy(late);
	cc_destroy(hour);
}

/* Persistent CNPs drive the rate to min_rate and never below. */
static void test_min_rate_floor(void **state)
{
	static const struct { const char *params; qp_rate_bps floor; } cases[] = {
		{ NULL, QP_GBPS },                /* default line/100 */
		{ "min_rate=5G", 5 * QP_GBPS },
	};
	(void)state;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cc *cc = make(cases[i].params);
		qp_rate_bps lowest = UINT64_MAX;

		for (qp_time_ns t = 0; t < 2 * QP_NS_PER_MS; t += 3 * US) {
			step_until(cc, t);
			cnp(cc, t);
			if (cc->rate_bps < lowest)
				lowest = cc->rate_bps;
		}
		print_message("floor %s: lowest %llu, floor hits %llu\n",
			      cases[i].params ? cases[i].params : "(default)",
			      (unsigned long long)lowest,
			      (unsigned long long)view(cc, 2 * QP_NS_PER_MS).stats.floor_hits);
		assert_int_equal(lowest, cases[i].floor);
		assert_int_equal(cc->rate_bps, cases[i].floor);
		assert_true(view(cc, 2 * QP_NS_PER_MS).stats.floor_hits > 10);
		cc_destroy(cc);
	}
}

/* init_rate: the flow starts there (below min_rate: refused) as if just cut: each t_inc halves
 * the gap to the line (fast recovery, then additive steps capped at the line), so without
 * a CNP it is back at the line; the first CNP cuts from the rate it has then. */
static void test_init_rate(void **state)
{
	struct cc *cc = make("init_rate=20G");
	struct cc *low = make("init_rate=5G,min_rate=5G");
	struct cc *line = make("init_rate=100G");
	(void)state;

	assert_int_equal(cc->rate_bps, 20 * QP_GBPS);
	assert_int_equal(cc->timer_ns, 300 * US);
	assert_int_equal(low->rate_bps, 5 * QP_GBPS);
	assert_int_equal(line->rate_bps, path.line_bps);
	assert_int_equal(line->timer_ns, QP_TIME_NEVER);
	cc_timer(cc, 300 * US);
	assert_close((double)cc->rate_bps, 60e9, 1e-9, "one fast-recovery period");
	assert_false(view(cc, 300 * US).started);
	step_until(cc, 100 * QP_NS_PER_MS);
	assert_int_equal(cc->rate_bps, path.line_bps);
	assert_int_equal(cc->timer_ns, QP_TIME_NEVER);
	cc_destroy(cc);
	cc = make("init_rate=20G");
	cnp(cc, 10 * US);
	assert_close((double)cc->rate_bps, 10e9, 1e-9, "the first cut halves the start rate");
	cc_destroy(cc);
	cc_destroy(low);
	cc_destroy(line);
}

static void test_bad_params_named(void **state)
{
	static const struct cc_expect_bad bad[] = {
		{ "g=0", "g" },
		{ "g=1.5", "g" },
		{ "t_alpha=0", "t_alpha" },
		{ "t_dec=2s", "t_dec" },
		{ "t_inc=soon", "t_inc" },
		{ "f=1001", "f" },
		{ "rate_ai=101G", "rate_ai" },
		{ "rate_hai=200G", "rate_hai" },
		{ "min_rate=101G", "min_rate" },
		{ "clamp_target=2", "clamp_target" },
		{ "init_rate=101G", "init_rate" },
		{ "init_rate=1G,min_rate=5G", "init_rate=1G is below min_rate 5G" },
		{ "init_rate=500M", "below min_rate 1G (the default" },   /* line / 100 */
		{ "alpha=1", "alpha" },
	};
	(void)state;

	cc_expect_bad_params(&cc_dcqcn_ops, &path, bad, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(cc_dcqcn_view(NULL, 0, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_cnp_no_timer),
		cmocka_unit_test(test_alpha_closed_form),
		cmocka_unit_test(test_each_cut_exact),
		cmocka_unit_test(test_recovery_stages),
		cmocka_unit_test(test_clamp_target_off),
		cmocka_unit_test(test_late_timer_catches_up),
		cmocka_unit_test(test_min_rate_floor),
		cmocka_unit_test(test_init_rate),
		cmocka_unit_test(test_bad_params_named),
	};
	return cmocka_run_group_tests_name("dcqcn", tests, NULL, NULL);
}
