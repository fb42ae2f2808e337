/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* lib/rng.c: xoshiro256** and splitmix64 against their reference outputs, the draws'
 * ranges and moments, streams, and the library-free logarithm against libm. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/rng.h"

/* Reference values: splitmix64 from seed 0 (Vigna's splitmix64.c, the value quoted with
 * it); xoshiro256** from the raw state {1, 2, 3, 4} (the reference xoshiro256starstar.c);
 * seeded sequences from an independent Python transcription of both algorithms. */
static void test_reference_outputs(void **state)
{
	static const uint64_t raw[4] = { 11520, 0, 1509978240, 1215971899390074240ULL };
	static const uint64_t seed0[3] = { 0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL,
					   0x1a5f849d4933e6e0ULL };
	static const uint64_t seed42[3] = { 0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL,
					    0xae17533239e499a1ULL };
	struct qp_rng r = { { 1, 2, 3, 4 } };
	uint64_t sm = 0;
	(void)state;

	assert_int_equal(qp_splitmix64(&sm), 0xe220a8397b1dcdafULL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(qp_rng_next(&r), raw[i]);
	qp_rng_seed(&r, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(qp_rng_next(&r), seed0[i]);
	qp_rng_seed(&r, 42);
	for (int i = 0; i < 3; i++)
		assert_int_equal(qp_rng_next(&r), seed42[i]);
}

static void test_streams_differ(void **state)
{
	struct qp_rng a, b, c;
	(void)state;

	qp_rng_seed_stream(&a, 7, 0);
	qp_rng_seed_stream(&b, 7, 1);
	qp_rng_seed(&c, 7);
	uint64_t x = qp_rng_next(&a), y = qp_rng_next(&b), z = qp_rng_next(&c);
	assert_true(x != y && y != z && x != z);
	qp_rng_seed_stream(&b, 7, 0);
	assert_int_equal(qp_rng_next(&b), x);   /* the same stream repeats */
}

static void test_unit_and_below(void **state)
{
	struct qp_rng r;
	unsigned counts[6] = { 0 };
	double sum = 0;
	const int n = 600000;
	(void)state;

	qp_rng_seed(&r, 1);
	for (int i = 0; i < n; i++) {
		double u = qp_rng_unit(&r);
		assert_true(u >= 0 && u < 1);
		sum += u;
		uint64_t k = qp_rng_below(&r, 6);
		assert_true(k < 6);
		counts[k]++;
	}
	/* mean 1/2, sd of the mean sqrt(1/12/n) = 3.7e-4: 5 sd */
	assert_true(fabs(sum / n - 0.5) < 5 * sqrt(1.0 / 12 / n));
	/* each face n/6 = 100000, sd sqrt(n p (1-p)) = 289: 5 sd */
	for (int k = 0; k < 6; k++)
		assert_true(fabs((double)counts[k] - n / 6.0) < 5 * 289);
	assert_int_equal(qp_rng_below(&r, 0), 0);
	assert_int_equal(qp_rng_below(&r, 1), 0);
	/* a bound near 2^64: still below it */
	for (int i = 0; i < 1000; i++)
		assert_true(qp_rng_below(&r, UINT64_MAX - 1) < UINT64_MAX - 1);
}

static void test_exponential(void **state)
{
	struct qp_rng r;
	double sum = 0, sum2 = 0;
	const int n = 200000;
	(void)state;

	qp_rng_seed(&r, 99);
	for (int i = 0; i < n; i++) {
		double x = qp_rng_exp(&r, 250.0);
		assert_true(x >= 0 && isfinite(x));
		sum += x;
		sum2 += x * x;
	}
	/* mean 250, sd 250: the mean's sd is 250/sqrt(n) = 0.56; variance 62500 */
	assert_true(fabs(sum / n - 250) < 5 * 250 / sqrt(n));
	double var = sum2 / n - (sum / n) * (sum / n);
	assert_true(fabs(var - 62500) < 0.05 * 62500);
}

static void test_ln_matches_libm(void **state)
{
	static const double xs[] = { 1, 2, 0.5, 0.7071, 1.4142, 1e-300, 1e300, 3.14159,
				     0x1.0p-53, 1 - 0x1.0p-53, 0.999, 1.001, 12345.678 };
	struct qp_rng r;
	(void)state;

	assert_true(qp_ln(1) == 0);
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		double want = log(xs[i]), got = qp_ln(xs[i]);
		assert_true(fabs(got - want) <= 2e-15 * fmax(1, fabs(want)));
	}
	qp_rng_seed(&r, 5);
	for (int i = 0; i < 100000; i++) {
		double x = qp_rng_unit(&r) + 0x1.0p-60;
		double want = log(x), got = qp_ln(x);
		assert_true(fabs(got - want) <= 2e-15 * fmax(1, fabs(want)));
	}
	assert_true(isinf(qp_ln(0)) && qp_ln(0) < 0);
	assert_true(isnan(qp_ln(-1)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_outputs),
		cmocka_unit_test(test_streams_differ),
		cmocka_unit_test(test_unit_and_below),
		cmocka_unit_test(test_exponential),
		cmocka_unit_test(test_ln_matches_libm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
