/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The rate qpaced writes for a QP found on the wire (agent/wire_rate.h): a window folded
 * into a rate over the base RTT, IB's ACK timeout, and the floor that keeps rxe's 64
 * in-flight skbs from waiting locally longer than a share of the timeout (below it, rxe's
 * ACK timer fires on frames still queued locally: spurious timeouts, docs/enforce.md). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/cc.h"
#include "qpace/units.h"
#include "wire_rate.h"

static void test_fold(void **state)
{
	(void)state;
	/* HPCC's window 12,500 B over 100 us = 1 Gb/s: caps a 10G rate, not a 500M one */
	assert_int_equal(wire_rate_fold(10 * QP_GBPS, 12500, 100 * QP_NS_PER_US), QP_GBPS);
	assert_int_equal(wire_rate_fold(500 * QP_MBPS, 12500, 100 * QP_NS_PER_US),
			 500 * QP_MBPS);
	assert_int_equal(wire_rate_fold(7 * QP_GBPS, 0, 100 * QP_NS_PER_US), 7 * QP_GBPS);
	assert_int_equal(wire_rate_fold(7 * QP_GBPS, 12500, 0), 7 * QP_GBPS);
}

static void test_ack_timeout(void **state)
{
	(void)state;
	assert_int_equal(wire_ack_timeout_ns(14), 67108864);   /* 4.096 us x 2^14 */
	assert_int_equal(wire_ack_timeout_ns(18), 1073741824);
	assert_int_equal(wire_ack_timeout_ns(0), 0);           /* infinite */
	assert_int_equal(wire_ack_timeout_ns(32), 0);
}

/* At the floor the 64 skbs drain within exactly the share of the timeout (rounded up). */
static void test_floor(void **state)
{
	qp_time_ns t14 = wire_ack_timeout_ns(14);
	qp_rate_bps f = wire_rate_floor(64, 1024, t14, 75);
	double bits = 64.0 * (1024 + WIRE_ROCE_OVERHEAD) * 8;

	(void)state;
	assert_int_equal(f, 11006674);
	assert_true(bits / (double)f * 1e9 <= 0.75 * (double)t14);
	assert_true(bits / (double)(f - 1) * 1e9 > 0.75 * (double)t14);
	/* the 5 Mb/s: the queue would take 111 ms, beyond the 67 ms timeout */
	assert_true(bits / 5e6 * 1e9 > (double)t14);
	assert_true(f > 5 * QP_MBPS);
	/* a long timeout (perftest -u 18) lets 5 Mb/s stand */
	assert_true(wire_rate_floor(64, 1024, wire_ack_timeout_ns(18), 75) < 5 * QP_MBPS);
	assert_int_equal(wire_rate_floor(64, 1024, 0, 75), 0);
	assert_int_equal(wire_rate_floor(0, 1024, t14, 75), 0);
}

/* What qpaced uses with ACK requests (wire_rate.h "acks"): an ACK asked every quarter of
 * the timeout (16.8 ms at 14), and a floor of one frame per quarter: 0.52 Mb/s at 14, 21x
 * below the 11.0 Mb/s rxe's own once-a-message ACKs need; none without a timeout. */
static void test_ack_floor(void **state)
{
	qp_time_ns t14 = wire_ack_timeout_ns(14);
	qp_rate_bps f = wire_rate_floor(1, 1024, t14, WIRE_ACK_SHARE);

	(void)state;
	assert_int_equal(wire_ack_gap(t14, WIRE_ACK_SHARE), 16777216);
	assert_int_equal(wire_ack_gap(0, WIRE_ACK_SHARE), 0);
	assert_int_equal(f, 515938);
	assert_true(1082.0 * 8 / (double)f * 1e9 <= 0.25 * (double)t14);
	/* three flows sharing 20 Mb/s (6.7 each) stand above it at 14 and at 12 */
	assert_true(f < 20 * QP_MBPS / 3);
	assert_true(wire_rate_floor(1, 1024, wire_ack_timeout_ns(12), WIRE_ACK_SHARE) <
		    20 * QP_MBPS / 4);
}

