/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Run figures: HPCC's slowdown on hand-computed cases, percentiles at their edges, HPCC's
 * size bins (equal shares of the flows, short bins, steps that do not divide 100),
 * utilisation and PFC summaries, and the CSV and printer output. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/fct.h"

static struct fct_summary sum;
static char err[256];

static void test_slowdown_by_hand(void **state)
{
	/* a star: host -> switch -> host, 10G links of 1 us */
	const struct fct_hop star[2] = { { 10 * QP_GBPS, 1000 }, { 10 * QP_GBPS, 1000 } };
	(void)state;

	assert_int_equal(FCT_ROCE_HDR_BYTES, 58);
	assert_int_equal(fct_wire_bytes(1000, 1000, 58), 1058);
	assert_int_equal(fct_wire_bytes(1001, 1000, 58), 1001 + 2 * 58);
	assert_int_equal(fct_wire_bytes(0, 1024, 58), 58);          /* one empty packet */
	/* base RTT = 2 x (1 + 1) us + 2 x 1000 B at 10G (800 ns) = 5600 ns */
	assert_int_equal(fct_base_rtt_ns(star, 2, 1000), 5600);
	/* 1 MB: 1000 packets, 1058000 wire bytes at 10G = 846400 ns; + 5600 */
	assert_int_equal(fct_ideal_ns(1000000, 5600, 10 * QP_GBPS, 1000, 58), 852000);
	assert_true(fct_slowdown(1704000, 852000) == 2.0);
	assert_true(fct_slowdown(500000, 852000) == 1.0);          /* floored at 1 */
	assert_true(fct_slowdown(852000, 852000) == 1.0);
	/* serialisation rounds up to the ns: 1 byte + 58 at 1G is 472 ns */
	assert_int_equal(fct_ideal_ns(1, 0, QP_GBPS, 1000, 58), 472);
	assert_int_equal(fct_ideal_ns(1, 0, 3 * QP_GBPS, 1000, 58), 158);   /* 157.33 up */
}

