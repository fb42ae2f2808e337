/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench statistics: Jain's index, nearest-rank percentiles, FCT slowdown, perftest's
 * latency and BW figures, and the incast totals built from them. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../bench/incast.h"
#include "../../bench/stats.h"

static void test_jain(void **state)
{
	double equal[8], one[8] = { 5 }, two[4] = { 1, 1, 3, 3 };
	(void)state;

	for (int i = 0; i < 8; i++)
		equal[i] = 123.0;
	assert_true(fabs(stats_jain(equal, 8) - 1.0) < 1e-12);
	/* One sender of n gets everything: J = 1/n. */
	assert_true(fabs(stats_jain(one, 8) - 1.0 / 8) < 1e-12);
	/* (1+1+3+3)^2 / (4 * (1+1+9+9)) = 64/80 */
	assert_true(fabs(stats_jain(two, 4) - 0.8) < 1e-12);
	assert_true(stats_jain(NULL, 0) == 0);
	double zeros[3] = { 0, 0, 0 };
	assert_true(stats_jain(zeros, 3) == 0);
}

static void test_percentile_nearest_rank(void **state)
{
	double x[100];
	(void)state;

	/* 100 shuffled values 1..100: nearest rank gives the value itself. */
	for (int i = 0; i < 100; i++)
		x[i] = (double)((i * 37) % 100 + 1);
	assert_true(stats_percentile(x, 100, 50) == 50);
	assert_true(stats_percentile(x, 100, 99) == 99);
	assert_true(stats_percentile(x, 100, 100) == 100);
	assert_true(stats_percentile(x, 100, 0.5) == 1);
	/* Few samples: p99 of 16 flows is the largest (rank ceil(15.84) = 16). */
	double f[16];
	for (int i = 0; i < 16; i++)
		f[i] = 16 - i;
	assert_true(stats_percentile(f, 16, 99) == 16);
	assert_true(stats_percentile(f, 16, 50) == 8);
	assert_true(isnan(stats_percentile(f, 0, 50)));
	assert_true(isnan(stats_percentile(f, 16, 0)));
	assert_true(isnan(stats_percentile(f, 16, 101)));
}

static void test_fct_standalone(void **state)
{
	(void)state;
	/* 256 KiB in 1024-byte packets: 256 packets of 1024 + 58 bytes at 1 Gb/s
	 * = 256 * 1082 * 8 ns = 2215936 ns, plus a 20 us base RTT. */
	assert_int_equal(stats_wire_bytes(256 * 1024, 1024, STATS_ROCE_PKT_OVERHEAD),
			 256 * 1082);
	assert_int_equal(stats_standalone_fct_ns(256 * 1024, 1024, STATS_ROCE_PKT_OVERHEAD,
						 QP_GBPS, 20000), 2215936 + 20000);
	/* A partial last packet still carries a full header; 0 bytes is one packet. */
	assert_int_equal(stats_wire_bytes(1025, 1024, 58), 1025 + 2 * 58);
	assert_int_equal(stats_wire_bytes(0, 1024, 58), 58);
	/* Payload rate of a 1 Gb/s link at MTU 1024: 1024/1082 of it. */
	assert_true(fabs(stats_payload_bps(QP_GBPS, 1024, 58) - 1e9 * 1024 / 1082) < 1e-3);
	/* Slowdown is floored at 1 (a flow cannot beat the empty network). */
	assert_true(stats_slowdown(500, 1000) == 1);
	assert_true(stats_slowdown(3000, 1000) == 3);

	qp_time_ns fct[5] = { 5000, 1000, 4000, 2000, 3000 };
	struct stats_fct s;
	stats_fct_summary(fct, 5, 1000, &s);
	assert_true(s.p50_us == 3 && s.p99_us == 5 && s.max_us == 5);
	assert_true(s.slowdown_p50 == 3 && s.slowdown_p99 == 5);
}

static void test_lat_like_perftest(void **state)
{
	double ns[12] = { 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000,
			  90000, 99000 };
	struct stats_lat l;
	(void)state;

	assert_int_equal(stats_lat_summary(ns, 2, &l), -ENODATA);
	/* Shuffle: the summary sorts. */
	double t = ns[0]; ns[0] = ns[11]; ns[11] = t;
	assert_int_equal(stats_lat_summary(ns, 12, &l), 0);
	/* Two largest dropped (LAT_MEASURE_TAIL): kept 1..10 us; median of 10 kept = (5+6)/2;
	 * max is x[m] = the first dropped one (perftest prints delta[measure_cnt]). */
	assert_int_equal(l.kept, 10);
	assert_true(l.min_us == 1);
	assert_true(l.max_us == 90);
	assert_true(fabs(l.typical_us - 5.5) < 1e-9);
	assert_true(fabs(l.avg_us - 5.5) < 1e-9);
	assert_true(fabs(l.stdev_us - sqrt(8.25)) < 1e-9);
	/* 99%: x[ceil(9.9)] = x[10] = 90 us; 99.9%: x[ceil(9.99)] = x[10]. */
	assert_true(l.p99_us == 90 && l.p999_us == 90);
}