/* --wire-rtt auto: rxe's 64 frames at the line, at least 100 us. */
static void test_rtt_auto(void **state)
{
	(void)state;
	assert_int_equal(wire_rtt_auto(20 * QP_MBPS, 1024), 27699200);   /* 64 x 1082 B */
	assert_int_equal(wire_rtt_auto(10 * QP_GBPS, 1024), 100000);     /* 55 us: the least */
	assert_int_equal(wire_rtt_auto(0, 1024), 100000);
}

static void test_wire_rate(void **state)
{
	qp_rate_bps floor = wire_rate_floor(64, 1024, wire_ack_timeout_ns(14), 75);

	(void)state;
	assert_int_equal(wire_rate(5 * QP_MBPS, 0, 0, floor, QP_GBPS), floor);
	assert_int_equal(wire_rate(50 * QP_MBPS, 0, 0, floor, QP_GBPS), 50 * QP_MBPS);
	/* the window folds in before the floor: a tiny window still leaves the floor */
	assert_int_equal(wire_rate(QP_GBPS, 100, 100 * QP_NS_PER_US, floor, QP_GBPS), floor);
	/* never above the line */
	assert_int_equal(wire_rate(20 * QP_GBPS, 0, 0, floor, 10 * QP_GBPS), 10 * QP_GBPS);
}

/* A flow's rate grows only with what it sends: at most --wire-used percent of its measured
 * rate (200 by default: twice), never below the start rate (the first samples, a flow that
 * paused); 0 turns the bound off. */
static void test_rate_used(void **state)
{
	(void)state;
	assert_int_equal(wire_rate_used(20 * QP_MBPS, 0, 200, 4731977), 4731977);
	assert_int_equal(wire_rate_used(20 * QP_MBPS, 3 * QP_MBPS, 200, 4731977), 6 * QP_MBPS);
	assert_int_equal(wire_rate_used(5 * QP_MBPS, 3 * QP_MBPS, 200, 4731977), 5 * QP_MBPS);
	assert_int_equal(wire_rate_used(20 * QP_MBPS, 19 * QP_MBPS, 200, 4731977), 20 * QP_MBPS);
	assert_int_equal(wire_rate_used(3 * QP_MBPS, 0, 200, 4731977), 3 * QP_MBPS);
	assert_int_equal(wire_rate_used(UINT64_MAX, UINT64_MAX / 2 + 1, 200, 0), UINT64_MAX);
	/* 130%: a 5 Mb/s flow is held at 6.5 Mb/s, not 10 */
	assert_int_equal(wire_rate_used(13 * QP_MBPS, 5 * QP_MBPS, 130, 4731977), 6500000);
	assert_int_equal(wire_rate_used(13 * QP_MBPS, 2 * QP_MBPS, 130, 4731977), 4731977);
	assert_int_equal(wire_rate_used(UINT64_MAX, UINT64_MAX, 1000, 0), UINT64_MAX);
	/* off */
	assert_int_equal(wire_rate_used(13 * QP_MBPS, 5 * QP_MBPS, 0, 4731977), 13 * QP_MBPS);
}

/* --wire-start: init_rate added where the algorithm has it and the user's parameters do
 * not set it; hpcc then starts there (at least its min_rate), not at the line rate. */
/* --wire-catchup: fq's maxrate at PCT% of the highest rate, at most the cap; rewritten
 * only past the hysteresis, and never left below the highest rate by it. */