static void test_percentile_edges(void **state)
{
	const double v[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	(void)state;

	assert_true(fct_pctl(v, 10, 0.0) == 1);
	assert_true(fct_pctl(v, 10, 0.5) == 6);     /* index floor(10 x 0.5) = 5 */
	assert_true(fct_pctl(v, 10, 0.95) == 10);   /* index 9 */
	assert_true(fct_pctl(v, 10, 0.99) == 10);
	assert_true(fct_pctl(v, 10, 1.0) == 10);    /* index 10 is clamped to 9 */
	assert_true(fct_pctl(v, 1, 0.5) == 1);
	assert_true(fct_pctl(v, 1, 0.99) == 1);
	assert_true(fct_pctl(v, 2, 0.5) == 2);
	assert_true(fct_pctl(v, 2, 0.49) == 1);
	assert_true(isnan(fct_pctl(v, 0, 0.5)));
}

/* Flows of sizes 1..n whose slowdown is their size (ideal 1000 ns, FCT size x 1000). */
static struct fct_flow *ramp(size_t n)
{
	struct fct_flow *f = calloc(n, sizeof(*f));
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		f[i] = (struct fct_flow){ .bytes = n - i, .fct_ns = (n - i) * 1000,
					  .ideal_ns = 1000, .done = true };
	return f;
}

static void test_hpcc_bins(void **state)
{
	struct fct_flow *f = ramp(100);
	(void)state;

	assert_int_equal(fct_summarise(f, 100, 0, &sum, err, sizeof(err)), 0);
	assert_int_equal(sum.step_pct, 5);
	assert_int_equal(sum.nbins, 20);
	assert_int_equal(sum.done, 100);
	/* bin 0: sizes 1..5, slowdowns 1..5: p50 = index 2 = 3, p95 = p99 = index 4 = 5 */
	assert_int_equal(sum.bins[0].min_bytes, 1);
	assert_int_equal(sum.bins[0].max_bytes, 5);
	assert_int_equal(sum.bins[0].flows, 5);
	assert_true(sum.bins[0].p50 == 3 && sum.bins[0].p95 == 5 && sum.bins[0].p99 == 5);
	assert_true(sum.bins[0].mean == 3);
	assert_true(sum.bins[19].max_bytes == 100 && sum.bins[19].p50 == 98);
	assert_true(sum.bins[19].pct_lo == 95 && sum.bins[19].pct_hi == 100);
	/* over all flows: index 50 = 51, index 95 = 96, index 99 = 100 */
	assert_true(sum.p50 == 51 && sum.p95 == 96 && sum.p99 == 100);
	/* unfinished flows are counted, not binned */
	f[0].done = false;
	f[1].done = false;
	assert_int_equal(fct_summarise(f, 100, 10, &sum, err, sizeof(err)), 0);
	assert_int_equal(sum.unfinished, 2);
	assert_int_equal(sum.done, 98);
	assert_int_equal(sum.nbins, 10);
	assert_int_equal(sum.bins[9].max_bytes, 98);
	free(f);
}

static void test_short_and_odd_bins(void **state)
{
	struct fct_flow *f = ramp(3);
	(void)state;

	/* three flows, 20 bins: only three have a flow in them */
	assert_int_equal(fct_summarise(f, 3, 5, &sum, err, sizeof(err)), 0);
	assert_int_equal(sum.nbins, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(sum.bins[i].flows, 1);
		assert_int_equal(sum.bins[i].max_bytes, i + 1);
		assert_true(sum.bins[i].p99 == (double)(i + 1));
	}
	free(f);
	/* a step that does not divide 100: the last bin is short and ends at 100% */
	f = ramp(10);
	assert_int_equal(fct_summarise(f, 10, 30, &sum, err, sizeof(err)), 0);
	assert_int_equal(sum.nbins, 4);
	assert_int_equal(sum.bins[3].flows, 1);
	assert_int_equal(sum.bins[3].max_bytes, 10);
	assert_true(sum.bins[3].pct_hi == 100);
	/* one bin of everything */
	assert_int_equal(fct_summarise(f, 10, 100, &sum, err, sizeof(err)), 0);
	assert_int_equal(sum.nbins, 1);
	assert_int_equal(sum.bins[0].flows, 10);
	/* nothing finished: no bins, percentiles n/a */
	for (int i = 0; i < 10; i++)
		f[i].done = false;
	assert_int_equal(fct_summarise(f, 10, 5, &sum, err, sizeof(err)), 0);
	assert_int_equal(sum.nbins, 0);
	assert_true(isnan(sum.p50));
	free(f);
	assert_int_equal(fct_summarise(NULL, 0, 5, &sum, err, sizeof(err)), 0);
	assert_int_equal(fct_summarise(NULL, 0, 101, &sum, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bin step 101%: accepted 1..100");
	struct fct_flow bad = { .bytes = 10, .fct_ns = 5, .ideal_ns = 0, .done = true };
	assert_int_equal(fct_summarise(&bad, 1, 5, &sum, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "flow 0: ideal FCT of 0 ns (a path of zero rate?)");
}

static void test_utilisation_and_pfc(void **state)
{
	const struct fct_link l[3] = {
		{ "s1:h0", 1250000000, 10 * QP_GBPS },   /* 10 Gb in 1 s at 10G: 1.0 */
		{ "s1:h1", 312500000, 10 * QP_GBPS },    /* 0.25 */
		{ "s1:up", 0, 40 * QP_GBPS },
	};
	const struct fct_pfc_port p[3] = {
		{ "s1:h0", 3, 0, 0 }, { "s1:up", 10, 4, 250 * QP_NS_PER_MS }, { "s2:x", 0, 6, 5000 },
	};
	struct fct_util_summary u;
	struct fct_pfc_summary s;
	(void)state;

	assert_true(fct_utilisation(1250000000, 10 * QP_GBPS, QP_NS_PER_S) == 1.0);
	assert_true(fct_utilisation(1, 0, QP_NS_PER_S) == 0);
	fct_util_summarise(l, 3, QP_NS_PER_S, &u);
	assert_int_equal(u.links, 3);
	assert_int_equal(u.busy, 2);
	assert_true(u.max == 1.0 && u.max_index == 0);
	assert_true(fabs(u.mean - 1.25 / 3) < 1e-12);
	fct_pfc_summarise(p, 3, QP_NS_PER_S, &s);
	assert_int_equal(s.pauses_sent, 13);
	assert_int_equal(s.pauses_received, 10);
	assert_int_equal(s.ports_paused, 2);
	assert_int_equal(s.paused_max_ns, 250 * QP_NS_PER_MS);
	assert_int_equal(s.max_index, 1);
	assert_true(s.paused_max_frac == 0.25);
}

static char *capture(void (*fn)(FILE *f, void *arg), void *arg)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return text;
}

static void csv_bins(FILE *f, void *arg)
{
	fct_csv_bins(f, arg);
}

static void json_all(FILE *f, void *arg)
{
	const struct fct_link l[1] = { { "s1:h0", 125000000, QP_GBPS } };
	const struct fct_pfc_port p[1] = { { "s1:h0", 2, 0, 1000 } };
	struct qp_out o;

	qp_out_init(&o, f, QP_OUT_JSON);
	qp_out_obj(&o, NULL);
	fct_print(&o, "fct", arg);
	fct_print_links(&o, "links", l, 1, QP_NS_PER_S);
	fct_print_pfc(&o, "pfc", p, 1, QP_NS_PER_S);
	qp_out_end(&o);
}

static void text_fct(FILE *f, void *arg)
{
	struct qp_out o;

	qp_out_init(&o, f, QP_OUT_TEXT);
	qp_out_obj(&o, NULL);
	fct_print(&o, "fct", arg);
	qp_out_end(&o);
}

static void test_output(void **state)
{
	struct fct_flow *f = ramp(4);
	char *t;
	(void)state;

	assert_int_equal(fct_summarise(f, 4, 50, &sum, err, sizeof(err)), 0);
	t = capture(csv_bins, &sum);
	assert_string_equal(t, "pct_lo,pct_hi,min_bytes,max_bytes,flows,mean,p50,p95,p99\n"
			    "0,50,1,2,2,1.5000,2.0000,2.0000,2.0000\n"
			    "50,100,3,4,2,3.5000,4.0000,4.0000,4.0000\n");
	free(t);
	t = capture(json_all, &sum);
	assert_string_equal(t, "{\"fct\":{\"flows\":4,\"done\":4,\"unfinished\":0,\"step_pct\":50,"
			    "\"mean\":2.500,\"p50\":3.000,\"p95\":4.000,\"p99\":4.000,\"bins\":["
			    "{\"pct_lo\":0,\"pct_hi\":50,\"min_bytes\":1,\"max_bytes\":2,\"flows\":2,"
			    "\"mean\":1.500,\"p50\":2.000,\"p95\":2.000,\"p99\":2.000},"
			    "{\"pct_lo\":50,\"pct_hi\":100,\"min_bytes\":3,\"max_bytes\":4,"
			    "\"flows\":2,\"mean\":3.500,\"p50\":4.000,\"p95\":4.000,\"p99\":4.000}]},"
			    "\"links\":{\"links\":1,\"busy\":1,\"mean\":1.0000,\"max\":1.0000,"
			    "\"max_link\":\"s1:h0\"},"
			    "\"pfc\":{\"ports\":1,\"ports_paused\":1,\"pauses_sent\":2,"
			    "\"pauses_received\":0,\"paused\":1000,\"paused_max\":1000,"
			    "\"paused_max_frac\":0.0000,\"paused_max_port\":\"s1:h0\"}}\n");
	free(t);
	t = capture(text_fct, &sum);
	assert_non_null(strstr(t, "fct:\n"));
	assert_non_null(strstr(t, "     size <=     flows     mean      p50      p95      p99\n"
				  "             2         2    1.500    2.000    2.000    2.000\n"));
	free(t);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowdown_by_hand),
		cmocka_unit_test(test_percentile_edges),
		cmocka_unit_test(test_hpcc_bins),
		cmocka_unit_test(test_short_and_odd_bins),
		cmocka_unit_test(test_utilisation_and_pfc),
		cmocka_unit_test(test_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
