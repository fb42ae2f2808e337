/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The log-linear histogram: exact below 16, within 1/16 above, quantiles by rank. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/hist.h"
#include "test_rng.h"

static void test_quantiles(void **state)
{
	static struct qp_hist h;
	uint64_t seed = 3;
	(void)state;

	memset(&h, 0, sizeof(h));
	assert_int_equal(qp_hist_quantile(&h, 0.5), 0);
	for (uint64_t v = 1; v <= 1000; v++)
		qp_hist_add(&h, v * 1000);       /* 1 us .. 1 ms */
	/* p50 = 500 us, p99 = 990 us: reported at most 1/16 above */
	assert_true(qp_hist_quantile(&h, 0.5) >= 500000 && qp_hist_quantile(&h, 0.5) <= 531250);
	assert_true(qp_hist_quantile(&h, 0.99) >= 990000 && qp_hist_quantile(&h, 0.99) <= 1000000);
	assert_int_equal(qp_hist_quantile(&h, 1.0), 1000000);
	assert_int_equal(h.count, 1000);
	memset(&h, 0, sizeof(h));
	for (uint64_t v = 0; v < 16; v++)
		qp_hist_add(&h, v);
	assert_int_equal(qp_hist_quantile(&h, 0.0), 0);
	assert_int_equal(qp_hist_quantile(&h, 1.0), 15);
	/* any value lands in a bucket whose top is within 1/16 above it */
	memset(&h, 0, sizeof(h));
	qp_hist_add(&h, UINT64_MAX);
	assert_int_equal(qp_hist_quantile(&h, 0.5), UINT64_MAX);
	for (int i = 0; i < 100000; i++) {
		uint64_t v = test_rng(&seed) >> (test_rng(&seed) % 64);
		uint64_t top;

		memset(&h, 0, sizeof(h));
		qp_hist_add(&h, v);
		h.max = UINT64_MAX;  /* look at the bucket bound itself */
		top = qp_hist_quantile(&h, 0.5);
		assert_true(top >= v);
		assert_true(v < 16 ? top == v : top - v <= v / 16);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