static void test_bw(void **state)
{
	qp_time_ns done[11];
	struct stats_bw bw;
	(void)state;

	/* 10 messages of 1 MiB in 10 ms after the first post, one every ms, then a fast
	 * burst: avg = 11 MiB / 11 ms... */
	for (int i = 0; i < 10; i++)
		done[i] = (qp_time_ns)(i + 1) * QP_NS_PER_MS;
	done[10] = 10 * QP_NS_PER_MS + 100 * QP_NS_PER_US;
	stats_bw(done, 11, 0, 1 << 20, 1, 0, &bw);
	assert_true(fabs(bw.avg - 11.0 / 0.0101) < 1e-6);          /* MiB/s */
	assert_true(fabs(bw.peak - 1.0 / 0.0001) < 1e-3);          /* the 100 us gap */
	assert_true(fabs(bw.msg_rate_mpps - 11 / 0.0101 / 1e6) < 1e-9);
	stats_bw(done, 11, 0, 1 << 20, 1, 1, &bw);                  /* Gb/s */
	assert_true(fabs(bw.avg - 11.0 * 1048576 * 8 / 0.0101 / 1e9) < 1e-9);
	stats_bw(done, 0, 0, 1, 1, 0, &bw);
	assert_true(bw.avg == 0 && bw.peak == 0);
}

static void test_incast_summary(void **state)
{
	struct incast_flow f[4] = {
		{ .round = 0, .sender = 1, .bytes = 1000000, .fct_ns = 10 * QP_NS_PER_MS, .done = true },
		{ .round = 0, .sender = 2, .bytes = 1000000, .fct_ns = 10 * QP_NS_PER_MS, .done = true,
		  .retransmits = 5, .timeouts = 1 },
		{ .round = 0, .sender = 3, .bytes = 1000000, .fct_ns = 20 * QP_NS_PER_MS, .done = true },
		{ .round = 0, .sender = 4, .bytes = 1000000, .done = false },
	};
	qp_time_ns round_ns[1] = { 20 * QP_NS_PER_MS };
	struct incast_result r = { .link_bps = QP_GBPS, .mtu_bytes = 1024,
				   .bytes_per_sender = 1000000 };
	(void)state;

	incast_summarize(&r, f, 4, round_ns, 1, 10000);
	/* 3 MB delivered in 20 ms = 1.2 Gb/s; the flow that never finished counts as 0. */
	assert_true(fabs(r.goodput_bps - 1.2e9) < 1);
	assert_int_equal(r.flows, 4);
	assert_int_equal(r.flows_done, 3);
	assert_int_equal(r.retransmits, 5);
	assert_int_equal(r.timeouts, 1);
	double tput[4] = { 800e6, 800e6, 400e6, 0 };
	assert_true(fabs(r.jain - stats_jain(tput, 4)) < 1e-12);
	assert_true(r.fct.p50_us == 10000 && r.fct.max_us == 20000);
	assert_true(fabs(r.goodput_ratio - 1.2e9 / stats_payload_bps(QP_GBPS, 1024, 58)) < 1e-9);
	print_message("goodput %.0f b/s, jain %.4f, fct p50 %.0f us max %.0f us\n",
		      r.goodput_bps, r.jain, r.fct.p50_us, r.fct.max_us);
}

/* The timeout ratio's numerator (qpace-bench reproduce ia-tcp): rounds in which some flow
 * timed out, each counted once however many of its flows did. */
static void test_rounds_with_timeout(void **state)
{
	struct incast_flow f[6] = {
		{ .round = 0, .bytes = 1000, .fct_ns = QP_NS_PER_MS, .done = true, .timeouts = 2 },
		{ .round = 0, .bytes = 1000, .fct_ns = QP_NS_PER_MS, .done = true, .timeouts = 1 },
		{ .round = 1, .bytes = 1000, .fct_ns = QP_NS_PER_MS, .done = true },
		{ .round = 1, .bytes = 1000, .fct_ns = QP_NS_PER_MS, .done = true },
		{ .round = 2, .bytes = 1000, .fct_ns = QP_NS_PER_MS, .done = true },
		{ .round = 2, .bytes = 1000, .done = false, .timeouts = 1 },
	};
	qp_time_ns round_ns[3] = { QP_NS_PER_MS, QP_NS_PER_MS, QP_NS_PER_MS };
	struct incast_result r = { .link_bps = QP_GBPS, .mtu_bytes = 1024, .bytes_per_sender = 1000,
				   .rounds_with_timeout = 99 };
	(void)state;

	incast_summarize(&r, f, 6, round_ns, 3, 10000);
	assert_int_equal(r.timeouts, 4);
	assert_int_equal(r.rounds_with_timeout, 2);      /* rounds 0 and 2, not 1 */
	incast_summarize(&r, f + 2, 2, round_ns, 1, 10000);
	assert_int_equal(r.rounds_with_timeout, 0);      /* reset, not accumulated */
}

static void test_algo_spec(void **state)
{
	char cc[INCAST_ALGO_MAX], err[256];
	bool credits;
	(void)state;

	assert_int_equal(incast_algo_parse("hpcc+ia", cc, sizeof(cc), &credits, err, sizeof(err)), 0);
	assert_string_equal(cc, "hpcc");
	assert_true(credits);
	assert_int_equal(incast_algo_parse("none", cc, sizeof(cc), &credits, err, sizeof(err)), 0);
	assert_false(credits);
	assert_int_equal(incast_algo_parse("reno", cc, sizeof(cc), &credits, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "'reno'"));
	assert_non_null(strstr(err, "dcqcn"));      /* names the known ones */
	assert_int_equal(incast_algo_parse("hpcc+xx", cc, sizeof(cc), &credits, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "only 'ia'"));
	assert_int_equal(incast_algo_parse("+ia", cc, sizeof(cc), &credits, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jain),
		cmocka_unit_test(test_percentile_nearest_rank),
		cmocka_unit_test(test_fct_standalone),
		cmocka_unit_test(test_lat_like_perftest),
		cmocka_unit_test(test_bw),
		cmocka_unit_test(test_incast_summary),
		cmocka_unit_test(test_rounds_with_timeout),
		cmocka_unit_test(test_algo_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