static void test_fq_maxrate(void **state)
{
	(void)state;
	/* the incast: three flows at hpcc's floor 4,731,977 b/s on a 20M line, 150% */
	assert_int_equal(wire_fq_maxrate(4731977, 150, 20 * QP_MBPS), 7097965);
	assert_int_equal(wire_fq_maxrate(14 * QP_MBPS, 150, 20 * QP_MBPS), 20 * QP_MBPS);
	assert_int_equal(wire_fq_maxrate(14 * QP_MBPS, 200, 0), 28 * QP_MBPS);
	/* off, or nothing paced: the fixed maxrate (0: none) */
	assert_int_equal(wire_fq_maxrate(14 * QP_MBPS, 0, 20 * QP_MBPS), 20 * QP_MBPS);
	assert_int_equal(wire_fq_maxrate(0, 150, 0), 0);
	assert_int_equal(wire_fq_maxrate(1, 120, 0), 1);
	assert_int_equal(wire_fq_maxrate(UINT64_MAX, 1000, 0), UINT64_MAX);
	/* the hysteresis: up by more than 1/8, down by more than 1/4 */
	assert_true(wire_fq_maxrate_moved(0, 7097965));
	assert_false(wire_fq_maxrate_moved(0, 0));
	assert_false(wire_fq_maxrate_moved(8 * QP_MBPS, 9 * QP_MBPS));
	assert_true(wire_fq_maxrate_moved(8 * QP_MBPS, 9 * QP_MBPS + 1));
	assert_false(wire_fq_maxrate_moved(8 * QP_MBPS, 6 * QP_MBPS));
	assert_true(wire_fq_maxrate_moved(8 * QP_MBPS, 6 * QP_MBPS - 1));
	/* with any PCT >= WIRE_CATCHUP_MIN, a rise the hysteresis lets pass keeps the maxrate
	 * written at the old top above the new top */
	for (qp_rate_bps top = 1000000; top < 100 * QP_MBPS; top = top * 17 / 16) {
		qp_rate_bps cur = wire_fq_maxrate(top, WIRE_CATCHUP_MIN, 0);

		for (qp_rate_bps up = top; up < 2 * top; up += top / 64) {
			qp_rate_bps want = wire_fq_maxrate(up, WIRE_CATCHUP_MIN, 0);

			if (!wire_fq_maxrate_moved(cur, want))
				assert_true(cur >= up);
		}
	}
}

static void test_start_params(void **state)
{
	static const struct { const char *algo, *params; qp_rate_bps start; const char *want; }
	cases[] = {
		{ "hpcc", "", 4731977, "init_rate=4731977" },
		{ "hpcc", "max_stage=5,min_rate=1M", 3000000, "max_stage=5,min_rate=1M,init_rate=3000000" },
		{ "hpcc", "init_rate=9M,eta=0.9", 3000000, "init_rate=9M,eta=0.9" },
		{ "hpcc", "eta=0.9,init_rate=9M", 3000000, "eta=0.9,init_rate=9M" },
		{ "hpcc", "eta=0.9", 0, "eta=0.9" },
		{ "none", "", 3000000, "" },
	};
	const struct cc_path path = { 20 * QP_MBPS, 30 * QP_NS_PER_MS, 1024 };
	char out[128], err[200];
	struct cc *cc;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(wire_start_params(cc_find(cases[i].algo), cases[i].params,
						   cases[i].start, out, sizeof(out)), 0);
		assert_string_equal(out, cases[i].want);
	}
	assert_int_equal(wire_start_params(cc_find("hpcc"), "eta=0.9", 3000000, out, 12),
			 -ENOSPC);
	assert_string_equal(out, "");
	/* the controller a discovered QP gets (agent_register's cc_create) starts there */
	assert_int_equal(wire_start_params(cc_find("hpcc"), "min_rate=1M", 3000000, out,
					   sizeof(out)), 0);
	cc = cc_create("hpcc", &path, out, 0, err, sizeof(err));
	assert_non_null(cc);
	assert_int_equal(cc->rate_bps, 3000000);
	cc_destroy(cc);
	/* below the algorithm's floor: refused (qpaced checks it once at start), not raised */
	assert_int_equal(wire_start_params(cc_find("hpcc"), "min_rate=4731977", 2750000, out,
					   sizeof(out)), 0);
	cc = cc_create("hpcc", &path, out, 0, err, sizeof(err));
	assert_null(cc);
	assert_non_null(strstr(err, "init_rate=2.75M is below min_rate"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_ack_timeout),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_ack_floor),
		cmocka_unit_test(test_rtt_auto),
		cmocka_unit_test(test_wire_rate),
		cmocka_unit_test(test_rate_used),
		cmocka_unit_test(test_fq_maxrate),
		cmocka_unit_test(test_start_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
